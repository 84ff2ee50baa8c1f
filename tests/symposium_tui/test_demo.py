"""The demo scenario renders the README's screenshots the same way every time, with one command."""

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


def test_the_screenshots_come_out_identical_from_two_runs(tmp_path):
    first = render(tmp_path / "one")
    second = render(tmp_path / "two")
    assert sorted(first) == sorted(f"{name}.svg" for name in SHOTS)
    different = [name for name in first if first[name] != second[name]]
    assert not different, f"screenshots differ between runs: {different}"
    for name, svg in first.items():
        assert b"Symposium" in svg, name


def test_the_readme_section_shows_every_committed_screenshot():
    readme = (ROOT / "screenshots" / "README.md").read_text()
    linked = set(re.findall(r"\]\(([\w-]+\.svg)\)", readme))
    assert linked == {f"{name}.svg" for name in SHOTS}
    assert all((ROOT / "screenshots" / name).exists() for name in linked)
    assert "python -m symposium_tui.demo --screenshots screenshots/" in readme
