"""A small ACP agent (official SDK, over stdio) that behaves like a tool-calling model, for the
OpenAI front door's tests. `python tests/bridge/openai/tool_agent.py [LOG]`; LOG gets one JSON line per
prompt, cancel and finished turn, so a test can see what the agent was asked and whether a turn
was cancelled.

Prompts (the last line that matters wins):
- `calls [["name", {args}], ...]` calls those client tools *concurrently* through the session's
  `vscode_tools` MCP server and replies `RESULTS: <r1> | <r2> ...`;
- a prompt carrying the bridge's hint `[The client requires a tool call ...]` calls the tool the
  hint names (or the first one offered) with arguments made from its schema, like a model would;
- a prompt carrying the bridge's structured-output instruction (`[Answer with only a JSON …
  Schema: {…}]`) is answered with a value made from the schema (`badjson` in the prompt: prose
  first, JSON after the repair prompt; `alwaysbad`: prose every time);
- `report usage` anywhere: the turn reports token usage (a `usage_update` with 1234 tokens in
  context, and usage 11 in / 7 out on the prompt response);
- `stream N` streams N chunks `c<i> `; `slow SECONDS` waits (cancellable), then `SLOW DONE`;
  `gate PATH` waits (cancellable) until the file PATH exists, then `SLOW DONE`;
- anything else: `ECHO: <prompt>`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import uuid
from typing import Any

import acp
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptResponse,
    Usage,
    UsageUpdate,
)

LOG = sys.argv[1] if len(sys.argv) > 1 else None
HINT = re.compile(
    r"\[The client requires a tool call: answer by calling (?:the tool `([^`]+)`|one of the tools)"
)


def log(**record: Any) -> None:
    if LOG:
        with open(LOG, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _example(schema: Any, root: Any = None) -> Any:
    """A value valid against `schema`, as a model following it would write."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return "x"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = root
        for key in ref[2:].split("/"):
            target = target.get(key, {}) if isinstance(target, dict) else {}
        return _example(target, root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _example(schema[key][0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {k: _example(props.get(k), root) for k in required}
    if kind == "array":
        return [_example(schema.get("items"), root)] if schema.get("items") else []
    if kind == "null":
        return None
    return {"integer": 1, "number": 1.5, "boolean": True}.get(kind, "San Francisco")


FORMAT = "[Answer with only a JSON"
REPAIR = "[Your last answer was not accepted"


def _structured(text: str, always_bad: bool) -> str:
    """An answer to the bridge's structured-output instruction: `badjson` in the prompt makes the
    first answer prose (a repair turn fixes it); `alwaysbad` (this session) never gives JSON."""
    if always_bad or ("badjson" in text and REPAIR not in text):
        return "Sure! Here is what you asked for."
    marker = text.rfind("Schema: ")
    if marker < 0:
        return json.dumps({"answer": "ok"})
    schema, _ = json.JSONDecoder().raw_decode(text, marker + len("Schema: "))
    return json.dumps(_example(schema))


class ToolAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.servers: dict[str, list[Any]] = {}
        self.cancelled: dict[str, asyncio.Event] = {}
        self.always_bad: set[str] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=protocol_version,
            agent_capabilities=AgentCapabilities(
                mcp_capabilities=McpCapabilities(http=True, sse=False)
            ),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        sid = f"tool-{uuid.uuid4().hex[:8]}"
        self.servers[sid] = list(mcp_servers or [])
        self.cancelled[sid] = asyncio.Event()
        return NewSessionResponse(session_id=sid)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log(event="cancel", session=session_id)
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(
            session_id=session_id, update=acp.update_agent_message_text(text)
        )

    def _tool_server(self, session_id: str) -> Any:
        return next(
            (
                s
                for s in self.servers.get(session_id, [])
                if getattr(s, "name", None) == "vscode_tools"
            ),
            None,
        )

    async def _with_client(self, session_id: str, work: Any) -> Any:
        from mcp import Client

        server = self._tool_server(session_id)
        if server is None:
            raise RuntimeError("no vscode_tools server in this session")
        async with Client(server.url) as client:
            return await work(client)

    async def _call_all(
        self, session_id: str, calls: list[tuple[str, dict[str, Any]]]
    ) -> list[str]:
        async def work(client: Any) -> list[str]:
            results = await asyncio.gather(*(client.call_tool(name, args) for name, args in calls))
            return ["".join(getattr(c, "text", "") for c in r.content) for r in results]

        return await self._with_client(session_id, work)

    async def _list(self, session_id: str) -> list[Any]:
        async def work(client: Any) -> list[Any]:
            return list((await client.list_tools()).tools)

        return await self._with_client(session_id, work)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        cancelled = self.cancelled.setdefault(session_id, asyncio.Event())
        cancelled.clear()
        text = " ".join(getattr(b, "text", "") for b in prompt)
        log(event="prompt", session=session_id, text=text)
        try:
            reply = await self._reply(session_id, text, cancelled)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            reply = f"ERROR: {type(exc).__name__}: {exc}"
        if cancelled.is_set():
            log(event="done", session=session_id, stop="cancelled")
            return PromptResponse(stop_reason="cancelled")
        if reply:
            await self.say(session_id, reply)
        log(event="done", session=session_id, stop="end_turn")
        if "report usage" in text:
            await self.conn.session_update(
                session_id=session_id,
                update=UsageUpdate(session_update="usage_update", used=1234, size=200000),
            )
            return PromptResponse(
                stop_reason="end_turn",
                usage=Usage(input_tokens=11, output_tokens=7, total_tokens=18),
            )
        return PromptResponse(stop_reason="end_turn")

    async def _reply(self, session_id: str, text: str, cancelled: asyncio.Event) -> str:
        last = text.strip().splitlines()[-1].strip() if text.strip() else ""
        hint = HINT.search(text)
        if "alwaysbad" in text:
            self.always_bad.add(session_id)
        if FORMAT in text and not hint:
            return _structured(text, session_id in self.always_bad)
        calls_line = next(
            (line.strip() for line in reversed(text.splitlines()) if line.startswith("calls ")), ""
        )
        if calls_line and not last.startswith("calls "):
            last = calls_line  # e.g. followed by a hint the bridge appended
        if last.startswith("calls "):
            calls = [(name, args) for name, args in json.loads(last[len("calls ") :])]
            results = await self._call_all(session_id, calls)
            return "RESULTS: " + " | ".join(results)
        if hint:
            tools = await self._list(session_id)
            tool = next((t for t in tools if t.name == hint[1]), tools[0]) if tools else None
            if tool is None:
                return "no tools"
            (result,) = await self._call_all(session_id, [(tool.name, _example(tool.input_schema))])
            return f"The tool said: {result}"
        words = last.split()
        if words[:1] == ["stream"]:
            for i in range(int(words[1])):
                if cancelled.is_set():
                    return ""
                await self.say(session_id, f"c{i} ")
            return ""
        if words[:1] == ["gate"]:  # `gate PATH`: waits (cancellable) until PATH exists
            while not os.path.exists(words[1]):
                try:
                    await asyncio.wait_for(cancelled.wait(), 0.02)
                    return ""
                except TimeoutError:
                    pass
            return "SLOW DONE"
        if words[:1] == ["slow"]:
            try:
                await asyncio.wait_for(cancelled.wait(), float(words[1]))
            except TimeoutError:
                pass
            return "" if cancelled.is_set() else "SLOW DONE"
        return f"ECHO: {text}"


def main() -> int:
    asyncio.run(acp.run_agent(ToolAgent()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
