"""Where each CLI reads the settings `hook install` writes, as the CLI itself finds them: the
user's file honours the CLI's own variable for its home (Claude Code's `CLAUDE_CONFIG_DIR`, Gemini
CLI's `GEMINI_CLI_HOME`, Codex's `CODEX_HOME`); a hook written anywhere else never runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def settings_file(cli: str, project: bool, cwd: str | None = None) -> Path:
    base = Path(cwd or os.getcwd())  # (the user's: where the CLI reads it, its env var honoured)
    if cli == "claude":
        user = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
        return (base / ".claude" if project else user) / "settings.json"
    if cli == "gemini":
        return (
            (base if project else Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()))
            / ".gemini"
            / "settings.json"
        )
    if project:
        return base / ".codex" / "config.toml"
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"


def gemini_trusts(folder: Path) -> bool:
    """Whether Gemini CLI's trustedFolders.json trusts `folder` (itself, or a parent it marks
    TRUST_PARENT): Gemini CLI loads a project's settings, hooks included, only then."""
    named = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    path = Path(named) if named else settings_file("gemini", False).with_name("trustedFolders.json")
    try:
        trusted = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(trusted, dict):
        return False
    for path, level in trusted.items():
        root = Path(path)
        if level == "TRUST_FOLDER" and root == folder:
            return True
        if level == "TRUST_PARENT" and (root == folder.parent or root in folder.parents):
            return True
    return False


CLAUDE_MANAGED = Path("/etc/claude-code/managed-settings.json")


def _object(path: Path) -> dict[str, Any]:
    """A settings file's JSON object (comments allowed), or {} when there is none to read."""
    from bridge.hooks.jsonc import blank_comments

    try:
        data = json.loads(blank_comments(path.read_text()))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _gemini_layers(cwd: Path) -> list[Path]:
    """Gemini CLI's settings files, the weakest first: system defaults, user, workspace, system."""
    system = Path(
        os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json"
    )
    defaults = os.environ.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
    return [
        Path(defaults) if defaults else system.with_name("system-defaults.json"),
        settings_file("gemini", False),
        cwd / ".gemini" / "settings.json",
        system,
    ]


def switched_off(cli: str, cwd: Path) -> list[str]:
    """Why the CLI, run in `cwd`, runs none of our hooks however they are installed: a setting
    of a file it reads that turns its hooks off (Claude Code's `disableAllHooks` in any of them,
    a managed `allowManagedHooksOnly`; Gemini CLI's `hooksConfig.enabled`, or ours named in
    `hooksConfig.disabled`). Empty when none does."""
    found: list[str] = []
    if cli == "claude":
        files = [settings_file("claude", False), cwd / ".claude" / "settings.json"]
        for path in [*files, cwd / ".claude" / "settings.local.json", CLAUDE_MANAGED]:
            data = _object(path)
            for key in ("disableAllHooks", "allowManagedHooksOnly"):
                if data.get(key) is True and (key == "disableAllHooks" or path == CLAUDE_MANAGED):
                    found.append(f"{key} is true in {path}")
    elif cli == "gemini":
        enabled: tuple[bool, Path] | None = None
        for path in _gemini_layers(cwd):
            config = _object(path).get("hooksConfig")
            if not isinstance(config, dict):
                continue
            if isinstance(config.get("enabled"), bool):
                enabled = (config["enabled"], path)
            disabled = config.get("disabled")
            if isinstance(disabled, list) and "symposium" in disabled:
                found.append(f'hooksConfig.disabled names "symposium" in {path}')
        if enabled is not None and not enabled[0]:
            found.append(f"hooksConfig.enabled is false in {enabled[1]}")
    return found
