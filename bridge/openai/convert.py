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

Seed 004's rules are enforced with 400s that name the field: tools must be `type: "function"` with a
name and an object schema; a `tool` message needs a `tool_call_id` naming a tool call of an earlier
assistant message.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from bridge.openai.errors import OpenAIError, bad_request, unsupported
from bridge.protocol import Message, TextPart, ToolCallPart, ToolDefinition, ToolResultPart
from bridge.tool_results import CLIENT_TOOL_SERVER

_JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


def estimate_tokens(text: str) -> int:
    """The bridge's token estimate (as `lm/provideTokenCount`): UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# --- remembered shapes ----------------------------------------------------------------------------


class ReplyMemory:
    """What the wire format loses and the tracker needs back.

    * A reply whose text continues after a tool call (an agent's rendered tool progress) is echoed
      by a Chat client as one `content` string plus `tool_calls`: the order of the parts is kept
      here, by the reply's first call id, and restored when the echo matches.
    * A legacy `function_call` has no id: the id the agent's call got is kept by (name, arguments).

    Each table keeps at most `limit` entries, each for `max_age` seconds, the oldest dropped
    first. A reply whose shape was dropped is read in the wire's order (text, then calls); a
    legacy call whose id was dropped gets the id derived from its name and arguments.
    """

    def __init__(
        self,
        limit: int = 2048,
        max_age: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.max_age = max_age
        self._clock = clock
        self._replies: OrderedDict[str, list[Any]] = OrderedDict()
        self._legacy: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._stored_at: dict[int, OrderedDict[Any, float]] = {
            id(self._replies): OrderedDict(),
            id(self._legacy): OrderedDict(),
        }

    def remember_reply(self, parts: list[Any]) -> None:
        first_call = next((p for p in parts if isinstance(p, ToolCallPart)), None)
        if first_call is None:
            return
        first_index = parts.index(first_call)
        if not any(isinstance(p, TextPart) for p in parts[first_index:]):
            return  # text only before the calls: the echo's natural order is already right
        self._put(self._replies, first_call.toolCallId, list(parts))

    def restore_reply(self, text: str, calls: list[ToolCallPart]) -> list[Any] | None:
        if not calls:
            return None
        self._expire(self._replies)
        parts = self._replies.get(calls[0].toolCallId)
        if parts is None:
            return None
        recorded_text = "".join(p.value for p in parts if isinstance(p, TextPart))
        recorded_calls = [p for p in parts if isinstance(p, ToolCallPart)]
        if recorded_text != text or [(c.toolCallId, c.toolName) for c in recorded_calls] != [
            (c.toolCallId, c.toolName) for c in calls
        ]:
            return None
        by_id = {c.toolCallId: c for c in calls}  # the client's parameters (compared by value)
        return [by_id[p.toolCallId] if isinstance(p, ToolCallPart) else p for p in parts]

    def remember_legacy(self, name: str, arguments: str, call_id: str) -> None:
        self._put(self._legacy, (name, _canonical_args(arguments)), call_id)

    def legacy_id(self, name: str, arguments: str) -> str:
        key = (name, _canonical_args(arguments))
        self._expire(self._legacy)
        found = self._legacy.get(key)
        if found is not None:
            return found
        return "call_" + hashlib.sha256(f"{key[0]}\0{key[1]}".encode()).hexdigest()[:24]

    def _put(self, table: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        stored_at = self._stored_at[id(table)]
        table[key] = value
        table.move_to_end(key)
        stored_at[key] = self._clock()
        stored_at.move_to_end(key)
        while len(table) > self.limit:
            old, _ = table.popitem(last=False)
            stored_at.pop(old, None)
        self._expire(table)

    def _expire(self, table: OrderedDict[Any, Any]) -> None:
        stored_at = self._stored_at[id(table)]
        cutoff = self._clock() - self.max_age
        while stored_at:
            key, when = next(iter(stored_at.items()))
            if when > cutoff:
                break
            del stored_at[key]
            table.pop(key, None)


def _canonical_args(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except (ValueError, TypeError):
        return arguments


# --- content ----------------------------------------------------------------------------------------


def _placeholder(part: dict[str, Any], kind: str) -> str:
    if kind in ("image_url", "input_image"):
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str) and url.startswith("data:"):
            return f"[Image: {url[5:].split(';', 1)[0].split(',', 1)[0] or 'image'}]"
        if isinstance(url, str) and len(url) <= 2048:
            return f"[Image: {url}]"
        return "[Image]"
    if kind in ("input_audio",):
        audio = part.get("input_audio")
        fmt = audio.get("format") if isinstance(audio, dict) else None
        return f"[Audio: {fmt or 'audio'}]"
    if kind in ("file", "input_file"):
        inner = part.get("file")
        file = inner if isinstance(inner, dict) else part
        return f"[File: {file.get('filename') or file.get('file_id') or 'file'}]"
    return f"[{kind}]"


_TEXT_KINDS = {"text", "input_text", "output_text", "refusal"}
_MEDIA_KINDS = {"image_url", "input_image", "input_audio", "file", "input_file"}


def content_text(content: Any, where: str, *, allow_media: bool = True) -> str:
    """A message's `content` (a string, null, or a list of content parts) as one text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise bad_request(
            f"Invalid type for '{where}': expected a string or an array of content parts.", where
        )
    texts: list[str] = []
    for i, part in enumerate(content):
        here = f"{where}[{i}]"
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise bad_request(f"Invalid type for '{here}': expected an object.", here)
        kind = part.get("type")
        if kind in _TEXT_KINDS:
            value = part.get("text") if kind != "refusal" else part.get("refusal", part.get("text"))
            if not isinstance(value, str):
                raise bad_request(f"Missing required parameter: '{here}.text'.", f"{here}.text")
            texts.append(value)
        elif kind in _MEDIA_KINDS and allow_media:
            texts.append(_placeholder(part, kind))
        else:
            raise bad_request(
                f"Invalid value for '{here}.type': {kind!r} is not a supported content part.",
                f"{here}.type",
            )
    return "".join(texts)


def _construct(cls: Any, values: dict[str, Any]) -> Any:
    """`cls.model_construct(**values)` for complete, trusted values, at a fraction of its cost (it
    runs for every message of every request)."""
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


def text_part(text: str) -> TextPart:
    part: TextPart = _construct(TextPart, {"type": "text", "value": text})
    return part


def message(role: str, content: list[Any]) -> Message:
    msg: Message = _construct(Message, {"role": role, "content": content})
    return msg


_TEXT_CACHE: OrderedDict[tuple[str, str], Message] = OrderedDict()
_TEXT_CACHE_LIMIT = (
    4096  # messages (of at most _TEXT_CACHE_MAX_CHARS each), least recently used dropped
)
_TEXT_CACHE_MAX_CHARS = 4096  # a longer text costs more to parse than to wrap: not kept


def _text_message(role: str, text: str) -> Message:
    """A one-text message. A conversation's earlier messages come back with every request: they
    are made once and shared (nothing mutates a client's messages; the tracker copies to merge)."""
    key = (role, text)
    cached = _TEXT_CACHE.get(key)
    if cached is not None:
        content = cached.content
        only = content[0] if len(content) == 1 else None
        if (isinstance(only, TextPart) and only.value == text) if text else not content:
            _TEXT_CACHE.move_to_end(key)
            return cached  # (checked: a shared message must never have been changed)
    made = message(role, [text_part(text)] if text else [])
    if len(text) > _TEXT_CACHE_MAX_CHARS:
        return made
    _TEXT_CACHE[key] = made
    if len(_TEXT_CACHE) > _TEXT_CACHE_LIMIT:
        _TEXT_CACHE.popitem(last=False)
    return made


def _parse_arguments(arguments: Any, where: str) -> Any:
    if arguments is None or arguments == "":
        return {}
    if not isinstance(arguments, str):
        raise bad_request(f"Invalid type for '{where}': expected a JSON string.", where)
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments  # kept verbatim: an echo compares equal to itself


# --- tools ------------------------------------------------------------------------------------------


def _check_schema(schema: Any, where: str) -> None:
    if not isinstance(schema, dict):
        raise bad_request(
            f"Invalid schema for function: '{where}' must be a JSON Schema object.", where
        )
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if not all(isinstance(k, str) and k in _JSON_TYPES for k in kinds) or (
        kind is not None and not kinds
    ):
        raise bad_request(
            f"Invalid schema for function: '{where}.type' is not a JSON Schema type.",
            f"{where}.type",
        )
    props = schema.get("properties")
    if props is not None and (
        not isinstance(props, dict) or not all(isinstance(v, (dict, bool)) for v in props.values())
    ):
        raise bad_request(
            f"Invalid schema for function: '{where}.properties' must map names to schemas.",
            f"{where}.properties",
        )
    required = schema.get("required")
    if required is not None and (
        not isinstance(required, list) or not all(isinstance(r, str) for r in required)
    ):
        raise bad_request(
            f"Invalid schema for function: '{where}.required' must be an array of strings.",
            f"{where}.required",
        )


def _tool(name: Any, description: Any, parameters: Any, where: str) -> ToolDefinition:
    if not isinstance(name, str) or not name:
        raise bad_request(f"Missing required parameter: '{where}.name'.", f"{where}.name")
    if description is not None and not isinstance(description, str):
        raise bad_request(
            f"Invalid type for '{where}.description': expected a string.", f"{where}.description"
        )
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    else:
        _check_schema(parameters, f"{where}.parameters")
    return ToolDefinition(name=name, description=description or "", inputSchema=parameters)


def function_tools(raw: Any, *, flat: bool) -> list[ToolDefinition]:
    """A request's `tools` array → definitions: each an object of type `function`, its definition
    under `function` (Chat Completions) or, with `flat`, also beside `type` (the Responses API)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad_request("Invalid type for 'tools': expected an array.", "tools")
    out: list[ToolDefinition] = []
    for i, tool in enumerate(raw):
        where = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise bad_request(f"Invalid type for '{where}': expected an object.", where)
        if tool.get("type") != "function":
            raise bad_request(
                f"Invalid value for '{where}.type': only 'function' tools are supported.",
                f"{where}.type",
            )
        fn = tool.get("function")
        if isinstance(fn, dict):
            where = where if flat else f"{where}.function"
        elif flat:
            fn = tool
        else:
            raise bad_request(
                f"Missing required parameter: '{where}.function'.", f"{where}.function"
            )
        out.append(_tool(fn.get("name"), fn.get("description"), fn.get("parameters"), where))
    return out


def chat_tools(body: dict[str, Any]) -> tuple[list[ToolDefinition], bool]:
    """`tools` (or legacy `functions`) → definitions, and whether the legacy form was used."""
    tools = body.get("tools")
    functions = body.get("functions")
    if tools is not None and functions is not None:
        raise bad_request(
            "Use either 'tools' or the deprecated 'functions', not both.", "functions"
        )
    out: list[ToolDefinition] = []
    if tools is not None:
        out = function_tools(tools, flat=False)
    elif functions is not None:
        if not isinstance(functions, list):
            raise bad_request("Invalid type for 'functions': expected an array.", "functions")
        for i, fn in enumerate(functions):
            if not isinstance(fn, dict):
                raise bad_request(
                    f"Invalid type for 'functions[{i}]': expected an object.", f"functions[{i}]"
                )
            out.append(
                _tool(
                    fn.get("name"), fn.get("description"), fn.get("parameters"), f"functions[{i}]"
                )
            )
    names = [t.name for t in out]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise bad_request(f"Duplicate tool name {dup!r}: tool names must be unique.", "tools")
    return out, functions is not None


def apply_tool_choice(
    tools: list[ToolDefinition], choice: Any, param: str
) -> tuple[list[ToolDefinition], str]:
    """The tools offered to the agent for `tool_choice` and the prompt-only hint it needs.

    `none` offers none; `auto` all; `required` all, and tells the agent a call is required; a named
    function offers only that one and asks for it. The agent decides in the end: an ACP agent has
    no tool mode to force.
    """
    if choice is None or choice == "auto":
        return tools, ""
    if choice == "none":
        return [], ""
    if choice == "required" or choice == "any":
        if not tools:
            raise bad_request(
                f"Invalid value for '{param}': 'required' needs at least one tool.", param
            )
        return tools, (
            f"[The client requires a tool call: answer by calling one of the tools of the "
            f"`{CLIENT_TOOL_SERVER}` MCP server.]"
        )
    name = None
    if isinstance(choice, dict):
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else choice.get("name")
    if not isinstance(name, str):
        raise bad_request(
            f"Invalid value for '{param}': expected 'none', 'auto', 'required' or a named function.",
            param,
        )
    chosen = [t for t in tools if t.name == name]
    if not chosen:
        raise bad_request(f"Invalid value for '{param}': no tool named {name!r} was given.", param)
    return chosen, (
        f"[The client requires a tool call: answer by calling the tool `{name}` of the "
        f"`{CLIENT_TOOL_SERVER}` MCP server.]"
    )


# --- chat messages ------------------------------------------------------------------------------------


def chat_messages(raw: Any, memory: ReplyMemory) -> tuple[list[Message], int]:
    """Chat `messages` → core messages and the prompt's token estimate."""
    if not isinstance(raw, list) or not raw:
        if raw is None:
            raise bad_request("Missing required parameter: 'messages'.", "messages")
        raise bad_request("Invalid value for 'messages': expected a non-empty array.", "messages")
    out: list[Message] = []
    known_calls: set[str] = set()
    legacy_pending: list[tuple[str, str]] = []  # (name, id) of legacy calls not yet answered
    size = 0
    for i, msg in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise bad_request(f"Invalid type for '{where}': expected an object.", where)
        role = msg.get("role")
        if role in ("system", "developer", "user"):
            text = content_text(msg.get("content"), f"{where}.content", allow_media=role == "user")
            if "content" not in msg:
                raise bad_request(
                    f"Missing required parameter: '{where}.content'.", f"{where}.content"
                )
            size += len(text)
            out.append(_text_message("user", text))
        elif role == "assistant":
            text = content_text(msg.get("content"), f"{where}.content", allow_media=False)
            size += len(text)
            calls: list[ToolCallPart] = []
            tool_calls = msg.get("tool_calls")
            if tool_calls is not None:
                if not isinstance(tool_calls, list):
                    raise bad_request(
                        f"Invalid type for '{where}.tool_calls': expected an array.",
                        f"{where}.tool_calls",
                    )
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
                            f"Missing required parameter: '{cw}.function.name'.",
                            f"{cw}.function.name",
                        )
                    args = fn.get("arguments")
                    size += len(args) if isinstance(args, str) else 0
                    calls.append(
                        ToolCallPart(
                            toolCallId=call_id,
                            toolName=fn["name"],
                            parameters=_parse_arguments(args, f"{cw}.function.arguments"),
                        )
                    )
                    known_calls.add(call_id)
            fc = msg.get("function_call")
            if fc is not None:
                if not isinstance(fc, dict) or not isinstance(fc.get("name"), str):
                    raise bad_request(
                        f"Missing required parameter: '{where}.function_call.name'.",
                        f"{where}.function_call.name",
                    )
                raw_args = fc.get("arguments")
                args = raw_args if isinstance(raw_args, str) else ""
                call_id = memory.legacy_id(fc["name"], args)
                calls.append(
                    ToolCallPart(
                        toolCallId=call_id,
                        toolName=fc["name"],
                        parameters=_parse_arguments(args, f"{where}.function_call.arguments"),
                    )
                )
                known_calls.add(call_id)
                legacy_pending.append((fc["name"], call_id))
            if not calls:
                if text:
                    out.append(_text_message("assistant", text))
                continue
            parts: list[Any] | None = memory.restore_reply(text, calls) if text else None
            if parts is None:
                parts = ([text_part(text)] if text else []) + calls
            if parts:
                out.append(message("assistant", parts))
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise bad_request(
                    f"Missing required parameter: '{where}.tool_call_id'.", f"{where}.tool_call_id"
                )
            if call_id not in known_calls:
                raise bad_request(
                    f"Invalid parameter: '{where}.tool_call_id' {call_id!r} does not match the id of a tool call "
                    "in a preceding assistant message.",
                    f"{where}.tool_call_id",
                )
            text = content_text(msg.get("content"), f"{where}.content", allow_media=False)
            size += len(text)
            out.append(message("user", [ToolResultPart(toolCallId=call_id, result=text)]))
        elif role == "function":
            name = msg.get("name")
            if not isinstance(name, str):
                raise bad_request(f"Missing required parameter: '{where}.name'.", f"{where}.name")
            match = next(
                (k for k in range(len(legacy_pending) - 1, -1, -1) if legacy_pending[k][0] == name),
                None,
            )
            if match is None:
                raise bad_request(
                    f"Invalid parameter: '{where}' answers no function_call of {name!r} in a preceding assistant message.",
                    f"{where}.name",
                )
            call_id = legacy_pending.pop(match)[1]
            text = content_text(msg.get("content"), f"{where}.content", allow_media=False)
            size += len(text)
            out.append(message("user", [ToolResultPart(toolCallId=call_id, result=text)]))
        else:
            raise bad_request(
                f"Invalid value for '{where}.role': {role!r} (expected system, developer, user, assistant or tool).",
                f"{where}.role",
            )
    return out, max(1, math.ceil(size / 4))


# --- the request, whole -------------------------------------------------------------------------------


def _number(body: dict[str, Any], key: str, low: float, high: float) -> None:
    value = body.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise bad_request(
            f"Invalid value for '{key}': expected a number between {low:g} and {high:g}.", key
        )


def check_common(body: dict[str, Any]) -> None:
    """Parameters both APIs share: sampling values OpenAI would reject are rejected (in range they
    are accepted and have no effect: an ACP agent chooses its own model settings — the README
    says so); what an agent bridge cannot honour is refused, naming the `param`."""
    _number(body, "temperature", 0, 2)
    _number(body, "top_p", 0, 1)
    _number(body, "presence_penalty", -2, 2)
    _number(body, "frequency_penalty", -2, 2)
    seed = body.get("seed")
    if seed is not None and not _is_int(seed):
        raise bad_request("Invalid type for 'seed': expected an integer.", "seed")
    if body.get("logprobs"):
        raise unsupported(
            "Log probabilities are not available: an agent does not report them.", "logprobs"
        )
    if body.get("top_logprobs") is not None:
        raise unsupported(
            "Log probabilities are not available: an agent does not report them.", "top_logprobs"
        )
    if body.get("logit_bias"):
        raise unsupported("'logit_bias' cannot be applied to an agent's model.", "logit_bias")


def parse_stop(body: dict[str, Any]) -> list[str]:
    """`stop`: a string or up to 4 strings (OpenAI's limit)."""
    stop = body.get("stop")
    if stop is None:
        return []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise bad_request(
            "Invalid type for 'stop': expected a string or an array of strings.", "stop"
        )
    if len(stop) > 4:
        raise bad_request(
            f"Invalid value for 'stop': at most 4 stop sequences are allowed ({len(stop)} given).",
            "stop",
        )
    return [s for s in stop if s]


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


def _optional_int(body: dict[str, Any], key: str, minimum: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if not _is_int(value) or value < minimum:
        raise bad_request(f"Invalid value for '{key}': expected an integer >= {minimum}.", key)
    return value


def model_of(body: dict[str, Any]) -> str:
    model = body.get("model")
    if model is None:
        raise bad_request("You must provide a model parameter.", "model")
    if not isinstance(model, str) or not model:
        raise bad_request("Invalid type for 'model': expected a string.", "model")
    return model


def tool_options(body: dict[str, Any]) -> tuple[bool, int]:
    """Seed 004's proxy options: `tool_execution`, `use_vscode_tools`, `max_tool_rounds`."""
    execution = body.get("tool_execution", "none")
    if execution not in (None, "none", "auto"):
        raise bad_request(
            "Invalid value for 'tool_execution': expected 'none' or 'auto'.", "tool_execution"
        )
    use = body.get("use_vscode_tools", False)
    if use is not None and not isinstance(use, bool):
        raise bad_request(
            "Invalid type for 'use_vscode_tools': expected a boolean.", "use_vscode_tools"
        )
    rounds = _optional_int(body, "max_tool_rounds", 0)
    return execution == "auto" or bool(use), 10 if rounds is None else rounds


def parse_chat(body: Any, memory: ReplyMemory) -> ChatParams:
    if not isinstance(body, dict):
        raise bad_request("The request body must be a JSON object.")
    model = model_of(body)
    messages, prompt_tokens = chat_messages(body.get("messages"), memory)
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
    include_usage = bool((options or {}).get("include_usage"))
    check_common(body)
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
    stop = parse_stop(body)
    from bridge.openai.structured import chat_response_format

    output_format = chat_response_format(body)
    n = body.get("n")
    if n is not None:
        if not _is_int(n) or n < 1:
            raise bad_request("Invalid value for 'n': expected an integer >= 1.", "n")
        if n > 1:
            raise unsupported("This bridge answers with one choice: 'n' must be 1.", "n")
    max_tokens = _optional_int(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = _optional_int(body, "max_tokens", 1)
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


def is_retry(headers: dict[bytes, bytes]) -> bool:
    raw = headers.get(b"x-stainless-retry-count")
    try:
        return raw is not None and int(raw) > 0
    except ValueError:
        return False


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
    "tool_options",
]
