"""What a hook process loads or builds only when a command needs it gives the answers the eager
code gave: the wrapper names `bridge.shell.simple` checks before loading the wrappers' table are
that table's names; `bridge.shell.words`' `split_words`, `quote_word` and `join_words` are
`shlex.split`, `shlex.quote` and `shlex.join`; the character sets that replaced the plain-script,
plain-list, whitespace, assignment, folder-stack and script-word patterns answer as the patterns
do; and the programs' option tables are built one program at a time
(`tests/hooks/test_hook_process.py` checks what a hook process deciding a plain command loads)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bridge.rules.commands import _script_word
from bridge.shell.plain import PLAIN_LIST_CHARS, is_assignment
from bridge.shell.programs import WRAPPER_NAMES
from bridge.shell.runs import _stack_word
from bridge.shell.words import has_space, join_words, plain_script, quote_word, split_words
from bridge.shell.wrappers import WRAPPERS

# the characters that decide these answers, and a few others
SPECIAL = "aZ_09+=-., \t\r\n\x0b\x0c\x1c\x1f\x00'\"\\#;&|<>$*?[]/:@%()`{}~!\x85\xa0\u2028\u3000é١"
TEXT = st.text(
    st.sampled_from(SPECIAL) | st.characters(),
    max_size=12,
)


def test_the_wrapper_names_are_the_wrappers_table():
    assert frozenset(WRAPPERS) == WRAPPER_NAMES


def _shlex_split(text: str) -> list[str] | str:
    try:
        return shlex.split(text)
    except ValueError as exc:
        return f"ValueError: {exc}"


def _split_words(text: str) -> list[str] | str:
    try:
        return split_words(text)
    except ValueError as exc:
        return f"ValueError: {exc}"


@settings(deadline=None)  # (timing is not what they check)
@given(TEXT)
@example("a  b\t\nc\r")
@example("a\x0bb")
@example("a\xa0b")
@example("'a b' c")
@example("")
def test_split_words_is_shlex_split(text):
    assert _split_words(text) == _shlex_split(text)


@settings(deadline=None)  # (timing is not what they check)
@given(TEXT)
@example("")
@example("a-b_c@d%e+f=g:h,i.j/k")
@example("é")
def test_quote_word_is_shlex_quote(text):
    assert quote_word(text) == shlex.quote(text)


@settings(deadline=None)  # (timing is not what they check)
@given(st.lists(TEXT, max_size=4))
def test_join_words_is_shlex_join(words):
    assert join_words(words) == shlex.join(words)


@settings(deadline=None)  # (timing is not what they check)
@given(TEXT)
@example("a=1")
@example("a+=1")
@example("a++=1")
@example("+=1")
@example("_a9=")
@example("9a=1")
@example("é=1")
@example("a b=1")
@example("-12")
@example("+١")
@example("a;b")
def test_the_character_sets_answer_as_the_patterns_did(text):
    for word in (text, f"a{text}=", f"{text}=x", f"x={text}", f"-{text}", f"+{text}"):
        assert plain_script(word) == bool(re.fullmatch(r"[A-Za-z0-9_./=:@%+,\-'\" ]*", word))
        assert PLAIN_LIST_CHARS.issuperset(word) == bool(
            re.fullmatch(r"[A-Za-z0-9_./=:@%+,\-'\" &|;<>]*", word)
        )
        assert has_space(word) == bool(re.search(r"\s", word))
        assert is_assignment(word) == bool(re.match(r"[A-Za-z_][A-Za-z0-9_]*\+?=", word))
        assert _stack_word(word) == bool(re.fullmatch(r"-|[-+]\d+", word))
        assert _script_word(word) == bool(re.search(r"[\s;&|()`]+", word))


BUILT = """
from bridge.options import programs
from bridge.rules.commands import spell
spell(("git", "status"))
spell(("rm", "-rf", "x"))
print(sorted({k for k, build in programs.PROGRAMS._build.items() if build in programs.PROGRAMS._built}))
"""


def test_the_options_table_builds_the_programs_it_reads_only():
    done = subprocess.run(
        [sys.executable, "-c", BUILT], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "['git', 'rm']"
