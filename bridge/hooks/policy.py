"""What the hook process reads from the settings file: the rules, the agents on bypass and the
`hook_no_console` preference — from the settings file's start-up cache (`bridge.startcache`) when
it holds, so that a decision the rules make needs neither `tomllib` nor the settings module."""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs milliseconds of a hook's start: names for the checker only
if TYPE_CHECKING:
    from typing import Any

    from bridge.rules import Rule
    from bridge.settings import Settings


class HookPolicy:
    """The part of the settings a hook decides with."""

    def __init__(self, rules: list[Rule], bypass: set[str], no_console: str) -> None:
        self.rules = rules
        self.bypass = bypass
        self.no_console = no_console

    @classmethod
    def of(cls, settings: Settings) -> HookPolicy:
        return cls(list(settings.rules), settings.bypass_agents(), settings.prefs.hook_no_console)

    def cached(self) -> dict[str, Any] | None:
        """The cache's payload, or None when a rule would not come back the same from it."""
        from bridge.rules import Rule

        rules = []
        for rule in self.rules:
            data = rule.to_dict()
            if Rule.from_dict(dict(data)) != rule:
                return None
            rules.append({"rule": data, "line": rule.line})
        engine = engine_key()
        if rules and engine is None:
            return None
        return {
            "rules": rules,
            "bypass": sorted(self.bypass),
            "no_console": self.no_console,
            "engine": engine,
        }

    @classmethod
    def from_cache(cls, payload: dict[str, Any]) -> HookPolicy:
        """The policy a cache payload holds; ValueError (or a rule's error) when it is malformed."""
        entries, bypass, no_console = payload["rules"], payload["bypass"], payload["no_console"]
        if (
            not isinstance(entries, list)
            or not isinstance(bypass, list)
            or not all(isinstance(agent, str) for agent in bypass)
            or not isinstance(no_console, str)
        ):
            raise ValueError("malformed hook cache")
        rules = []
        if entries:
            # The rules' examples held when the cache was written (reading the settings checks
            # them), under the rule engine of that moment: another engine (an upgrade, an edited
            # checkout) reads the settings again, and checks them again.
            if payload.get("engine") != engine_key() or payload.get("engine") is None:
                raise ValueError("the hook cache was written by another rule engine")
            from bridge.rules import Rule

            for entry in entries:
                line = entry["line"]
                if not isinstance(entry["rule"], dict) or not (line is None or type(line) is int):
                    raise ValueError("malformed hook cache")
                rule = Rule.from_dict(entry["rule"])
                rule.line = line
                rules.append(rule)
        return cls(rules, set(bypass), no_console)


# The code that decides what a rule matches and whether its examples hold: these packages (and
# `bridge/record.py`, the records they build, which compares nothing a rule reads).
ENGINE = ("rules", "shell", "options")


def engine_key(root: str | None = None) -> list[list[Any]] | None:
    """The rule engine's source files as they are now (name, size, modification time), or None
    when they cannot be listed. A rule's examples are checked when the settings are read, which
    needs the shell parser (bashlex builds its grammar's tables on import: ~80 ms, more than the
    rest of a hook's start): the cache keeps that they held, for this engine only."""
    import os

    if root is None:
        import bridge

        root = os.path.dirname(os.path.abspath(bridge.__file__))
    key: list[list[Any]] = []
    try:
        for package in ENGINE:
            with os.scandir(os.path.join(root, package)) as entries:
                for entry in entries:
                    if entry.name.endswith(".py") and entry.is_file():
                        st = entry.stat()
                        key.append([f"{package}/{entry.name}", st.st_size, st.st_mtime_ns])
    except OSError:
        return None
    return sorted(key) or None


def load_policy() -> HookPolicy:
    """The settings' hook policy: cached, or read as `Settings.load()` reads it (its errors
    propagate: a broken settings file is the caller's to refuse) and cached."""
    from bridge import startcache

    path = startcache.settings_file()
    payload = startcache.load("hook", path)
    if payload is not None:
        try:
            return HookPolicy.from_cache(payload)
        except Exception:  # noqa: BLE001 — a cache that does not read back: read the settings
            pass
    before = startcache.settings_stat(path)
    from bridge.settings import Settings

    policy = HookPolicy.of(Settings.load(path))
    if before is not None:
        kept = policy.cached()
        if kept is not None:
            startcache.store("hook", path, before, kept)
    return policy
