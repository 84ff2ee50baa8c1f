"""`HistoryTracker`: the live sessions of one connection and the routing of its requests to
them — match, decide, apply, and say why (the package docstring tells the whole story)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bridge.history.decisions import (
    Decision,
    DecisionKind,
    MatchPolicy,
    SessionView,
    wire_message,
)
from bridge.history.keys import extend_chain, normalize_all, starts_with
from bridge.history.memory import LiveSession, RecentRequests, SessionIndex
from bridge.protocol import ContentPart, Message


@dataclass
class _Match:
    session: LiveSession
    cancel: bool
    length: int  # matched prefix: len(C)+len(P), or len(C) for a cancel


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class HistoryTracker:
    """The live sessions of one connection and the routing of its requests to them."""

    def __init__(self, policy: MatchPolicy = MatchPolicy.SUPERSEDE) -> None:
        self.policy = policy
        self._seq = 0
        self._next_sid = 0
        self._sessions: dict[str, LiveSession] = {}
        self._idx = SessionIndex()
        self._dirty: set[LiveSession] = set()
        self._recent = RecentRequests()

    @property
    def reused(self) -> int:
        """Messages whose normalization the last route took over (tests, benchmarks)."""
        return self._recent.reused

    # --- queries ---------------------------------------------------------------------------------

    def session(self, session_id: str) -> SessionView | None:
        s = self._sessions.get(session_id)
        return self._view(s) if s is not None else None

    def sessions(self) -> list[SessionView]:
        return [self._view(s) for s in self._sessions.values()]

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def seq(self) -> int:
        """How many requests were routed: a decision worked out at one count still holds at it."""
        return self._seq

    def only(self, session_id: str) -> bool:
        """`session_id` is the one live session: a request can match no other."""
        return len(self._sessions) == 1 and session_id in self._sessions

    def _view(self, s: LiveSession) -> SessionView:
        provisional = list(s.provisional)
        if provisional and provisional[-1] is s.reply:  # may still be streamed into
            last = provisional[-1]
            provisional[-1] = Message.model_construct(role=last.role, content=list(last.content))
        return SessionView(s.sid, s.agent_key, list(s.committed), provisional, s.created_seq)

    # --- the agent's side ------------------------------------------------------------------------

    def record_part(self, session_id: str, part: ContentPart) -> None:
        """The agent streamed `part` into the session's provisional exchange (appended to its last
        message when that is the assistant's, else as a new assistant message).

        Parts of one exchange gather in one assistant message, the reply, as the client will echo
        it. An assistant message the client sent at the end of its request is not the reply: the
        reply starts a message of its own (upstream appended to it, and then never matched the
        client's echo).
        """
        s = self._sessions.get(session_id)
        if s is None:  # a late part of a removed session
            return
        prov = s.provisional
        reply = s.reply
        if reply is not None and prov and prov[-1] is reply:
            reply.content.append(part)
        else:
            s.reply = Message.model_construct(role="assistant", content=[part])
            prov.append(s.reply)
        if s.prov_keys is not None:
            s.prov_keys = None
            self._dirty.add(s)

    def set_reply(self, session_id: str, parts: list[ContentPart]) -> None:
        """The client was answered with `parts` rather than with everything the agent streamed (a
        stop sequence or token limit cut it; a structured answer was re-serialized): that is the
        reply the client will echo, so it is what the next request is matched against."""
        s = self._sessions.get(session_id)
        if s is None or s.reply is None or not s.provisional or s.provisional[-1] is not s.reply:
            return
        if parts:
            s.reply = Message.model_construct(role="assistant", content=list(parts))
            s.provisional[-1] = s.reply
        else:
            s.provisional.pop()
            s.reply = None
        s.prov_keys = None
        self._dirty.add(s)

    def complete(self, session_id: str) -> None:
        """The exchange's response finished: normalize the provisional messages."""
        s = self._sessions.get(session_id)
        if s is None:
            return
        self._refresh(s)

    def remove(self, session_id: str) -> None:
        """The session died: forget it; its conversation's next request starts a new session."""
        s = self._sessions.pop(session_id, None)
        if s is None:
            return
        self._dirty.discard(s)
        self._idx.remove(s)
        self._recent.forget_session(session_id)

    # --- routing ---------------------------------------------------------------------------------

    def route(
        self,
        agent_key: str,
        messages: list[Message],
        busy: Callable[[str], bool] | None = None,
        reuses: tuple[list[Message], int] | None = None,
    ) -> Decision:
        """Decide which session `messages` belongs to and how, apply it, and say why.

        `busy(session_id)`: is that session answering a request right now? Under the EXTEND policy
        a busy session is never continued (a request cannot extend an answer it has not seen).

        `reuses=(earlier, k)`: the caller vouches that `messages[:k]` are the very objects
        `earlier[:k]`, where `earlier` is a list given to an earlier `route` and unchanged since
        (the vscodelm door knows it of the messages its prefix cache reused). Their normalization
        is then taken over without comparing them one by one.
        """
        self._seq += 1
        for s in tuple(self._dirty):
            self._refresh(s)

        lengths = self._idx.lengths.get(agent_key)
        norm, keys, chain = self._recent.normalize(messages, max(lengths) if lengths else 0, reuses)
        decision = self._decide(agent_key, norm, keys, chain, busy)
        self._recent.routed_to(decision.session_id)
        return decision

    def _decide(
        self,
        agent_key: str,
        norm: list[Message],
        keys: list[Any],
        chain: list[int],
        busy: Callable[[str], bool] | None,
    ) -> Decision:
        if not keys:
            return self._start(agent_key, norm, keys, 0, "the request has no messages")
        matches = self._matches(agent_key, keys, chain)
        if self.policy is MatchPolicy.EXTEND:
            return self._route_extend(agent_key, norm, keys, matches, busy)
        if not matches:
            return self._start(agent_key, norm, keys, 0, None)
        best = (
            matches[0]  # (a conversation's next request: its one session)
            if len(matches) == 1
            else max(matches, key=lambda m: (m.length, not m.cancel, m.session.created_seq))
        )
        if best.cancel:
            return self._cancel(best.session, norm, keys, len(matches))
        return self._extend(best.session, norm, keys, len(matches))

    def _route_extend(
        self,
        agent_key: str,
        norm: list[Message],
        keys: list[Any],
        matches: list[_Match],
        busy: Callable[[str], bool] | None,
    ) -> Decision:
        """The EXTEND policy: continue the longest idle session whose whole transcript this
        request extends; otherwise a new session (nothing is cancelled)."""
        n = len(keys)
        full = [m for m in matches if not m.cancel and m.length < n]
        idle = [m for m in full if busy is None or not busy(m.session.sid)]
        if idle:
            best = max(idle, key=lambda m: (m.length, m.session.created_seq))
            return self._extend(best.session, norm, keys, len(idle))
        if full:
            why = (
                f"the conversation this request extends is still being answered by "
                f"{', '.join(m.session.sid for m in full)}: a conversation of its own"
            )
        else:
            why = "no idle session's complete transcript is a prefix of this request"
        return self._start(agent_key, norm, keys, len(full), why)

    def _matches(self, agent_key: str, keys: list[Any], chain: list[int]) -> list[_Match]:
        n = len(keys)
        found: list[_Match] = []
        # Nothing committed: a match must share the first provisional message (decision 6), or the
        # session must be empty (nothing to contradict).
        for bucket_key in ((agent_key, 0, None), (agent_key, 0, keys[0])):
            for s in self._idx.buckets.get(bucket_key, {}).values():
                m = self._match_rest(s, keys, 0)
                if m is not None:
                    found.append(m)
        # Something committed: one probe per distinct committed length, by the chain of that prefix.
        for L in self._idx.lengths.get(agent_key, ()):
            if n < L:
                continue
            bucket = self._idx.buckets.get((agent_key, L, chain[L]))
            if not bucket:
                continue
            for s in bucket.values():
                if not starts_with(keys, s.committed_keys):  # a hash collision, not a match
                    continue
                m = self._match_rest(s, keys, L)
                if m is not None:
                    found.append(m)
        return found

    @staticmethod
    def _match_rest(s: LiveSession, keys: list[Any], L: int) -> _Match | None:
        """Match the rest of a request against a session whose committed keys equal keys[:L]: it
        extends the provisional exchange (a commit), or differs inside it (a cancel), or —
        with nothing committed — must at least share the first provisional message."""
        pk = s.prov_keys
        assert pk is not None  # refreshed at the start of route()
        p = len(pk)
        if keys[L : L + p] == pk:
            return _Match(s, False, L + p)
        if L > 0 or (p and len(keys) > L and keys[L] == pk[0]):
            return _Match(s, True, L)
        return None

    # --- applying --------------------------------------------------------------------------------

    def _start(
        self, agent_key: str, norm: list[Message], keys: list[Any], candidates: int, why: str | None
    ) -> Decision:
        self._next_sid += 1
        s = LiveSession(f"s{self._next_sid}", agent_key, self._seq)
        s.provisional = list(norm)  # copies: the session appends; `_normalize` keeps the lists
        s.prov_keys = list(keys)
        self._sessions[s.sid] = s
        self._idx.add(s)
        if why is None:
            others = sum(1 for o in self._sessions.values() if o.agent_key == agent_key) - 1
            why = (
                f"no session of this agent shares this conversation's history (of {others} live)"
                if others
                else "no live session of this agent"
            )
        reason = f"{why}; started {s.sid} with {_count(len(norm), 'message')}"
        return Decision(
            seq=self._seq,
            session_id=s.sid,
            kind=DecisionKind.NEW_SESSION,
            agent_key=agent_key,
            committed_len=0,
            new_messages=list(norm),
            prompt_start=0,
            candidates=candidates,
            reason=reason,
        )

    def _extend(
        self, s: LiveSession, norm: list[Message], keys: list[Any], candidates: int
    ) -> Decision:
        L = len(s.committed_keys)
        pk = s.prov_keys
        assert pk is not None
        p = len(pk)
        self._idx.remove(s)
        if p:
            kind = DecisionKind.COMMIT
            s.committed.extend(s.provisional)
            # The request's own keys (equal to `pk`: that is the match): the next request reuses
            # these very objects, so comparing the committed prefix costs an identity check each.
            s.committed_keys.extend(keys[L : L + p])
            s.chain = extend_chain(s.chain, pk)
            what = (
                f"request extends the provisional exchange of {s.sid} "
                f"({_count(p, 'message')}); committed it"
            )
        else:
            kind = DecisionKind.CONTINUE
            what = (
                f"request extends {s.sid} ({_count(L, 'committed message')}, nothing provisional)"
            )
        new = norm[L + p :]
        s.provisional = new
        s.prov_keys = keys[L + p :]
        s.reply = None
        self._idx.add(s)
        return Decision(
            seq=self._seq,
            session_id=s.sid,
            kind=kind,
            agent_key=s.agent_key,
            committed_len=len(s.committed),
            new_messages=list(new),
            prompt_start=0,
            candidates=candidates,
            reason=f"{what}; {_count(len(new), 'new message')}",
        )

    def _cancel(
        self, s: LiveSession, norm: list[Message], keys: list[Any], candidates: int
    ) -> Decision:
        L = len(s.committed_keys)
        old_msgs = s.provisional
        old_keys = s.prov_keys
        assert old_keys is not None
        rest_keys = keys[L:]
        common = 0
        for a, b in zip(rest_keys, old_keys):
            if a != b:
                break
            common += 1
        mismatch = L + common
        expected = wire_message(
            old_msgs[common]
        )  # a cancel means old_keys is not a prefix of rest_keys
        received = wire_message(norm[mismatch]) if mismatch < len(norm) else None
        prompt_start = common
        if common == len(rest_keys) and rest_keys:
            # The request stops inside the abandoned exchange (a "regenerate"): the agent did receive
            # these messages, but only prompting the trailing non-assistant messages again gets the
            # client a new answer.
            prompt_start = len(rest_keys)
            while prompt_start > 0 and norm[L + prompt_start - 1].role != "assistant":
                prompt_start -= 1
        self._idx.remove(s)
        new = norm[L:]
        s.provisional = new
        s.prov_keys = rest_keys
        s.reply = None
        self._idx.add(s)
        if received is None:
            where = (
                f"the request ends at message {mismatch}, inside the provisional exchange of "
                f"{s.sid} ({_count(len(old_keys), 'message')})"
            )
        else:
            where = (
                f"message {mismatch} differs from the provisional exchange of {s.sid} "
                f"({_count(len(old_keys), 'message')})"
            )
        kept = f"kept {_count(L, 'committed message')}" if L else "nothing was committed"
        resent = f"; {_count(prompt_start, 'message')} already sent" if prompt_start else ""
        return Decision(
            seq=self._seq,
            session_id=s.sid,
            kind=DecisionKind.CANCEL,
            agent_key=s.agent_key,
            committed_len=L,
            new_messages=list(new),
            prompt_start=prompt_start,
            mismatch_index=mismatch,
            expected=expected,
            received=received,
            candidates=candidates,
            reason=f"{where}; discarded it, {kept}{resent}",
        )

    # --- index -----------------------------------------------------------------------------------

    def _refresh(self, s: LiveSession) -> None:
        """Normalize the provisional messages and remake their keys (after streamed parts)."""
        self._dirty.discard(s)
        norm, keys, _ = normalize_all(s.provisional)
        if s.reply is not None:  # normalizing may have replaced the reply (still ours) by a copy
            s.reply = norm[-1] if s.provisional and s.provisional[-1] is s.reply else None
        s.provisional = norm
        s.prov_keys = keys
        if not s.committed_keys:  # the bucket depends on the first provisional message
            self._idx.remove(s)
            self._idx.add(s)
