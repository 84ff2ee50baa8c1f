"""Chat Completions responses: the `chat.completion` object and its SSE `chat.completion.chunk`s.

Chunk shapes are the ones the `openai` SDK (and OpenAI) use: a first chunk with the role, content
deltas, tool-call deltas with `index` (`id`, `type` and `function.name` only in a call's first
delta, the arguments after it), a last chunk with an empty delta and the `finish_reason`, a usage
chunk with no choices when `stream_options.include_usage` is set (every other chunk then carries
`"usage": null`), and `data: [DONE]`. The encoder writes bytes from prebuilt templates: it runs
once per SSE event.
"""

from __future__ import annotations

import json
from typing import Any

from bridge.openai.content import estimate_tokens
from bridge.openai.errors import OpenAIError

_dumps = json.dumps
FINGERPRINT = "fp_symposium"


def _arguments(parameters: Any) -> str:
    if isinstance(parameters, str):
        return parameters
    return _dumps(
        parameters if parameters is not None else {}, ensure_ascii=False, separators=(",", ":")
    )


def finish_reason(exchange: Any, calls: int, legacy: bool) -> str:
    if exchange.limited:
        return "length"
    if calls:
        return "function_call" if legacy else "tool_calls"
    return "stop"


def token_counts(
    prompt_tokens: int, parts: list[dict[str, Any]], reported: dict[str, int] | None = None
) -> tuple[int, int]:
    """(prompt, completion) tokens: what the agent reported (its prompt response's usage, else the
    context size of its last ACP `usage_update` as the prompt), else the bridge's estimate."""
    if reported and "input_tokens" in reported:
        return reported["input_tokens"], reported["output_tokens"]
    if reported and "context_tokens" in reported:
        prompt_tokens = reported["context_tokens"]
    text = "".join(
        p["value"] if p["type"] == "text" else p["toolName"] + _arguments(p["parameters"])
        for p in parts
    )
    return prompt_tokens, estimate_tokens(text)


def usage(
    prompt_tokens: int, parts: list[dict[str, Any]], reported: dict[str, int] | None = None
) -> dict[str, Any]:
    prompt_tokens, completion = token_counts(prompt_tokens, parts, reported)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


class ChatEncoder:
    def __init__(self, exchange: Any, *, coalesce: bool = True) -> None:
        params = exchange.params
        self.exchange = exchange
        self.params = params
        self.coalesce = coalesce
        self.legacy = params.legacy
        self.id = f"chatcmpl-{exchange.seq:08x}{exchange.created:x}"
        head = (
            f'{{"id":"{self.id}","object":"chat.completion.chunk","created":{exchange.created},'
            f'"model":{_dumps(params.model)},"system_fingerprint":"fp_symposium","choices":[{{"index":0,"delta":'
        )
        self._pre = b"data: " + head.encode()
        usage_null = ',"usage":null' if params.include_usage else ""
        self._post = f',"logprobs":null,"finish_reason":null}}]{usage_null}}}\n\n'.encode()
        self._head_tail = head  # for the final chunk
        self._usage_null = usage_null
        self.calls = 0

    # --- streaming ------------------------------------------------------------------------------------

    def start(self) -> bytes:
        return self._pre + b'{"role":"assistant","content":"","refusal":null}' + self._post

    def _content(self, text: str) -> bytes:
        return self._pre + b'{"content":' + _dumps(text).encode() + b"}" + self._post

    def _call(self, part: dict[str, Any]) -> bytes:
        first: dict[str, Any]
        rest: dict[str, Any]
        if self.legacy:
            if self.calls:
                return b""  # the legacy form carries one call
            self.calls += 1
            first = {"function_call": {"name": part["toolName"], "arguments": ""}}
            rest = {"function_call": {"arguments": _arguments(part["parameters"])}}
        else:
            index = self.calls
            self.calls += 1
            first = {
                "tool_calls": [
                    {
                        "index": index,
                        "id": part["toolCallId"],
                        "type": "function",
                        "function": {"name": part["toolName"], "arguments": ""},
                    }
                ]
            }
            rest = {
                "tool_calls": [
                    {"index": index, "function": {"arguments": _arguments(part["parameters"])}}
                ]
            }
        return (self._pre + _dumps(first).encode() + self._post) + (
            self._pre + _dumps(rest).encode() + self._post
        )

    def encode(self, parts: list[dict[str, Any]]) -> bytes:
        """SSE events for `parts`: consecutive text coalesced into one content delta (unless off)."""
        if self.coalesce:
            if len(parts) == 1 and parts[0]["type"] == "text":
                return self._content(parts[0]["value"])
            out: list[bytes] = []
            run: list[str] = []
            for part in parts:
                if part["type"] == "text":
                    run.append(part["value"])
                    continue
                if run:
                    out.append(self._content("".join(run)))
                    run = []
                out.append(self._call(part))
            if run:
                out.append(self._content("".join(run)))
            return b"".join(out)
        return b"".join(
            self._content(p["value"]) if p["type"] == "text" else self._call(p) for p in parts
        )

    def end(self) -> bytes:
        exchange = self.exchange
        reason = finish_reason(exchange, self.calls, self.legacy)
        out = (
            self._pre
            + b"{}"
            + f',"logprobs":null,"finish_reason":"{reason}"}}]{self._usage_null}}}\n\n'.encode()
        )
        if self.params.include_usage:
            chunk = {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": exchange.created,
                "model": self.params.model,
                "system_fingerprint": FINGERPRINT,
                "choices": [],
                "usage": usage(self.params.prompt_tokens, exchange.parts, exchange.stream.usage),
            }
            out += b"data: " + _dumps(chunk).encode() + b"\n\n"
        return out + b"data: [DONE]\n\n"

    @staticmethod
    def error(err: OpenAIError) -> bytes:
        return b"data: " + err.encode() + b"\n\n"

    # --- whole ----------------------------------------------------------------------------------------

    def completion(self) -> dict[str, Any]:
        exchange = self.exchange
        parts = exchange.parts
        text = "".join(p["value"] for p in parts if p["type"] == "text")
        calls = [p for p in parts if p["type"] == "tool_call"]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": text if text or not calls else None,
            "refusal": None,
            "annotations": [],
        }
        if calls and self.legacy:
            message["function_call"] = {
                "name": calls[0]["toolName"],
                "arguments": _arguments(calls[0]["parameters"]),
            }
            calls = calls[:1]
        elif calls:
            message["tool_calls"] = [
                {
                    "id": p["toolCallId"],
                    "type": "function",
                    "function": {"name": p["toolName"], "arguments": _arguments(p["parameters"])},
                }
                for p in calls
            ]
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": exchange.created,
            "model": self.params.model,
            "system_fingerprint": FINGERPRINT,
            "service_tier": "default",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": finish_reason(exchange, len(calls), self.legacy),
                }
            ],
            "usage": usage(self.params.prompt_tokens, parts, exchange.stream.usage),
        }
