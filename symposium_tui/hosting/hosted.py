"""The bridge a console or `serve` hosts, built from what a person configured.

`build_hosted()` assembles the core with the settings-backed approval policy, the audit log,
Bypass answers persisted to the settings file and the `[notify]` command, and returns it as a
`Hosted`: the one typed object the console holds (the bridge, the settings store, the settings
file's load error, the notifier). The bridge is imported where it is built, not with this module:
the console draws its first frame before pydantic and the core are loaded.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.settings import Settings, SettingsError, SettingsStore

if TYPE_CHECKING:
    from bridge.audit import AuditLog
    from bridge.core import Bridge
    from symposium_tui.hosting.notify import Notifier

log = logging.getLogger(__name__)


DEFAULT_HOLD_TIMEOUT = 600.0  # seconds `serve` holds an approval for a console


def audit_path() -> Path:
    from bridge.paths import audit_path as path

    return path()


@dataclass
class Hosted:
    """What the console hosts: the bridge and the settings it was built from."""

    bridge: Bridge
    settings_store: SettingsStore
    settings_error: str | None = None  # the settings file could not be used (shown, not fixed)
    notifier: Notifier | None = None  # `[notify]`: pending approvals announced elsewhere

    @property
    def audit(self) -> AuditLog | None:
        """The approval audit log, when the bridge keeps one."""
        return self.bridge.approvals.audit

    async def close(self) -> None:
        """Stop the notifier and the bridge's agents, then close the audit log."""
        if self.notifier is not None:
            await self.notifier.close()
        await self.bridge.close()
        if self.audit is not None:
            self.audit.close()


def build_hosted(
    *,
    cwd: str | None = None,
    event_log: str | None = None,
    bridge_options: dict[str, Any] | None = None,
    settings_store: SettingsStore | None = None,
    audit: bool = True,
    hold: bool = False,
    approval_timeout: float | None = None,
) -> Hosted:
    """The core with the person's settings: policy, persisted bypass, audit log, preferences.

    `hold` keeps approvals pending while no console is attached (`serve`); `approval_timeout`
    (else the `approval_timeout` preference, else 600 s when holding) denies what no console
    answered in time."""
    from bridge import events as ev
    from bridge.approvals import ApprovalBroker
    from bridge.audit import AuditLog
    from bridge.config import BridgeConfig
    from bridge.core import Bridge

    bus = ev.EventBus()
    if event_log:
        bus.subscribe(ev.JsonlEventLog(event_log))
    store = settings_store if settings_store is not None else SettingsStore()
    settings = Settings(path=store.path)
    settings_error: str | None = None
    from bridge.approvals.follow import stamp_of

    stamp = stamp_of(store.path)  # before the read: a write after it is seen by the follower
    try:
        settings = store.load()
    except SettingsError as exc:
        settings_error = str(exc)
        log.error("settings not loaded: %s", exc)
    for warning in settings.warnings:  # an ignored key, a bypass that is not applied
        log.warning("settings: %s", warning)

    def persist_bypass(agent: str) -> None:
        store.set_agent_bypass(agent, True)

    timeout = approval_timeout
    if timeout is None:
        preferred = settings.prefs.approval_timeout
        if preferred is not None:
            timeout = float(preferred)
        elif hold:
            timeout = DEFAULT_HOLD_TIMEOUT
    timeout = timeout or None  # 0: wait for ever
    broker = ApprovalBroker(
        bus,
        audit=AuditLog(audit_path()) if audit else None,
        persist_bypass=persist_bypass,
        hold=hold,
        timeout=timeout,
    )
    broker.apply_settings(settings)
    broker.follow_settings(store.path, stamp, store.load)  # edited by hand: the next request
    options = settings.prefs.bridge_options()
    notifier = None
    if settings.notify is not None:
        from symposium_tui.hosting.notify import Notifier

        notifier = Notifier.for_broker(settings.notify, broker)
    options.update(bridge_options or {})
    bridge = Bridge(BridgeConfig(cwd=cwd or "", **options), bus=bus, approvals=broker)
    return Hosted(bridge, store, settings_error, notifier)
