"""Errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}` with its status.

| status | type | when |
|---|---|---|
| 400 | invalid_request_error | bad JSON, a bad field (`param` names it), a bad tool definition, `tool_choice` or tool message |
| 401 | invalid_request_error (`invalid_api_key`) | an API key is set and the request lacks it |
| 400 | invalid_request_error (`unsupported_parameter`) | a valid OpenAI parameter an agent bridge cannot honour (`n` > 1, `logprobs`, audio, `background`, …); `param` names it |
| 404 | invalid_request_error (`model_not_found`, `not_found`) | unknown model, response, route |
| 409 | invalid_request_error (`request_cancelled`, `idempotency_key_reused`) | the agent's turn was cancelled; an `Idempotency-Key` sent again with another body |
| 500 | server_error (`agent_error`) | the agent session failed (crashed, refused to start, …) |
| 502 | server_error (`invalid_structured_output`) | the agent's answer did not match `response_format` / `text.format`, also after one repair turn |
| 503 | server_error (`agents_busy`) | every agent slot is busy (`max_agents`) |

`x-should-retry` tells the `openai` SDK whether retrying can help: never for 4xx (409 included:
a cancelled turn or a reused idempotency key does not change by asking again), and for 5xx only
when the failure is transient (not for a 502 `invalid_structured_output`: the agent already had
its repair turn).
"""

from __future__ import annotations

import json
from typing import Any


class OpenAIError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,  # noqa: A002 - OpenAI's field name
        param: str | None = None,
        code: str | None = None,
        retry: bool | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type or ("server_error" if status >= 500 else "invalid_request_error")
        self.param = param
        self.code = code
        self.retry = retry if retry is not None else status in (408, 429) or status >= 502
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }

    def encode(self) -> bytes:
        return json.dumps(self.body(), ensure_ascii=False).encode()

    def response_headers(self) -> list[tuple[bytes, bytes]]:
        headers = [
            (b"content-type", b"application/json"),
            (b"x-should-retry", b"true" if self.retry else b"false"),
        ]
        headers += [(k.lower().encode(), v.encode()) for k, v in self.headers.items()]
        return headers


def bad_request(message: str, param: str | None = None, code: str | None = None) -> OpenAIError:
    return OpenAIError(400, message, param=param, code=code)


def unsupported(message: str, param: str) -> OpenAIError:
    return OpenAIError(400, message, param=param, code="unsupported_parameter")


def model_not_found(model: str) -> OpenAIError:
    return OpenAIError(
        404,
        f"The model `{model}` does not exist or you do not have access to it.",
        param="model",
        code="model_not_found",
    )


def invalid_api_key() -> OpenAIError:
    return OpenAIError(
        401,
        "Incorrect API key provided. Pass the key the bridge was started with as a bearer token.",
        code="invalid_api_key",
        headers={"www-authenticate": 'Bearer realm="symposium"'},
    )


def not_found(message: str, param: str | None = None) -> OpenAIError:
    return OpenAIError(404, message, param=param, code="not_found")


def agent_failed(message: str) -> OpenAIError:
    # A dead session is forgotten: a retry starts a fresh one, which may well work.
    return OpenAIError(500, message, code="agent_error", retry=True)


def agents_busy(message: str) -> OpenAIError:
    return OpenAIError(503, message, code="agents_busy", retry=True, headers={"retry-after": "1"})


def cancelled(message: str) -> OpenAIError:
    return OpenAIError(409, message, code="request_cancelled", retry=False)
