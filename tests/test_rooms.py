"""Rooms of one concern: no module, class or function outgrows the size a reader can hold.

The limits are the ones docs/architecture.md states; a module may stay longer only when it is
listed there under "Modules kept whole" with its reason (a parser, a data table, the history
tracker), so the exception is a decision someone wrote down rather than drift.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bridge", "symposium_tui")
MODULE_LINES = 600
CLASS_LINES = 400
FUNCTION_LINES = 80


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _kept_whole() -> dict[str, str]:
    """The modules docs/architecture.md lets stay over the limit, each with its reason."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("### Modules kept whole", 1)[1].split("\n#", 1)[0]
    return dict(re.findall(r"^- `([\w/.]+\.py)`[^—\n]*— (.+)$", section, flags=re.MULTILINE))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_kept_whole_module_exists_and_says_why() -> None:
    kept = _kept_whole()
    assert kept, "docs/architecture.md lists no modules kept whole"
    for name, reason in kept.items():
        assert (ROOT / name).is_file(), f"{name} is listed as kept whole but does not exist"
        assert len(reason.split()) >= 4, f"{name}: the reason it is kept whole is missing"


def test_no_module_over_the_limit_unless_kept_whole_on_purpose() -> None:
    kept = _kept_whole()
    over = {
        _rel(p): n
        for p in _sources()
        if (n := p.read_text(encoding="utf-8").count("\n")) > MODULE_LINES and _rel(p) not in kept
    }
    assert over == {}


def test_no_class_or_function_over_the_limit() -> None:
    over: list[str] = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                limit = CLASS_LINES
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                limit = FUNCTION_LINES
            else:
                continue
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                over.append(f"{_rel(path)}:{node.lineno} {node.name} ({length} lines)")
    assert over == []


def test_every_package_is_checked_for_import_cycles() -> None:
    """import-linter's acyclic_siblings contract looks only inside the packages it names: a new
    package left out of it could grow a cycle unseen."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "acyclic_siblings"
    ]
    packages = {
        init.parent.relative_to(ROOT).as_posix().replace("/", ".")
        for pkg in PACKAGES
        for init in (ROOT / pkg).rglob("__init__.py")
    }
    assert packages - set(contract["ancestors"]) == set()
