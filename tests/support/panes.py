"""Deterministic bridge events for the console panes' snapshots, and the tiny apps that host a pane.

The events are what the bridge publishes, with fixed clocks and ids: the decisions come from the
real `HistoryTracker` routing real `Message`s, so a snapshot shows exactly what a live bridge would
show for the same conversation. (Pilot tests that exercise behaviour drive a real bridge instead.)
"""

from __future__ import annotations

import os
import time
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Footer

from bridge import events as ev
from bridge.core import Bridge
from bridge.history import HistoryTracker
from bridge.protocol import Message, TextPart, ToolCallPart
from bridge.sessions import ResponseStream
from symposium_tui.state import ConsoleState

T0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
ELIZA = '{"deterministic":true,"kind":"eliza"}'
CLAUDE = '{"kind":"claude_code"}'


def utc_clock() -> None:
    """Render times as UTC (snapshots must not depend on the machine's time zone)."""
    os.environ["TZ"] = "UTC"
    time.tzset()


def text_message(role: str, text: str) -> Message:
    return Message.model_validate({"role": role, "content": [{"type": "text", "value": text}]})


def user(text: str) -> Message:
    return text_message("user", text)


def assistant(text: str) -> Message:
    return text_message("assistant", text)


def wire(msg: Message) -> dict[str, Any]:
    return msg.model_dump(mode="json")


class Script:
    """Publishes bridge events into a state (through `handle`, as the bus would)."""

    def __init__(self, state: ConsoleState, t0: float = T0) -> None:
        self.state = state
        self.t = t0
        self.trackers: dict[str, HistoryTracker] = {}
        self.routed: dict[tuple[str, Any], str] = {}

    def tick(self, dt: float = 1.0) -> float:
        self.t += dt
        return self.t

    def emit(self, event: ev.Event) -> None:
        self.state.handle(event)

    def request(
        self, conn: str, rid: Any, agent_key: str, messages: list[Message]
    ) -> dict[str, Any]:
        tracker = self.trackers.setdefault(conn, HistoryTracker())
        decision = tracker.route(agent_key, messages).to_json()
        self.routed[(conn, rid)] = decision["session_id"]
        self.emit(
            ev.HistoryDecided(connection=conn, request_id=rid, decision=decision, ts=self.tick(0.5))
        )
        return decision

    def stream(self, conn: str, rid: Any, *chunks: str) -> None:
        sid = self.routed[(conn, rid)]
        for chunk in chunks:
            self.trackers[conn].record_part(sid, TextPart(value=chunk))
            self.emit(
                ev.PartStreamed(
                    connection=conn,
                    request_id=rid,
                    session_id=sid,
                    part={"type": "text", "value": chunk},
                    ts=self.tick(0.1),
                )
            )

    def call_client_tool_part(
        self, conn: str, rid: Any, call_id: str, name: str, params: Any
    ) -> None:
        sid = self.routed[(conn, rid)]
        part = {"type": "tool_call", "toolCallId": call_id, "toolName": name, "parameters": params}
        self.trackers[conn].record_part(sid, ToolCallPart.model_validate(part))
        self.emit(
            ev.PartStreamed(
                connection=conn, request_id=rid, session_id=sid, part=part, ts=self.tick(0.1)
            )
        )

    def finish(
        self, conn: str, rid: Any, outcome: str = "complete", error: str | None = None
    ) -> None:
        sid = self.routed[(conn, rid)]
        if outcome == "complete":
            self.trackers[conn].complete(sid)
        self.emit(
            ev.RequestFinished(
                connection=conn,
                request_id=rid,
                session_id=sid,
                outcome=outcome,
                error=error,
                ts=self.tick(0.2),
            )
        )

    def started(self, conn: str, sid: str, agent: str, pid: int | None = None) -> None:
        self.emit(
            ev.SessionStarted(
                connection=conn,
                session_id=sid,
                agent=agent,
                acp_session_id=f"acp-{sid}",
                pid=pid,
                ts=self.tick(0.3),
            )
        )

    def ended(self, conn: str, sid: str, reason: str) -> None:
        self.emit(
            ev.SessionEnded(connection=conn, session_id=sid, reason=reason, ts=self.tick(1.0))
        )

    def tool(
        self,
        conn: str,
        sid: str,
        call_id: str,
        title: str,
        kind: str,
        status: str,
        raw_input: Any = None,
        content: str | None = None,
        dt: float = 0.4,
    ) -> None:
        self.emit(
            ev.ToolCallSeen(
                connection=conn,
                session_id=sid,
                tool_call_id=call_id,
                title=title,
                kind=kind,
                status=status,
                raw_input=raw_input,
                content=content,
                ts=self.tick(dt),
            )
        )

    def client_tool(
        self,
        conn: str,
        sid: str,
        call_id: str,
        name: str,
        status: str,
        arguments: Any = None,
        result: str | None = None,
        dt: float = 0.4,
    ) -> None:
        self.emit(
            ev.ClientToolCall(
                connection=conn,
                session_id=sid,
                tool_call_id=call_id,
                tool_name=name,
                status=status,
                arguments=arguments,
                result=result,
                ts=self.tick(dt),
            )
        )

    def approval(
        self,
        conn: str,
        sid: str,
        approval_id: str,
        call_id: str,
        title: str,
        kind: str,
        raw_input: Any,
    ) -> None:
        self.emit(
            ev.ApprovalRequested(
                connection=conn,
                approval_id=approval_id,
                session_id=sid,
                agent="eliza",
                tool_call={
                    "toolCallId": call_id,
                    "title": title,
                    "kind": kind,
                    "status": "pending",
                    "rawInput": raw_input,
                },
                options=[
                    {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
                ],
                ts=self.tick(0.2),
            )
        )

    def resolve(
        self,
        conn: str,
        sid: str,
        approval_id: str,
        outcome: str,
        resolver: str,
        reason: str | None = None,
        rule: str | None = None,
        dt: float = 1.5,
    ) -> None:
        self.emit(
            ev.ApprovalResolved(
                connection=conn,
                approval_id=approval_id,
                session_id=sid,
                agent="eliza",
                outcome=outcome,
                option_id=outcome,
                resolver=resolver,
                rule=rule,
                reason=reason,
                ts=self.tick(dt),
            )
        )


HELLO = "Hello, I have a problem with my tests."
HELLO_REPLY = ["How do you do. ", "Please state your problem."]
ASK = "ask permission to run the tests"
DENIED_REPLY = ["Permission denied (reject_once). ", "I did not run the tests."]
EDITED = "Permission denied. I did not run the tests (edited by the user)."
WHY = "why not?"


def demo(state: ConsoleState) -> Script:
    """Two connections: a VS Code window whose conversation commits, asks permission and is then
    cancelled by an edited answer, a second session that ended, and an OpenAI client mid-turn
    calling a client tool."""
    s = Script(state)
    vs, oa = "vscodelm-1", "openai-2"
    # VS Code: new session, reply.
    s.request(vs, 1, ELIZA, [user(HELLO)])
    s.started(vs, "s1", "eliza", pid=4242)
    s.stream(vs, 1, *HELLO_REPLY)
    s.finish(vs, 1)
    # The reply was kept: commit; the agent asks permission, the console denies it.
    s.request(vs, 2, ELIZA, [user(HELLO), assistant("".join(HELLO_REPLY)), user(ASK)])
    s.tool(vs, "s1", "call-run-1", "run the tests", "execute", "pending", {"command": "pytest -q"})
    s.approval(
        vs, "s1", "appr-1", "call-run-1", "run the tests", "execute", {"command": "pytest -q"}
    )
    s.resolve(vs, "s1", "appr-1", "reject_once", "console", reason="not now")
    s.tool(
        vs, "s1", "call-run-1", "run the tests", "execute", "failed", content="denied by the user"
    )
    s.stream(vs, 2, *DENIED_REPLY)
    s.finish(vs, 2)
    # The user edited the agent's answer: the provisional exchange is cancelled.
    s.request(
        vs,
        3,
        ELIZA,
        [user(HELLO), assistant("".join(HELLO_REPLY)), user(ASK), assistant(EDITED), user(WHY)],
    )
    s.stream(vs, 3, "Why do you ask?")
    s.finish(vs, 3)
    # A second conversation in the same window, whose agent was stopped.
    s.request(vs, 4, ELIZA, [user("a different chat")])
    s.started(vs, "s2", "eliza", pid=4243)
    s.tool(vs, "s2", "call-read-1", "read README.md", "read", "in_progress", {"path": "README.md"})
    s.tool(
        vs,
        "s2",
        "call-read-1",
        "read README.md",
        "read",
        "completed",
        {"path": "README.md"},
        content="# Symposium\nDrive ACP agents from any chat client.",
    )
    s.stream(vs, 4, "Tell me more.")
    s.finish(vs, 4)
    s.ended(vs, "s2", "idle for 1800 s")
    # An OpenAI client mid-turn: the agent calls one of the client's tools.
    s.request(oa, "req-a", CLAUDE, [user("list the files")])
    s.started(oa, "s1", "claude_code", pid=5150)
    s.tool(
        oa,
        "s1",
        "toolu_1",
        "Glob **/*.py",
        "search",
        "completed",
        {"pattern": "**/*.py"},
        content="app.py\nstate.py",
    )
    s.client_tool(oa, "s1", "vsc-1", "vscode_readFile", "requested", {"path": "app.py"})
    s.client_tool(
        oa, "s1", "vsc-1", "vscode_readFile", "completed", {"path": "app.py"}, result="print('hi')"
    )
    s.stream(oa, "req-a", "Here are the files: ")
    return s


def many_tool_calls(state: ConsoleState, n: int, t0: float = T0) -> None:
    """n finished agent tool calls over four sessions (for the 100,000-entry log)."""
    kinds = ("read", "edit", "execute", "search")
    statuses = ("completed", "completed", "completed", "failed")
    handle = state.handle
    for i in range(n):
        sid = f"s{i % 4 + 1}"
        ts = t0 + i * 0.01
        handle(
            ev.ToolCallSeen(
                connection="vscodelm-1",
                session_id=sid,
                tool_call_id=f"c{i}",
                title=f"tool call {i}",
                kind=kinds[i % 4],
                status="in_progress",
                raw_input={"i": i},
                ts=ts,
            )
        )
        handle(
            ev.ToolCallSeen(
                connection="vscodelm-1",
                session_id=sid,
                tool_call_id=f"c{i}",
                status=statuses[i % 4],
                content=f"output {i}",
                ts=ts + 0.005,
            )
        )


class PaneApp(App[None]):
    """A pane alone on a screen, with a footer listing its keys."""

    def __init__(self, make_pane: Any, state: ConsoleState, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.make_pane = make_pane
        self.state = state

    def compose(self) -> ComposeResult:
        yield self.make_pane(self.state)
        yield Footer()


def sessions_app(state: ConsoleState, bridge: Any = None) -> PaneApp:
    from symposium_tui.widgets.sessions import SessionsPane

    return PaneApp(lambda st: SessionsPane(st, bridge), state)


def toollog_app(state: ConsoleState) -> PaneApp:
    from symposium_tui.widgets.toollog import ToolLogPane

    return PaneApp(ToolLogPane, state)


def write_demo_trace(path: Any) -> None:
    """A vscodelm wire trace (upstream's format) of one conversation: new session, commit, cancel."""
    import json

    def line(seconds: float, direction: str, message: dict[str, Any]) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(T0 + seconds))
        return f"[{stamp}.{int(seconds * 1_000_000) % 1_000_000:06d}Z] {direction}: {json.dumps(message)}\n"

    def chat(rid: int, messages: list[Message]) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "lm/provideLanguageModelChatResponse",
            "params": {
                "modelId": "eliza",
                "agent": {"eliza": {"deterministic": True}},
                "messages": [wire(m) for m in messages],
                "options": {"tools": []},
            },
        }

    def part(rid: int, text: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "method": "lm/responsePart",
            "params": {"requestId": rid, "part": {"type": "text", "value": text}},
        }

    def done(rid: int) -> list[dict[str, Any]]:
        return [
            {"jsonrpc": "2.0", "method": "lm/responseComplete", "params": {"requestId": rid}},
            {"jsonrpc": "2.0", "id": rid, "result": {}},
        ]

    reply1, reply2, reply3 = "".join(HELLO_REPLY), "I see. Tell me more.", "Why do you ask?"
    script: list[tuple[str, dict[str, Any]]] = [
        ("recv", chat(1, [user(HELLO)])),
        ("send", part(1, reply1)),
        *[("send", m) for m in done(1)],
        ("recv", chat(2, [user(HELLO), assistant(reply1), user("my tests fail")])),
        ("send", part(2, reply2)),
        *[("send", m) for m in done(2)],
        (
            "recv",
            chat(
                3,
                [
                    user(HELLO),
                    assistant(reply1),
                    user("my tests fail"),
                    assistant("They pass now."),
                    user(WHY),
                ],
            ),
        ),
        ("send", part(3, reply3)),
        *[("send", m) for m in done(3)],
    ]
    with open(path, "w", encoding="utf-8") as f:
        for i, (direction, message) in enumerate(script):
            f.write(line(i * 0.5, direction, message))


# -- a client of a live in-process bridge, for the Pilot tests ---------------------------------------


ELIZA_AGENT = {"eliza": {"deterministic": True}}


class Conversation:
    """A client of an in-process bridge connection that, like VS Code, resends the whole history."""

    def __init__(self, bridge: Bridge, kind: str = "chat") -> None:
        self.core = bridge.open_connection(kind)
        self.ids = 0

    @property
    def name(self) -> str:
        return self.core.name

    async def send(self, messages: list[Message]) -> list[dict[str, Any]]:
        """One request; returns the parts streamed back (after the request finished)."""
        self.ids += 1
        parts: list[dict[str, Any]] = []
        request = self.core.make_request(self.ids, ELIZA_AGENT, messages, tools=[])
        stream = ResponseStream(self.ids, parts.append)
        await self.core.chat(request, stream)
        return parts

    @staticmethod
    def reply(parts: list[dict[str, Any]]) -> Message:
        return Message.model_validate({"role": "assistant", "content": parts})


async def new_commit_cancel(conv: Conversation) -> dict[str, Any]:
    """hello → (reply kept) ask permission → (answer edited by the user) why: a new session, a
    commit and a cancel; returns what was said."""
    u1 = text_message("user", "hello")
    r1 = conv.reply(await conv.send([u1]))
    u2 = text_message("user", "ask permission to run the tests")
    r2 = conv.reply(await conv.send([u1, r1, u2]))
    edited = text_message("assistant", "I ran them all, everything passed.")
    u3 = text_message("user", "why")
    r3 = conv.reply(await conv.send([u1, r1, u2, edited, u3]))
    return {"u1": u1, "r1": r1, "u2": u2, "r2": r2, "edited": edited, "u3": u3, "r3": r3}
