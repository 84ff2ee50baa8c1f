"""Where Symposium keeps its files (architecture decision 12). Standard library only; `pathlib`
(which brings `urllib.parse` and `ipaddress`) is imported where a `Path` is made, so the `*_path`
functions cost `os` alone on the start-up paths that use them."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # (not `typing`'s: the start-up paths using this module do without it)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def config_dir_path() -> str:
    """`config_dir()` as a string, with nothing but `os` (the `registry` commands' path)."""
    explicit = os.environ.get("SYMPOSIUM_CONFIG_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return os.path.join(xdg or os.path.join(os.path.expanduser("~"), ".config"), "symposium")


def config_dir() -> Path:
    from pathlib import Path

    return Path(config_dir_path())


def settings_path() -> Path:
    return config_dir() / "settings.toml"


def themes_dir() -> Path:
    """Your own console themes (`*.toml`), beside the settings."""
    return config_dir() / "themes"


def audit_path() -> Path:
    """The approval audit log (hash-chained JSON lines)."""
    return config_dir() / "audit.jsonl"


def state_dir_path() -> str:
    """`state_dir()` as a string, with nothing but `os` (a hook's rules guard it)."""
    explicit = os.environ.get("SYMPOSIUM_STATE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_STATE_HOME")
    return os.path.join(
        xdg or os.path.join(os.path.expanduser("~"), ".local", "state"), "symposium"
    )


def state_dir() -> Path:
    """What a console keeps for itself between runs (the audit heads it has seen)."""
    from pathlib import Path

    return Path(state_dir_path())


def audit_heads_path() -> Path:
    """The audit heads this console has seen, per host and log (`symposium_tui.audit_heads`)."""
    return state_dir() / "audit-heads.json"


def runtime_dir_path() -> str:
    """`runtime_dir()` as a string, with nothing but `os` (the endpoint's start-up path)."""
    explicit = os.environ.get("SYMPOSIUM_RUNTIME_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "symposium")
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"symposium-{os.getuid()}")


def runtime_dir() -> Path:
    from pathlib import Path

    return Path(runtime_dir_path())


# --- private files ----------------------------------------------------------------------------------
# Everything that can hold conversation content, tool input or settings (event log, traces, audit
# log, logs, settings) is created 0600 in directories we create 0700, whatever the umask.


def make_private_dir(path: str | os.PathLike[str]) -> Path:
    """Create `path` and any missing parents 0700 (chmod after mkdir: the umask cannot widen or
    narrow it). A directory that already exists is left as it is (it may be the user's, or /tmp)."""
    from pathlib import Path

    path = Path(path)
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            continue  # made meanwhile by someone else: not ours to change
        os.chmod(directory, 0o700)
    return path


def open_private(path: str | os.PathLike[str], *, binary: bool = False, append: bool = True) -> Any:
    """Open `path` for appending (or truncating), created 0600 — an existing file of ours is made
    0600 too — in a directory made private by `make_private_dir` when it is missing. Refuses a
    symlink at `path` (O_NOFOLLOW)."""
    from pathlib import Path

    path = Path(path)
    make_private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    flags |= os.O_APPEND if append else os.O_TRUNC
    fd = os.open(path, flags, 0o600)
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o600)
        if binary:
            return os.fdopen(fd, "ab")
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def open_private_fd(path: str | os.PathLike[str], *, readable: bool = False) -> int:
    """`open_private` as a raw append-only file descriptor (read-write when `readable`)."""
    from pathlib import Path

    path = Path(path)
    make_private_dir(path.parent)
    flags = os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    flags |= os.O_RDWR if readable else os.O_WRONLY
    fd = os.open(path, flags, 0o600)
    if os.fstat(fd).st_uid == os.getuid():
        os.fchmod(fd, 0o600)
    return fd


def unsafe_dir_reason(path: str | os.PathLike[str]) -> str | None:
    """Why `path` (an existing directory we are about to keep a socket in) must not be used, or
    None. A symlink someone else made (e.g. `/tmp/symposium-<uid>` pre-created by another user
    to point where they like) is refused without following it, and so is a directory of another
    user's."""
    import stat as stat_

    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat_.S_ISLNK(link.st_mode) and link.st_uid != os.getuid():
        return f"{path} is a symlink made by another user (uid {link.st_uid}); refusing to use it"
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if st.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {st.st_uid}); refusing to use it"
    if not stat_.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    return None
