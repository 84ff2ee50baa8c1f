"""OpenAI request bodies → the core's `Message` / `ToolDefinition` lists, validated.

The mapping is the vscodelm front door's, so the history tracker sees the conversation the client
holds, whichever front door it came through:

* `system` / `developer` → a user message with that text;
* `user` → a user message: its text parts (images, audio and files become `[Image: mime]`-style
  placeholders — the agent is prompted with text);
* `assistant` → an assistant message: its text, then a `ToolCallPart(toolCallId=call id,
  toolName=function name, parameters=parsed arguments)` per tool call (legacy `function_call` too);
* `tool` (and legacy `function`) → a user message with one `ToolResultPart(toolCallId, text)`.

Empty text is dropped and an assistant message with nothing in it is left out: the agent never
streams empty text, so the tracker's record of a reply has none.

Malformed requests get 400s that name the field: tools must be `type: "function"` with a name and
an object schema (`tools.py`); a `tool` message needs a `tool_call_id` naming a tool call of an
earlier assistant message. Content parts: `content.py`; what the echo of a reply loses:
`memory.py`; the parameters both APIs share: `params.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from bridge.openai.content import (
    content_text,
    estimate_tokens,
    message,
    parse_arguments,
    text_message,
    text_part,
)
from bridge.openai.errors import OpenAIError, bad_request, unsupported
from bridge.openai.memory import ReplyMemory
from bridge.openai.params import check_common, is_int, model_of, optional_int, parse_stop
from bridge.openai.tools import apply_tool_choice, chat_tools, tool_options
from bridge.protocol import Message, ToolCallPart, ToolDefinition, ToolResultPart

# --- chat messages ------------------------------------------------------------------------------------


class _ChatReader:
    """Reads a Chat `messages` array in order: what each role becomes, and the tool calls a later
    `tool` (or legacy `function`) message may answer."""

    def __init__(self, memory: ReplyMemory) -> None:
        self.memory = memory
        self.out: list[Message] = []
        self.known_calls: set[str] = set()
        self.legacy_pending: list[tuple[str, str]] = []  # (name, id) of legacy calls not answered
        self.size = 0

    def read(self, msg: Any, where: str) -> None:
        if not isinstance(msg, dict):
            raise bad_request(f"Invalid type for '{where}': expected an object.", where)
        role = msg.get("role")
        if role in ("system", "developer", "user"):
            self.prompt(msg, role, where)
        elif role == "assistant":
            self.assistant(msg, where)
        elif role == "tool":
            self.tool_result(msg, where)
        elif role == "function":
            self.function_result(msg, where)
        else:
            raise bad_request(
                f"Invalid value for '{where}.role': {role!r} (expected system, developer, user, assistant or tool).",
                f"{where}.role",
            )

    def text(self, msg: dict[str, Any], where: str, *, allow_media: bool = False) -> str:
        text = content_text(msg.get("content"), f"{where}.content", allow_media=allow_media)
        self.size += len(text)
        return text

    def prompt(self, msg: dict[str, Any], role: str, where: str) -> None:
        text = content_text(msg.get("content"), f"{where}.content", allow_media=role == "user")
        if "content" not in msg:
            raise bad_request(f"Missing required parameter: '{where}.content'.", f"{where}.content")
        self.size += len(text)
        self.out.append(text_message("user", text))

    def assistant(self, msg: dict[str, Any], where: str) -> None:
        text = self.text(msg, where)
        calls = self.tool_calls(msg.get("tool_calls"), where)
        fc = msg.get("function_call")
        if fc is not None:
            calls.append(self.legacy_call(fc, where))
        if not calls:
            if text:
                self.out.append(text_message("assistant", text))
            return
        parts: list[Any] | None = self.memory.restore_reply(text, calls) if text else None
        if parts is None:
            parts = ([text_part(text)] if text else []) + calls
        if parts:
            self.out.append(message("assistant", parts))

    def tool_calls(self, tool_calls: Any, where: str) -> list[ToolCallPart]:
        if tool_calls is None:
            return []
        if not isinstance(tool_calls, list):
            raise bad_request(
                f"Invalid type for '{where}.tool_calls': expected an array.", f"{where}.tool_calls"
            )
        calls: list[ToolCallPart] = []
        for j, call in enumerate(tool_calls):
            cw = f"{where}.tool_calls[{j}]"
            if not isinstance(call, dict):
                raise bad_request(f"Invalid type for '{cw}': expected an object.", cw)
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise bad_request(f"Missing required parameter: '{cw}.id'.", f"{cw}.id")
            fn = call.get("function")
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise bad_request(
                    f"Missing required parameter: '{cw}.function.name'.", f"{cw}.function.name"
                )
            args = fn.get("arguments")
            self.size += len(args) if isinstance(args, str) else 0
            calls.append(
                ToolCallPart(
                    toolCallId=call_id,
                    toolName=fn["name"],
                    parameters=parse_arguments(args, f"{cw}.function.arguments"),
                )
            )
            self.known_calls.add(call_id)
        return calls

    def legacy_call(self, fc: Any, where: str) -> ToolCallPart:
        """A legacy `function_call`: it has no id, so it gets the one its reply was given."""
        if not isinstance(fc, dict) or not isinstance(fc.get("name"), str):
            raise bad_request(
                f"Missing required parameter: '{where}.function_call.name'.",
                f"{where}.function_call.name",
            )
        raw_args = fc.get("arguments")
        args = raw_args if isinstance(raw_args, str) else ""
        call_id = self.memory.legacy_id(fc["name"], args)
        self.known_calls.add(call_id)
        self.legacy_pending.append((fc["name"], call_id))
        return ToolCallPart(
            toolCallId=call_id,
            toolName=fc["name"],
            parameters=parse_arguments(args, f"{where}.function_call.arguments"),
        )

    def tool_result(self, msg: dict[str, Any], where: str) -> None:
        call_id = msg.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise bad_request(
                f"Missing required parameter: '{where}.tool_call_id'.", f"{where}.tool_call_id"
            )
        if call_id not in self.known_calls:
            raise bad_request(
                f"Invalid parameter: '{where}.tool_call_id' {call_id!r} does not match the id of a tool call "
                "in a preceding assistant message.",
                f"{where}.tool_call_id",
            )
        text = self.text(msg, where)
        self.out.append(message("user", [ToolResultPart(toolCallId=call_id, result=text)]))

    def function_result(self, msg: dict[str, Any], where: str) -> None:
        """A legacy `function` message answers the latest unanswered call of that name."""
        name = msg.get("name")
        if not isinstance(name, str):
            raise bad_request(f"Missing required parameter: '{where}.name'.", f"{where}.name")
        pending = self.legacy_pending
        match = next((k for k in range(len(pending) - 1, -1, -1) if pending[k][0] == name), None)
        if match is None:
            raise bad_request(
                f"Invalid parameter: '{where}' answers no function_call of {name!r} in a preceding assistant message.",
                f"{where}.name",
            )
        call_id = pending.pop(match)[1]
        text = self.text(msg, where)
        self.out.append(message("user", [ToolResultPart(toolCallId=call_id, result=text)]))


def chat_messages(raw: Any, memory: ReplyMemory) -> tuple[list[Message], int]:
    """Chat `messages` → core messages and the prompt's token estimate."""
    if not isinstance(raw, list) or not raw:
        if raw is None:
            raise bad_request("Missing required parameter: 'messages'.", "messages")
        raise bad_request("Invalid value for 'messages': expected a non-empty array.", "messages")
    reader = _ChatReader(memory)
    for i, msg in enumerate(raw):
        reader.read(msg, f"messages[{i}]")
    return reader.out, max(1, math.ceil(reader.size / 4))


# --- the request, whole -------------------------------------------------------------------------------


@dataclass
class ChatParams:
    model: str
    messages: list[Message]
    tools: list[ToolDefinition]  # offered to the agent
    prompt_suffix: str
    stream: bool
    include_usage: bool
    max_tokens: int | None
    legacy: bool  # answered with `function_call` rather than `tool_calls`
    user: str | None
    auto_tools: bool  # give the agent the configured MCP servers
    max_tool_rounds: int  # 0: unlimited
    prompt_tokens: int
    stop: list[str] = field(default_factory=list)
    parallel_tool_calls: bool = True
    output_format: Any = None  # a structured.OutputFormat
    extra: dict[str, Any] = field(default_factory=dict)


def _stream_options(body: dict[str, Any]) -> tuple[Any, bool]:
    """`stream` and, only with it, `stream_options.include_usage`."""
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise bad_request("Invalid type for 'stream': expected a boolean.", "stream")
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise bad_request(
            "Invalid type for 'stream_options': expected an object.", "stream_options"
        )
    if options is not None and not stream:
        raise bad_request(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        )
    return stream, bool((options or {}).get("include_usage"))


def _refuse_other_outputs(body: dict[str, Any]) -> None:
    """An agent answers with one choice of text: other outputs are refused, naming the `param`."""
    modalities = body.get("modalities")
    if modalities is not None and (
        not isinstance(modalities, list) or any(m != "text" for m in modalities)
    ):
        raise unsupported(
            "An agent answers with text only: 'modalities' must be ['text'].", "modalities"
        )
    if body.get("audio") is not None:
        raise unsupported(
            "An agent answers with text only: audio output is not available.", "audio"
        )
    if body.get("prediction") is not None:
        raise unsupported("Predicted outputs cannot be applied to an agent's model.", "prediction")
    if body.get("web_search_options") is not None:
        raise unsupported("Web search options cannot be applied to an agent.", "web_search_options")


def _check_n(body: dict[str, Any]) -> None:
    n = body.get("n")
    if n is not None:
        if not is_int(n) or n < 1:
            raise bad_request("Invalid value for 'n': expected an integer >= 1.", "n")
        if n > 1:
            raise unsupported("This bridge answers with one choice: 'n' must be 1.", "n")


def parse_chat(body: Any, memory: ReplyMemory) -> ChatParams:
    if not isinstance(body, dict):
        raise bad_request("The request body must be a JSON object.")
    model = model_of(body)
    messages, prompt_tokens = chat_messages(body.get("messages"), memory)
    stream, include_usage = _stream_options(body)
    check_common(body)
    _refuse_other_outputs(body)
    stop = parse_stop(body)
    from bridge.openai.structured import chat_response_format

    output_format = chat_response_format(body)
    _check_n(body)
    max_tokens = optional_int(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = optional_int(body, "max_tokens", 1)
    user = body.get("user")
    if user is not None and not isinstance(user, str):
        raise bad_request("Invalid type for 'user': expected a string.", "user")
    tools, legacy = chat_tools(body)
    choice_param = "function_call" if legacy else "tool_choice"
    offered, suffix = apply_tool_choice(tools, body.get(choice_param), choice_param)
    if body.get("parallel_tool_calls") not in (None, True, False):
        raise bad_request(
            "Invalid type for 'parallel_tool_calls': expected a boolean.", "parallel_tool_calls"
        )
    auto_tools, rounds = tool_options(body)
    if output_format is not None:
        suffix = (
            f"{suffix}\n\n{output_format.instruction()}" if suffix else output_format.instruction()
        )
    return ChatParams(
        model=model,
        messages=messages,
        tools=offered,
        prompt_suffix=suffix,
        stream=bool(stream),
        include_usage=include_usage,
        max_tokens=max_tokens,
        legacy=legacy,
        user=user or None,
        auto_tools=auto_tools,
        max_tool_rounds=rounds,
        prompt_tokens=prompt_tokens,
        stop=stop,
        parallel_tool_calls=body.get("parallel_tool_calls") is not False,
        output_format=output_format,
    )


__all__ = [
    "ChatParams",
    "OpenAIError",
    "ReplyMemory",
    "apply_tool_choice",
    "chat_messages",
    "chat_tools",
    "content_text",
    "estimate_tokens",
    "model_of",
    "parse_chat",
    "text_part",
    "tool_options",
]
