"""The command line, run as a real subprocess through the installed console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.lmclient import REPO

SCRIPT = Path(sys.executable).with_name("symposium-tui")


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`symposium-tui ARGS…` through the installed console script."""
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "symposium_tui"]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, cwd=str(REPO), timeout=timeout
    )
