"""Where each CLI reads the settings `hook install` writes, as the CLI itself finds them: the
user's file honours the CLI's own variable for its home (Claude Code's `CLAUDE_CONFIG_DIR`, Gemini
CLI's `GEMINI_CLI_HOME`, Codex's `CODEX_HOME`); a hook written anywhere else never runs."""

from __future__ import annotations

import json
import os
from pathlib import Path


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
