"""The walk over a script: bashlex's trees (or a plain script's words) down to every simple command,
with the words, redirections, here-documents and substitutions around them."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from bridge.shell.parts import ParsedCommand, Part
from bridge.shell.plain import plain_list
from bridge.shell.programs import (
    CHARSET_VARIABLES,
    HARMLESS_REDIRECT_TARGETS,
    MAX_SHELL_DEPTH,
    PROMPTS,
    RUN_BY_PROGRAMS,
    gives_options,
    plain_charset,
    shell_option,
)
from bridge.shell.simple import simple
from bridge.shell.words import (
    GLOB_CHARS,
    _is_dynamic,
    _local_assignment,
    _parameters,
    _substitutions,
    control_character,
    evaluates_arithmetic,
    has_space,
    join_continuations,
    plain_script,
    single_quotes_blanked,
    split_words,
    unreadable_word,
    word_text,
)

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any


def parse_command(source: str | Sequence[str]) -> ParsedCommand:
    """Every command `source` runs. A list is an argv (`["bash", "-lc", "…"]` included)."""
    parser = Parser()
    texts = [source] if isinstance(source, str) else list(source)
    controls = (control_character(t) for t in texts)
    suspect = [f"a control character ({c!r}) in the command" for c in controls if c is not None][:1]
    if isinstance(source, str):
        parser.script(source, 0)
    else:
        words = tuple(source)
        parser.simple(words, (False,) * len(words), (), 0)
    if parser.interpreted or _written_scripts(parser.script_files, "\n".join(texts)):
        # `echo 'os.system("rm -rf /")' | python3`, `echo 'rm -rf /' > x.sh; bash x.sh`: the whole
        # text counts
        parser.code.append("\n".join(texts))
    # a program named by its path as an argument (`ln -s /bin/rm x`, `cp /bin/rm x`) may run under
    # another name: its name counts too
    # (a word only known when it runs, or with spaces in it — a script handed to a shell — is not
    # a path: those are parsed on their own; a glob is kept whole: the files it matches count)
    parser.code.extend(
        w if w.startswith("/") and not GLOB_CHARS.isdisjoint(w) else posixpath.basename(w)
        for w, dynamic in parser.words
        if "/" in w and not w.endswith("/") and not dynamic and not has_space(w)
    )
    # a file git reads settings or hooks from, written by the command (`printf '[alias]…' >>
    # .git/config; git p`): the git commands after it run with what it holds, unknown here
    parser.opaque.extend(
        f"it writes {w!r}, where git reads its settings or hooks"
        for part in parser.parts
        for w in part.writes
        if re.search(_GIT_SETTINGS_FILE, w)
    )
    return ParsedCommand(
        tuple(parser.parts),
        tuple(parser.opaque),
        tuple(dict.fromkeys(parser.words)),
        tuple(dict.fromkeys(parser.dirs)),
        tuple(dict.fromkeys(parser.code)),
        tuple(suspect),
    )


def _written_scripts(files: list[str], text: str) -> bool:
    """Whether a script file the command runs is named elsewhere in it too (`> x.sh`, `tee x.sh`,
    `dd of=x.sh`, `cp a x.sh`), or by a glob (`bash ./x.s[h]`: any file, one written first too):
    the command may write it first, and what it holds is then in its text."""
    return any(
        not GLOB_CHARS.isdisjoint(f)
        or len(re.findall(rf"(?<![\w.-]){re.escape(posixpath.basename(f))}(?![\w.-])", text)) > 1
        for f in files
        if posixpath.basename(f)
    )


# (a `config` in a folder named `.git` or `git`, as `$XDG_CONFIG_HOME/git/config` is, `.gitconfig`,
# a hook; a submodule's `.git/modules/NAME/config` and hooks, a worktree's `config.worktree`)
_GIT_SETTINGS_FILE = (
    r"(?:^|/)(?:\.?gitconfig|(?:\.git|git)/config(?:\.worktree)?"
    r"|\.git/(?:.+/)?(?:config(?:\.worktree)?$|hooks/))"  # a submodule's, a worktree's too
)

# `((` where a command starts: an arithmetic command (`(( v ))`, `for ((…))`), not two subshells
_ARITHMETIC_COMMAND = r"(?:^|[;&|(\s])\(\("  # (compiled by `re` when first used)


def writes_to(kind: str, target: str) -> bool:
    """Whether a redirection (`>`, `>>`, …) writes the file it names (not `/dev/null`; `> 1` is a
    file named 1, only `>& 1` duplicates a descriptor)."""
    return kind in (">", ">>", ">|", "&>", "&>>", "<>", ">&") and not (
        target in HARMLESS_REDIRECT_TARGETS or (kind == ">&" and target.isdigit())
    )


@lru_cache(maxsize=4096)
def parse_cached(source: str) -> ParsedCommand:
    return parse_command(source)


class Parser:
    """What a script runs, collected as it is walked: bashlex's trees (or a plain script's words)
    down to each simple command (`simple`), with what cannot be known and the words, directories
    and code the command names."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.opaque: list[str] = []
        self.words: list[tuple[str, bool]] = []
        self.dirs: list[str] = []
        self.code: list[str] = []
        self.quoted: dict[str, str] = {}  # a quoted here-document's stand-in delimiter → its body
        self.interpreted = False  # an interpreter reads its code from its input
        self.script_files: list[str] = []  # script files run (`bash x.sh`, `. x.sh`, `./x.sh`)
        self.aliases: dict[str, str] = {}  # `alias NAME=VALUE` defined earlier in the script
        self.git_aliases: dict[str, str] = {}  # git aliases defined in the command

    # scripts ------------------------------------------------------------------------------------

    def script(self, script: str, depth: int) -> None:
        if depth > MAX_SHELL_DEPTH:
            self.opaque.append("shells nested too deep")
            return
        if not script.strip():
            return
        script, unsure = join_continuations(script)  # `r\<newline>m` is `rm` to bash
        if unsure:
            self.opaque.append(
                "a line continuation inside a quoted string, a comment or a quoted here-document"
            )
        if "((" in script and re.search(
            _ARITHMETIC_COMMAND, single_quotes_blanked(script, plain_doubles=True)
        ):
            # `(( v ))`, `for ((…))`: bashlex reads them as subshells; the arithmetic evaluates the
            # value of every variable it names, and a value like `a[$(cmd)]` runs cmd
            self.opaque.append("an arithmetic command on values only known when it runs")
        if self.plain(script, depth):
            return
        trees, error, parsed = self.parse(script)
        if error is not None:
            self.opaque.append(f"cannot parse the command: {error}")
            return
        for tree in trees:
            self.walk(tree, depth, parsed)
        if "&>" in script:
            # a POSIX sh (dash, Debian's sh) reads `a &>f b` as `a &` then `>f b`: b runs there
            self.script(script.replace("&>", "& >"), depth)

    def plain(self, script: str, depth: int) -> bool:
        """A plain command, or a plain list or pipeline of them, read without bashlex (as its
        trees are walked); False: the script is not one."""
        if plain_script(script):
            try:
                words = split_words(script)
            except ValueError:
                return False  # an unbalanced quote: bashlex says why
            if words:
                self.simple(tuple(words), (False,) * len(words), (), depth)
            return True
        commands = plain_list(script)
        if commands is None:
            return False
        for words, redirects in commands:
            writes = []
            for kind, target in redirects:
                self.words.append((target, False))
                if writes_to(kind, target):
                    writes.append(target)
            self.simple(tuple(words), (False,) * len(words), tuple(writes), depth)
        return True

    def parse(self, script: str) -> tuple[list[Any], str | None, str]:
        """bashlex's trees of a script, the error that stopped it, and the text they index."""
        from bridge.shell.grammar import _bashlex_parse  # bashlex (~40 ms) only when needed

        if "<<" in script:
            from bridge.shell.heredocs import quoted_heredoc

            if quoted_heredoc(script):
                return self.parse_quoted_heredocs(script)
        trees, error = _bashlex_parse(script)
        return trees, error, script

    def parse_quoted_heredocs(self, script: str) -> tuple[list[Any], str | None, str]:
        """A script with a here-document whose delimiter is quoted (`<<'EOF'`, `<<E'F'`): its
        body is literal text, and it ends at the delimiter with its quotes removed (bashlex
        cannot parse `<<'EOF'`, and ends the body of `<<E'F'` at a line `E'F'`, where bash has
        run the lines after `EF`). Each body is set aside and its delimiter unquoted; when that
        cannot be done, the script cannot be read."""
        from bridge.shell.grammar import _bashlex_parse
        from bridge.shell.heredocs import _count_heredocs, _unquote_heredocs

        plain, bodies = _unquote_heredocs(script)
        if bodies:
            trees, error = _bashlex_parse(plain)
            if error is None:
                used = sum(_count_heredocs(t, bodies) for t in trees)
                if used == len(bodies):  # every one of them is a here-document for bash too
                    self.quoted.update(bodies)
                    return trees, None, plain
        trees, error = _bashlex_parse(script)
        return [], error or "a here-document with a quoted delimiter that cannot be read", script

    def walk(self, node: Any, depth: int, src: str) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node, depth, src)
            return
        if kind in ("commandsubstitution", "processsubstitution"):
            self.walk(node.command, depth, src)
            return
        if kind == "word":
            self.expansions(node, depth, src)
            return
        if kind == "for":  # `for HOME in …`: the loop assigns its variable each of its words
            self.loop_values(node, depth, src)
        pos = len(self.parts)
        for child in getattr(node, "parts", None) or getattr(node, "list", None) or ():
            self.walk(child, depth, src)
        writes = []  # `{ …; } > f`, `( … ) > f`, `for …; done > f`: every command in it writes f
        for child in getattr(node, "redirects", None) or ():
            write, _ = self.redirect(child, depth, src)
            if write is not None:
                writes.append(write)
        if writes:
            self.parts[pos:] = [p.but(writes=p.writes + tuple(writes)) for p in self.parts[pos:]]
            if len(self.parts) == pos:
                self.parts.append(Part((":",), tuple(writes), "command"))

    def loop_values(self, node: Any, depth: int, src: str) -> None:
        """`for NAME in WORDS; do …`: NAME is assigned each word, as `NAME=word` would be (a
        value a program runs: `for GIT_EXTERNAL_DIFF in 'rm -rf /'; do export …`); with no `in`,
        the script's arguments, only known when it runs."""
        parts = list(node.parts)
        if len(parts) < 2 or parts[1].kind != "word":
            return
        name = word_text(src, parts[1])
        values: list[tuple[str, bool]] = []
        if len(parts) > 2 and getattr(parts[2], "word", "") == "in":
            for part in parts[3:]:
                if part.kind != "word":
                    break
                values.append((word_text(src, part), _is_dynamic(part)))
        else:
            values.append(("", True))
        for value, dynamic in values:
            self.words.append((value, dynamic))  # (a path among them: `for f in ~/.ssh/*`)
            self.run_value(name, value, dynamic, depth)
        self.assignments(tuple(f"{name}={value}" for value, _ in values) or (f"{name}=",), ())

    def expansions(self, word: Any, depth: int, src: str) -> None:
        """Commands hidden in a word: `$(…)`, backticks, `<(…)`, and `${…}` bashlex leaves unparsed."""
        for child in getattr(word, "parts", None) or ():
            if child.kind in ("commandsubstitution", "processsubstitution"):
                self.walk(child.command, depth, src)
            elif child.kind == "parameter" and ("$(" in child.value or "`" in child.value):
                self.opaque.append(f"a command inside ${{{child.value}}}")
            elif child.kind == "parameter" and "${" in child.value:
                # bashlex cuts a `${…}` short at the end of one inside it: the word's text is read
                self.parameters(single_quotes_blanked(src[word.pos[0] : word.pos[1]]), depth)
            elif child.kind == "parameter" and evaluates_arithmetic(child.value):
                self.opaque.append(
                    f"${{{child.value}}} "
                    + (
                        "expands a value as a prompt, running the commands in it"
                        if child.value.endswith("@P")
                        else "evaluates arithmetic on a value only known when it runs"
                    )
                )
            elif child.kind == "parameter" and "=" in child.value:
                self.parameter_assignments(child.value, depth)
            elif child.kind not in ("parameter", "tilde"):
                self.walk(child, depth, src)

    def parameter_assignments(self, text: str, depth: int) -> None:
        """`${NAME:=value}`, `${NAME=value}`, `${NAME[0]=value}` (nested ones too) assign NAME when
        it is unset: read
        as `NAME=value` would be (`: ${PS4:=…}; set -x`; exported under `set -a`). A value with an
        expansion, or in a nested `${…}` (bashlex cuts those short), is only known when it runs."""
        for found in re.finditer(r"(?:^|\$\{)([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?:?=", text):
            name, rest = found.group(1), text[found.end() :]
            dynamic = found.start() > 0 or "$" in rest or "`" in rest
            if not dynamic:
                try:
                    rest = " ".join(split_words(rest))  # quote removal
                except ValueError:
                    dynamic = True
            self.words.append((rest, dynamic))
            self.run_value(name, rest, dynamic, depth)
            self.assignments((f"{name}={rest}",), ())

    def command(self, node: Any, depth: int, src: str) -> None:
        words: list[Any] = []
        writes: list[str] = []
        assigns: list[str] = []
        # what its here-documents and here-strings feed it: on whichever descriptor, each one
        # (`bash <<< 'rm -rf /' 3<<< ls` reads the first: the last one is not all it may read)
        fed: list[str] = []
        for child in node.parts:
            if child.kind == "word":
                words.append(child)
                self.expansions(child, depth, src)
            elif child.kind == "assignment":
                self.expansions(child, depth, src)
                text = word_text(src, child)
                value = text.partition("=")[2]
                self.words.append((value, _is_dynamic(child)))
                self.run_value(text.partition("=")[0].rstrip("+"), value, _is_dynamic(child), depth)
                if not words:
                    assigns.append(text)
            elif child.kind == "redirect":
                write, body = self.redirect(child, depth, src)
                if write is not None:
                    writes.append(write)
                if body is not None:
                    fed.append(body)
            else:
                self.walk(child, depth, src)
        if words:
            self.simple(
                tuple(word_text(src, w) for w in words),
                # a brace expansion (`git {push,}`) makes words only known when it runs, too
                # (and a `$'…'` string this reading cannot decode)
                tuple(_is_dynamic(w) or unreadable_word(src[w.pos[0] : w.pos[1]]) for w in words),
                tuple(writes),
                depth,
                assigns=tuple(assigns),
                stdin="\n".join(fed) if fed else None,
            )
        elif assigns:
            self.assignments(tuple(assigns), tuple(writes))
        elif writes:  # `> f` alone truncates f, as `: > f` does
            self.parts.append(Part((":",), tuple(writes), "command"))

    def redirect(self, child: Any, depth: int, src: str) -> tuple[str | None, str | None]:
        """One redirection: the file it writes (None: none), and what it feeds the command's input
        (a here-document's or here-string's text; None: nothing known). Its target is a word the
        command names (path rules look at it)."""
        write = stdin = None
        target = child.output
        if hasattr(target, "kind") and target.kind == "word":
            self.expansions(target, depth, src)
            text = word_text(src, target)
            if child.type not in ("<<", "<<-"):  # a here-document's delimiter
                self.words.append((text, _is_dynamic(target)))
            if writes_to(child.type, text):
                write = text
            if child.type == "<<<":
                stdin = text
        heredoc = getattr(child, "heredoc", None)
        delimiter = word_text(src, target) if hasattr(target, "kind") else ""
        if heredoc is not None and delimiter in self.quoted:
            stdin = self.quoted[delimiter]  # literal text: nothing in it is expanded
            self.words.extend((w, False) for w in stdin.split())
        elif heredoc is not None and child.type in ("<<", "<<-"):
            body = str(heredoc.value)
            if body.endswith(delimiter):
                body = body[: len(body) - len(delimiter)]
            stdin = body
            self.expanded(body, depth)  # an unquoted body is expanded as a `"…"` string is
            self.words.extend((w, True) for w in body.split())
        return write, stdin

    def run_value(self, name: str, value: str, dynamic: bool, depth: int) -> None:
        """An assignment whose value bash or a program runs later: a prompt bash expands when it
        prints it (`PS4` under `set -x`: its `$(…)` run), and the command lines of
        `PROMPT_COMMAND`, editors, pagers and helpers git, less or ssh start (`GIT_EDITOR='…'
        git commit`); a value only known when it runs is asked. `SHELLOPTS` (from its
        environment, bash sets each option it lists as it starts: `env SHELLOPTS=keyword bash -c
        …` is `bash -k -c …`) is asked as the options it sets are (`shell_option`). An array's
        element 0 is the variable's value (`PS4[0]=…`)."""
        name = name.partition("[")[0]
        if name in CHARSET_VARIABLES:
            if dynamic or not plain_charset(value):
                self.opaque.append(f"{name}={value!r} may make bash read the script otherwise")
            return
        if name == "SHELLOPTS":
            options = value.split(":")
            if dynamic or any(shell_option(o, on=True) for o in options):
                self.opaque.append(f"SHELLOPTS={value!r} sets options of the shells it is given")
            return
        if name in PROMPTS:
            what = "is expanded, and its commands run, when bash prints it"
        elif name in RUN_BY_PROGRAMS:
            what = "is a command line a program runs"
        elif gives_options(name) and name not in ("BASH_ENV", "ENV"):  # (read by `shell`)
            if not name.startswith("GIT_CONFIG"):  # (said where it is given)
                self.opaque.append(f"{name} gives a program options only read when it runs")
            return
        else:
            return
        if dynamic:
            self.opaque.append(f"{name} {what}: its value is only known when it runs")
            return
        pos = len(self.parts)
        if name in PROMPTS and name != "PROMPT_COMMAND":
            self.substitutions(value, depth)
        elif name in ("PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE"):
            self.script(value.lstrip("|"), depth + 1)  # LESSOPEN='|cmd %s': a pipe from cmd
        else:  # as git runs its editor: `sh -c "$GIT_EDITOR \"\$@\"" FILE`
            self.script(value + ' "$@"', depth + 1)
        # for deny and ask rules: an allow rule covers them by naming the assignment
        self.parts[pos:] = [p.but(role="implied") for p in self.parts[pos:]]

    def git_environment(self, assigned: Iterable[str]) -> None:
        """`GIT_CONFIG_COUNT`/`_KEY_n`/`_VALUE_n`, `GIT_CONFIG_PARAMETERS`, … assigned (however:
        a prefix, `env`, `export`, `read`): git's aliases and programs come from them."""
        why = "git configuration given in the environment (aliases, programs)"
        if why not in self.opaque and any(a.startswith("GIT_CONFIG") for a in assigned):
            self.opaque.append(why)

    def assignments(self, assigns: tuple[str, ...], writes: tuple[str, ...]) -> None:
        """`PATH=/x; ls` changes what later commands run: an assignment of its own is a part (no
        allow rule names it) unless it is a shell variable by convention (lower case) or only
        chooses a language, a time zone or colours."""
        self.git_environment(assigns)
        kept = tuple(a for a in assigns if not _local_assignment(a))
        if kept:
            self.parts.append(Part(kept, writes, "command", assigns=kept))

    def expanded(self, text: str, depth: int) -> None:
        """A text bash expands as it does a `"…"` string (an unquoted here-document's body): its
        `$(…)` and backticks run, arithmetic (`$((…))`, `$[…]`) evaluates the values of the
        variables it names, and so does a `${…}` (`parameters`)."""
        self.substitutions(text, depth)
        if re.search(r"\$\(\(|\$\[", text):
            self.opaque.append("arithmetic in an expanded text, on values only known when it runs")
        self.parameters(text, depth)

    def parameters(self, text: str, depth: int) -> None:
        """Each `${…}` of a text, and each inside one (`${x:-${a[v]}}`: bashlex cuts the outer one
        short): arithmetic on a value only known when it runs (a subscript, an offset: `a[$(…)]`
        in the value runs), a prompt expansion, an indirection, and the assignments of
        `${NAME:=…}`."""
        for value in _parameters(text):
            if value is None:
                self.opaque.append("a ${…} whose end cannot be found")
            elif evaluates_arithmetic(value):
                self.opaque.append(f"${{{value}}} evaluates a value only known when it runs")
            else:
                if "=" in value:
                    self.parameter_assignments(value, depth)
                self.parameters(value, depth)

    def substitutions(self, text: str, depth: int) -> None:
        """The `$(…)` and backtick substitutions in a text the shell expands later (an unquoted
        here-document, a quoted array subscript that `let` or `declare` evaluates): each is a
        script of its own; one whose end cannot be found makes the command unknowable."""
        for inner in _substitutions(text):
            if inner is None:
                self.opaque.append("a command substitution that cannot be read")
            else:
                self.script(inner, depth + 1)

    def simple(
        self,
        words: tuple[str, ...],
        dynamic: tuple[bool, ...],
        writes: tuple[str, ...],
        depth: int,
        *,
        assigns: tuple[str, ...] = (),
        stdin: str | None = None,
    ) -> None:
        """One simple command, wrappers unwrapped (`bridge.shell.simple`)."""
        simple(self, words, dynamic, writes, depth, assigns=assigns, stdin=stdin)
