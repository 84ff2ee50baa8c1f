"""An ACP agent that uses the whole protocol surface, written on the official SDK's agent side.

The ACP front door's tests put it behind `symposium-tui acp` and check that everything arrives as
it was sent. It implements every session method (load streams the earlier turn back; list, resume,
close, set_mode, set_config_option answer with what they received), extension methods (echoed)
and `_meta` everywhere. What a prompt does depends on its text:

* `surface`: one `session/update` of every kind, then the client's `fs/*` and `terminal/*`
  methods and an extension method; the prompt's response `_meta` says what the client answered;
* `permission [elsewhere|duplicate|mislabelled]`: asks permission for a Bash call (for another
  session, or with malformed options), completes or fails the call, and reports the outcome (text
  and `_meta`);
* `wait`: streams until cancelled (stop reason `cancelled`);
* `stream N`: N one-word chunks, then `end_turn` (the benchmark's turn);
* anything else: one chunk echoing it.

Run: `python tests/agents/surface_agent.py` (stdio).
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from typing import Any

import acp
from acp import helpers
from acp.schema import (
    AgentCapabilities,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
    ToolCallUpdate,
    UsageUpdate,
)

META = {"surface.test/marker": {"nested": [1, 2, {"x": None}]}}


def _model_option(value: str) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        id="model",
        name="Model",
        type="select",
        current_value=value,
        options=[
            SessionConfigSelectOption(value="small", name="Small"),
            SessionConfigSelectOption(value="large", name="Large"),
        ],
    )


class SurfaceAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.client_capabilities: Any = None
        self.sessions: dict[str, str] = {}  # id → cwd
        self.cancelled: dict[str, asyncio.Event] = {}
        self.notes: list[Any] = []

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        seen = (
            client_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
            if client_capabilities
            else None
        )
        return InitializeResponse(
            protocol_version=protocol_version,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            agent_info=Implementation(name="surface-agent", version="1.0"),
            field_meta={
                **META,
                "clientCapabilities": seen,
                "clientInfo": client_info.model_dump(mode="json") if client_info else None,
                "initializeMeta": kwargs,
            },
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        session_id = f"surface-{uuid.uuid4().hex[:8]}"
        self.sessions[session_id] = cwd
        return NewSessionResponse(
            session_id=session_id,
            modes=SessionModeState(
                current_mode_id="ask",
                available_modes=[
                    SessionMode(id="ask", name="Ask"),
                    SessionMode(id="code", name="Code"),
                ],
            ),
            config_options=[_model_option("small")],
            field_meta={**META, "newSessionMeta": kwargs},
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> Any:
        self.sessions[session_id] = cwd
        await self.conn.session_update(
            session_id, helpers.update_user_message_text("an earlier question")
        )
        await self.conn.session_update(
            session_id, helpers.update_agent_message_text("an earlier answer")
        )
        return LoadSessionResponse(field_meta={"loaded": session_id})

    async def resume_session(
        self, session_id: str, cwd: str, **kwargs: Any
    ) -> ResumeSessionResponse:
        self.sessions[session_id] = cwd
        return ResumeSessionResponse(
            config_options=[_model_option("large")], field_meta={"resumed": session_id}
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        return ListSessionsResponse(
            sessions=[
                SessionInfo(session_id=s, cwd=c, title=f"title of {s}")
                for s, c in self.sessions.items()
            ],
            next_cursor="page-2" if cursor is None else None,
            field_meta={"cursorSeen": cursor},
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        self.sessions.pop(session_id, None)
        return CloseSessionResponse(field_meta={"closed": session_id})

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        await self.conn.session_update(
            session_id,
            CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id),
        )
        return SetSessionModeResponse(field_meta={"mode": mode_id})

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        return SetSessionConfigOptionResponse(
            config_options=[_model_option(str(value))], field_meta={"configId": config_id}
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"echo": {"method": method, "params": params}}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        # Tell the client it arrived, with an extension notification of our own.
        await self.conn.ext_notification("surface/noted", {"method": method, "params": params})

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        # The command is the last block: a front door may put notices before it.
        text = (getattr(prompt[-1], "text", "") if prompt else "").strip()
        cancelled = self.cancelled[session_id] = asyncio.Event()
        say = self.conn.session_update
        if text == "surface":
            return await self._surface(session_id, kwargs)
        if text.startswith("permission"):
            return await self._permission(session_id, text.removeprefix("permission").strip())
        if text == "wait":
            await say(session_id, helpers.update_agent_message_text("waiting"))
            await cancelled.wait()
            return PromptResponse(stop_reason="cancelled")
        if text.startswith("stream "):
            n = int(text.split()[1])
            chunk = helpers.update_agent_message_text("word ")
            for _ in range(n):
                await say(session_id, chunk)
            return PromptResponse(stop_reason="end_turn")
        await say(session_id, helpers.update_agent_message_text(f"echo: {text}"))
        return PromptResponse(
            stop_reason="end_turn",
            field_meta={"promptMeta": kwargs, "prompt": [getattr(b, "text", "") for b in prompt]},
        )

    async def _permission(self, session_id: str, how: str) -> PromptResponse:
        """Ask permission for a Bash call and report the outcome; when allowed the call
        completes, else it fails. `how` makes the request one a client must refuse: `elsewhere`
        (for a session nobody opened), `duplicate` (one optionId twice), `mislabelled` (an
        allow option named "Reject")."""
        say = self.conn.session_update
        await say(
            session_id,
            helpers.start_tool_call(
                "bash-1",
                "Bash: rm -rf build",
                kind="execute",
                raw_input={"command": "rm -rf build"},
            ),
        )
        options = [
            PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
            PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
            PermissionOption(option_id="no", name="Reject", kind="reject_once"),
        ]
        if how == "duplicate":
            options[2] = PermissionOption(option_id="yes", name="Reject", kind="reject_once")
        elif how == "mislabelled":
            options[0] = PermissionOption(option_id="yes", name="Reject", kind="allow_once")
        try:
            response = await self.conn.request_permission(
                session_id="never-created" if how == "elsewhere" else session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id="bash-1",
                    title="Bash: rm -rf build",
                    kind="execute",
                    raw_input={"command": "rm -rf build"},
                ),
                options=options,
            )
        except acp.RequestError as exc:
            await say(session_id, helpers.update_tool_call("bash-1", status="failed"))
            error = {"code": exc.code, "message": str(exc), "data": exc.data}
            return PromptResponse(stop_reason="end_turn", field_meta={"permissionError": error})
        outcome = response.outcome.model_dump(mode="json", by_alias=True, exclude_none=True)
        allowed = outcome.get("optionId") in ("yes", "always")
        status = "completed" if allowed else "failed"
        await say(session_id, helpers.update_tool_call("bash-1", status=status))
        await say(session_id, helpers.update_agent_message_text(f"permission: {outcome}"))
        if outcome.get("outcome") == "cancelled":
            return PromptResponse(stop_reason="cancelled", field_meta={"permission": outcome})
        return PromptResponse(
            stop_reason="end_turn",
            field_meta={"permission": outcome, "responseMeta": response.field_meta},
        )

    async def _surface(self, session_id: str, prompt_meta: dict[str, Any]) -> PromptResponse:
        say = self.conn.session_update
        await say(session_id, helpers.update_agent_message_text("hello"), **META)
        await say(
            session_id,
            AgentThoughtChunk(
                session_update="agent_thought_chunk",
                content=TextContentBlock(type="text", text="thinking"),
            ),
        )
        await say(
            session_id,
            helpers.start_edit_tool_call(
                "edit-1",
                "Edit a.txt",
                "a.txt",
                "new text",
                extra_options=[helpers.tool_diff_content("a.txt", "new text", "old text")],
            ),
        )
        await say(session_id, helpers.update_tool_call("edit-1", status="completed"))
        await say(
            session_id,
            AgentPlanUpdate(
                session_update="plan",
                entries=[PlanEntry(content="step one", priority="high", status="in_progress")],
            ),
        )
        await say(
            session_id,
            AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=[
                    AvailableCommand(name="review", description="review the change")
                ],
            ),
        )
        await say(
            session_id,
            CurrentModeUpdate(session_update="current_mode_update", current_mode_id="code"),
        )
        await say(
            session_id,
            ConfigOptionUpdate(
                session_update="config_option_update", config_options=[_model_option("large")]
            ),
        )
        await say(
            session_id,
            SessionInfoUpdate(session_update="session_info_update", title="A surface test"),
        )
        await say(session_id, UsageUpdate(session_update="usage_update", used=1234, size=200000))
        read = await self.conn.read_text_file(
            session_id=session_id, path="/project/a.txt", line=2, limit=3
        )
        await self.conn.write_text_file(
            session_id=session_id, path="/project/b.txt", content="written"
        )
        terminal = await self.conn.create_terminal(
            session_id=session_id, command="echo", args=["hi"]
        )
        output = await self.conn.terminal_output(
            session_id=session_id, terminal_id=terminal.terminal_id
        )
        exited = await self.conn.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal.terminal_id
        )
        await self.conn.release_terminal(session_id=session_id, terminal_id=terminal.terminal_id)
        ext = await self.conn.ext_method("client/echo", {"payload": [1, "two"], "_meta": META})
        return PromptResponse(
            stop_reason="end_turn",
            field_meta={
                "read": read.content,
                "terminal": terminal.terminal_id,
                "output": output.output,
                "exitCode": exited.exit_code,
                "ext": ext,
                "promptMeta": prompt_meta,
            },
        )


async def raw_echo() -> None:
    """`--raw`: below the SDK's typed layer — answer every request with what arrived, and send
    every notification back with an update kind no ACP version defines; `_surface/elicit` asks
    the client (`elicitation/create`, then `elicitation/complete`) and answers what it said."""
    from acp.connection import Connection
    from acp.stdio import stdio_streams

    conn: Connection

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        if is_notification:
            await conn.send_notification(
                "session/update",
                {
                    "sessionId": "raw",
                    "update": {"sessionUpdate": "from_the_future", "echo": [method, params]},
                },
            )
            return None
        if method == "_surface/elicit":  # ask the client, report what it answered
            answer = await conn.send_request("elicitation/create", params)
            await conn.send_notification(
                "elicitation/complete", {"elicitationId": params.get("elicitationId", "e1")}
            )
            return {"clientAnswered": answer}
        return {"method": method, "params": params}

    reader, writer = await stdio_streams()
    conn = Connection(handler, writer, reader, listening=False)
    await conn.main_loop()


async def main() -> None:
    if "--raw" in sys.argv:
        await raw_echo()
        return
    await acp.run_agent(SurfaceAgent(), use_unstable_protocol=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
