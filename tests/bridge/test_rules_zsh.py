"""Agents whose shell is zsh (Claude Code runs its Bash tool in the user's shell: zsh on macOS):
zsh's own spellings of a command a deny rule names are denied — its `=` expansion (`=rm` is rm's
path), its precommand modifiers (`noglob`, `nocorrect`) and `repeat N` — and what only zsh reads
(`$=x`, `${=x}`, glob qualifiers that run code, anonymous functions, `always`, `foreach`, `&|`:
text or syntax errors to bash) is asked, bypass included. The oracle is zsh itself, run in a
sandbox under strace: each spelling must really start the `rm -rf` the rule names."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bridge.approvals import ApprovalContext, Policy
from bridge.rules import Request, Rule, RuleSet

ZSH, BWRAP, STRACE = shutil.which("zsh"), shutil.which("bwrap"), shutil.which("strace")
pytestmark = pytest.mark.skipif(
    None in (ZSH, BWRAP, STRACE), reason="needs zsh, bubblewrap and strace (.ci/run installs them)"
)

RULES = [Rule("deny", command=("rm -rf",)), Rule("allow", command=("ls", "echo", "true"))]
DENIED = [
    "=rm -rf victim",
    "command =rm -rf victim",
    "nice =rm -rf victim",
    "noglob rm -rf victim",
    "nocorrect rm -rf victim",
    "repeat 1 rm -rf victim",
]
ASKED = [
    "x='rm -rf victim'; $=x",
    "x='rm -rf victim'; ${=x}",
    "ls *(e:'rm -rf victim':)",
    "() { rm -rf victim }",
    "{ rm -rf victim } always { true }",
    "x=(rm -rf victim); $x",
    "r() rm -rf victim; r",
    "for f (victim) rm -rf $f",
    "rm -rf victim &|",
    "foreach f (victim)\nrm -rf $f\nend",
]
OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def ran_in_zsh(command: str, work: Path) -> list[list[str]]:
    """Run `command` with `zsh -f` in a sandbox over `work`; each program it started (argv)."""
    trace = work.parent / "trace"
    argv = [
        BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", str(work.parent), str(work.parent), "--unshare-net", "--unshare-user-try",
        "--die-with-parent", "--chdir", str(work), "--setenv", "HOME", str(work),
        STRACE, "-f", "-qq", "-s", "256", "-e", "trace=execve", "-e", "signal=none",
        "-o", str(trace), ZSH, "-f", "-c", command,
    ]  # fmt: skip
    subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
    ran = []
    for line in trace.read_text().splitlines():
        found = re.search(r"execve\(\"([^\"]+)\", \[(.*?)\]", line)
        if found and line.rstrip().endswith("= 0"):
            ran.append(re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(2)))
    return ran


def decide(command: str, *, bypass: bool = False) -> str | None:
    call = {"kind": "execute", "title": command, "rawInput": {"command": command}}
    if not bypass:
        return RuleSet(RULES).decide(Request.from_tool_call("claude-code", call)).action
    policy = Policy(rules=RULES, bypass_agents={"claude-code"})
    resolution = policy.decide(ApprovalContext("c", "s", "claude-code", call, OPTIONS))
    return "ask" if resolution is None else {"yes": "allow", "no": "deny"}[resolution.option_id]


@pytest.mark.parametrize(
    ("command", "verdict"), [(c, "deny") for c in DENIED] + [(c, "ask") for c in ASKED]
)
def test_what_zsh_runs_as_a_denied_command_is_denied_or_asked(command, verdict, tmp_path):
    work = tmp_path / "work"
    (work / "victim").mkdir(parents=True)
    ran = ran_in_zsh(command, work)
    assert not (work / "victim").exists(), f"zsh left the folder: {command!r}"
    assert any(a and a[0].endswith("rm") and "-rf" in a for a in ran), (command, ran)
    assert decide(command) == verdict
    assert decide(command, bypass=True) == verdict  # the bypass allows none of them


def test_zsh_spellings_of_an_allowed_command_stay_allowed():
    """Allow means what it says under zsh too: its modifiers change nothing an allow rule
    covers, and `=ls` is ls."""
    for command in ("noglob ls", "=ls -la", "repeat 2 echo hi"):
        assert decide(command) == "allow", command
    assert decide("repeat 2 rm -rf build") == "deny"
