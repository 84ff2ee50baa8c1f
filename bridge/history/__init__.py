"""The committed/provisional history tracker (docs/upstream.md, "How upstream's bridge works";
architecture decisions 5, 6 and 9).

Stateless clients send the whole conversation with every request; agents are stateful sessions.
For one connection this package keeps the live sessions, each with the part of its conversation
the client has proven it kept (`committed`) and the last exchange it may still abandon
(`provisional`: the messages sent to the agent plus what the agent answered). `route()` works out
from a request's messages which session it continues and whether the provisional exchange was
kept (COMMIT / CONTINUE), abandoned (CANCEL) or whether this is a conversation nobody has seen
(NEW_SESSION), applies that, and returns the decision with its evidence.

Two matching policies share this engine (one per front door, chosen when the tracker is made):

* `MatchPolicy.SUPERSEDE` (the VS Code door): a request that shares a session's committed prefix
  (or, with nothing committed, its first message) but not its provisional exchange *cancels* that
  exchange — the client moved on (edited, regenerated, or abandoned it).
* `MatchPolicy.EXTEND` (the OpenAI door, a stateless API used by many independent callers): a
  request continues a session only when it extends that session's *complete* transcript — every
  message so far, the reply the agent produced included — and that session is not answering
  another request at the moment (`busy`). Nothing is ever cancelled by routing: anything else is a
  conversation of its own (NEW_SESSION; its earlier turns are replayed to the new agent session).

Either way, an assistant message that carries tool calls is matched by its tool calls (ids, names,
arguments by value) and not by its text: clients echo a reply that mixed text and tool calls in
their own way (VS Code keeps only the call; Chat Completions puts the text first), and the call ids
are what identify the exchange.

Pure state: no I/O, no asyncio, no clock. Everything "why was my conversation cancelled?" can be
unit-tested and replayed from a trace.

Cost: each message gets a canonical key once per request (a `(role, text)` tuple for the usual
single-text message, the bare string for a user one; only tool parts need a walk over their JSON
values). Sessions are indexed by
`(agent, len(committed), hash chain of the committed keys)`, so a lookup hashes the incoming keys
once and probes one bucket per distinct committed length; a hit is verified by comparing key
lists. Sessions with nothing committed are indexed by their first provisional message instead,
because that message is what decision 6 requires a match to share.

The package: `decisions.py` (what routing returns), `keys.py` (canonical keys and
normalization), `memory.py` (the live sessions, their index, recent requests), `tracker.py`
(`HistoryTracker`, the routing).
"""

from bridge.history.decisions import Decision, DecisionKind, MatchPolicy, SessionView
from bridge.history.keys import message_key, normalize_message
from bridge.history.tracker import HistoryTracker

__all__ = [
    "Decision",
    "DecisionKind",
    "HistoryTracker",
    "MatchPolicy",
    "SessionView",
    "message_key",
    "normalize_message",
]
