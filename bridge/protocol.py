"""The core's message model: conversations, tool definitions and agent specs, as pydantic models.

Every door reads its requests into these (the vscodelm door's `lm/*` envelopes are in
`bridge.vscodelm.wire`, the OpenAI door's in `bridge.openai`), and the history, the sessions and
the trace work on them. Their JSON shapes are the vscodelm wire's (docs/protocol.md), field names
included (camelCase), so the door that speaks it pays no aliasing cost on the hot path. Unknown keys
are ignored everywhere, as upstream's serde parsing does.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

__all__ = [
    "AgentSpec",
    "ClaudeCodeAgent",
    "ContentPart",
    "ElizaAgent",
    "EnvVariable",
    "ExternalAgent",
    "HttpServer",
    "Message",
    "SseServer",
    "StdioServer",
    "TextPart",
    "ToolCallPart",
    "ToolDefinition",
    "ToolResultPart",
    "describe_validation_error",
    "parse_agent",
]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=False)


# --- content ---------------------------------------------------------------------------------


class TextPart(_Wire):
    type: Literal["text"] = "text"
    value: str


MAX_JSON_DEPTH = 128  # well inside pydantic's serialization limit and the history's recursion


def _not_too_deep(value: Any) -> Any:
    """Reject an opaque JSON value nested deeper than MAX_JSON_DEPTH (walked without recursion)."""
    if not isinstance(value, (dict, list)):
        return value
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return value


OpaqueJson = Annotated[Any, AfterValidator(_not_too_deep)]


class ToolCallPart(_Wire):
    type: Literal["tool_call"] = "tool_call"
    toolCallId: str
    toolName: str
    parameters: OpaqueJson  # required on the wire (no default); null accepted


class ToolResultPart(_Wire):
    type: Literal["tool_result"] = "tool_result"
    toolCallId: str
    result: OpaqueJson  # required on the wire (no default); null accepted


ContentPart = Annotated[TextPart | ToolCallPart | ToolResultPart, Field(discriminator="type")]


class Message(_Wire):
    role: str
    content: list[ContentPart]


class ToolDefinition(_Wire):
    name: str
    description: str
    inputSchema: Any = None


# --- agent definitions (architecture decision 1) ------------------------------------------------


class EnvVariable(_Wire):
    name: str
    value: str


class StdioServer(_Wire):
    type: Literal["stdio"] = "stdio"
    name: str
    command: str
    args: list[str] = Field(default_factory=list)
    env: list[EnvVariable] = Field(default_factory=list)


class HttpServer(_Wire):
    type: Literal["http"] = "http"
    name: str
    url: str
    headers: list[EnvVariable] = Field(default_factory=list)


class SseServer(_Wire):
    type: Literal["sse"] = "sse"
    name: str
    url: str
    headers: list[EnvVariable] = Field(default_factory=list)


class ElizaAgent(_Wire):
    kind: Literal["eliza"] = "eliza"
    deterministic: bool = False


class ClaudeCodeAgent(_Wire):
    kind: Literal["claude_code"] = "claude_code"


class ExternalAgent(_Wire):
    """An agent reached through an ACP McpServer-shaped launch description."""

    kind: Literal["external"] = "external"
    server: StdioServer | HttpServer | SseServer
    id: str | None = None


AgentSpec = ElizaAgent | ClaudeCodeAgent | ExternalAgent

_SERVER_ADAPTER: TypeAdapter[Any] = TypeAdapter(
    Annotated[StdioServer | HttpServer | SseServer, Field(discriminator="type")]
)


def _parse_server(raw: Any, where: str) -> StdioServer | HttpServer | SseServer:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object")
    data = dict(raw)
    data.setdefault("type", "stdio")  # stdio is the untagged fallback of ACP's McpServer
    try:
        server: StdioServer | HttpServer | SseServer = _SERVER_ADAPTER.validate_python(data)
        return server
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc, prefix=where)) from None


def parse_agent(raw: Any) -> AgentSpec:
    """Accept every form of `agent` the wire has seen (mismatch M2, decision 1).

    `{"eliza": {...}}`, `"claude_code"` / `{"claude_code": null}`, `{"mcp_server": McpServer}`, and
    the flat McpServer object with an `id` key that the real extension sends.
    """
    if raw == "claude_code":
        return ClaudeCodeAgent()
    if isinstance(raw, str):
        raise ValueError(f"agent: unknown agent {raw!r}")
    if not isinstance(raw, dict):
        raise ValueError('agent: expected an object or "claude_code"')
    if len(raw) == 1:
        ((tag, value),) = raw.items()
        if tag == "eliza":
            if value is None:
                value = {}
            if not isinstance(value, dict):
                raise ValueError("agent.eliza: expected an object")
            try:
                return ElizaAgent.model_validate(value)
            except ValidationError as exc:
                raise ValueError(describe_validation_error(exc, prefix="agent.eliza")) from None
        if tag == "claude_code":
            return ClaudeCodeAgent()
        if tag == "mcp_server":
            return ExternalAgent(server=_parse_server(value, "agent.mcp_server"))
    if "command" in raw or "url" in raw:
        agent_id = raw.get("id")
        if agent_id is not None and not isinstance(agent_id, str):
            raise ValueError("agent.id: expected a string")
        return ExternalAgent(server=_parse_server(raw, "agent"), id=agent_id)
    raise ValueError(
        'agent: expected {"eliza": {...}}, "claude_code", {"mcp_server": {...}} '
        "or an McpServer object with a command"
    )


def agent_key(spec: AgentSpec) -> str:
    """The canonical form two requests' agents are compared by. Secrets (env values, secret-named
    keys) are in it as fingerprints, since the key is logged (history decisions) and shown."""
    from bridge.redact import fingerprint, redact

    return json.dumps(
        redact(spec.model_dump(mode="json"), fingerprint), sort_keys=True, separators=(",", ":")
    )


def agent_label(spec: AgentSpec) -> str:
    """What rules, bypass and the console know the agent by (`bridge.agent_names`)."""
    if isinstance(spec, ElizaAgent):
        return "eliza"
    if isinstance(spec, ClaudeCodeAgent):
        return "claude_code"
    if spec.id:
        return spec.id
    from bridge.agent_names import command_name, is_interpreter

    server = spec.server
    if isinstance(server, StdioServer) and (not server.name or is_interpreter(server.name)):
        return command_name([server.command, *server.args])  # never `node`, `npx`, `uv`…
    return server.name


def describe_validation_error(exc: ValidationError, prefix: str = "") -> str:
    """One line naming each offending field, e.g. `messages.0.content.1.type: ...`."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(x) for x in err.get("loc", ()) if not str(x).startswith("function-"))
        # Discriminated unions add the tag to the path (`content.0.text.value`); keep it, it helps.
        where = ".".join(x for x in (prefix, loc) if x)
        msg = err.get("msg", "invalid")
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts[:5]) + (f" (and {len(parts) - 5} more)" if len(parts) > 5 else "")
