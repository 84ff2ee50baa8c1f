"""The processes a process started, as Linux lists them (`/proc/PID/task/TID/children`)."""

from __future__ import annotations

import os


def child_pids(pid: int) -> list[int]:
    """The children of every thread of `pid`; none once it is gone."""
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out
