"""The demo scenario renders the README's screenshots the same way every time, with one command,
and the committed ones are current."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from symposium_tui.demo import SHOTS

ROOT = Path(__file__).resolve().parents[2]


def render(directory: Path) -> dict[str, bytes]:
    subprocess.run(
        [sys.executable, "-m", "symposium_tui.demo", "--screenshots", str(directory)],
        check=True,
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.svg"))}


def test_the_committed_screenshots_are_what_the_console_renders_now(tmp_path):
    """The pictures the README shows are current: the demo renders exactly the committed files
    (so a change to the console that changes a picture comes with its new picture:
    `.venv/bin/python -m symposium_tui.demo --screenshots screenshots/`). Rendering is
    deterministic, so this also holds from one run to the next."""
    fresh = render(tmp_path / "now")
    assert sorted(fresh) == sorted(f"{name}.svg" for name in SHOTS)
    stale = [
        name for name, svg in fresh.items() if (ROOT / "screenshots" / name).read_bytes() != svg
    ]
    assert not stale, f"screenshots/ is out of date (regenerate it): {stale}"
    for name, svg in fresh.items():
        assert b"Symposium" in svg, name


def test_the_readme_section_shows_every_committed_screenshot():
    readme = (ROOT / "screenshots" / "README.md").read_text()
    linked = set(re.findall(r"\]\(([\w-]+\.svg)\)", readme))
    assert linked == {f"{name}.svg" for name in SHOTS}
    assert all((ROOT / "screenshots" / name).exists() for name in linked)
    assert "python -m symposium_tui.demo --screenshots screenshots/" in readme
