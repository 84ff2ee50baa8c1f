"""What a command runs besides itself — the commands `find -exec` runs, scripts given to `trap`,
`alias` and git, code an interpreter runs — and the directories it changes to."""

from __future__ import annotations

import posixpath

from bridge.shell.parts import Part
from bridge.shell.programs import EVALUATES_SUBSCRIPTS, RUNS_CODE, RUNS_CODE_WHEN, is_interpreter
from bridge.shell.words import _skip_assignments

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from bridge.shell.parser import Parser


def runs_code(
    parser: Parser,
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
        find_exec(parser, words, dynamic, i, depth)
        if "-delete" in args:
            implied.append(Part(("rm", "-r", "-f"), role="implied"))
    elif base == "trap":
        rest = [a for a in args if a != "--"]
        if rest and not rest[0].startswith("-"):
            parser.script(rest[0], depth + 1)
    elif base == "alias":
        for arg in args:
            if "=" in arg and not arg.startswith("-"):
                parser.script(arg.partition("=")[2], depth + 1)
    elif base == "hash" and "-p" in args:
        k = args.index("-p")
        if k + 1 < len(args):
            # its arguments come when NAME runs
            implied.append(Part((args[k + 1],), role="implied", open_args=True))
    elif base == "git":
        git_code(parser, args, depth)
    if base in EVALUATES_SUBSCRIPTS:
        for arg in args:
            parser.substitutions(arg, depth)
    interpreted_code(parser, words[i:], stdin)
    return implied


def interpreted_code(parser: Parser, words: tuple[str, ...], stdin: str | None) -> None:
    """The code an interpreter, another shell, another machine or a container runs (not parsed:
    a deny or ask rule looks at the programs it names), and whether it reads its code from its
    input (then the whole command's text counts)."""
    base = posixpath.basename(words[0])
    args = words[1:]
    if base in RUNS_CODE_WHEN and not RUNS_CODE_WHEN[base](words):
        return  # `sed -n /rm/p`, `docker rm x`: nothing it runs as code
    if is_interpreter(base) or base in RUNS_CODE:
        parser.code.append(" ".join(args))
        if stdin is not None:
            parser.code.append(stdin)
        if stdin is None and not any(not a.startswith("-") for a in args):
            parser.interpreted = True  # it reads code from a pipe: the command's text counts


def git_code(parser: Parser, args: tuple[str, ...], depth: int) -> None:
    """What git runs besides itself: an alias that starts with `!` is a shell script; other
    `-c` values (a pager, an editor, an ssh command…) and `ext::` URLs are code; the program
    of `--upload-pack`, `--receive-pack`, `--exec`, `-u` is a shell command."""
    positional = [a for a in args if not a.startswith("-")]
    if positional[:1] == ["config"] and len(positional) >= 3:  # `git config alias.x '!…'`
        setting, text = positional[1], positional[2]
        if setting.lower().startswith("alias.") and text.startswith("!"):
            parser.script(text[1:], depth + 1)
        else:
            parser.code.append(text)
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
            parser.code.append(word[5:])
        if value is not None:
            option = word.partition("=")[0]
            if option in ("-c", "--config-env") or word.startswith("-c"):
                setting, _, text = value.partition("=")
                if setting.lower().startswith("alias.") and text.startswith("!"):
                    parser.script(text[1:], depth + 1)
                else:
                    parser.code.append(text or value)
            else:
                parser.script(value, depth + 1)
        k += 1


def note_dirs(parser: Parser, words: tuple[str, ...], dynamic: tuple[bool, ...]) -> None:
    """The directories a command changes to: `cd DIR`/`pushd DIR` (a bare `cd`: `~`), and the
    argument of `-C`, `--chdir`, `--directory`, `--cwd` (git, make, tar, env, …)."""
    i = _skip_assignments(words, 0)
    if i < len(words) and words[i] in ("cd", "pushd"):
        args = [k for k in range(i + 1, len(words)) if not words[k].startswith("-")]
        if not args:
            parser.dirs.append("~")
        elif not dynamic[args[0]]:
            parser.dirs.append(words[args[0]])
    for k in range(i + 1, len(words)):
        word = words[k]
        if word in ("-C", "--chdir", "--directory", "--cwd") and k + 1 < len(words):
            if not dynamic[k + 1]:
                parser.dirs.append(words[k + 1])
        elif word.startswith(("--chdir=", "--directory=", "--cwd=")) and not dynamic[k]:
            parser.dirs.append(word.partition("=")[2])


def find_exec(
    parser: Parser, words: tuple[str, ...], dynamic: tuple[bool, ...], i: int, depth: int
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
                parser.simple(sub, marks, (), depth + 1)
            k = end
        k += 1
