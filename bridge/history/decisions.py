"""What routing decides (`Decision`, with its evidence), under which policy (`MatchPolicy`), and
a read-only view of a live session (`SessionView`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from bridge.protocol import Message


class DecisionKind(str, Enum):
    NEW_SESSION = "new_session"  # no session matched: a new one holds all messages as provisional
    CONTINUE = "continue"  # matched; nothing was provisional; the new messages extend the session
    COMMIT = "commit"  # matched and the request extends the provisional exchange: it is committed
    CANCEL = "cancel"  # matched the committed prefix but not the provisional exchange: discarded


class MatchPolicy(str, Enum):
    """How a request is matched to a live session (see the module docstring)."""

    SUPERSEDE = "supersede"  # VS Code: a request that diverges from an exchange cancels it
    EXTEND = "extend"  # OpenAI: continue only a complete transcript; otherwise a new session


@dataclass(frozen=True)
class Decision:
    seq: int
    session_id: str
    kind: DecisionKind
    agent_key: str
    committed_len: int
    new_messages: list[Message]
    prompt_start: int
    mismatch_index: int | None = None
    expected: dict[str, Any] | None = None
    received: dict[str, Any] | None = None
    candidates: int = 0
    reason: str = ""

    @property
    def to_prompt(self) -> list[Message]:
        """The new messages the agent has not received yet (upstream re-sent them: B8)."""
        return self.new_messages[self.prompt_start :]

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "session_id": self.session_id,
            "kind": self.kind.value,
            "agent_key": self.agent_key,
            "committed_len": self.committed_len,
            "new_messages": [wire_message(m) for m in self.new_messages],
            "prompt_start": self.prompt_start,
            "mismatch_index": self.mismatch_index,
            "expected": self.expected,
            "received": self.received,
            "candidates": self.candidates,
            "reason": self.reason,
        }


@dataclass
class SessionView:
    """A read-only snapshot of one session (copies; later routing does not change it)."""

    session_id: str
    agent_key: str
    committed: list[Message]
    provisional: list[Message]
    created_seq: int


def wire_message(msg: Message) -> dict[str, Any]:
    try:
        return msg.model_dump(mode="json")
    except ValueError:  # pydantic refuses JSON nested deeper than it serializes
        return {
            "role": msg.role,
            "content": [{"type": "unserializable", "error": "nested too deeply to show"}],
        }
