"""What a shell command runs: every simple command of a script, wrappers unwrapped.

`parse_command` turns a command (a script, or an argv list) into `Part`s, one per command that runs,
and the reasons some of it cannot be known (`opaque`: approval rules ask a person then). Scripts
are parsed with `bashlex` (a port of bash's own grammar), never split with a regex: every simple
command of a pipeline, a `&&`/`||`/`;` list, a subshell, a `{ …; }` group, a loop or an `if`, a
`$(…)`/backtick substitution and a `<(…)` process substitution is a part of its own.

**Wrappers** are commands that run another command: `sudo git push` runs `git push`. Each wrapper is
known with its own options (which take an argument, which mean no command runs, which name a
script); the wrapper is a part (`role` "wrapper" when it is harmless — `time`, `nice`, `timeout`,
`nohup`, `stdbuf`, `command`, `exec`, `env`, `xargs`, … — "privileged" when it changes who runs the
command — `sudo`, `doas`, `su`, `runuser`, `pkexec`, `chroot`) and so is the command it runs. A
wrapper option that is not known, or a wrapper word only known when it runs (`sudo $OPT git push`),
makes the rest unknowable. `sh|bash|… -c 'script'`, `su -c 'script'`, `eval 'script'`, `watch
'script'` and `flock FILE -c 'script'` are the commands of the script, parsed the same way (to
depth 4). The commands `find … -exec CMD {} ;` runs are parts too (`find` itself is one).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

from bridge.options import INERT_VARIABLES

Role = Literal["command", "wrapper", "privileged", "implied"]

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "rbash", "yash", "posh"})
# Builtins that evaluate array subscripts as arithmetic, where `a[$(cmd)]` runs cmd even quoted.
EVALUATES_SUBSCRIPTS = frozenset(
    {"let", "declare", "typeset", "local", "readonly", "export", "printf", "read", "test", "[",
     "[[", "unset", "mapfile", "readarray", "wait", "getopts", "(("}
)  # fmt: skip
# Programs whose arguments are code run by an interpreter, another shell, another machine or a
# container: not parsed, looked at by name (`_INTERPRETER` adds versioned names: python3.12).
RUNS_CODE = frozenset(
    {"node", "nodejs", "deno", "bun", "osascript", "Rscript", "R", "julia", "tclsh", "wish",
     "expect", "pwsh", "powershell", "fish", "csh", "tcsh", "nu", "elvish", "xonsh", "awk",
     "gawk", "mawk", "nawk", "sed", "gsed", "gdb", "lldb", "vim", "vi", "nvim", "ex", "emacs",
     "ssh", "scp", "sftp", "rsync", "script", "tmux", "screen", "parallel", "strace", "ltrace",
     "unshare", "nsenter", "systemd-run", "firejail", "bwrap", "valgrind", "at", "batch",
     "docker", "podman", "kubectl", "make", "jshell", "groovy", "scala", "irb", "sqlite3",
     "psql", "mysql", "busybox", "nohup", "dbus-run-session", "chpst", "setpriv", "prlimit",
     "fakeroot", "faketime", "proot", "nix-shell", "just", "entr", "watchexec", "ghci", "runghc",
     "swift", "kotlin", "cmd.exe", "wsl"}
)  # fmt: skip
_INTERPRETER = re.compile(r"(python|pypy|perl|ruby|php|lua|luajit)[0-9.]*")


def _runs_in_container(words: Sequence[str]) -> bool:
    """`docker exec|run …`, `kubectl exec|run|debug …`: a command runs in a container."""
    return any(w in ("exec", "run", "debug", "attach", "create") for w in words[1:4])


def _script_runs_commands(words: Sequence[str]) -> bool:
    """A sed or awk script that runs commands or writes files (or cannot be read)."""
    from bridge.options import unsafe_options

    return bool(unsafe_options(tuple(words)))


# Programs in RUNS_CODE whose words are code only in some uses.
RUNS_CODE_WHEN: dict[str, Callable[[Sequence[str]], bool]] = {
    **dict.fromkeys(("docker", "podman", "kubectl"), _runs_in_container),
    **dict.fromkeys(("sed", "gsed", "awk", "gawk", "mawk", "nawk"), _script_runs_commands),
}
_SPACE = re.compile(r"\s")
HARMLESS_REDIRECT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
MAX_SHELL_DEPTH = 4
GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Part:
    """One command that runs: its words (quotes removed) and the files it writes by redirection.

    A wrapper is a part of its own, with all its words (`sudo -u x git push`), followed by the
    part(s) of the command it runs (`git push`): `role` says what it needs to be allowed — a
    "command" an allow rule of its own, a "wrapper" nothing (the command it runs decides), a
    "privileged" wrapper an allow rule of its own *and* the command it runs. `reach`: a prefix of
    more than `reach` words names the command the wrapper runs, too (`allow sudo apt update`
    covers `sudo apt update -y`); None when it runs a script. `chain`: how many of the following
    parts are the wrappers and the command it runs (the commands `find -exec` runs, or a script,
    come after them and are parts on their own). `open_args`: arguments are added when it runs
    (`xargs git`). `unknown`: the words that hold an expansion (`git $SUB`): they may become
    anything, even several words or none."""

    words: tuple[str, ...]
    writes: tuple[str, ...] = ()
    role: Role = "command"
    reach: int | None = None
    chain: int = 0
    open_args: bool = False
    unknown: frozenset[int] = frozenset()  # indexes of words only known when it runs (`$X`)
    # `NAME=value` given to it: written in front of it, or by `env` (an allow rule must name them)
    assigns: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return shlex.join(self.words) + "".join(f" > {shlex.quote(w)}" for w in self.writes)


@dataclass(frozen=True)
class ParsedCommand:
    parts: tuple[Part, ...]
    opaque: tuple[str, ...] = ()  # why some of it cannot be known (→ ask)
    # Every word the command names — arguments, wrapper options, assignment values, redirect
    # targets, the words of nested scripts; not a command name without a slash, which is looked up
    # in PATH — with whether it is only known when it runs; and the
    # directories it changes to (`cd DIR`, `pushd DIR`, `-C DIR`, `--chdir=DIR`; `~` for a bare
    # `cd`). What path rules look at.
    words: tuple[tuple[str, bool], ...] = ()
    dirs: tuple[str, ...] = ()
    # Text a shell or an interpreter runs that is not parsed into parts (`python -c CODE`,
    # `ssh host CMD`, `git -c alias.x=…`): a deny or ask rule whose program it names is asked.
    code: tuple[str, ...] = ()
    # Why the command is asked whoever asks, bypass included (a control character in it).
    suspect: tuple[str, ...] = ()


def parse_command(source: str | Sequence[str]) -> ParsedCommand:
    """Every command `source` runs. A list is an argv (`["bash", "-lc", "…"]` included)."""
    parser = _Parser()
    texts = [source] if isinstance(source, str) else list(source)
    suspect = [
        f"a control character ({_CONTROL.search(t).group()!r}) in the command"  # type: ignore[union-attr]
        for t in texts
        if _CONTROL.search(t)
    ][:1]
    if isinstance(source, str):
        parser.script(source, 0)
    else:
        words = tuple(source)
        parser.simple(words, (False,) * len(words), (), 0)
    if parser.interpreted:  # `echo 'os.system("rm -rf /")' | python3`: the whole text counts
        parser.code.append("\n".join(texts))
    # a program named by its path as an argument (`ln -s /bin/rm x`, `cp /bin/rm x`) may run under
    # another name: its name counts too
    # (a word only known when it runs, or with spaces in it — a script handed to a shell — is not
    # a path: those are parsed on their own)
    parser.code.extend(
        posixpath.basename(w)
        for w, dynamic in parser.words
        if "/" in w and not w.endswith("/") and not dynamic and not _SPACE.search(w)
    )
    return ParsedCommand(
        tuple(parser.parts),
        tuple(parser.opaque),
        tuple(dict.fromkeys(parser.words)),
        tuple(dict.fromkeys(parser.dirs)),
        tuple(dict.fromkeys(parser.code)),
        tuple(suspect),
    )


# Every control character but a tab and a newline (a NUL, a carriage return that hides what came
# before it on a terminal, an escape sequence, DEL, C1 controls), and the invisible characters that
# make a command read differently from what runs (zero-width ones, bidirectional overrides).
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


@lru_cache(maxsize=4096)
def parse_cached(source: str) -> ParsedCommand:
    return parse_command(source)


# A script made of these characters only is one simple command whose words POSIX quote removal
# gives exactly as bash would (no operator, expansion, glob, brace, comment, escape or newline):
# shlex splits it in microseconds where bashlex takes a few hundred.
_PLAIN_SCRIPT = re.compile(r"[A-Za-z0-9_./=:@%+,\-'\" ]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


def is_assignment(word: str) -> bool:
    return bool(_ASSIGNMENT.match(word))


def _unknown_name(name: str) -> bool:
    return bool(GLOB_CHARS & set(name)) or "{" in name


class _Unknown(Exception):
    """A wrapper's words that cannot be read (an unknown option, a missing argument)."""


class _Parser:
    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.opaque: list[str] = []
        self.words: list[tuple[str, bool]] = []
        self.dirs: list[str] = []
        self.code: list[str] = []
        self.quoted: dict[str, str] = {}  # a quoted here-document's stand-in delimiter → its body
        self.interpreted = False  # an interpreter reads its code from its input

    # scripts ------------------------------------------------------------------------------------

    def script(self, script: str, depth: int) -> None:
        if depth > MAX_SHELL_DEPTH:
            self.opaque.append("shells nested too deep")
            return
        if not script.strip():
            return
        if _PLAIN_SCRIPT.fullmatch(script):
            try:
                words = shlex.split(script)
            except ValueError:
                pass  # an unbalanced quote: bashlex says why
            else:
                if words:
                    self.simple(tuple(words), (False,) * len(words), (), depth)
                return
        trees, error = _bashlex_parse(script)  # bashlex (~40 ms) only when it is needed
        if error is not None and "<<" in script:
            # bashlex cannot parse a quoted here-document delimiter (`<<'EOF'`): its body is
            # literal text, so it is set aside and the delimiter unquoted
            plain, bodies = _unquote_heredocs(script)
            if bodies:
                trees, again = _bashlex_parse(plain)
                if again is None:
                    used = sum(_count_heredocs(t, bodies) for t in trees)
                    if used == len(bodies):  # every one of them is a here-document for bash too
                        self.quoted.update(bodies)
                        error, script = None, plain
        if error is not None:
            self.opaque.append(f"cannot parse the command: {error}")
            return
        for tree in trees:
            self.walk(tree, depth, script)

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
        for child in getattr(node, "parts", None) or getattr(node, "list", None) or ():
            self.walk(child, depth, src)

    def expansions(self, word: Any, depth: int, src: str) -> None:
        """Commands hidden in a word: `$(…)`, backticks, `<(…)`, and `${…}` bashlex leaves unparsed."""
        for child in getattr(word, "parts", None) or ():
            if child.kind in ("commandsubstitution", "processsubstitution"):
                self.walk(child.command, depth, src)
            elif child.kind == "parameter" and ("$(" in child.value or "`" in child.value):
                self.opaque.append(f"a command inside ${{{child.value}}}")
            elif child.kind not in ("parameter", "tilde"):
                self.walk(child, depth, src)

    def command(self, node: Any, depth: int, src: str) -> None:
        words: list[Any] = []
        writes: list[str] = []
        assigns: list[str] = []
        stdin: str | None = None  # what a here-document or here-string feeds it
        for child in node.parts:
            if child.kind == "word":
                words.append(child)
                self.expansions(child, depth, src)
            elif child.kind == "assignment":
                self.expansions(child, depth, src)
                text = word_text(src, child)
                value = text.partition("=")[2]
                self.words.append((value, _is_dynamic(child)))
                if not words:
                    assigns.append(text)
            elif child.kind == "redirect":
                target = child.output
                if hasattr(target, "kind") and target.kind == "word":
                    self.expansions(target, depth, src)
                    text = word_text(src, target)
                    if child.type not in ("<<", "<<-"):  # a here-document's delimiter
                        self.words.append((text, _is_dynamic(target)))
                    if child.type in (">", ">>", ">|", "&>", "&>>", "<>", ">&") and not (
                        text in HARMLESS_REDIRECT_TARGETS or text.isdigit()
                    ):
                        writes.append(text)
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
                    # an unquoted body's `$(…)` and backticks run (bashlex cannot parse a quoted
                    # delimiter: such a command is asked)
                    self.substitutions(body, depth)
                    self.words.extend((w, True) for w in body.split())
            else:
                self.walk(child, depth, src)
        if words:
            self.simple(
                tuple(word_text(src, w) for w in words),
                tuple(_is_dynamic(w) for w in words),
                tuple(writes),
                depth,
                assigns=tuple(assigns),
                stdin=stdin,
            )
        elif assigns:
            self.assignments(tuple(assigns), tuple(writes))

    def assignments(self, assigns: tuple[str, ...], writes: tuple[str, ...]) -> None:
        """`PATH=/x; ls` changes what later commands run: an assignment of its own is a part (no
        allow rule names it) unless it is a shell variable by convention (lower case) or only
        chooses a language, a time zone or colours."""
        kept = tuple(a for a in assigns if not _local_assignment(a))
        if kept:
            self.parts.append(Part(kept, writes, "command", assigns=kept))

    def substitutions(self, text: str, depth: int) -> None:
        """The `$(…)` and backtick substitutions in a text the shell expands later (an unquoted
        here-document, a quoted array subscript that `let` or `declare` evaluates): each is a
        script of its own; one whose end cannot be found makes the command unknowable."""
        for inner in _substitutions(text):
            if inner is None:
                self.opaque.append("a command substitution that cannot be read")
            else:
                self.script(inner, depth + 1)

    # one simple command, wrappers unwrapped ---------------------------------------------------------

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
        """`dynamic[i]`: word i holds an expansion (`$X`, `$(…)`), only known when it runs — it may
        even become several words or none. `assigns`: `NAME=value` written before it; `stdin`:
        what a here-document or here-string feeds it."""
        first = _skip_assignments(words, 0)
        given = [*assigns, *words[:first]]
        if first == len(words):  # only assignments (an argv, or a plain script)
            self.words.extend((w.partition("=")[2], d) for w, d in zip(words, dynamic, strict=True))
            self.assignments(tuple(given), writes)
            return
        self.words.extend(
            (w, d)
            for k, (w, d) in enumerate(zip(words, dynamic, strict=True))
            if k != first or "/" in w  # a command name without a slash is looked up in PATH
        )
        self.note_dirs(words, dynamic)
        pos = len(self.parts)
        layers: list[tuple[int, Role]] = []
        all_writes = list(writes)
        open_args = False
        cut = len(words)
        runs: int | None = None  # the index of the command the last wrapper runs
        default: tuple[str, ...] | None = None
        implied: list[Part] = []
        splices = 0
        i = _skip_assignments(words, 0)
        while i < len(words):
            name = words[i]
            if dynamic[i] or _unknown_name(name):
                self.opaque.append(f"the command name {name!r} is only known when it runs")
                break
            if layers and name.startswith("-"):
                self.opaque.append(f"a wrapper runs {name!r}, not a command")
                break
            base = posixpath.basename(name)
            if base in SHELLS:
                script = _shell_script(words, i)
                if script is None:
                    runs = i  # `bash file.sh`: the command itself
                    if _reads_stdin(words, i):  # `… | bash`, `bash -s`, `bash <<EOF`
                        if stdin is not None:
                            self.script(stdin, depth + 1)
                        else:
                            self.opaque.append(
                                f"{base} runs what its input gives it, which is not known here"
                            )
                elif script >= len(words):
                    pass  # `sh -c` without a script: it fails
                elif any(dynamic[i : script + 1]):
                    self.opaque.append(
                        f"a shell runs a script only known when it runs: {words[script]!r}"
                    )
                else:
                    self.script(words[script], depth + 1)
                break
            spec = WRAPPERS.get(base)
            if spec is None:
                runs = i
                implied = self.runs_code(words, dynamic, i, depth, stdin)
                if base == "tee":  # the files it writes
                    all_writes.extend(
                        w
                        for w in words[i + 1 :]
                        if not w.startswith("-") and w not in HARMLESS_REDIRECT_TARGETS
                    )
                break
            layers.append((i, spec.role))
            try:
                u = spec.unwrap(words, i)
            except _Unknown as exc:
                self.opaque.append(f"{base}: {exc}: {shlex.join(words[i:])}")
                break
            if u.inner is None and u.script is None:
                if u.default is None:
                    layers[-1] = (i, "command")  # nothing else runs: the wrapper is the command
                else:
                    default = u.default  # `xargs` alone runs echo
                    open_args = True
                break
            end = u.inner if u.inner is not None else len(words)
            if any(dynamic[i + 1 : end]):
                self.opaque.append(
                    f"{base}: its options are only known when it runs: {shlex.join(words[i:])}"
                )
                break
            if u.splice is not None:  # env -S 'a b' c: env a b c
                splices += 1
                if splices > MAX_SHELL_DEPTH:
                    self.opaque.append(f"{base}: too many -S strings")
                    break
                layers.pop()
                if cut >= end:
                    cut += len(u.splice) - (end - i - 1)
                words = (*words[: i + 1], *u.splice, *words[end:])
                dynamic = (*dynamic[: i + 1], *(False,) * len(u.splice), *dynamic[end:])
                continue
            all_writes.extend(u.writes)
            if u.script is not None:
                self.script(u.script, depth + 1)
                break
            assert u.inner is not None
            if u.inner >= len(words):
                if u.default is None:
                    layers[-1] = (i, "command")  # `timeout 5`: it fails, running nothing
                else:
                    default = u.default
                    open_args = True
                break
            open_args = open_args or u.open_args
            if u.cut is not None:
                cut = u.cut
            i = _skip_assignments(words, u.inner)
            given.extend(words[u.inner : i])
        else:
            if layers:  # `sudo A=1` and nothing after: it fails
                layers[-1] = (layers[-1][0], "command")
        new: list[Part] = []
        nested = self.parts[pos:]
        assigned = tuple(given)
        if all_writes:
            extra = tuple(all_writes)
            nested = [replace(p, writes=p.writes + extra) for p in nested]
        if assigned:  # `BASH_ENV=x bash -c 'ls'`: the script's commands get them too
            nested = [replace(p, assigns=p.assigns + assigned) for p in nested]
        below = 1 if runs is not None or default is not None else 0
        for k, (start, role) in enumerate(layers):
            new.append(
                Part(
                    words[start:],
                    tuple(all_writes),
                    role,
                    reach=runs - start if runs is not None else None,
                    chain=below + len(layers) - k - 1,
                    unknown=_unknown(dynamic, start, len(words)),
                    assigns=assigned,
                )
            )
        if runs is not None:
            stop = max(cut, runs + 1)
            new.append(
                Part(
                    words[runs:stop],
                    tuple(all_writes),
                    "command",
                    open_args=open_args,
                    unknown=_unknown(dynamic, runs, stop),
                    assigns=assigned,
                )
            )
        elif default is not None:
            new.append(
                Part(default, tuple(all_writes), "command", open_args=True, assigns=assigned)
            )
        self.parts[pos:] = new + implied + nested

    def runs_code(
        self,
        words: tuple[str, ...],
        dynamic: tuple[bool, ...],
        i: int,
        depth: int,
        stdin: str | None,
    ) -> list[Part]:
        """What a command that is not a wrapper runs besides itself: the commands `find -exec`
        runs (parts), scripts given to `trap`, `alias`, git's `alias.x=!…`, `--upload-pack`
        (parsed), substitutions in the subscripts `let`/`declare`/`read`/… evaluate (parsed), code
        an interpreter or another machine runs (`code`: looked at by name). Returns the parts it
        implies that deny rules look at: `find -delete` is `rm -r -f`, `hash -p /bin/rm ls` runs
        `/bin/rm`."""
        base = posixpath.basename(words[i])
        args = words[i + 1 :]
        implied: list[Part] = []
        if base == "find":
            self.find_exec(words, dynamic, i, depth)
            if "-delete" in args:
                implied.append(Part(("rm", "-r", "-f"), role="implied"))
        elif base == "trap":
            rest = [a for a in args if a != "--"]
            if rest and not rest[0].startswith("-"):
                self.script(rest[0], depth + 1)
        elif base == "alias":
            for arg in args:
                if "=" in arg and not arg.startswith("-"):
                    self.script(arg.partition("=")[2], depth + 1)
        elif base == "hash" and "-p" in args:
            k = args.index("-p")
            if k + 1 < len(args):
                # its arguments come when NAME runs
                implied.append(Part((args[k + 1],), role="implied", open_args=True))
        elif base == "git":
            self.git_code(args, depth)
        if base in EVALUATES_SUBSCRIPTS:
            for arg in args:
                self.substitutions(arg, depth)
        if base in RUNS_CODE_WHEN and not RUNS_CODE_WHEN[base](words[i:]):
            pass  # `sed -n /rm/p`, `docker rm x`: nothing it runs as code
        elif _INTERPRETER.fullmatch(base) or base in RUNS_CODE:
            self.code.append(" ".join(args))
            if stdin is not None:
                self.code.append(stdin)
            if stdin is None and not any(not a.startswith("-") for a in args):
                self.interpreted = True  # it reads code from a pipe: the command's text counts
        return implied

    def git_code(self, args: tuple[str, ...], depth: int) -> None:
        """What git runs besides itself: an alias that starts with `!` is a shell script; other
        `-c` values (a pager, an editor, an ssh command…) and `ext::` URLs are code; the program
        of `--upload-pack`, `--receive-pack`, `--exec`, `-u` is a shell command."""
        positional = [a for a in args if not a.startswith("-")]
        if positional[:1] == ["config"] and len(positional) >= 3:  # `git config alias.x '!…'`
            setting, text = positional[1], positional[2]
            if setting.lower().startswith("alias.") and text.startswith("!"):
                self.script(text[1:], depth + 1)
            else:
                self.code.append(text)
        k = 0
        while k < len(args):
            word = args[k]
            value: str | None = None
            if word in ("-c", "--config-env", "--upload-pack", "--receive-pack", "--exec", "-u"):
                value = args[k + 1] if k + 1 < len(args) else None
                k += 1
            elif word.startswith(("--upload-pack=", "--receive-pack=", "--exec=",
                                  "--config-env=")):  # fmt: skip
                value = word.partition("=")[2]
            elif word.startswith("-c") and len(word) > 2:
                value = word[2:]
            elif word.startswith("ext::"):
                self.code.append(word[5:])
            if value is not None:
                option = word.partition("=")[0]
                if option in ("-c", "--config-env") or word.startswith("-c"):
                    setting, _, text = value.partition("=")
                    if setting.lower().startswith("alias.") and text.startswith("!"):
                        self.script(text[1:], depth + 1)
                    else:
                        self.code.append(text or value)
                else:
                    self.script(value, depth + 1)
            k += 1

    def note_dirs(self, words: tuple[str, ...], dynamic: tuple[bool, ...]) -> None:
        """The directories a command changes to: `cd DIR`/`pushd DIR` (a bare `cd`: `~`), and the
        argument of `-C`, `--chdir`, `--directory`, `--cwd` (git, make, tar, env, …)."""
        i = _skip_assignments(words, 0)
        if i < len(words) and words[i] in ("cd", "pushd"):
            args = [k for k in range(i + 1, len(words)) if not words[k].startswith("-")]
            if not args:
                self.dirs.append("~")
            elif not dynamic[args[0]]:
                self.dirs.append(words[args[0]])
        for k in range(i + 1, len(words)):
            word = words[k]
            if word in ("-C", "--chdir", "--directory", "--cwd") and k + 1 < len(words):
                if not dynamic[k + 1]:
                    self.dirs.append(words[k + 1])
            elif word.startswith(("--chdir=", "--directory=", "--cwd=")) and not dynamic[k]:
                self.dirs.append(word.partition("=")[2])

    def find_exec(
        self, words: tuple[str, ...], dynamic: tuple[bool, ...], i: int, depth: int
    ) -> None:
        """The commands `find … -exec CMD … ;` (or `+`, `-execdir`, `-ok`, `-okdir`) runs, each a
        part of its own; `{}` (a file name) is only known when it runs. Their parts come first:
        the find part itself is added after them by the caller."""
        k = i + 1
        while k < len(words):
            if words[k] in ("-exec", "-execdir", "-ok", "-okdir") and not dynamic[k]:
                end = k + 1
                while end < len(words) and words[end] not in (";", "+"):
                    end += 1
                sub = words[k + 1 : end]
                if sub:
                    marks = tuple(
                        d or "{}" in w for w, d in zip(sub, dynamic[k + 1 : end], strict=True)
                    )
                    self.simple(sub, marks, (), depth + 1)
                k = end
            k += 1


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


def _reads_stdin(words: Sequence[str], i: int) -> bool:
    """`sh`, `sh -s …`, `sh -` read their script from their input; `sh file` does not."""
    j = i + 1
    while j < len(words) and words[j].startswith("-") and words[j] not in ("-", "--"):
        if not words[j].startswith("--") and "s" in words[j][1:]:
            return True
        if words[j] in ("-o", "+o", "-O", "+O") and j + 1 < len(words):
            j += 1
        j += 1
    if j < len(words) and words[j] == "--":
        j += 1
    return j >= len(words) or words[j] == "-"


_QUOTED_HEREDOC = re.compile(r"""<<(-?)[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|\\([A-Za-z_][\w]*))""")
_STAND_IN = "SYMPOSIUM_QUOTED_HEREDOC_"


def _unquote_heredocs(script: str) -> tuple[str, dict[str, str]]:
    """The script with each quoted here-document delimiter (`<<'EOF'`, `<<"EOF"`, `<<\\EOF`)
    replaced by a stand-in and its body emptied, and stand-in → body. Nothing when a body has no
    end (or the script already holds a stand-in)."""
    if _STAND_IN in script:
        return script, {}
    bodies: dict[str, str] = {}
    out: list[str] = []
    k = 0
    while True:
        found = _QUOTED_HEREDOC.search(script, k)
        if found is None:
            out.append(script[k:])
            break
        delimiter = found.group(2) or found.group(3) or found.group(4)
        strip_tabs = bool(found.group(1))
        line_end = script.find("\n", found.end())
        if line_end == -1:
            return script, {}
        line_start = script.rfind("\n", 0, found.start()) + 1
        if script.count("<<", line_start, line_end) > 1:
            return script, {}  # which body is whose: bash reads them in order; not worth guessing
        lines_start = line_end + 1
        pos = lines_start
        body_lines: list[str] = []
        while True:
            nl = script.find("\n", pos)
            line = script[pos:] if nl == -1 else script[pos:nl]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                end = len(script) if nl == -1 else nl
                break
            if nl == -1:
                return script, {}
            body_lines.append(line)
            pos = nl + 1
        stand_in = f"{_STAND_IN}{len(bodies)}"
        bodies[stand_in] = "".join(line + "\n" for line in body_lines)
        out.append(script[k : found.start()])
        out.append(f"<<{found.group(1)}{stand_in}")
        out.append(script[found.end() : lines_start])
        out.append(stand_in)
        k = end
    return "".join(out), bodies


def _count_heredocs(node: Any, bodies: dict[str, str]) -> int:
    """How many here-document redirections of the tree use one of the stand-in delimiters."""
    count = 0
    if getattr(node, "kind", None) == "redirect" and getattr(node, "type", "") in ("<<", "<<-"):
        target = getattr(node, "output", None)
        if getattr(target, "word", None) in bodies:
            count += 1
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or ():
            count += _count_heredocs(child, bodies)
    for attr in ("command", "output", "heredoc"):
        child = getattr(node, attr, None)
        if child is not None and hasattr(child, "kind"):
            count += _count_heredocs(child, bodies)
    return count


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


def _shell_script(words: Sequence[str], i: int) -> int | None:
    """The index of the script word of `sh [-opts] -c script …` (words[i] is the shell), else None."""
    j = i + 1
    while j < len(words) and words[j].startswith("-") and words[j] != "--":
        if not words[j].startswith("--") and "c" in words[j][1:]:
            return j + 1
        j += 1
    return None


_guarded = False


def _guard_bashlex() -> None:
    """bashlex loops forever, taking memory without end, on a `${` whose word has no `}` after it
    where it misreads the quoting (`x'${'`): its `_paramexpand` finds no `}` (-1) and starts the
    word over. Such a word is a parse error instead, so the command is unknowable (asked), and an
    agent cannot hang the approval policy with it."""
    global _guarded
    if _guarded:
        return
    import bashlex.errors
    import bashlex.subst

    original = bashlex.subst._paramexpand

    def paramexpand(parserobj: Any, string: str, sindex: int) -> Any:
        if string[sindex + 1 : sindex + 2] == "{" and string.find("}", sindex + 2) == -1:
            raise bashlex.errors.ParsingError("bad substitution: no closing '}'", string, sindex)
        return original(parserobj, string, sindex)

    bashlex.subst._paramexpand = paramexpand
    _guarded = True


def _bashlex_parse(script: str) -> tuple[list[Any], str | None]:
    """bashlex's trees, or why it cannot parse the script. bash's `time` keyword is not implemented
    by bashlex: it is blanked out (it only times the pipeline after it) and the script parsed again."""
    import bashlex

    _guard_bashlex()

    try:
        return bashlex.parse(script), None
    except Exception as exc:  # bashlex raises assorted errors on odd input: fail to "ask"
        error = str(exc) or type(exc).__name__
    blanked = _blank_time_keywords(script)
    if blanked is None:
        return [], error
    try:
        return bashlex.parse(blanked), None
    except Exception:
        return [], error


def _blank_time_keywords(script: str) -> str | None:
    """The script with every `time [-p] [--]` keyword (as bash's tokenizer finds it) replaced by
    spaces, so that every other word keeps its position."""
    from bashlex import state, tokenizer

    try:
        tokens = list(tokenizer.tokenizer(script, state.parserstate()))
    except Exception:
        return None
    spans = [
        (t.lexpos, t.endlexpos)
        for t in tokens
        if t.ttype is not None and t.ttype.name in ("TIME", "TIMEOPT", "TIMEIGN")
    ]
    if not spans:
        return None
    chars = list(script)
    for start, end in spans:
        if script[start:end] not in ("time", "-p", "--"):
            return None
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def word_text(src: str, word: Any) -> str:
    """A word with its quotes removed, from the source text: bashlex keeps the quotes of some
    words (`'r''m'` stays `r''m`), and a deny rule must see `rm`."""
    raw = src[word.pos[0] : word.pos[1]]
    try:
        tokens = shlex.split(raw)
    except ValueError:
        return str(word.word)
    if len(tokens) == 1:
        return tokens[0]
    return "" if not tokens and raw else str(word.word)


def _is_dynamic(word: Any) -> bool:
    return any(
        child.kind in ("parameter", "commandsubstitution", "processsubstitution")
        for child in getattr(word, "parts", None) or ()
    )


# --- wrappers -------------------------------------------------------------------------------------


_Seen = list[tuple[str, str | None]]  # the options a wrapper was given: (name, value)


@dataclass
class _Unwrapped:
    inner: int | None  # the index of the command it runs; None: it runs none
    script: str | None = None  # a shell script it runs instead
    script_dynamic: bool = False
    writes: tuple[str, ...] = ()
    open_args: bool = False  # xargs: arguments are appended when it runs
    cut: int | None = None  # xargs -I: words from here on are only known when it runs
    default: tuple[str, ...] | None = None  # what runs when no command is given
    splice: tuple[str, ...] | None = None  # env -S: these words stand for words[i + 1 : inner]


@dataclass(frozen=True)
class Wrapper:
    """A command that runs another one, and its options: `short` as getopt spells them (`k:`
    takes an argument, `k::` an optional one attached to it, `k` none), `long` likewise (`name=`,
    `name==`, `name`); GNU abbreviations of long options are understood. `positionals`: words
    between the options and the command (timeout's duration, chroot's new root). `stop`: options
    after which no command runs (`command -v`, `sudo -l`). `writes`: options whose argument is a
    file written (`time -o FILE`). `permute`: options may follow the positionals (su)."""

    role: Role
    short: str = ""
    long: str = ""
    positionals: int = 0
    stop: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    numeric: bool = False  # `nice -10`: a negative number is an option
    special: str = ""  # a wrapper with its own rules: env, xargs, su, eval, watch, flock, busybox

    def options(self) -> tuple[dict[str, int], dict[str, int]]:
        return _option_table(self.short, self.long)

    def unwrap(self, words: Sequence[str], i: int) -> _Unwrapped:
        j, seen, rest = _getopt(self, words, i + 1)
        if self.special:
            return _SPECIALS[self.special](self, words, i, j, seen, rest)
        if any(name in self.stop for name, _ in seen):
            return _Unwrapped(None)
        j += self.positionals
        writes = tuple(v for name, v in seen if name in self.writes and v)
        return _Unwrapped(j, writes=writes)


@lru_cache(maxsize=64)
def _option_table(short: str, long: str) -> tuple[dict[str, int], dict[str, int]]:
    """{option: 0 (no argument) | 1 (an argument) | 2 (an optional, attached argument)}."""
    shorts: dict[str, int] = {}
    k = 0
    while k < len(short):
        letter = short[k]
        colons = 0
        while k + 1 + colons < len(short) and short[k + 1 + colons] == ":":
            colons += 1
        shorts[letter] = colons
        k += 1 + colons
    longs: dict[str, int] = {}
    for item in long.split():
        name = item.rstrip("=")
        longs[name] = len(item) - len(name)
    return shorts, longs


def _getopt(spec: Wrapper, words: Sequence[str], j: int) -> tuple[int, _Seen, list[int]]:
    """Read the wrapper's options from words[j]: (the index after them, the options seen as
    (name, value), and for a permuting wrapper the indexes of the non-options among them)."""
    shorts, longs = spec.options()
    seen: _Seen = []
    rest: list[int] = []
    while j < len(words):
        word = words[j]
        if word == "--":
            j += 1
            if spec.special == "su":
                rest.extend(range(j, len(words)))
                j = len(words)
            break
        if word == "-" and spec.special == "su":
            seen.append(("-", None))
            j += 1
            continue
        if not word.startswith("-") or word == "-":
            if spec.special == "su":  # options may come after the user
                rest.append(j)
                j += 1
                continue
            break
        if spec.numeric and re.fullmatch(r"-\d+", word):
            seen.append(("n", word[1:]))
            j += 1
            continue
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            matches = [n for n in longs if n == name] or [n for n in longs if n.startswith(name)]
            if len(matches) != 1:
                raise _Unknown(f"option --{name} is not known")
            name = matches[0]
            takes = longs[name]
            if takes == 0 and eq:
                raise _Unknown(f"option --{name} takes no argument")
            if takes == 1 and not eq:
                if j + 1 >= len(words):
                    raise _Unknown(f"option --{name} needs an argument")
                value = words[j + 1]
                j += 1
            seen.append((name, value if (eq or takes == 1) else None))
            j += 1
            continue
        k = 1
        while k < len(word):
            letter = word[k]
            if letter not in shorts:
                raise _Unknown(f"option -{letter} is not known")
            takes = shorts[letter]
            if takes == 0:
                seen.append((letter, None))
                k += 1
                continue
            value = word[k + 1 :]
            if takes == 1 and not value:
                if j + 1 >= len(words):
                    raise _Unknown(f"option -{letter} needs an argument")
                j += 1
                value = words[j]
            seen.append((letter, value))
            break
        j += 1
    return j, seen, rest


_Special = Callable[["Wrapper", Sequence[str], int, int, _Seen, list[int]], _Unwrapped]


def _env(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # `env [options] [NAME=value …] [command …]`; -S splits a string into more words
    split = [v for name, v in seen if name in ("S", "split-string")]
    if split:
        text = split[-1] or ""
        if not _PLAIN_SCRIPT.fullmatch(text):
            raise _Unknown("an -S string with escapes or expansions is not understood")
        try:
            return _Unwrapped(j, splice=tuple(shlex.split(text)))
        except ValueError:
            raise _Unknown("an -S string with an unbalanced quote") from None
    return _Unwrapped(j)


def _xargs(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    replace_with: str | None = None
    for name, value in seen:
        if name == "I":
            replace_with = value
        elif name in ("i", "replace"):
            replace_with = value or "{}"
    cut = None
    if replace_with:
        for k in range(j, len(words)):
            if replace_with in words[k]:
                if k == j:
                    raise _Unknown("the command name comes from its input")
                cut = k
                break
    return _Unwrapped(j, open_args=True, cut=cut, default=("echo",))


def _su(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # su [options] [-] [user [args…]]: args go to the user's shell; -c is a script
    if any(name in ("u", "user") for name, _ in seen):  # runuser -u USER [--] command …
        if any(name in ("c", "command", "session-command") for name, _ in seen):
            raise _Unknown("-u with -c is not understood")
        return _Unwrapped(rest[0] if rest else None)
    if len([k for k in rest if words[k] != "-"]) > 1:
        raise _Unknown("arguments for the user's shell are not understood")
    scripts = [v for name, v in seen if name in ("c", "command", "session-command")]
    if scripts:
        return _Unwrapped(None, script=scripts[-1] or "")
    return _Unwrapped(None)  # an interactive shell as that user


def _eval(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    if j >= len(words):
        return _Unwrapped(None)
    return _Unwrapped(None, script=" ".join(words[j:]))


def _watch(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    if j >= len(words):
        return _Unwrapped(None)
    if any(name in ("x", "exec") for name, _ in seen):
        return _Unwrapped(j)
    return _Unwrapped(None, script=" ".join(words[j:]))  # watch runs `sh -c "ARGS…"`


def _flock(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    # flock [options] FILE|DIR command …  /  flock [options] FILE|DIR -c script  /  flock [options] FD
    scripts = [v for name, v in seen if name in ("c", "command")]
    if scripts:
        return _Unwrapped(None, script=scripts[-1] or "")
    j += 1  # the lock file
    if j < len(words) and words[j] in ("-c", "--command"):
        if j + 1 >= len(words):
            raise _Unknown("-c needs a script")
        return _Unwrapped(None, script=words[j + 1])
    return _Unwrapped(j if j < len(words) else None)


def _busybox(
    spec: Wrapper, words: Sequence[str], i: int, j: int, seen: _Seen, rest: list[int]
) -> _Unwrapped:
    if seen:
        return _Unwrapped(None)  # --list, --install, --help: no applet runs
    return _Unwrapped(j)


_SPECIALS: dict[str, _Special] = {
    "env": _env,
    "xargs": _xargs,
    "su": _su,
    "eval": _eval,
    "watch": _watch,
    "flock": _flock,
    "busybox": _busybox,
}

_SUDO_LONG = (
    "askpass background bell close-from= login-class= chdir= preserve-env== edit group= "
    "set-home help host= login remove-timestamp reset-timestamp list non-interactive "
    "preserve-groups prompt= chroot= role= stdin shell type= command-timeout= other-user= "
    "user= version validate no-update"
)

WRAPPERS: dict[str, Wrapper] = {
    # harmless: the command they run decides
    "time": Wrapper(
        "wrapper",
        short="af:o:pqvV",
        long="append format= output= portability quiet verbose help version",
        writes=frozenset({"o", "output"}),
        stop=frozenset({"V", "help", "version"}),
    ),
    "nice": Wrapper(
        "wrapper",
        short="n:",
        long="adjustment= help version",
        numeric=True,
        stop=frozenset({"help", "version"}),
    ),
    "timeout": Wrapper(
        "wrapper",
        short="k:s:v",
        long="kill-after= signal= foreground preserve-status verbose help version",
        positionals=1,
        stop=frozenset({"help", "version"}),
    ),
    "nohup": Wrapper("wrapper", long="help version", stop=frozenset({"help", "version"})),
    "stdbuf": Wrapper(
        "wrapper",
        short="i:o:e:",
        long="input= output= error= help version",
        stop=frozenset({"help", "version"}),
    ),
    "command": Wrapper("wrapper", short="pvV", stop=frozenset({"v", "V"})),
    "builtin": Wrapper("wrapper"),
    "coproc": Wrapper("wrapper"),  # `coproc cmd …` runs cmd in the background
    "exec": Wrapper("wrapper", short="cla:"),
    "setsid": Wrapper(
        "wrapper",
        short="cfw",
        long="ctty fork wait help version",
        stop=frozenset({"help", "version"}),
    ),
    "ionice": Wrapper(
        "wrapper",
        short="c:n:tpPu",
        long="class= classdata= ignore pid pgid uid help version",
        stop=frozenset({"p", "P", "u", "pid", "pgid", "uid", "help", "version"}),
    ),
    "taskset": Wrapper(
        "wrapper",
        short="acp",
        long="all-tasks cpu-list pid help version",
        positionals=1,
        stop=frozenset({"p", "pid", "help", "version"}),
    ),
    "env": Wrapper(
        "wrapper",
        short="iu:0C:S:va:",
        long="ignore-environment unset= null chdir= split-string= debug argv0= "
        "ignore-signal== default-signal== block-signal== list-signal-handling help version",
        special="env",
    ),
    "xargs": Wrapper(
        "wrapper",
        short="0a:d:E:e::I:i::L:l::n:P:s:prtxo",
        long="null arg-file= delimiter= eof== replace== max-lines== max-args= max-procs= "
        "max-chars= process-slot-var= interactive no-run-if-empty open-tty verbose exit "
        "show-limits help version",
        special="xargs",
    ),
    "eval": Wrapper("wrapper", special="eval"),
    "watch": Wrapper(
        "wrapper",
        short="bcCd::eghn:pq:rtwx",
        long="beep color no-color differences== errexit chgexit help interval= precise "
        "equexit= no-rerun no-title no-wrap exec version",
        special="watch",
    ),
    "flock": Wrapper(
        "wrapper",
        short="sxenouc:w:E:FV",
        long="shared exclusive nonblock nb no-fork unlock close command= wait= timeout= "
        "conflict-exit-code= verbose help version",
        special="flock",
    ),
    "busybox": Wrapper("wrapper", long="list list-full install help", special="busybox"),
    "toybox": Wrapper("wrapper", long="help version", special="busybox"),
    # privileged: they change who (or where) runs the command
    "sudo": Wrapper(
        "privileged",
        short="Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv",
        long=_SUDO_LONG,
        stop=frozenset(
            {
                "e",
                "edit",
                "l",
                "list",
                "V",
                "version",
                "v",
                "validate",
                "K",
                "remove-timestamp",
                "help",
            }
        ),
    ),
    "doas": Wrapper("privileged", short="a:C:Lnsu:", stop=frozenset({"L", "C", "s"})),
    "su": Wrapper(
        "privileged",
        short="c:g:G:lmpPs:w:fh",
        long="command= session-command= group= supp-group= login preserve-environment pty "
        "shell= whitelist-environment= fast help version",
        special="su",
    ),
    "runuser": Wrapper(
        "privileged",
        short="c:g:G:lmpPs:u:w:fh",
        long="command= session-command= group= supp-group= login preserve-environment pty "
        "shell= user= whitelist-environment= fast help version",
        special="su",
    ),
    "pkexec": Wrapper(
        "privileged",
        long="user= disable-internal-agent keep-cwd help version",
        stop=frozenset({"help", "version"}),
    ),
    "chroot": Wrapper(
        "privileged",
        long="userspec= groups= skip-chdir help version",
        positionals=1,
        stop=frozenset({"help", "version"}),
    ),
}
