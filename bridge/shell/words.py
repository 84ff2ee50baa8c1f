"""Words as the shell reads them: assignments, quote removal from bashlex's words, expansions,
control characters, and scripts plain enough to split without bashlex."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

from bridge.options import INERT_VARIABLES
from bridge.shell.plain import PLAIN_LIST_CHARS, PLAIN_WORD_CHARS, is_assignment

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any

GLOB_CHARS = frozenset("*?[")

# Every control character but a tab and a newline (a NUL, a carriage return that hides what came
# before it on a terminal, an escape sequence, DEL, C1 controls), and the invisible characters that
# make a command read differently from what runs (zero-width ones, bidirectional overrides).
_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"


def plain_script(text: str) -> bool:
    """Whether `text` is made of `PLAIN_WORD_CHARS` only: one simple command whose words POSIX
    quote removal gives exactly as bash would (no operator, expansion, glob, brace, comment,
    escape or newline), split in microseconds (`split_words`) where bashlex takes a few hundred."""
    return PLAIN_WORD_CHARS.issuperset(text)


def has_space(text: str) -> bool:
    """Whether `text` has a whitespace character (as `\\s` finds one)."""
    return any(c.isspace() for c in text)


# `shlex`, without importing it (nor the pattern it compiles) for the words of a plain command:
# `shlex.quote` leaves a word of these characters as it is (`[\w@%+=:,./-]`, ASCII) ...
_UNQUOTED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")
# ... and `shlex.split` splits a text without these (quotes, a backslash, whitespace other than
# its own space, tab, CR and LF) at its blanks, as `str.split` does an ASCII text.
_SPLIT_SPECIAL = frozenset("'\"\\\x0b\x0c\x1c\x1d\x1e\x1f")


def quote_word(word: str) -> str:
    """`shlex.quote(word)`."""
    if word and _UNQUOTED.issuperset(word):
        return word
    import shlex

    return shlex.quote(word)


def join_words(words: Iterable[str]) -> str:
    """`shlex.join(words)`."""
    return " ".join(quote_word(w) for w in words)


def split_words(text: str) -> list[str]:
    """`shlex.split(text)` (its ValueError included)."""
    if text.isascii() and _SPLIT_SPECIAL.isdisjoint(text):
        return text.split()
    import shlex

    return shlex.split(text)


def control_character(text: str) -> str | None:
    """The first control or invisible character in `text` (see `_CONTROL`), or None. A plain
    script or list has none, so the pattern (~0.4 ms to compile) is compiled with the first that
    is not."""
    if PLAIN_LIST_CHARS.issuperset(text):
        return None
    found = _control().search(text)
    return found.group() if found else None


@lru_cache(maxsize=1)
def _control() -> re.Pattern[str]:
    return re.compile(_CONTROL)


def _unknown_name(name: str) -> bool:
    return bool(GLOB_CHARS & set(name)) or "{" in name


def _unknown(dynamic: Sequence[bool], start: int, stop: int) -> frozenset[int]:
    return frozenset(k - start for k in range(start, stop) if dynamic[k])


def _skip_assignments(words: Sequence[str], i: int) -> int:
    while i < len(words) and is_assignment(words[i]):
        i += 1
    return i


def _local_assignment(word: str) -> bool:
    """An assignment that changes no program's environment by convention (a lower-case shell
    variable) or only chooses a language, a time zone or colours."""
    name = word.partition("=")[0].removesuffix("+")
    if name.startswith("LC_") or name in INERT_VARIABLES:
        return True
    return name.islower() and not name.endswith("_proxy")


def _substitutions(text: str) -> list[str | None]:
    """The scripts of the `$(…)` and backtick substitutions in a text (None: one whose end
    cannot be found)."""
    out: list[str | None] = []
    k = 0
    while k < len(text):
        if text.startswith("$(", k) and not text.startswith("$((", k):
            depth, j = 1, k + 2
            while j < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            out.append(text[k + 2 : j - 1] if depth == 0 else None)
            k = j
        elif text[k] == "`":
            j = text.find("`", k + 1)
            out.append(text[k + 1 : j] if j != -1 else None)
            k = len(text) if j == -1 else j + 1
        else:
            k += 1
    return out


def _parameters(text: str) -> list[str | None]:
    """The text between the braces of each outermost `${…}` in a text bash expands as a `"…"`
    string (an unquoted here-document's body; `\\$` is a `$`); None: one whose end cannot be
    found."""
    out: list[str | None] = []
    k = 0
    while k < len(text):
        if text[k] == "\\":
            k += 2
        elif text.startswith("${", k):
            depth, j = 1, k + 2
            while j < len(text) and depth:
                if text[j] == "\\":
                    j += 1
                elif text.startswith("${", j):
                    depth += 1
                    j += 1
                elif text[j] == "}":
                    depth -= 1
                j += 1
            out.append(text[k + 2 : j - 1] if depth == 0 else None)
            k = j
        else:
            k += 1
    return out


def word_text(src: str, word: Any) -> str:
    """A word with its quotes removed, from the source text: bashlex keeps the quotes of some
    words (`'r''m'` stays `r''m`), and a deny rule must see `rm`. A `$'…'` string is decoded as
    bash decodes it (`$'\\x72m'` is `rm`)."""
    raw = src[word.pos[0] : word.pos[1]]
    if '$"' in raw:  # `$"…"` is `"…"` translated by the locale: the same text in C's
        raw = _unlocalized(raw)
    if "$'" in raw:
        decoded = _ansi_c_word(raw)
        if decoded is not None:
            return decoded
    try:
        tokens = split_words(raw)
    except ValueError:
        return str(word.word)
    if len(tokens) == 1:
        return tokens[0]
    return "" if not tokens and raw else str(word.word)


def _is_dynamic(word: Any) -> bool:
    return any(
        child.kind in ("commandsubstitution", "processsubstitution")
        or (child.kind == "parameter" and child.value != "")  # (`$'…'` reads as an empty `$`)
        for child in getattr(word, "parts", None) or ()
    )


def _unlocalized(raw: str) -> str:
    """A word with each `$"…"` (outside quotes) written `"…"`."""
    out: list[str] = []
    quote = ""
    k = 0
    while k < len(raw):
        c = raw[k]
        if c == "\\" and quote != "'":
            out.append(raw[k : k + 2])
            k += 2
            continue
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "$" and raw.startswith('$"', k):
            k += 1
            continue
        out.append(c)
        k += 1
    return "".join(out)


_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip


def _ansi_c_word(raw: str) -> str | None:
    """A word holding `$'…'` strings, its quotes removed and each of those decoded as bash
    decodes it (`\\xHH`, `\\NNN`, `\\uHHHH`, `\\cX`, …); None when it holds anything else only
    known when it runs, or cannot be read."""
    out: list[str] = []
    k, n = 0, len(raw)
    while k < n:
        c = raw[k]
        if raw.startswith("$'", k):
            k += 2
            while k < n and raw[k] != "'":
                if raw[k] == "\\" and k + 1 < n:
                    text, k = _ansi_c_escape(raw, k + 1)
                    out.append(text)
                else:
                    out.append(raw[k])
                    k += 1
            if k >= n:
                return None
            k += 1
        elif c == "'":
            end = raw.find("'", k + 1)
            if end < 0:
                return None
            out.append(raw[k + 1 : end])
            k = end + 1
        elif c in '$`"':
            return None  # an expansion, or double quotes (which may hold one): read elsewhere
        elif c == "\\" and k + 1 < n:
            out.append(raw[k + 1])
            k += 2
        else:
            out.append(c)
            k += 1
    return "".join(out)


def _ansi_c_escape(raw: str, k: int) -> tuple[str, int]:
    """The text of the escape after a backslash at raw[k - 1], and the index after it."""
    c = raw[k]
    if c in _ESCAPES:
        return _ESCAPES[c], k + 1
    digits = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}.get(c)
    if digits is not None:
        base, most = digits
        j = k + 1
        while j < len(raw) and j - k - 1 < most and raw[j] in "0123456789abcdefABCDEF":
            j += 1
        if j == k + 1:
            return "\\" + c, k + 1
        return chr(int(raw[k + 1 : j], base) % 0x110000), j
    if c in "01234567":
        j = k
        while j < len(raw) and j - k < 3 and raw[j] in "01234567":
            j += 1
        return chr(int(raw[k:j], 8) & 0xFF), j
    if c == "c" and k + 1 < len(raw):
        return chr(ord(raw[k + 1]) & 0x1F), k + 2
    return "\\" + c, k + 1


# a here-document operator whose delimiter word has a quote or a backslash in it (not `<<<`;
# compiled by `re` when a script with a line continuation is first met)
_QUOTED_HEREDOC_START = r"(?<!<)<<(?!<)-?[ \t]*[^\s;&|<>()]*['\"\\\\]"


def join_continuations(script: str) -> tuple[str, bool]:
    """`script` with its line continuations (a backslash right before a newline) removed, as bash
    removes them before it reads a word — outside single quotes, `$'…'` strings and comments —
    and whether one is left where this reading cannot be sure of it (inside what it took for a
    quoted string or a comment: a here-document's text can hold a lone quote), or is after a
    here-document whose delimiter is quoted: bash keeps a backslash-newline in such a body, so
    a line ending in a backslash does not hide its delimiter's line (`cat <<'E'` `x\\` `E`
    `rm -rf /` `E`: bash ends the body at the first `E` and runs rm)."""
    if "\\\n" not in script:
        return script, False
    quoted = re.search(_QUOTED_HEREDOC_START, script)
    if quoted is not None and script.find("\\\n", quoted.end()) != -1:
        return script, True
    joined = _joined(script)
    return joined, "\\\n" in joined


def _joined(script: str) -> str:
    """`script` with the line continuations bash removes removed (see `join_continuations`)."""
    out: list[str] = []
    k, n = 0, len(script)
    quote = ""  # "'" (single, or `$'…'` when `ansi`), '"', or "#" (a comment)
    ansi = False
    while k < n:
        c = script[k]
        if quote == "'":
            if ansi and c == "\\" and k + 1 < n:
                out.append(script[k : k + 2])
                k += 2
                continue
            if c == "'":
                quote, ansi = "", False
            out.append(c)
        elif quote == "#":
            if c == "\n":
                quote = ""
            out.append(c)
        elif c == "\\" and k + 1 < n:
            if script[k + 1] != "\n":
                out.append(script[k : k + 2])
            k += 2
            continue
        elif quote == '"':
            if c == '"':
                quote = ""
            out.append(c)
        else:
            if c == "'":
                quote, ansi = "'", k > 0 and script[k - 1] == "$"
            elif c == '"':
                quote = '"'
            elif c == "#" and (k == 0 or script[k - 1] in " \t\n;&|()"):
                quote = "#"
            out.append(c)
        k += 1
    return "".join(out)


def single_quotes_blanked(script: str, plain_doubles: bool = False) -> str:
    """`script` with the text of its single-quoted strings (and `$'…'` strings) outside double
    quotes turned to spaces: what bash reads as words of text, never as syntax (`git status
    ';(('`); with `plain_doubles`, the text of double-quoted strings with no `$` or backquote in
    them too (`git status ";(("`). The script itself where that reading cannot be
    sure of it: a here-document (its text can hold a lone quote), or a quote left open."""
    if ("'" not in script and not (plain_doubles and '"' in script)) or "<<" in script:
        return script
    out = list(script)
    k, n = 0, len(script)
    quote = ""  # "'" (single, or `$'…'` when `ansi`) or '"'
    ansi = False
    while k < n:
        c = script[k]
        if quote == "'":
            if c == "'":
                quote = ""
            elif ansi and c == "\\" and k + 1 < n:  # `\'` does not end a `$'…'` string
                out[k] = out[k + 1] = " "
                k += 2
                continue
            elif c != "\n":
                out[k] = " "
        elif c == "\\":
            k += 2
            continue
        elif quote == '"':
            if c == '"':
                quote = ""
        elif c == "'":
            quote, ansi = "'", k > 0 and script[k - 1] == "$"
        elif c == '"':
            end = _plain_double_end(script, k) if plain_doubles else -1
            if end != -1:
                out[k + 1 : end] = (" " if x != "\n" else x for x in script[k + 1 : end])
                k = end
            else:
                quote = '"'
        k += 1
    return script if quote else "".join(out)


def _plain_double_end(script: str, start: int) -> int:
    """The index of the quote that ends the double-quoted string at `start` when nothing in it
    expands (no `$`, no backquote: only text, escapes included); -1 otherwise."""
    k = start + 1
    while k < len(script):
        c = script[k]
        if c == "\\":
            k += 2
            continue
        if c == '"':
            return k
        if c in "$`":
            return -1
        k += 1
    return -1


# zsh's expansions that bash leaves as text: `$=x` and `${=x}` split a value into words, `$~x`
# globs it, `$^x` spreads it over the word, `${(f)x}` takes flags (`(e)` evaluates it)
_ZSH_EXPANSIONS = ("$=", "$~", "$^", "${=", "${~", "${^", "${(")


def unreadable_word(raw: str) -> bool:
    """A word as written that becomes other words when it runs (a brace expansion, a glob that
    may match a file named like an option, an expansion zsh makes of what bash leaves as text),
    or whose text this reading cannot be sure of (a `$'…'` string it cannot decode)."""
    return (
        has_brace_expansion(raw)
        or ("$" in raw and any(z in raw for z in _ZSH_EXPANSIONS))
        or (_unquoted_ansi_c(raw) and _ansi_c_word(_unlocalized(raw)) is None)
        or (not GLOB_CHARS.isdisjoint(raw) and _option_glob(raw))
    )


def _option_glob(raw: str) -> bool:
    """Whether a word as written is a glob (an unquoted `*`, `?` or `[…]`) whose matches may start
    with `-`: it starts with one (`*`, `[-x]*`) or with a `-` (`-*`, `"--out"*`). A file named
    `-i` makes `sed -n p *` edit files in place; `./*`, `src/*.py` and `x*` are no option."""
    for k, c in _unquoted(raw):
        if c in "*?" or (c == "[" and "]" in raw[k + 2 :]):
            if k == 0:
                return True
            text = _ansi_c_word(raw[:k])  # (the text before it, its quotes removed)
            return text is None or text.startswith("-")
    return False


def _unquoted(raw: str) -> Iterator[tuple[int, str]]:
    """Each character of a word as written that is neither quoted nor escaped, with its index
    (inside `'…'` nothing is special; inside `"…"` and outside quotes a `\\` escapes the next
    character; the quotes themselves are not given)."""
    quote = ""
    k, n = 0, len(raw)
    while k < n:
        c = raw[k]
        if quote:
            if c == "\\" and quote == '"':
                k += 2
                continue
            if c == quote:
                quote = ""
        elif c == "\\":
            k += 2
            continue
        elif c in "'\"":
            quote = c
        else:
            yield k, c
        k += 1


def _unquoted_ansi_c(raw: str) -> bool:
    """Whether a `$'…'` string starts in `raw` outside quotes (`'$'` and `"$'"` are text)."""
    quote = ""
    k = 0
    while k < len(raw):
        c = raw[k]
        if c == "\\" and quote != "'":
            k += 2
            continue
        if quote:
            if c == quote:
                quote = ""
        elif raw.startswith("$'", k):
            return True
        elif c in "'\"":
            quote = c
        k += 1
    return False


def unknown_target(target: str) -> bool:
    """Whether the file a command writes (a redirection's target, `tee`'s file) is only known when
    it runs: an expansion in it (`> d/$x/f`, `> d/$(…)`), a glob (what it matches may be a
    symlink out of the folder: `> d/f*`), a brace expansion (`tee d/{a,../b}` writes both), or
    a folder the shell keeps (`~-` is `$OLDPWD`, `~+`, `~1`)."""
    return (
        "$" in target
        or "`" in target
        or bool(GLOB_CHARS & set(target))
        or has_brace_expansion(target)
        or bool(re.match(r"~[-+0-9]", target))
    )


def has_brace_expansion(raw: str) -> bool:
    """Whether a word as written holds a brace expansion bash makes several words of
    (`{push,}`, `--{recursive,force}`, `{1..3}`): an unquoted `{` (not `${`) whose matching `}`
    encloses an unquoted `,` or `..`."""
    if "{" not in raw:
        return False
    opened: list[bool] = []  # per unquoted `{`: whether it is a parameter's `${`
    for k, c in _unquoted(raw):
        if c == "{":
            opened.append(k > 0 and raw[k - 1] == "$")
        elif c == "}" and opened:
            opened.pop()
        elif opened and not opened[-1]:
            if c == "," or (c == "." and raw.startswith("..", k)):
                return True
    return False


# A parameter expansion that evaluates arithmetic: a subscript other than a number, `@` or `*`
# (`${a[v]}`), an offset or length (`${v:n:m}`, not `:-`/`:=`/`:+`/`:?`), an indirection
# (`${!ref}`). The arithmetic evaluates the *value* of every variable it names, and a value like
# `a[$(cmd)]` runs cmd — whatever the quotes around the expansion.
# (patterns compiled by `re` when first used: a hook's start-up does not pay for them)
_PARAM_SUBSCRIPT = r"\[(?!\s*(?:-?\d+|@|\*)\s*\])"
_PARAM_OFFSET = r"#?(?:[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?|[@*#?$!0-9-]):(?![-=+?])"


def evaluates_arithmetic(parameter: str) -> bool:
    """Whether a `${…}` expansion (its text between the braces) evaluates arithmetic on a value
    only known when it runs (see `_PARAM_SUBSCRIPT`)."""
    if parameter.startswith("!") and not parameter.endswith(("*", "@", "[@]", "[*]")):
        return True
    if parameter.endswith("@P"):  # a prompt expansion of the value: its `$(…)` run
        return True
    head = re.split(r"[#%/^,]|:[-=+?]", parameter.lstrip("#!"), maxsplit=1)[0]
    if re.search(_PARAM_SUBSCRIPT, head):
        return True
    m = re.match(_PARAM_OFFSET, parameter)
    if m is not None:
        rest = parameter[m.end() :]
        return not re.fullmatch(r"\s*-?\d*\s*(?::\s*-?\d*\s*)?", rest)
    return False
