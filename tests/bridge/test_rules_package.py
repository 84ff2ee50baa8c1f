"""The rules, shell and option-spelling packages: every name importable where it always was, and
the modules a decision does not need left unloaded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# The public names of `bridge.rules`, `bridge.shell` and `bridge.options` when each was one module:
# code elsewhere imports them from there.
RULES = [
    "ACTIONS",
    "COMMAND_KEYS",
    "DEFAULT_PORTS",
    "DESTRUCTIVE_PROGRAMS",
    "EXACT_MARK",
    "EXAMPLE_KEYS",
    "EXECUTE_KEYS",
    "MAX_BRACES",
    "MAX_COMMAND",
    "MAX_EXPANSIONS",
    "MAX_GLOB_LEVELS",
    "MAX_INPUT_DEPTH",
    "MAX_INPUT_NODES",
    "MAX_LOOSE_PATHS",
    "MAX_URL_CANDIDATES",
    "MIGHT",
    "NO",
    "PATH_KEYS",
    "READ_ONLY_PROGRAMS",
    "READ_ONLY_SUBCOMMANDS",
    "RULE_KEYS",
    "TEXT_KEYS",
    "URL_KEYS",
    "YES",
    "Action",
    "Decision",
    "Find",
    "NamedPaths",
    "ParsedCommand",
    "Part",
    "PartVerdict",
    "Request",
    "Rule",
    "RuleError",
    "RuleSet",
    "Targets",
    "UrlReading",
    "UrlView",
    "_whatwg_reading",
    "allow_walk",
    "breadth",
    "command_of",
    "command_prefix",
    "exact_command",
    "inert_assignment",
    "inside",
    "named_paths",
    "parse_command",
    "propose_rule",
    "read_url",
    "resolve_checked",
    "resolve_path",
    "scope_text",
    "spell",
    "split_url",
    "tool_call_targets",
    "url_allows",
    "url_denies",
    "url_prefix_matches",
]
SHELL = [
    "EVALUATES_SUBSCRIPTS",
    "GLOB_CHARS",
    "HARMLESS_REDIRECT_TARGETS",
    "MAX_SHELL_DEPTH",
    "RUNS_CODE",
    "RUNS_CODE_WHEN",
    "SHELLS",
    "WRAPPERS",
    "ParsedCommand",
    "Part",
    "Role",
    "Wrapper",
    "_Parser",
    "is_assignment",
    "parse_cached",
    "parse_command",
    "word_text",
]
OPTIONS = [
    "INERT_VARIABLES",
    "PROGRAMS",
    "SAME_PROGRAM",
    "UNSAFE",
    "Program",
    "Spelling",
    "program_name",
    "read",
    "unsafe_options",
]


@pytest.mark.parametrize(
    ("module", "names"),
    [("bridge.rules", RULES), ("bridge.shell", SHELL), ("bridge.options", OPTIONS)],
)
def test_every_name_is_importable_from_the_package(module: str, names: list[str]) -> None:
    """In a fresh interpreter, so that a name loaded on first use is loaded by the import."""
    code = (
        f"import json, importlib; m = importlib.import_module({module!r}); "
        f"print(json.dumps([n for n in {names!r} if not hasattr(m, n)]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_a_decision_by_a_command_rule_leaves_paths_urls_and_proposals_unloaded() -> None:
    """A hook process decides one call: the modules for resolving paths, a command's named
    paths, URLs and proposals (and bashlex, for a plain command) load only when something needs
    them."""
    code = """
import json, sys
from bridge.rules import Request, Rule, RuleSet
rules = RuleSet([Rule("allow", command=("git status",)), Rule("deny", kind="edit")])
call = {"kind": "execute", "title": "git status", "rawInput": {"command": "git status"}}
decided = rules.decide(Request.from_tool_call("a", call)).action
before = sorted(m for m in sys.modules if m.startswith(("bridge.rules.", "bashlex")))
from bridge.rules import propose_rule
proposed = propose_rule(Request(agent="a", kind="execute", command="git status -s"))
print(json.dumps([decided, before, list(proposed.command), "bridge.rules.proposals" in sys.modules]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    decided, loaded, proposed, proposals_loaded = json.loads(done.stdout)
    assert decided == "allow"
    lazy = {"bridge.rules.paths", "bridge.rules.named", "bridge.rules.urls"}
    lazy |= {"bridge.rules.proposals", "bashlex"}
    assert lazy.isdisjoint(loaded), loaded
    assert "bridge.rules.ruleset" in loaded
    assert proposed == ["git status"]
    assert proposals_loaded
