"""A command whose output's reader has gone (`symposium-tui audit export | head`) ends quietly.

As the `signal` module's documentation (its note on SIGPIPE) does it: what is still buffered goes
to /dev/null, so the flush at exit cannot fail again, and the command ends with EPIPE's status 1.
A broken pipe of the command's own (a socket, a child) is a real error and is raised. Standard
library only: the console script's fast paths use it before anything else is imported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["run_to_closed_output"]


def run_to_closed_output(run: Callable[[], int]) -> int:
    """`run()`'s status, or 1 when its standard output's reader went away."""
    try:
        code = run()
        if sys.stdout is not None and not sys.stdout.closed:  # (the ACP SDK closes it)
            sys.stdout.flush()  # what is still buffered fails here, not at exit
    except BrokenPipeError:
        if not _output_closed():
            raise
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 1
    return code


def _output_closed() -> bool:
    """Standard output is a pipe or socket whose reader has gone."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        events = poll.poll(0)
    except (OSError, ValueError, AttributeError):  # no stdout to look at: not what failed
        return False
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)
