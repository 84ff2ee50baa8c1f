"""Paths as rules compare them: resolved (`~`, `..`, symlinks, against the session's cwd), and one
inside another. (What a shell command's words name is `named.py`.)"""

from __future__ import annotations

import os
import re


def resolve_path(path: str, cwd: str | None = None) -> str:
    """Absolute, `~` expanded, `..` and symlinks resolved (as far as the path exists)."""
    return resolve_checked(path, cwd)[0][0]


# `/proc/self/cwd/…`, `/proc/123/fd/3`: the process that opens it decides what it names (compiled
# by `re` when a path under /proc is first met)
_PROC = r"/proc/+(self|thread-self|\d+)(?:/+task/+\d+)?/+(cwd|fd|exe|map_files)(?=/|$)"


def resolve_checked(path: str, cwd: str | None = None) -> tuple[tuple[str, ...], str | None]:
    """The real paths `path` may name — resolved (`~` expanded, against `cwd`, `..` and symlinks
    resolved as far as the path exists) and as written (`..` removed) — and why it cannot be
    resolved, or None. Never raises: a NUL (a program reads the path up to it), a symlink loop or
    a name too long is the reason."""
    why = None
    if "\0" in path:
        why = "a NUL character in the path"
        path = path.partition("\0")[0]
    try:
        p = os.path.expanduser(path)
    except (RuntimeError, KeyError, ValueError):
        p = path
    if not os.path.isabs(p):
        p = os.path.join(cwd or os.getcwd(), p)
    proc = re.match(_PROC, p) if p.startswith("/proc/") else None
    if proc is not None:  # what the tool's process sees, not ours: never vouched for
        why = why or "a path through /proc names what the tool's own process sees"
        if cwd and proc.group(1) == "self" and proc.group(2) == "cwd":
            p = os.path.join(cwd, p[proc.end() :].lstrip("/"))  # most likely the call's folder
    written = real = os.path.normpath(p)
    try:
        real = os.path.realpath(p)  # as far as it exists: it need not exist (yet)
        os.stat(real)  # a symlink loop or a name too long is left unresolved: stat says so
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:
        why = why or (exc.strerror or str(exc)).lower()
    except ValueError as exc:
        why = why or str(exc)
    return (real,) if real == written else (real, written), why


def inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep) or root == os.sep
