"""One ACP agent session per conversation: turns, streaming, cancellation and client round trips.

A *turn* is one ACP `session/prompt`. Everything the agent streams is attributed to the turn that
is current when it arrives; a cancelled turn's output is dropped, and a cancelled turn is drained
(its `session/prompt` answered) before the next prompt is sent — so nothing from an older turn
reaches a newer request (upstream's races R1 and R2, docs/upstream.md).

A turn may outlive the request that started it: when the agent needs the client — a permission
for one of its own tools (the `symposium-agent-action` round trip) or a call of one of the
client's tools — the request is completed with `tool_call` parts and the turn waits, blocked, for
the next request to carry the results.

The package, by concern:

* `stream.py` — the request side: `ResponseStream`, `ChatRequest` (and what its tool list comes to,
  `OfferedTools`) and how a request fails;
* `turn.py` — a turn, and where the parts it streams go (`TurnOutput`);
* `roundtrips.py` — permissions and client-tool calls: the turn's round trips through the client;
* `state.py` — what a session decides, as pure state (no I/O): the round trips through the client,
  when a response is handed back, what the agent is prompted with; the session's state, round-trip
  kinds and request outcomes as `Literal`s;
* `agent.py` — the agent process and its ACP connection (`AgentLink`, the SDK's `AcpClient`);
* `session.py` — `AgentSession`, the orchestration that applies the decisions to both.
"""

from bridge.sessions.session import AgentSession, SessionHost
from bridge.sessions.state import RequestOutcome, RoundTrip, RoundTripKind, SessionState
from bridge.sessions.stream import (
    ChatRequest,
    OfferedTools,
    RequestCancelled,
    ResponseStream,
    SessionFailed,
)
from bridge.sessions.turn import Turn

__all__ = [
    "AgentSession",
    "ChatRequest",
    "OfferedTools",
    "RequestCancelled",
    "RequestOutcome",
    "ResponseStream",
    "RoundTrip",
    "RoundTripKind",
    "SessionFailed",
    "SessionHost",
    "SessionState",
    "Turn",
]
