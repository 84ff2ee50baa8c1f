"""The wheel: built from this tree, installed in a fresh venv, it holds every package of the source
tree and the bundled themes (top-level `themes/`, shipped as `symposium_tui/bundled_themes/`), and
the installed console loads every one of them.

Building uses pip's isolated build (setuptools from PyPI, cached by pip after the first run). The
fresh venv gets the project's dependencies by a path entry to this venv's site-packages — a plain
entry, so the editable install's own `.pth` there is not processed and the project can only come
from the installed wheel.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

from tests.support.lmclient import REPO


def _source_copy(dest: Path) -> Path:
    """The tracked files of this tree (a build in the tree itself would leave `build/` behind,
    whose stale files a later build could pick up)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = _source_copy(tmp_path_factory.mktemp("source"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    (built,) = out.glob("symposium_tui-*.whl")
    return built


def test_the_wheel_holds_every_package_of_the_source_tree_and_the_themes(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for package_dir in [
        *REPO.glob("bridge/**/__init__.py"),
        *REPO.glob("symposium_tui/**/__init__.py"),
    ]:
        assert str(package_dir.relative_to(REPO)) in names, f"{package_dir} not in the wheel"
    bundled = sorted(p.name for p in (REPO / "themes").glob("*.toml"))
    assert len(bundled) >= 4
    for name in bundled:
        assert f"symposium_tui/bundled_themes/{name}" in names
    assert "symposium_tui/app.tcss" in names
    assert "bridge/shell/bashlex_tables.json" in names  # bashlex's parser tables, read not built


def test_a_fresh_venv_with_the_wheel_loads_every_bundled_theme(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with zipfile.ZipFile(wheel) as zf:  # what pip would put in site-packages
        zf.extractall(site)
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    config = tmp_path / "config"  # no user themes
    script = textwrap.dedent(
        """
        import json, sys
        import symposium_tui
        from symposium_tui.themes import BUNDLED_DIR, load_themes
        loaded = load_themes(__import__("pathlib").Path(sys.argv[1]))
        print(json.dumps({
            "package": symposium_tui.__file__,
            "dir": str(BUNDLED_DIR),
            "themes": sorted(loaded.themes),
            "sources": sorted(p.name for p in loaded.sources.values()),
            "errors": loaded.errors,
        }))
        """
    )
    proc = subprocess.run(
        [str(python), "-c", script, str(config)],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the source tree: the project can only come from the wheel
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout)
    assert result["package"].startswith(site), result["package"]
    assert result["dir"] == str(Path(site, "symposium_tui", "bundled_themes"))
    assert result["errors"] == []
    assert result["sources"] == sorted(p.name for p in (REPO / "themes").glob("*.toml"))
    assert {"symposium-dark", "symposium-light", "symposium-high-contrast"} <= set(result["themes"])
