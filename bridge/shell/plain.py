"""Plain lists and pipelines, read without bashlex: `cd /tmp && git status | head -5`,
`npm test 2>&1 | tail -20`, `ls > /dev/null; echo done`.

A script of these characters only — letters, digits, `_./=:@%+,-`, quotes, blanks, the operators
`&&`, `||`, `|`, `;` and the redirections `>`, `>>`, `<`, `N>&M` (N, M descriptors) — has no expansion, glob, brace,
comment, escape or newline in it, and bash reads it as one list of simple commands: each command's
words (quotes removed) and redirections, in order. `plain_list` reads it so, in microseconds where
bashlex's import and parse take ten milliseconds (a hook decides one tool call per process). Any
other shape is left to bashlex (`None`): `&` (in the background), `|&`, `;;`, `&>`, `>|`, `<>`,
`<<`, an empty command, an unbalanced quote, a command starting with an assignment (bashlex's
words for it are the value alone), a word bash may read as its grammar's (`if true; then rm -rf /;
fi`), a redirection without its target. `tests/bridge/test_shell_plain_lists.py` proves the parts
read this way are the parts bashlex's reading gives, over the rule corpus and generated lists.
"""

from __future__ import annotations

_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
# A script is plain when it has these characters only (a set, not a pattern: a hook process
# compiles no pattern to read a plain command)
PLAIN_WORD_CHARS = _NAME_CHARS | frozenset("./=:@%+,-'\" ")
PLAIN_LIST_CHARS = PLAIN_WORD_CHARS | frozenset("&|;<>")
_OPERATORS = frozenset(("&&", "||", "|", ";"))
_RESERVED_WORDS = frozenset(
    {"!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi"}
    | {"for", "function", "if", "in", "select", "then", "time", "until", "while"}
)
_ENDS_WORD = " &|;<>"

# one simple command: its words, and its redirections (operator, target word) in order
Command = tuple[list[str], list[tuple[str, str]]]


def is_assignment(word: str) -> bool:
    """Whether a word starts with `NAME=` or `NAME+=` (NAME: a letter or `_`, then letters,
    digits and `_`, ASCII): an assignment."""
    name, eq, _ = word.partition("=")
    name = name.removesuffix("+")
    return bool(eq and name) and name[0] in _NAME_START and _NAME_CHARS.issuperset(name)


def plain_list(script: str) -> list[Command] | None:
    """The commands of a plain list or pipeline, in order; None when `script` is not one."""
    if "&>" in script or not PLAIN_LIST_CHARS.issuperset(script):
        return None
    return _Reader(script).commands()


class _Reader:
    def __init__(self, script: str) -> None:
        self.script = script
        self.i = 0
        self.word: str | None = None  # the word being read (None: between words)
        self.quoted = False  # it holds a quote (a quoted number is a word, never a descriptor)
        self.words: list[str] = []
        self.redirects: list[tuple[str, str]] = []
        self.out: list[Command] = []

    def commands(self) -> list[Command] | None:
        script = self.script
        while self.i < len(script):
            c = script[self.i]
            if c == " ":
                self.end_word()
                self.i += 1
                ok = True
            elif c in "'\"":
                ok = self.quote()
            elif c in "<>":
                ok = self.redirect()
            elif c in "&|;":
                ok = self.operator()
            else:
                self.word = (self.word or "") + c
                self.i += 1
                ok = True
            if not ok:
                return None
        return self.out if self.end_command() else None

    def quoted_text(self) -> str | None:
        """The text of the quoted string at `i` (its quotes removed; nothing in a plain script is
        special inside them), moving past it; None for an unbalanced quote (bashlex says why)."""
        script, at = self.script, self.i
        end = script.find(script[at], at + 1)
        if end < 0:
            return None
        self.i = end + 1
        return script[at + 1 : end]

    def quote(self) -> bool:
        """A quoted string, part of the word being read."""
        text = self.quoted_text()
        if text is None:
            return False
        self.word = (self.word or "") + text
        self.quoted = True
        return True

    def end_word(self) -> None:
        if self.word is not None:
            self.words.append(self.word)
        self.word = None
        self.quoted = False

    def end_command(self) -> bool:
        self.end_word()
        words = self.words
        if not words or is_assignment(words[0]) or not _RESERVED_WORDS.isdisjoint(words):
            return False
        self.out.append((words, self.redirects))
        self.words, self.redirects = [], []
        return True

    def operator(self) -> bool:
        start = self.i
        while self.i < len(self.script) and self.script[self.i] in "&|;":
            self.i += 1
        return self.script[start : self.i] in _OPERATORS and self.end_command()

    def redirect(self) -> bool:
        """`>`, `>>`, `<` and their target word; `N>&M`, `N<&M` (a descriptor copied: neither a
        word nor a file). A word of one or two digits right before it is the descriptor."""
        word = self.word
        if word is not None and not self.quoted and word.isdigit():
            if len(word) > 2:
                return False  # a descriptor bash refuses when it runs (bashlex reads one)
            self.word = None  # `2>f`: the descriptor, not a word
        else:
            self.end_word()  # `a>f`: the word `a`, then the redirection
        script, at = self.script, self.i
        pair = script[at : at + 2]
        if pair in (">&", "<&"):
            end = at + 2
            while end < len(script) and script[end].isdigit():
                end += 1
            if end == at + 2 or script[end : end + 1] not in ("", " ", "&", "|", ";"):
                return False  # `>&-`, `>&file`: bashlex's reading
            self.i = end
            return True
        if pair in ("<<", "<>", ">|"):
            return False
        kind = ">>" if pair == ">>" else script[at]
        self.i = at + len(kind)
        while self.i < len(script) and script[self.i] == " ":
            self.i += 1
        target = self.target()
        if not target:
            return False  # no target (a syntax error), or an empty one
        self.redirects.append((kind, target))
        return True

    def target(self) -> str | None:
        """The word after a redirection operator (quotes removed)."""
        script = self.script
        text = None
        while self.i < len(script) and script[self.i] not in _ENDS_WORD:
            if script[self.i] in "'\"":
                quoted = self.quoted_text()
                if quoted is None:
                    return None
                text = (text or "") + quoted
            else:
                text = (text or "") + script[self.i]
                self.i += 1
        if script[self.i : self.i + 1] in ("<", ">"):
            return None  # `2> 2> f`: bash reads `2>` again, not a target (bashlex's reading)
        return text
