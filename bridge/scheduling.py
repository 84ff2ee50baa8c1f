"""How a relay process asks the kernel to schedule it (Linux; elsewhere nothing changes).

`symposium-tui acp` stands between two processes that do the work, the ACP client and its agent,
and mostly forwards what one writes to the other. Under the default policy each message the agent
writes wakes the relay, and on a busy machine the woken relay takes the CPU from whoever runs
there, often the client it is feeding, a few messages at a time. `SCHED_BATCH` keeps everything
else as it was (nice value, time slices, an idle CPU still runs it at once) but a wake-up no
longer preempts the running process: the relay forwards when the CPU is free or the running
process's slice ends, and then forwards everything that arrived meanwhile in one write. Streamed
through the proxy on two cores, a long reply reached the client at 0.79x the direct speed under
the default policy and at 0.90x with this (tests/bench/README.md).

Only the relay's own thread changes: the processes it starts (the agent) are started under the
policy the relay started with (`spawning`). `SYMPOSIUM_RELAY_SCHEDULING=normal` leaves the relay
under the default policy, and a relay started under any other policy (`chrt`, say) is left as the
person started it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator

__all__ = ["ENV", "schedule_as_relay", "spawning"]

log = logging.getLogger(__name__)

ENV = "SYMPOSIUM_RELAY_SCHEDULING"  # "normal": stay under the default policy

# The policy the thread had before `schedule_as_relay` changed it (None: it changed nothing), and
# how many spawns run under it right now (they may overlap: each is a few awaits long).
_started_with: int | None = None
_spawning = 0


def schedule_as_relay() -> bool:
    """Run the calling thread under `SCHED_BATCH` when it runs under the default policy and
    `SYMPOSIUM_RELAY_SCHEDULING` is not `normal`. Returns whether the policy changed; a kernel
    that refuses it is logged and changes nothing."""
    global _started_with
    batch = getattr(os, "SCHED_BATCH", None)
    if batch is None or os.environ.get(ENV, "").strip().lower() == "normal":
        return False
    try:
        policy = os.sched_getscheduler(0)
        if policy != os.SCHED_OTHER:
            return False  # chosen by whoever started us: kept
        os.sched_setscheduler(0, batch, os.sched_param(0))
    except OSError as exc:
        log.debug("scheduling policy unchanged: %s", exc)
        return False
    _started_with = policy
    return True


def _set(policy: int) -> None:
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, policy, os.sched_param(0))


@contextlib.contextmanager
def spawning() -> Iterator[None]:
    """Processes started in this block (on this thread) get the policy the relay started with,
    not the relay's own: the agent is scheduled as it would be without the relay."""
    global _spawning
    started_with = _started_with
    if started_with is None:
        yield
        return
    _spawning += 1
    if _spawning == 1:
        _set(started_with)
    try:
        yield
    finally:
        _spawning -= 1
        if _spawning == 0:
            _set(os.SCHED_BATCH)
