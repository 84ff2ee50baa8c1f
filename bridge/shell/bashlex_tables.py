"""bashlex's parser tables, read from a file made once instead of built at every import.

bashlex (0.18) carries a copy of PLY's `yacc` that no longer keeps the LALR tables it builds: every
process that imports bashlex builds them again from the grammar, ~80-90 ms, more than the rest of a
hook's start-up (a hook decides one tool call per process) and half of the console's first frame.
The tables depend only on bashlex's grammar and its `yacc`, so `bashlex_tables.json` (beside this
module) holds the ones bashlex builds, made by

    .venv/bin/python -m bridge.shell.bashlex_tables --write

with a digest of the two sources they were built from (`bashlex/parser.py`, `bashlex/yacc.py`).
`install()`, called before bashlex is first imported, makes bashlex's call of `yacc.yacc()` return
a parser on those tables when the installed sources have that digest, and leaves it to build them
as always otherwise (another bashlex, an edited one, an unreadable or malformed file). What bashlex
then does to the tables (its fix-ups after `yacc.yacc()`) is done to these as to its own.
`tests/bridge/test_shell_tables.py` proves the file holds exactly what bashlex builds.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from types import ModuleType

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any

TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bashlex_tables.json")
FORMAT = 1
_SOURCES = ("parser.py", "yacc.py")
_installed = False


def install() -> None:
    """Before bashlex is first imported: its `yacc.yacc()` will read the tables from the file
    when they were made from these very sources."""
    global _installed
    if _installed or "bashlex.yacc" in sys.modules:
        return
    _installed = True
    sys.meta_path.insert(0, _YaccFinder())


def digest(folder: str) -> str | None:
    """The digest of bashlex's grammar and yacc sources in `folder` (None: unreadable)."""
    crc = 0
    size = 0
    try:
        for name in _SOURCES:
            with open(os.path.join(folder, name), "rb") as source:
                data = source.read()
            crc = zlib.crc32(data, crc)
            size += len(data)
    except OSError:
        return None
    return f"{size}:{crc:08x}"


class _Production:
    """What the parser uses of a grammar rule: its name, length and action."""

    __slots__ = ("callable", "func", "len", "name", "str")

    def __init__(self, name: str, length: int, func: str | None, text: str, pdict: Any) -> None:
        self.name = name
        self.len = length
        self.func = func
        self.str = text
        self.callable = pdict[func] if func else None

    def __str__(self) -> str:
        return self.str


class _Tables:
    """What bashlex's `LRParser` reads of an `LRTable`."""

    __slots__ = ("lr_action", "lr_goto", "lr_method", "lr_productions")
    lr_action: dict[int, dict[str, int]]
    lr_goto: dict[int, dict[str, int]]
    lr_method: str
    lr_productions: list[_Production]


def _read(pdict: dict[str, Any]) -> _Tables | None:
    """The tables in the file, bound to the grammar module's functions, if they were made from
    the sources beside that module; None otherwise."""
    folder = os.path.dirname(os.path.abspath(pdict["__file__"]))
    try:
        with open(TABLES, encoding="utf-8") as file:
            data = json.load(file)
        if data["format"] != FORMAT or data["digest"] != digest(folder):
            return None
        tables = _Tables()
        tables.lr_method = "LALR"
        tables.lr_productions = [
            _Production(name, length, func, text, pdict)
            for name, length, func, text in data["productions"]
        ]
        tables.lr_action = {int(k): dict(v) for k, v in data["action"].items()}
        tables.lr_goto = {int(k): dict(v) for k, v in data["goto"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return tables


def _wrap(yacc_module: Any) -> None:
    build = yacc_module.yacc

    def yacc(**options: Any) -> Any:
        # bashlex's own call (`yacc.yacc(outputdir=…, debug=False)`, from its parser module)
        if set(options) <= {"outputdir", "debug"} and not options.get("debug"):
            pdict = sys._getframe(1).f_globals
            tables = _read(pdict)
            if tables is not None:
                parser = yacc_module.LRParser(tables, pdict.get("p_error"))
                yacc_module.parse = parser.parse
                return parser
            # built, from the module that called (`yacc` reads its caller's: that is this frame)
            options.setdefault("module", sys.modules[pdict["__name__"]])
        return build(**options)

    yacc_module.yacc = yacc


class _Inspect(ModuleType):
    """`inspect`, imported when one of its names is first read."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("inspect") is self:  # (read while `yacc` was being imported)
            del sys.modules["inspect"]
        import inspect

        return getattr(inspect, name)


class _YaccFinder:
    """Finds `bashlex.yacc` as the other finders do, and wraps its `yacc()` once it has run."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "bashlex.yacc":
            return None
        sys.meta_path.remove(self)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            # `yacc` imports `inspect` (with `ast`, `dis`, `tokenize`: ~7 ms, a tenth of a hook's
            # start) to build tables only: it gets a stand-in that imports it when first used.
            stand_in = None if "inspect" in sys.modules else _Inspect("inspect")
            if stand_in is not None:
                sys.modules["inspect"] = stand_in
            try:
                run(module)
            finally:
                if stand_in is not None and sys.modules.get("inspect") is stand_in:
                    del sys.modules["inspect"]
            _wrap(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def built(pdict_module: Any) -> dict[str, Any]:
    """The tables bashlex's `yacc` builds from the grammar module, as the file holds them."""
    from bashlex import yacc as yacc_module

    parser = yacc_module.yacc(module=pdict_module, debug=False)  # (built: `install` reads only)
    folder = os.path.dirname(os.path.abspath(pdict_module.__file__))
    return {
        "format": FORMAT,
        "digest": digest(folder),
        "productions": [[p.name, p.len, p.func, p.str] for p in parser.productions],
        "action": {str(state): dict(row) for state, row in parser.action.items()},
        "goto": {str(state): dict(row) for state, row in parser.goto.items()},
    }


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(__doc__)
        return 2
    import bashlex.parser

    with open(TABLES, "w", encoding="utf-8") as file:
        json.dump(built(bashlex.parser), file, separators=(",", ":"), sort_keys=True)
        file.write("\n")
    print(f"written: {TABLES}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
