"""`symposium-tui config`: where every file is, the settings and the defaults in effect."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def show(args: argparse.Namespace) -> int:
    import json
    import shlex

    from bridge.paths import settings_path
    from bridge.settings import Settings, SettingsError

    path = settings_path()
    try:
        settings = Settings.load(path)
    except SettingsError as exc:
        if args.json:
            print(
                json.dumps(
                    {"path": str(path), "exists": path.exists(), "error": exc.to_dict()}, indent=2
                )
            )
        print(f"symposium-tui config: {exc}", file=sys.stderr)
        print(
            "symposium-tui config: the file was left as it is; fix it and run this again",
            file=sys.stderr,
        )
        return 1
    if args.json:
        print(json.dumps({**settings.to_public_dict(), "files": _files(settings)}, indent=2))
        return 0
    out = ["files:"]
    for what, (where, note) in _files(settings).items():
        out.append(f"  {what + ':':<12} {where}" + (f"  ({note})" if note else ""))
    from bridge.registry import BUILTIN_NAME
    from bridge.settings import BUILTIN_AGENT_IDS

    builtin = f"{BUILTIN_AGENT_IDS[0]} ({BUILTIN_NAME}): runs inside symposium-tui"
    out.append("agents:")
    if not any(agent_id in BUILTIN_AGENT_IDS for agent_id in settings.agents):
        out.append(f"  {builtin}")
    for agent_id, agent in settings.agents.items():
        label = agent_id if agent.name == agent_id else f"{agent_id} ({agent.name})"
        if agent_id in BUILTIN_AGENT_IDS and not agent.command:
            label, run = builtin.split(": ", 1)  # settings for the built-in agent (its bypass)
        elif agent.command:
            run = shlex.join([agent.command, *agent.args])
        else:
            run = (
                "no command: settings only (its name and bypass apply when VS Code or "
                "`symposium-tui acp` runs it; the chat cannot start it)"
            )
        out.append(f"  {label}: {run}" + ("  [bypass]" if agent.bypass else ""))
        if agent.env:
            out.append(f"    env: {', '.join(agent.env)} (values hidden)")
        if agent.description:
            out.append(f"    {agent.description}")
    bypass = sorted(settings.bypass_agents())
    out.append(f"bypass (approvals skipped): {', '.join(bypass) if bypass else 'none'}")
    out.append("rules:" if settings.rules else "rules: none (every request is asked)")
    for i, rule in enumerate(settings.rules, 1):
        out.append(f"  {i}. {rule.describe()}")
    out.append("preferences (under [preferences]; “default” where the file sets none):")
    out.extend(f"  {line}" for line in _preference_lines(settings.preferences))
    for warning in settings.warnings:
        out.append(f"warning: {warning}")
    print("\n".join(out))
    return 0


def _files(settings: Any) -> dict[str, tuple[str, str]]:
    """Every file and directory Symposium uses: where, and a word on it."""
    from bridge.paths import audit_path, runtime_dir_path, themes_dir

    themes = themes_dir()
    own = sorted(p.stem for p in themes.glob("*.toml")) if themes.is_dir() else []
    runtime = runtime_dir_path()
    console = os.path.join(runtime, "console.sock")
    return {
        "settings": (
            str(settings.path),
            "" if settings.exists else "not there yet: the console writes it when you change one",
        ),
        "themes": (
            str(themes / "*.toml"),
            f"yours: {', '.join(own)}" if own else "your own themes; none yet",
        ),
        "audit log": (str(audit_path()), "every approval decision, hash-chained"),
        "runtime": (
            runtime,
            "a console is running" if os.path.exists(console) else "the console's socket",
        ),
        "logs": ("none", "--log LEVEL logs to stderr, --log-dir DIR to a file per process"),
        "event log": ("none", "--event-log FILE records every bridge event; `replay` explains it"),
    }


# (preference, its default in words, what it does)
_PREFERENCES = (
    ("theme", "symposium-dark", "the console's colours (F4 or the palette's “Theme: …”)"),
    ("mouse", "true", "the console takes the mouse (false suits SSH; so does --no-mouse)"),
    ("arm_delay", "0.5 seconds", "a new card ignores its keys this long"),
    ("idle_timeout", "1800 seconds", "an agent with no requests this long is stopped (0: never)"),
    ("max_agents", "16", "agent processes running at once (0: no limit)"),
    (
        "approval_timeout",
        "600 seconds with serve, none in the console",
        "an approval nobody answers is denied after this long (0: never)",
    ),
    (
        "hook_no_console",
        '"ask"',
        "what a CLI's hook answers when no console decides: ask (the CLI's own approval) or deny",
    ),
    (
        "hook_wait",
        "until just before the CLI's hook timeout",
        "seconds a CLI's hook waits for a card on the console",
    ),
)


def _preference_lines(table: dict[str, Any]) -> list[str]:
    import json

    lines = []
    for key, default, what in _PREFERENCES:
        value = f"{json.dumps(table[key])}" if key in table else f"{default} (default)"
        lines.append(f"{key} = {value}: {what}")
    known = {key for key, _, _ in _PREFERENCES}
    for key, value in table.items():
        if key not in known:
            lines.append(f"{key} = {json.dumps(value)}")
    return lines
