"""The client's function tools, both APIs: definitions validated (an object JSON Schema each, unique
names), `tool_choice`, and the proxy's own tool options."""

from __future__ import annotations

import marshal
from typing import Any

from bridge.openai.errors import bad_request
from bridge.openai.params import optional_int
from bridge.protocol import ToolDefinition
from bridge.tool_results import CLIENT_TOOL_SERVER

_JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


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


class _SeenTools:
    """The definitions made of the last few `tools` arrays, by their exact value.

    OpenAI clients send every tool they offer, schema and all, with every request of a
    conversation (an agent framework's 80 tools are ~120 KB a request). Validating them again, and
    then comparing them with the list the agent was given (`ClientToolServer.set_tools`), cost
    ~0.8 ms a request; a list seen before now costs its `marshal` serialization (~40 us for those
    120 KB) and a comparison of bytes, and hands back the very definitions it gave last time,
    which the tool server recognises without comparing them. `marshal` is exact where `==` is not
    (`1`, `1.0` and `true` differ, as do key orders): the same bytes load as the same value, types
    included. (Bytes that differ only in which strings the decoder shared are merely not
    recognised.) Bounded by count and by the size of what it keeps.

    The array of the last request is also known by its identity: a body that repeats its `tools`
    bytes carries the very list the one before did (`bridge.openai.body.KnownTools`), and nothing
    writes to a request's values, so that list is recognised without serializing it."""

    def __init__(self, entries: int = 8, max_bytes: int = 1 << 20) -> None:
        self.entries = entries
        self.max_bytes = max_bytes  # an array serializing to more is not kept
        self._seen: list[tuple[bool, bytes, list[ToolDefinition]]] = []  # oldest first
        self._last: tuple[list[Any], bool, list[ToolDefinition]] | None = None

    def same(self, raw: list[Any], flat: bool) -> list[ToolDefinition] | None:
        """The definitions made of this very list last time (`remember`), if it is that list."""
        last = self._last
        if last is not None and last[0] is raw and last[1] is flat:
            return list(last[2])
        return None

    def remember(self, raw: list[Any], flat: bool, tools: list[ToolDefinition]) -> None:
        self._last = (raw, flat, list(tools))

    def key(self, raw: list[Any], flat: bool) -> tuple[bool, bytes] | None:
        try:
            data = marshal.dumps(raw)
        except ValueError:  # not a decoded JSON value, or nested too deeply
            return None
        return (flat, data) if len(data) <= self.max_bytes else None

    def get(self, key: tuple[bool, bytes]) -> list[ToolDefinition] | None:
        flat, data = key
        seen = self._seen
        for i in range(len(seen) - 1, -1, -1):
            entry = seen[i]
            if entry[0] is flat and entry[1] == data:
                if i != len(seen) - 1:
                    seen.append(seen.pop(i))
                return list(entry[2])
        return None

    def put(self, key: tuple[bool, bytes], tools: list[ToolDefinition]) -> None:
        self._seen.append((key[0], key[1], list(tools)))
        del self._seen[: -self.entries]


SEEN_TOOLS = _SeenTools()


def function_tools(raw: Any, *, flat: bool) -> list[ToolDefinition]:
    """A request's `tools` array → definitions: each an object of type `function`, its definition
    under `function` (Chat Completions) or, with `flat`, also beside `type` (the Responses API).
    An array seen lately, byte for byte, gives the definitions it gave then (`SEEN_TOOLS`), and the
    very list of the last request gives them without being serialized."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad_request("Invalid type for 'tools': expected an array.", "tools")
    same = SEEN_TOOLS.same(raw, flat)
    if same is not None:
        return same
    key = SEEN_TOOLS.key(raw, flat) if raw else None
    if key is not None:
        seen = SEEN_TOOLS.get(key)
        if seen is not None:
            SEEN_TOOLS.remember(raw, flat, seen)
            return seen
    out = _function_tools(raw, flat)
    if key is not None:
        SEEN_TOOLS.put(key, out)
        SEEN_TOOLS.remember(raw, flat, out)
    return out


def _function_tools(raw: list[Any], flat: bool) -> list[ToolDefinition]:
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


def tool_options(body: dict[str, Any]) -> tuple[bool, int]:
    """The bridge's own tool options (docs/clients.md): `tool_execution`, `use_vscode_tools` and
    `max_tool_rounds`; whether the agent gets the configured MCP servers, and its call budget."""
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
    rounds = optional_int(body, "max_tool_rounds", 0)
    return execution == "auto" or bool(use), 10 if rounds is None else rounds
