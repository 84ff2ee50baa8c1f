"""A plain list or pipeline (`cd /tmp && git status | head -5`, `make 2>&1 | tail`) is read
without bashlex (`bridge.shell.plain`): what it runs must be exactly what bashlex's reading gives,
for every command of the rule corpus (nested scripts too: `bash -c 'a && b'`) and for lists made
of the words the rules care about (wrappers, shells, assignments, aliases, quotes, redirections)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from bridge.shell import parser as shell_parser
from bridge.shell.parser import parse_command
from bridge.shell.plain import plain_list
from tests.bridge.corpus.cases import CASES


@contextmanager
def bashlex_only() -> Iterator[None]:
    """Every list read by bashlex, as before plain lists were split without it."""
    split = shell_parser.plain_list
    shell_parser.plain_list = lambda script: None  # type: ignore[assignment]
    try:
        yield
    finally:
        shell_parser.plain_list = split


def both_readings(script: str) -> tuple[object, object]:
    fast = parse_command(script)
    with bashlex_only():
        slow = parse_command(script)
    return fast, slow


CORPUS = sorted({c for _, c, _, _ in CASES if isinstance(c, str)})


def test_the_corpus_holds_plain_lists_and_scripts_that_are_not() -> None:
    """The comparison below covers both: lists split here, and scripts left to bashlex."""
    split = [c for c in CORPUS if len(plain_list(c) or ()) > 1]
    assert len(split) >= 10, split
    redirected = [c for c in CORPUS if any(r for _, r in plain_list(c) or ())]
    assert len(redirected) >= 5, redirected
    assert len(CORPUS) - len(split) >= 400


@pytest.mark.parametrize("script", CORPUS)
def test_a_corpus_command_runs_the_same_parts_however_its_lists_are_split(script: str) -> None:
    fast, slow = both_readings(script)
    assert fast == slow


@pytest.mark.parametrize(
    ("script", "commands"),
    [
        ("cd /tmp && git status | head -5", [["cd", "/tmp"], ["git", "status"], ["head", "-5"]]),
        ("a;b||c", [["a"], ["b"], ["c"]]),
        ("echo 'a && b' \"c|d\" ; ls", [["echo", "a && b", "c|d"], ["ls"]]),
        ("git push | tee log 'A=1'", [["git", "push"], ["tee", "log", "A=1"]]),
        ("make 2>&1 | tail -20", [["make"], ["tail", "-20"]]),
    ],
)
def test_a_plain_list_is_its_commands_in_order(script: str, commands: list[list[str]]) -> None:
    assert [words for words, _ in plain_list(script) or ()] == commands


@pytest.mark.parametrize(
    ("script", "redirects"),
    [
        ("ls 2>/dev/null", [(">", "/dev/null")]),
        ("a>b c", [(">", "b")]),  # the word, then the redirection
        ("ls >> 'my log' <in", [(">>", "my log"), ("<", "in")]),
        ("make 2>&1 >&2 1<&0", []),  # descriptors copied: no file
        ("echo 1>f 2 >g", [(">", "f"), (">", "g")]),  # `1>`: a descriptor; `2 >`: a word
        ("echo '2'>f", [(">", "f")]),  # a quoted number is a word
    ],
)
def test_a_plain_command_keeps_its_redirections(script: str, redirects: list) -> None:
    ((_, got),) = plain_list(script) or [((), None)]
    assert got == redirects


@pytest.mark.parametrize(
    "script",
    [
        "make & rm -rf /",  # in the background
        "make &",
        "a |& b",
        "a ;; b",
        "a &&& b",
        "a && ",
        "; ls",
        "ls;",
        "a && 'b",  # an unbalanced quote
        "if true; then rm -rf /; fi",
        "while true; do rm x; done",
        "time rm -rf / | cat",
        "ls && coproc rm x",
        "! rm x && ls",
        "A=1 ls && ls",  # an assignment before a command: bashlex's reading of it
        "ls | PATH=/x git status",
        "ls &> /dev/null",
        "ls >| f",
        "cat <<E",
        "ls <> f",
        "ls >&- ; rm x",
        "ls >&f",
        "ls > ",
        "ls > && rm x",
        "ls > ''",
        "> f",  # no command
        "ls 2>&1x",
        "git 2> 2> git",
        "ls 222>&1",
    ],
)
def test_what_is_not_a_plain_list_is_left_to_bashlex(script: str) -> None:
    assert plain_list(script) is None


# fmt: off
WORDS = st.sampled_from(
    [
        "git", "status", "push", "rm", "-rf", "/", "ls", "cd", "/tmp", "..", "head", "-5",
        "bash", "sh", "-c", "'rm -rf /'", "\"git push\"", "env", "A=1", "PATH=/x",
        "GIT_EDITOR=vim", "PS4=x", "BASH_ENV=f", "sudo", "timeout", "9", "xargs", "-I", "X",
        "find", ".", "-exec", "nice", "command", "exec", "alias", "r=rm", "'r=rm -rf'", "r",
        "export", "eval", "source", "x.sh", "./x.sh", "python3", "tee", "log", "cat", "echo",
        "''", "a'b'c", "--", "-n", "git-upload-pack", "/usr/bin/rm", "/proc/self/exe",
        "2>&1", ">/dev/null", "2>/dev/null", "> out.txt", "<in.txt", ">>log", "1>&2", ">&2",
        "a>b", "'2'>x", "> .git/config", ">x.sh", "2>", "12>f", "0<&3",
    ]
)
# fmt: on
OPERATORS = st.sampled_from(["&&", "||", "|", ";", " && ", " | ", " ; ", " || "])


@st.composite
def plain_lists(draw: st.DrawFn) -> str:
    commands = draw(st.lists(st.lists(WORDS, min_size=1, max_size=5), min_size=2, max_size=4))
    script = " ".join(commands[0])
    for command in commands[1:]:
        script += draw(OPERATORS) + " ".join(command)
    return script


@settings(max_examples=400, deadline=None)
@given(plain_lists())
@example("alias r=rm; r -rf /")
@example("ls A=1 && git status PATH=/x")
@example("cd / && bash -c 'cd /tmp && rm -rf x'")
@example("echo rm -rf / | bash")
@example("git&&git 2> 2> git")
@example("echo rm -rf / >x.sh && bash x.sh")
@example("printf x > .git/config; git status 2>&1 | cat")
def test_a_plain_list_runs_the_same_parts_as_bashlex_reads(script: str) -> None:
    assume(plain_list(script) is not None)  # (not when a command starts with an assignment)
    fast, slow = both_readings(script)
    assert fast == slow


# characters and pieces a plain script is made of, strung together anyhow (most are not lists)
PIECES = st.sampled_from(
    [*"ab201 '\"&|;<>-/=", "ls", "rm", "echo", "bash", "&&", "||", "2>&1", ">>", "a=1", "  "]
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=14).map("".join))
@example("ls 222>&1")
@example("'a'>b>c")
def test_any_plain_text_read_as_a_list_runs_what_bashlex_reads(script: str) -> None:
    assume(plain_list(script) is not None)
    fast, slow = both_readings(script)
    assert fast == slow


def test_a_plain_list_is_decided_without_importing_bashlex() -> None:
    code = (
        "import sys\n"
        "from bridge.shell.parser import parse_command\n"
        "parts = parse_command('cd /tmp && git status | head -5').parts\n"
        "assert [p.words[0] for p in parts] == ['cd', 'git', 'head'], parts\n"
        "print('bashlex' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
