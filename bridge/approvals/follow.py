"""The settings file followed while a bridge runs: rules and bypasses edited by hand (or by another
console) are in force from the next request on, in every process that decides requests.

`SettingsFollower.check` runs before each decision: one `stat` of the file, and a read only when
it changed. A file that no longer reads fails closed: the deny and ask rules last read stay in
force, the allow rules and the agents' bypasses do not (which of them the person still wants
cannot be known), so what they allowed is asked; the next good read restores the file's rules.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.approvals.policy import Policy
    from bridge.settings import Settings

log = logging.getLogger(__name__)

Stamp = tuple[int, int, int, int] | None


def stamp_of(path: str | os.PathLike[str]) -> Stamp:
    """What changes when the file is written or replaced (None: there is no file)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _racy(stamp: Stamp, window: float = 2.0) -> bool:
    """Whether the file was written so recently that another write may share its stamp."""
    return stamp is not None and time.time_ns() - stamp[0] < window * 1e9


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


class SettingsFollower:
    """Keeps `apply` fed with the settings file as `load` reads it now. `stamp` is the file's stamp taken
    before the settings in force were read (`stamp_of`), so a write between that read and this
    follower is not missed. `on_change(settings, error)` learns each new reading (the console
    redraws; `error` is the file's problem when it no longer reads)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        policy: Callable[[], Policy],
        apply: Callable[[Settings], None],
        load: Callable[[], Settings],
        *,
        stamp: Stamp,
        on_change: Callable[[Settings | None, str | None], None] | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self._policy = policy
        self._apply = apply
        self._load = load
        self._stamp = stamp
        # The file's bytes as last read, for a write in the same tick of the file system's clock
        # as the read before it (same size): its stamp may not change (`_racy`).
        self._text = _read(self.path) if _racy(stamp) else None
        self.on_change = on_change
        self.error: str | None = None  # the file's problem, while it does not read

    def check(self) -> None:
        stamp = stamp_of(self.path)
        if stamp == self._stamp and not _racy(stamp):
            return
        text = _read(self.path)
        if stamp == self._stamp and text == self._text:
            return  # written within the clock's tick, but not changed
        self._stamp, self._text = stamp, text
        try:
            settings = self._load()
        except Exception as exc:  # noqa: BLE001 — SettingsError, or anything else: fail closed
            self.error = str(exc)
            self._fail_closed()
            log.error(
                "settings changed and no longer read; only their deny and ask rules stay: %s", exc
            )
            self._tell(None, self.error)
            return
        self.error = None
        self._apply(settings)
        log.info("settings changed: %d rule(s) in force", len(settings.rules))
        self._tell(settings, None)

    def _fail_closed(self) -> None:
        policy = self._policy()
        policy.bypass_agents.clear()
        policy.set_rules([rule for rule in policy.rules if rule.action != "allow"])

    def _tell(self, settings: Any, error: str | None) -> None:
        if self.on_change is None:
            return
        try:
            self.on_change(settings, error)
        except Exception:  # a console's redraw must not cost the decision
            log.exception("a settings change could not be shown")
