"""bashlex's parser tables, shipped beside `bridge/shell/bashlex_tables.py` instead of built at every
import: they are exactly what bashlex builds, a process that reads them parses every command as one
that builds them, and anything doubtful about the file has bashlex build its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bridge.shell import bashlex_tables
from tests.bridge.corpus.cases import CASES

COMMANDS = sorted({case[1] for case in CASES if isinstance(case[1], str)})

# Each command's parse (bashlex's tree, dumped) or its error, and whose tables the parser used.
PARSE = """
import json, sys
from bridge.shell import bashlex_tables
if sys.argv[1] != "-":
    bashlex_tables.TABLES = sys.argv[1]
if sys.argv[2] == "install":
    bashlex_tables.install()
import bashlex, bashlex.parser
out = []
for command in json.load(sys.stdin):
    try:
        out.append([tree.dump() for tree in bashlex.parse(command)])
    except Exception as exc:
        out.append(f"{type(exc).__name__}: {exc}")
kind = type(bashlex.parser.yaccparser.productions[1]).__name__
json.dump({"kind": kind, "parses": out}, sys.stdout)
"""


def parse_all(tables: str, how: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PARSE, tables, how],
        input=json.dumps(COMMANDS),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_shipped_tables_are_what_this_bashlex_builds():
    code = (
        "import json, bashlex.parser\n"
        "from bridge.shell.bashlex_tables import built\n"
        "print(json.dumps(built(bashlex.parser), sort_keys=True))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == json.loads(Path(bashlex_tables.TABLES).read_text())


def test_a_process_reading_the_tables_parses_every_corpus_command_as_one_building_them():
    read = parse_all("-", "install")
    own = parse_all("-", "plain")
    assert (read["kind"], own["kind"]) == ("_Production", "Production")
    assert len(read["parses"]) == len(COMMANDS) > 500
    assert read["parses"] == own["parses"]


def test_tables_made_from_other_sources_or_unreadable_are_not_used(tmp_path):
    data = json.loads(Path(bashlex_tables.TABLES).read_text())
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({**data, "digest": "0:00000000"}))
    broken = tmp_path / "broken.json"
    broken.write_text(Path(bashlex_tables.TABLES).read_text()[:5000])
    own = parse_all("-", "plain")
    for path in (stale, broken, tmp_path / "missing.json"):
        again = parse_all(str(path), "install")
        assert again == own  # bashlex built its own, and parses as always
