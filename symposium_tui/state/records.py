"""What the console remembers about sessions, history decisions and tool calls: plain records,
changed only by `ConsoleState` and read by the panes."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from symposium_tui.state.formatting import session_name
from symposium_tui.state.messages import compact_json

__all__ = [
    "AGENT_SOURCE",
    "CLIENT_SOURCE",
    "FINISHED_STATUSES",
    "PERMISSION_SOURCE",
    "DecisionRecord",
    "SessionRecord",
    "ToolEntry",
]

FINISHED_STATUSES = frozenset({"completed", "failed", "cancelled"})
AGENT_SOURCE, CLIENT_SOURCE, PERMISSION_SOURCE = "agent", "client", "permission"


@dataclass(eq=False)
class DecisionRecord:
    """One routed request: the tracker's decision, its outcome and the history it left."""

    index: int  # position in the console's timeline (never reused)
    ts: float
    connection: str
    request_id: Any
    session_id: str
    kind: str  # new_session / continue / commit / cancel, or "error" for a replayed request that failed
    decision: dict[str, Any]  # Decision.to_json() without new_messages (they live in `provisional`)
    committed_len: int
    provisional: list[Any]  # the provisional exchange this decision started; grows while it streams
    outcome: str | None = None  # None while the request is in flight; complete / cancelled / error
    error: str | None = None
    finished_ts: float | None = None
    recorded_kind: str | None = None  # replay: what the live bridge decided, when it differs
    stop_reason: str | None = None  # an ACP turn's stop reason (the ACP front door)

    @property
    def key(self) -> tuple[str, str]:
        return (self.connection, self.session_id)

    @property
    def reason(self) -> str:
        return str(self.decision.get("reason") or self.error or "")


@dataclass(eq=False)
class SessionRecord:
    connection: str
    session_id: str
    agent: str
    agent_key: str = ""
    started: float = 0.0
    ended: float | None = None
    end_reason: str | None = None
    ready: bool = False
    acp_session_id: str | None = None
    pid: int | None = None
    committed: list[Any] = field(default_factory=list)
    provisional: list[Any] = field(default_factory=list)
    decisions: deque[DecisionRecord] = field(default_factory=deque)
    active_request: Any = None
    pending_approvals: int = 0
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    version: int = 0  # bumped on every change the panes may show

    @property
    def key(self) -> tuple[str, str]:
        return (self.connection, self.session_id)

    @property
    def label(self) -> str:
        return session_name(self.connection, self.session_id)

    @property
    def last_decision(self) -> DecisionRecord | None:
        return self.decisions[-1] if self.decisions else None

    @property
    def state(self) -> str:
        """ended, approval (waiting for a person), streaming, starting, or idle."""
        if self.ended is not None:
            return "ended"
        if self.pending_approvals:
            return "approval"
        if self.active_request is not None:
            return "streaming" if self.ready else "starting"
        return "idle" if self.ready else "new"


class ToolEntry:
    """One tool call, updated in place as its status changes."""

    __slots__ = (
        "_haystack",
        "connection",
        "detail",
        "duration",
        "input",
        "key",
        "kind",
        "output",
        "seq",
        "session_id",
        "source",
        "status",
        "title",
        "tool_call_id",
        "ts",
        "updated",
        "version",
    )

    def __init__(
        self,
        ts: float,
        connection: str,
        session_id: str,
        source: str,
        tool_call_id: str,
        title: str,
        kind: str,
        status: str,
        input: Any = None,
        output: str | None = None,  # noqa: A002
    ) -> None:
        self.seq = -1
        self.version = 0
        self.ts = ts
        self.connection = connection
        self.session_id = session_id
        self.source = source
        self.tool_call_id = tool_call_id
        self.title = title
        self.kind = kind
        self.status = status
        self.duration: float | None = None
        self.input = input
        self.output = output
        self.detail: dict[str, Any] | None = None
        self.updated = ts
        self.key: tuple[Any, ...] | None = None
        self._haystack: str | None = None

    @property
    def name(self) -> str:
        return self.title

    @property
    def session_label(self) -> str:
        return f"{self.connection}/{self.session_id}"

    @property
    def finished(self) -> bool:
        return self.duration is not None

    def haystack(self) -> str:
        """Lower-case text a search matches against (built once per version)."""
        hay = self._haystack
        if hay is None:
            hay = " ".join(
                (
                    self.session_label,
                    self.source,
                    self.kind,
                    self.status,
                    self.title,
                    self.tool_call_id,
                    compact_json(self.input)[:2000],
                    (self.output or "")[:2000],
                )
            ).lower()
            self._haystack = hay
        return hay

    def touch(self, ts: float) -> None:
        self.version += 1
        self.updated = ts
        self._haystack = None
