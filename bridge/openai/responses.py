"""The Responses API (`POST /v1/responses`): the response object and its SSE events.

`previous_response_id` continues a stored response: the request's messages are the stored
conversation (its messages and the reply exactly as the tracker recorded it) followed by the new
input, so the tracker commits the previous exchange and the same agent session goes on — tool
round trips included (`function_call_output` items answer the calls the agent is waiting on).
Without it, the input items are mapped like Chat messages (`function_call` items join the
assistant message before them: that is how the tracker recorded the reply).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from bridge.openai.chat_wire import _arguments, token_counts
from bridge.openai.content import core_parts, message
from bridge.openai.errors import OpenAIError
from bridge.openai.memory import ReplyMemory
from bridge.openai.responses_request import ResponsesParams, parse_responses
from bridge.openai.responses_store import ResponseStore, StoredResponse
from bridge.protocol import Message

_dumps = json.dumps


def _hex() -> str:
    return secrets.token_hex(12)


class ResponsesEncoder:
    """The response object, and its SSE event sequence, for one exchange."""

    def __init__(self, exchange: Any) -> None:
        self.exchange = exchange
        self.params: ResponsesParams = exchange.params
        self.id = exchange.response_id or f"resp_{exchange.seq:08x}{_hex()}"
        exchange.response_id = self.id
        self.seq = 0
        self.output: list[dict[str, Any]] = []
        self._message: dict[str, Any] | None = None  # the open message item
        self._text: list[str] = []

    # --- the response object --------------------------------------------------------------------------

    def resource(
        self,
        status: str,
        output: list[dict[str, Any]] | None = None,
        error: OpenAIError | None = None,
    ) -> dict[str, Any]:
        p = self.params
        exchange = self.exchange
        done = status in ("completed", "incomplete", "failed")
        usage = None
        if done and status != "failed":
            prompt, completion = token_counts(
                p.prompt_tokens, exchange.parts, exchange.stream.usage
            )
            usage = {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + completion,
            }
        return {
            "id": self.id,
            "object": "response",
            "created_at": exchange.created,
            "completed_at": int(time.time()) if status == "completed" else None,
            "status": status,
            "background": False,
            "error": {"code": error.code or "server_error", "message": error.message}
            if error
            else None,
            "incomplete_details": {"reason": "max_output_tokens"}
            if status == "incomplete"
            else None,
            "instructions": p.instructions,
            "max_output_tokens": p.max_tokens,
            "max_tool_calls": None,
            "model": p.model,
            "output": output if output is not None else [],
            "parallel_tool_calls": p.parallel_tool_calls,
            "previous_response_id": p.previous_response_id,
            "prompt_cache_key": None,
            "reasoning": {"effort": None, "summary": None},
            "safety_identifier": None,
            "service_tier": "default",
            "store": p.store,
            "temperature": 1.0,
            "text": {
                "format": p.output_format.responses_format()
                if p.output_format is not None
                else {"type": "text"},
                "verbosity": "medium",
            },
            "tool_choice": p.tool_choice if p.tool_choice is not None else "auto",
            "tools": p.declared_tools,
            "top_logprobs": 0,
            "top_p": 1.0,
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
            "truncation": "disabled",
            "usage": usage,
            "user": p.user,
            "metadata": p.metadata,
        }

    def status(self) -> str:
        return "incomplete" if self.exchange.limited else "completed"

    def output_items(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        text: list[str] = []

        def flush() -> None:
            if text:
                items.append(self._message_item(f"msg_{_hex()}", "".join(text), "completed"))
                text.clear()

        for part in self.exchange.parts:
            if part["type"] == "text":
                text.append(part["value"])
            else:
                flush()
                items.append(self._call_item(part, "completed"))
        flush()
        return items

    @staticmethod
    def _message_item(item_id: str, text: str | None, status: str) -> dict[str, Any]:
        content = (
            []
            if text is None
            else [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
        )
        return {
            "id": item_id,
            "type": "message",
            "status": status,
            "role": "assistant",
            "content": content,
        }

    @staticmethod
    def _call_item(
        part: dict[str, Any], status: str, arguments: str | None = None
    ) -> dict[str, Any]:
        return {
            "id": f"fc_{_hex()}",
            "type": "function_call",
            "status": status,
            "call_id": part["toolCallId"],
            "name": part["toolName"],
            "arguments": _arguments(part["parameters"]) if arguments is None else arguments,
        }

    def whole(self) -> dict[str, Any]:
        return self.resource(self.status(), self.output_items())

    # --- events -----------------------------------------------------------------------------------------

    def _event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        return (
            f"event: {kind}\ndata: ".encode() + _dumps(data, ensure_ascii=False).encode() + b"\n\n"
        )

    def start(self) -> bytes:
        return self._event("response.created", response=self.resource("in_progress")) + self._event(
            "response.in_progress", response=self.resource("in_progress")
        )

    def _close_message(self) -> bytes:
        item = self._message
        if item is None:
            return b""
        self._message = None
        index = len(self.output) - 1
        text = "".join(self._text)
        self._text = []
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        done = self._message_item(item["id"], text, "completed")
        self.output[index] = done
        return (
            self._event(
                "response.output_text.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                text=text,
                logprobs=[],
            )
            + self._event(
                "response.content_part.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                part=part,
            )
            + self._event("response.output_item.done", output_index=index, item=done)
        )

    def encode(self, parts: list[dict[str, Any]]) -> bytes:
        out: list[bytes] = []
        run: list[str] = []

        def flush_text() -> None:
            if not run:
                return
            if self._message is None:
                self._message = self._message_item(f"msg_{_hex()}", None, "in_progress")
                self.output.append(self._message)
                index = len(self.output) - 1
                out.append(
                    self._event(
                        "response.output_item.added", output_index=index, item=self._message
                    )
                )
                out.append(
                    self._event(
                        "response.content_part.added",
                        item_id=self._message["id"],
                        output_index=index,
                        content_index=0,
                        part={"type": "output_text", "text": "", "annotations": [], "logprobs": []},
                    )
                )
            delta = "".join(run)
            run.clear()
            self._text.append(delta)
            out.append(
                self._event(
                    "response.output_text.delta",
                    item_id=self._message["id"],
                    output_index=len(self.output) - 1,
                    content_index=0,
                    delta=delta,
                    logprobs=[],
                )
            )

        for part in parts:
            if part["type"] == "text":
                run.append(part["value"])
                continue
            flush_text()
            out.append(self._close_message())
            item = self._call_item(part, "in_progress", arguments="")
            self.output.append(item)
            index = len(self.output) - 1
            arguments = _arguments(part["parameters"])
            done = {**item, "status": "completed", "arguments": arguments}
            self.output[index] = done
            out.append(self._event("response.output_item.added", output_index=index, item=item))
            out.append(
                self._event(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=arguments,
                )
            )
            out.append(
                self._event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=index,
                    name=part["toolName"],
                    arguments=arguments,
                )
            )
            out.append(self._event("response.output_item.done", output_index=index, item=done))
        flush_text()
        return b"".join(out)

    def end(self) -> bytes:
        closing = self._close_message()
        status = self.status()
        kind = "response.completed" if status == "completed" else "response.incomplete"
        return closing + self._event(kind, response=self.resource(status, list(self.output)))

    def error(self, err: OpenAIError) -> bytes:
        closing = self._close_message()
        return (
            closing
            + self._event(
                "response.failed", response=self.resource("failed", list(self.output), err)
            )
            + self._event("error", code=err.code or err.type, message=err.message, param=err.param)
        )


def reply_message(parts: list[dict[str, Any]]) -> Message | None:
    """The agent's reply as the tracker recorded it: one assistant message, parts in order."""
    content = core_parts(parts)
    return message("assistant", content) if content else None


__all__ = [
    "ReplyMemory",
    "ResponseStore",
    "ResponsesEncoder",
    "ResponsesParams",
    "StoredResponse",
    "parse_responses",
    "reply_message",
]
