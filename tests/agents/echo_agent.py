"""A small ACP agent on the official SDK for tests that must see exactly what the bridge prompted.

Over stdio (`python tests/agents/echo_agent.py`). Prompts:
- `stream N [DELAY]` streams N chunks `c<i> ` (DELAY seconds apart) and stops early on cancel;
- `permit <title> [KIND...]` asks permission for a tool call titled <title>, offering only the
  option kinds given (default: all four), and replies `OUTCOME: <kind or cancelled>`;
- `foreign N` sends N `session/update`s for a session that does not exist, then says `done`;
- `interleave N` sends, N times, a text chunk `t<i> ` then the start of a tool call titled
  `tool<i>`, back to back (they arrive together), then says `end`;
- `crash` streams one chunk, writes to stderr and exits with status 3 mid-turn;
- anything else is echoed back as `ECHO: <prompt>` in one chunk.
`--start-gate PATH` makes it slow to start: it writes `PATH.starting`, then answers `initialize`
only once PATH exists. `--exit-on-start` makes it exit at once with an error on stderr (an agent that fails to start).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from typing import Any

import acp
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
)


class EchoAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cancelled: dict[str, asyncio.Event] = {}
        self.prompts = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        if "--start-gate" in sys.argv:  # a slow start: until the test creates the gate file
            gate = sys.argv[sys.argv.index("--start-gate") + 1]
            with open(gate + ".starting", "w"):
                pass
            while not os.path.exists(gate):
                await asyncio.sleep(0.02)
        return InitializeResponse(
            protocol_version=protocol_version,
            agent_capabilities=AgentCapabilities(
                mcp_capabilities=McpCapabilities(http=True, sse=False)
            ),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        sid = f"echo-{uuid.uuid4().hex[:8]}"
        self.cancelled[sid] = asyncio.Event()
        print(f"new_session cwd={cwd}", file=sys.stderr, flush=True)
        return NewSessionResponse(session_id=sid)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(
            session_id=session_id, update=acp.update_agent_message_text(text)
        )

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        self.prompts += 1
        cancelled = self.cancelled.setdefault(session_id, asyncio.Event())
        cancelled.clear()
        text = " ".join(getattr(b, "text", "") for b in prompt)
        words = text.split()
        if words[:1] == ["stream"]:
            n = int(words[1])
            delay = float(words[2]) if len(words) > 2 else 0.0
            for i in range(n):
                if cancelled.is_set():
                    return PromptResponse(stop_reason="cancelled")
                await self.say(session_id, f"c{i} ")
                if delay:
                    try:
                        await asyncio.wait_for(cancelled.wait(), delay)
                    except TimeoutError:
                        pass
            return PromptResponse(stop_reason="cancelled" if cancelled.is_set() else "end_turn")
        if words[:1] == ["foreign"]:  # `foreign N`: N updates for a session that does not exist
            for i in range(int(words[1])):
                await self.conn.session_update(
                    session_id="no-such-session", update=acp.update_agent_message_text(f"spam{i} ")
                )
            await self.say(session_id, "done")
            return PromptResponse(stop_reason="end_turn")
        if words[:1] == ["interleave"]:
            for i in range(int(words[1])):
                await self.say(session_id, f"t{i} ")
                await self.conn.session_update(
                    session_id=session_id,
                    update=acp.start_tool_call(f"tc-{i}", f"tool{i}", kind="read"),
                )
            await self.say(session_id, "end")
            return PromptResponse(stop_reason="end_turn")
        if words[:1] == ["permit"]:
            kinds = list(words[2:]) or [
                "allow_once",
                "allow_always",
                "reject_once",
                "reject_always",
            ]
            options = [PermissionOption(option_id=f"opt-{k}", name=k, kind=k) for k in kinds]
            call = ToolCallUpdate(
                tool_call_id=f"tc-{uuid.uuid4().hex[:6]}",
                title=words[1],
                kind="execute",
                raw_input={"command": words[1]},
            )
            resp = await self.conn.request_permission(
                session_id=session_id, tool_call=call, options=options
            )
            outcome = resp.outcome
            if getattr(outcome, "outcome", None) == "selected":
                picked = next(o.kind for o in options if o.option_id == outcome.option_id)
            else:
                picked = "cancelled"
            await self.say(session_id, f"OUTCOME: {picked}")
            return PromptResponse(stop_reason="end_turn")
        if text.strip() == "crash":
            await self.say(session_id, "about to crash ")
            await asyncio.sleep(0.05)
            print("fatal: simulated crash in the echo agent", file=sys.stderr, flush=True)
            os._exit(3)
        await self.say(session_id, f"ECHO: {text}")
        return PromptResponse(stop_reason="end_turn")


def main() -> int:
    if "--exit-on-start" in sys.argv:
        print("echo agent: refusing to start (test)", file=sys.stderr, flush=True)
        return 4
    asyncio.run(acp.run_agent(EchoAgent()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
