"""A Responses API request (`POST /v1/responses`) → the parameters of its exchange.

Input items are mapped like Chat messages (`function_call` items join the assistant message before
them: that is how the tracker recorded the reply); `previous_response_id` puts the stored
conversation first. Each refusal is a 400 (or 404 for an unknown stored response) naming the
`param`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bridge.openai.content import content_text, message, parse_arguments, text_message, text_part
from bridge.openai.errors import bad_request, not_found, unsupported
from bridge.openai.params import check_common, model_of, optional_int
from bridge.openai.responses_store import ResponseStore
from bridge.openai.tools import apply_tool_choice, function_tools, tool_options
from bridge.protocol import Message, TextPart, ToolCallPart, ToolDefinition, ToolResultPart


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


class _InputReader:
    """Reads `input` items in order: what each becomes, and the calls a later
    `function_call_output` may answer."""

    def __init__(self, known_calls: set[str]) -> None:
        self.known_calls = known_calls
        self.out: list[Message] = []
        self.size = 0
        self.open_assistant: Message | None = None  # the assistant message function_call items join

    def read(self, item: Any, where: str) -> None:
        if not isinstance(item, dict):
            raise bad_request(f"Invalid type for '{where}': expected an object.", where)
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            self.message(item, where)
        elif kind == "function_call":
            self.function_call(item, where)
        elif kind == "function_call_output":
            self.function_call_output(item, where)
        elif kind != "reasoning":  # (reasoning items are the client's record only)
            raise bad_request(
                f"Invalid value for '{where}.type': {kind!r} is not a supported input item.",
                f"{where}.type",
            )

    def assistant(self) -> Message:
        if self.open_assistant is None:
            self.open_assistant = message("assistant", [])
            self.out.append(self.open_assistant)
        return self.open_assistant

    def message(self, item: dict[str, Any], where: str) -> None:
        role = item.get("role")
        if role in ("user", "system", "developer"):
            text = content_text(item.get("content"), f"{where}.content", allow_media=role == "user")
            self.size += len(text)
            self.out.append(text_message("user", text))
            self.open_assistant = None
        elif role == "assistant":
            text = content_text(item.get("content"), f"{where}.content", allow_media=False)
            self.size += len(text)
            assistant = self.assistant()
            if text:
                assistant.content.append(text_part(text))
        else:
            raise bad_request(f"Invalid value for '{where}.role': {role!r}.", f"{where}.role")

    def function_call(self, item: dict[str, Any], where: str) -> None:
        call_id, name = item.get("call_id"), item.get("name")
        if not isinstance(call_id, str) or not call_id:
            raise bad_request(f"Missing required parameter: '{where}.call_id'.", f"{where}.call_id")
        if not isinstance(name, str) or not name:
            raise bad_request(f"Missing required parameter: '{where}.name'.", f"{where}.name")
        args = item.get("arguments")
        self.size += len(args) if isinstance(args, str) else 0
        self.assistant().content.append(
            ToolCallPart(
                toolCallId=call_id,
                toolName=name,
                parameters=parse_arguments(args, f"{where}.arguments"),
            )
        )
        self.known_calls.add(call_id)

    def function_call_output(self, item: dict[str, Any], where: str) -> None:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            raise bad_request(f"Missing required parameter: '{where}.call_id'.", f"{where}.call_id")
        if call_id not in self.known_calls:
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
        self.size += len(text)
        self.out.append(message("user", [ToolResultPart(toolCallId=call_id, result=text)]))
        self.open_assistant = None


def _input_messages(raw: Any, known_calls: set[str]) -> tuple[list[Message], int]:
    if isinstance(raw, str):
        return [text_message("user", raw)], len(raw)
    if not isinstance(raw, list):
        raise bad_request(
            "Invalid type for 'input': expected a string or an array of input items.", "input"
        )
    reader = _InputReader(known_calls)
    for i, item in enumerate(raw):
        reader.read(item, f"input[{i}]")
    return [m for m in reader.out if m.content or m.role != "assistant"], reader.size


def _previous_messages(body: dict[str, Any], store: ResponseStore, principal: str) -> list[Message]:
    """The stored conversation `previous_response_id` continues (none without it)."""
    previous_id = body.get("previous_response_id")
    if previous_id is None:
        return []
    if not isinstance(previous_id, str):
        raise bad_request(
            "Invalid type for 'previous_response_id': expected a string.", "previous_response_id"
        )
    previous = store.get(previous_id, principal)
    if previous is None:
        raise not_found(
            f"Previous response with id '{previous_id}' not found.", "previous_response_id"
        )
    return list(previous.messages)


def _refuse_unsupported(body: dict[str, Any]) -> None:
    """What the Responses API offers and an agent bridge cannot, refused naming the `param`."""
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


def _declared(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    """The request's tools as the response object lists them."""
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.inputSchema,
            "strict": False,
        }
        for t in tools
    ]


def parse_responses(body: Any, store: ResponseStore, principal: str) -> ResponsesParams:
    if not isinstance(body, dict):
        raise bad_request("The request body must be a JSON object.")
    model = model_of(body)
    messages = _previous_messages(body, store, principal)
    _refuse_unsupported(body)
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
        messages.append(text_message("user", instructions))
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
    max_tokens = optional_int(body, "max_output_tokens", 1)
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
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise bad_request("Invalid type for 'metadata': expected an object.", "metadata")
    return ResponsesParams(
        model=model,
        messages=messages,
        tools=offered,
        declared_tools=_declared(tools),
        tool_choice=body.get("tool_choice", "auto"),
        prompt_suffix=suffix,
        stream=bool(stream),
        max_tokens=max_tokens,
        user=user or None,
        auto_tools=auto_tools,
        max_tool_rounds=rounds,
        prompt_tokens=max(1, math.ceil(size / 4)),
        instructions=instructions,
        previous_response_id=body.get("previous_response_id"),
        store=body.get("store", True) is not False,
        metadata=metadata,
        parallel_tool_calls=body.get("parallel_tool_calls", True) is not False,
        output_format=output_format,
    )
