"""Where Symposium keeps its files (architecture decision 12). Standard library only."""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    explicit = os.environ.get("SYMPOSIUM_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "symposium"


def settings_path() -> Path:
    return config_dir() / "settings.toml"


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
    return Path(runtime_dir_path())
