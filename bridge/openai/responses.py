"""The Responses API (`POST /v1/responses`): input items → core messages, output items, SSE events.

`previous_response_id` continues a stored response: the request's messages are the stored
conversation (its messages and the reply exactly as the tracker recorded it) followed by the new
input, so the tracker commits the previous exchange and the same agent session goes on — tool
round trips included (`function_call_output` items answer the calls the agent is waiting on).
Without it, the input items are mapped like Chat messages (`function_call` items join the
assistant message before them: that is how the tracker recorded the reply).
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge.openai.chat_wire import _arguments, token_counts
from bridge.openai.convert import (
    ReplyMemory,
    _parse_arguments,
    _text_message,
    apply_tool_choice,
    check_common,
    content_text,
    function_tools,
    message,
    model_of,
    text_part,
    tool_options,
)
from bridge.openai.errors import OpenAIError, bad_request, not_found, unsupported
from bridge.protocol import Message, TextPart, ToolCallPart, ToolResultPart

_dumps = json.dumps


@dataclass
class StoredResponse:
    id: str
    principal: str
    messages: list[Message]  # the conversation including this response's reply
    body: dict[str, Any]


class ResponseStore:
    """Stored responses (`store`, default true), per principal: at most `limit`, each for
    `max_age` seconds, the oldest dropped first. A `previous_response_id` naming one that was
    dropped is answered as an unknown id: 404, "Previous response with id … not found"."""

    def __init__(
        self,
        limit: int = 512,
        max_age: float = 24 * 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.max_age = max_age
        self._clock = clock
        self._items: OrderedDict[str, tuple[float, StoredResponse]] = OrderedDict()

    def get(self, response_id: str, principal: str) -> StoredResponse | None:
        self._expire()
        found = self._items.get(response_id)
        item = found[1] if found is not None else None
        return item if item is not None and item.principal == principal else None

    def put(self, item: StoredResponse) -> None:
        self._items[item.id] = (self._clock(), item)
        self._items.move_to_end(item.id)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)
        self._expire()

    def __len__(self) -> int:
        return len(self._items)

    def _expire(self) -> None:
        cutoff = self._clock() - self.max_age
        while self._items:
            stored_at, _ = next(iter(self._items.values()))
            if stored_at > cutoff:
                break
            self._items.popitem(last=False)

    def delete(self, response_id: str, principal: str) -> bool:
        if self.get(response_id, principal) is None:
            return False
        del self._items[response_id]
        return True


@dataclass
class ResponsesParams:
    model: str
    messages: list[Message]
    tools: list[Any]
    declared_tools: list[dict[str, Any]]
    tool_choice: Any
    prompt_suffix: str
    stream: bool
    max_tokens: int | None
    user: str | None
    auto_tools: bool
    max_tool_rounds: int
    prompt_tokens: int
    instructions: str | None
    previous_response_id: str | None
    store: bool
    metadata: dict[str, Any]
    parallel_tool_calls: bool
    output_format: Any = None  # a structured.OutputFormat (`text.format`)
    stop: tuple[str, ...] = ()
    # Chat-shaped fields the exchange machinery reads
    legacy: bool = False
    include_usage: bool = False


def _input_messages(raw: Any, known_calls: set[str]) -> tuple[list[Message], int]:
    if isinstance(raw, str):
        return [_text_message("user", raw)], len(raw)
    if not isinstance(raw, list):
        raise bad_request(
            "Invalid type for 'input': expected a string or an array of input items.", "input"
        )
    out: list[Message] = []
    size = 0
    open_assistant: Message | None = None  # the assistant message function_call items join
    for i, item in enumerate(raw):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise bad_request(f"Invalid type for '{where}': expected an object.", where)
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            if role in ("user", "system", "developer"):
                text = content_text(
                    item.get("content"), f"{where}.content", allow_media=role == "user"
                )
                size += len(text)
                out.append(_text_message("user", text))
                open_assistant = None
            elif role == "assistant":
                text = content_text(item.get("content"), f"{where}.content", allow_media=False)
                size += len(text)
                if open_assistant is None:
                    open_assistant = message("assistant", [])
                    out.append(open_assistant)
                if text:
                    open_assistant.content.append(text_part(text))
            else:
                raise bad_request(f"Invalid value for '{where}.role': {role!r}.", f"{where}.role")
        elif kind == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if not isinstance(call_id, str) or not call_id:
                raise bad_request(
                    f"Missing required parameter: '{where}.call_id'.", f"{where}.call_id"
                )
            if not isinstance(name, str) or not name:
                raise bad_request(f"Missing required parameter: '{where}.name'.", f"{where}.name")
            args = item.get("arguments")
            size += len(args) if isinstance(args, str) else 0
            if open_assistant is None:
                open_assistant = message("assistant", [])
                out.append(open_assistant)
            open_assistant.content.append(
                ToolCallPart(
                    toolCallId=call_id,
                    toolName=name,
                    parameters=_parse_arguments(args, f"{where}.arguments"),
                )
            )
            known_calls.add(call_id)
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise bad_request(
                    f"Missing required parameter: '{where}.call_id'.", f"{where}.call_id"
                )
            if call_id not in known_calls:
                raise bad_request(
                    f"No tool call found for function call output with call_id {call_id}.",
                    f"{where}.call_id",
                )
            output = item.get("output")
            text = (
                output
                if isinstance(output, str)
                else content_text(output, f"{where}.output", allow_media=False)
            )
            size += len(text)
            out.append(message("user", [ToolResultPart(toolCallId=call_id, result=text)]))
            open_assistant = None
        elif kind == "reasoning":
            continue
        else:
            raise bad_request(
                f"Invalid value for '{where}.type': {kind!r} is not a supported input item.",
                f"{where}.type",
            )
    out = [m for m in out if m.content or m.role != "assistant"]
    return out, size


def parse_responses(body: Any, store: ResponseStore, principal: str) -> ResponsesParams:
    if not isinstance(body, dict):
        raise bad_request("The request body must be a JSON object.")
    model = model_of(body)
    previous_id = body.get("previous_response_id")
    messages: list[Message] = []
    if previous_id is not None:
        if not isinstance(previous_id, str):
            raise bad_request(
                "Invalid type for 'previous_response_id': expected a string.",
                "previous_response_id",
            )
        previous = store.get(previous_id, principal)
        if previous is None:
            raise not_found(
                f"Previous response with id '{previous_id}' not found.", "previous_response_id"
            )
        messages = list(previous.messages)
    if body.get("background"):
        raise unsupported(
            "Background responses are not available: ask without 'background' (stream for long "
            "answers).",
            "background",
        )
    check_common(body)
    include = body.get("include")
    if include is not None and not isinstance(include, list):
        raise bad_request("Invalid type for 'include': expected an array.", "include")
    if include and any("logprobs" in str(i) for i in include):
        raise unsupported(
            "Log probabilities are not available: an agent does not report them.", "include"
        )
    from bridge.openai.structured import responses_text_format

    output_format = responses_text_format(body)
    if body.get("conversation") is not None:
        raise unsupported(
            "Conversations are not supported: use previous_response_id.", "conversation"
        )
    known_calls = {p.toolCallId for m in messages for p in m.content if isinstance(p, ToolCallPart)}
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise bad_request("Invalid type for 'instructions': expected a string.", "instructions")
    size = sum(len(p.value) for m in messages for p in m.content if isinstance(p, TextPart))
    if instructions:
        messages.append(_text_message("user", instructions))
        size += len(instructions)
    if "input" not in body:
        raise bad_request("Missing required parameter: 'input'.", "input")
    new, new_size = _input_messages(body.get("input"), known_calls)
    messages += new
    size += new_size
    if not messages:
        raise bad_request("Invalid value for 'input': there is nothing to answer.", "input")
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise bad_request("Invalid type for 'stream': expected a boolean.", "stream")
    max_tokens = body.get("max_output_tokens")
    if max_tokens is not None and (
        not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1
    ):
        raise bad_request(
            "Invalid value for 'max_output_tokens': expected an integer >= 1.", "max_output_tokens"
        )
    tools = function_tools(body.get("tools"), flat=True)
    offered, suffix = apply_tool_choice(tools, body.get("tool_choice"), "tool_choice")
    user = body.get("user") or body.get("safety_identifier")
    if user is not None and not isinstance(user, str):
        raise bad_request("Invalid type for 'user': expected a string.", "user")
    auto_tools, rounds = tool_options(body)
    if output_format is not None:
        suffix = (
            f"{suffix}\n\n{output_format.instruction()}" if suffix else output_format.instruction()
        )
    store_flag = body.get("store", True)
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise bad_request("Invalid type for 'metadata': expected an object.", "metadata")
    return ResponsesParams(
        model=model,
        messages=messages,
        tools=offered,
        declared_tools=[
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.inputSchema,
                "strict": False,
            }
            for t in tools
        ],
        tool_choice=body.get("tool_choice", "auto"),
        prompt_suffix=suffix,
        stream=bool(stream),
        max_tokens=max_tokens,
        user=user or None,
        auto_tools=auto_tools,
        max_tool_rounds=rounds,
        prompt_tokens=max(1, math.ceil(size / 4)),
        instructions=instructions,
        previous_response_id=previous_id,
        store=store_flag is not False,
        metadata=metadata,
        parallel_tool_calls=body.get("parallel_tool_calls", True) is not False,
        output_format=output_format,
    )


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
    content: list[Any] = []
    for part in parts:
        if part["type"] == "text":
            content.append(text_part(part["value"]))
        else:
            content.append(
                ToolCallPart(
                    toolCallId=part["toolCallId"],
                    toolName=part["toolName"],
                    parameters=part["parameters"],
                )
            )
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
