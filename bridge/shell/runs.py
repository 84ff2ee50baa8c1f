"""What a command runs besides itself — the commands `find -exec` runs, scripts given to `trap`,
`alias` and git, code an interpreter runs — and the directories it changes to."""

from __future__ import annotations

import posixpath
import re

from bridge.shell.parts import Part
from bridge.shell.programs import (
    CHARSET_VARIABLES,
    EVALUATES_SUBSCRIPTS,
    PROMPTS,
    RUN_BY_PROGRAMS,
    RUNS_CODE,
    RUNS_CODE_WHEN,
    gives_options,
    is_interpreter,
    shell_option,
)
from bridge.shell.words import _local_assignment, _skip_assignments, quote_word, split_words

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
    elif base == "hash" and "-p" in args:
        implied.extend(_hashed(parser, args))
    elif base == "alias":
        for arg in args:
            if "=" in arg and not arg.startswith("-"):
                name, _, value = arg.partition("=")
                parser.script(value, depth + 1)
                parser.aliases[name] = value  # the commands after it that start with NAME
    elif base == "git":
        git_code(parser, args, depth)
        aliased = git_alias(parser, args)
        if aliased is not None:
            implied.append(Part(("git", *aliased), role="implied"))
        sub = _git_subcommand(args)
        if sub is not None and args[sub] == "subtree" and "push" in args[sub + 1 :]:
            # `git subtree push` runs `git push` (with its repository and refspec)
            at = args.index("push", sub + 1)
            implied.append(Part(("git", "push", *args[at + 1 :]), role="implied"))
    else:
        for script in _scripts_given(parser, base, args):
            parser.script(script, depth + 1)
    if base in ("set", "shopt"):
        parser.opaque.extend(_set_options(base, args))
    if base in EVALUATES_SUBSCRIPTS:
        _subscripts(parser, base, args, depth)
    implied.extend(_assigned(parser, base, args))
    if base in _DECLARES and base != "export" and _nameref(args):
        parser.opaque.append(
            f"{base} -n makes a name stand for another variable: which one its assignments "
            "change is only known when it runs"
        )
    interpreted_code(parser, words[i:], stdin)
    return implied


def _scripts_given(parser: Parser, base: str, args: tuple[str, ...]) -> list[str]:
    """The scripts a builtin or program is given to run: `trap SCRIPT …`, `mapfile -C CALLBACK`,
    tar's programs (`_tar_programs`)."""
    if base == "trap":
        rest = [a for a in args if a != "--"]
        return rest[:1] if rest and not rest[0].startswith("-") else []
    if base in ("mapfile", "readarray"):  # `-C CALLBACK` runs for every few lines read
        return short_values(args, "C", takes="dnOsuCc")
    if base == "tar":
        return _tar_programs(args)
    if base in ("compgen", "complete"):  # `-C COMMAND` runs to list the completions
        return short_values(args, "C", takes="oAGWFCXPS")
    if base == "fc":  # `-e EDITOR` edits the history entries (then they run)
        return short_values(args, "e", takes="e")
    if base == "history" and args[:1] == ("-s",):  # an entry `fc -s` or `!!` runs later
        return [" ".join(args[1:])]
    return []


def _set_options(base: str, args: tuple[str, ...]) -> list[str]:
    """Why `set -k`, `set -o keyword`, `shopt -u interactive_comments` (`shell_option`) make the
    commands after them unknowable as they are read here."""
    out: list[str] = []
    if base == "shopt":  # shopt -s|-u [-o] NAME…
        letters = "".join(a[1:] for a in args if a.startswith("-"))
        if "u" in letters or "s" in letters:
            for name in (a for a in args if not a.startswith("-")):
                out.extend(shell_option(name, on="s" in letters, shopt="o" not in letters))
        return [f"shopt: {why}" for why in out]
    for k, arg in enumerate(args):  # set -k, set -o keyword, set +o interactive-comments
        if arg == "--" or arg[:1] not in ("-", "+"):
            break
        for letter in arg[1:]:
            named = args[k + 1] if letter == "o" and k + 1 < len(args) else letter
            out.extend(shell_option(named, on=arg[0] == "-"))
    return [f"set: {why}" for why in out]


def short_values(args: tuple[str, ...], letter: str, takes: str, attached: str = "") -> list[str]:
    """The values given to the short option `-LETTER` however it is written: alone (`-C V`),
    with its value (`-CV`), or after options that take none (`-tC V`, `-tCV`). `takes`: the
    letters that take a value (the rest of the word, or the next word); `attached`: those whose
    value can only be the rest of the word (git's `-O[PAGER]`). Read in every word, as git
    reads options among its other words (generous for a builtin that stops at the first)."""
    out = []
    for k, arg in enumerate(args):
        if arg == "--":
            break
        if arg[:1] != "-" or arg[:2] == "--":
            continue
        for n, found in enumerate(arg[1:], 2):
            if found in takes or found in attached:
                if found == letter:
                    value = arg[n:]
                    if not value and found in takes:
                        value = args[k + 1] if k + 1 < len(args) else ""
                    out.append(value)
                break
    return [v for v in out if v]


def _subscripts(parser: Parser, base: str, args: tuple[str, ...], depth: int) -> None:
    """A builtin that evaluates subscripts: the substitutions written in them run, and
    arithmetic on a variable's value is unknowable (`_arithmetic`)."""
    for arg in args:
        parser.substitutions(arg, depth)
    arithmetic = _arithmetic(base, args)
    if arithmetic is not None:
        parser.opaque.append(
            f"{base} evaluates arithmetic on a value only known when it runs: {arithmetic!r}"
        )


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
        elif base in _RUN_INPUT or not any(not a.startswith("-") for a in args):
            # it reads code from a pipe (a sed or awk script that runs commands runs what its
            # input holds: `echo 'rm -rf /' | sed e`): the command's text counts
            parser.interpreted = True


# sed and awk, given a script that runs commands: they may run what their input holds
_RUN_INPUT = frozenset({"sed", "gsed", "awk", "gawk", "mawk", "nawk"})


def git_code(parser: Parser, args: tuple[str, ...], depth: int) -> None:
    """What git runs besides itself: an alias that starts with `!` is a shell script; other
    `-c` values (a pager, an editor, an ssh command…) and `ext::` URLs are code; the program
    of `--upload-pack`, `--receive-pack`, `--exec`, `-u` is a shell command. Other aliases are
    remembered (`git_alias`); an included configuration file cannot be known."""
    sub = _git_subcommand(args)
    if sub is not None and args[sub] == "config":  # `git config [-f F] alias.x '!…'`
        _git_config(parser, args[sub + 1 :], depth)
    elif sub is not None:
        for script in _git_runs(args[sub], args[sub + 1 :]):
            parser.script(script, depth + 1)
    k = 0
    while k < len(args):
        word = args[k]
        value: str | None = None
        option = _git_long(word, _GIT_PROGRAM_OPTIONS)  # an abbreviation too (`--upl=…`)
        if word in ("-c", "-u") or (option is not None and "=" not in word):
            value = args[k + 1] if k + 1 < len(args) else None
            k += 1
        elif option is not None:
            value = word.partition("=")[2]
        elif word.startswith("-c") and len(word) > 2:
            value = word[2:]
        elif word.startswith("ext::"):
            parser.code.append(word[5:])
        if value is not None:
            if option == "--config-env":  # `NAME=ENVVAR`: the value comes from the environment
                setting = value.partition("=")[0]
                if setting.lower().startswith(("alias.", "include")):
                    parser.opaque.append(f"git setting {setting!r} from the environment")
                parser.code.append(value)
            elif option == "-c" or word.startswith("-c"):
                setting, _, text = value.partition("=")
                _git_setting(parser, setting, text or value, depth)
            else:
                parser.script(value, depth + 1)
        k += 1


_GIT_PROGRAM_OPTIONS = ("--upload-pack", "--receive-pack", "--exec", "--config-env")


def _git_long(word: str, names: tuple[str, ...]) -> str | None:
    """Which of `names` (long options) `word` gives — whole, or abbreviated as git and GNU accept
    (`--exe=…`, `--upl …`: two letters at least) — or None."""
    name = word.partition("=")[0]
    if not name.startswith("--") or len(name) < 4:
        return None
    return next((n for n in names if n.startswith(name)), None)


def _git_config(parser: Parser, args: tuple[str, ...], depth: int) -> None:
    """`git config NAME VALUE`: an alias, a setting that runs a program; any other setting (but a
    name, a colour) changes what the git commands after it do, whatever their own words say
    (`git config clean.requireForce false; git clean -dx`): asked."""
    positional = _git_config_words(args)
    if positional[:1] == ["set"]:  # `git config set NAME VALUE` (git 2.46)
        positional = positional[1:]
    if len(positional) < 2:
        return
    _git_setting(parser, positional[0], positional[1], depth)
    if not positional[0].lower().startswith(("user.", "color.", "alias.")):
        parser.opaque.append(f"git config sets {positional[0]!r} for the git commands after it")


def _git_subcommand(args: tuple[str, ...]) -> int | None:
    """The index of git's subcommand among its arguments (after its own options), or None."""
    k = 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _GIT_OPTION_VALUES else 1
    return k if k < len(args) else None


# `git config`'s options that take a value (not a setting's name or value)
_GIT_CONFIG_VALUES = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment",
                                "--value", "--file-type"})  # fmt: skip


def _git_config_words(args: tuple[str, ...]) -> list[str]:
    """`git config`'s words that are not its options or their values: NAME VALUE."""
    out: list[str] = []
    k = 0
    while k < len(args):
        if args[k] in _GIT_CONFIG_VALUES:
            k += 2
            continue
        if not args[k].startswith("-"):
            out.append(args[k])
        k += 1
    return out


def _git_runs(sub: str, rest: tuple[str, ...]) -> list[str]:
    """The shell commands a git subcommand runs: `rebase -x CMD`, `difftool -x|--extcmd CMD`,
    `submodule foreach CMD`, `filter-branch --*-filter CMD` (`--exec` is read wherever it is)."""
    out: list[str] = []
    if sub == "submodule" and "foreach" in rest:
        words = [w for w in rest[rest.index("foreach") + 1 :] if w not in ("--recursive", "-q",
                                                                           "--quiet")]  # fmt: skip
        return [" ".join(words)] if words else []
    if sub == "bisect" and rest[:1] == ("run",) and len(rest) > 1:  # CMD ARGS, as `sh` runs them
        return [" ".join((rest[1], *map(quote_word, rest[2:])))]
    options = {"rebase": ("--exec",), "difftool": ("--extcmd",), "mergetool": ("--tool-cmd",),
               "filter-branch": ("--env-filter", "--tree-filter", "--index-filter",
                                 "--parent-filter", "--msg-filter", "--commit-filter",
                                 "--tag-name-filter", "--setup")}.get(sub, ())  # fmt: skip
    for k, word in enumerate(rest):
        _, eq, value = word.partition("=")
        name = _git_long(word, options)
        if name in options:
            out.append(value if eq else (rest[k + 1] if k + 1 < len(rest) else ""))
        elif sub == "grep" and eq and _git_long(word, ("--open-files-in-pager",)):
            out.append(value)  # (its pager is optional: given only after `=`)
    if sub in _GIT_SHORT_RUNS:  # `-x CMD`, `-qx CMD`, `-yxCMD`; grep's `-OPAGER`
        out.extend(short_values(rest, *_GIT_SHORT_RUNS[sub]))
    return [v for v in out if v]


# git subcommands' short options that run a command: the letter, the letters that take a value
# and those whose value is optional (only attached)
_GIT_SHORT_RUNS = {
    "rebase": ("x", "xsXC", "S"),
    "difftool": ("x", "xt", ""),
    "grep": ("O", "efABCm", "O"),
}


def _git_setting(parser: Parser, setting: str, text: str, depth: int) -> None:
    """A git setting given in the command (`-c NAME=VALUE`, `git config NAME VALUE`)."""
    name = setting.lower()
    if name.startswith("alias.") and text.startswith("!"):
        parser.script(text[1:], depth + 1)
    else:
        parser.code.append(text)
    if name.startswith("alias."):
        parser.git_aliases[name[6:]] = text
    elif name.startswith("include"):
        parser.opaque.append("git includes configuration that is not known here")


# git's options (before its subcommand) that take the next word as their value
_GIT_OPTION_VALUES = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix",
     "--exec-path", "--list-cmds", "--attr-source"}
)  # fmt: skip


def git_alias(parser: Parser, args: tuple[str, ...]) -> tuple[str, ...] | None:
    """What git runs for a subcommand that is an alias defined in this command (`git -c
    alias.p=push p`, `git config alias.p push; git p`): the alias's words, then the rest."""
    if not parser.git_aliases:
        return None
    k = 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _GIT_OPTION_VALUES else 1
    if k >= len(args):
        return None
    rest = list(args[k:])
    seen: set[str] = set()
    while rest and rest[0].lower() in parser.git_aliases and rest[0].lower() not in seen:
        seen.add(rest[0].lower())  # an alias may name another (git expands them in turn)
        value = parser.git_aliases[rest[0].lower()]
        if value.startswith("!"):
            return None  # a `!` alias is a shell script: parsed where it is defined
        try:
            rest = [*split_words(value), *rest[1:]]
        except ValueError:
            parser.opaque.append(f"git alias {rest[0]!r} cannot be read")
            return None
    return tuple(rest) if seen else None


def _hashed(parser: Parser, args: tuple[str, ...]) -> list[Part]:
    """`hash -p PATH NAME…`: later commands named NAME run PATH (its arguments come then)."""
    k = args.index("-p")
    if k + 1 >= len(args):
        return []
    for name in args[k + 2 :]:
        parser.aliases[name] = args[k + 1]
    return [Part((args[k + 1],), role="implied", open_args=True)]


# tar's long options whose value is a command it runs (`--checkpoint-action=exec=CMD` too), by
# any abbreviation GNU tar takes (`--use-comp=…`, `--to-com=…`; generous: an ambiguous one too)
_TAR_PROGRAM_OPTIONS = ("--to-command", "--use-compress-program", "--info-script",
                        "--new-volume-script", "--checkpoint-action")  # fmt: skip
_TAR_TAKES = "bCfFgHIKLNTVX"  # its short options that take a value


def _tar_programs(args: tuple[str, ...]) -> list[str]:
    """The commands tar runs: the values of its options that name one, short ones in a group
    too (`-cIf CMD`: `f` is I's value) or in an old-style first word (`tar cIf CMD x.tar f`: each
    letter that takes a value takes the next word)."""
    out = []
    for k, word in enumerate(args):
        _, eq, value = word.partition("=")
        option = None if word.startswith("--checkpoint=") else _git_long(word, _TAR_PROGRAM_OPTIONS)
        if option is not None:
            value = value if eq else (args[k + 1] if k + 1 < len(args) else "")
            if option != "--checkpoint-action":
                out.append(value)
            elif value.startswith("exec="):
                out.append(value[5:])
    out.extend(short_values(args, "I", _TAR_TAKES) + short_values(args, "F", _TAR_TAKES))
    if args and args[0][:1] not in ("-", ""):  # `tar cIf CMD x.tar`: the old style
        following = 1
        for letter in args[0]:
            if letter in _TAR_TAKES:
                if letter in "IF" and following < len(args):
                    out.append(args[following])
                following += 1
    return [v for v in out if v]


def _stack_word(word: str) -> bool:
    """`-`, `+N` or `-N` (N: digits, as `\\d` reads them): $OLDPWD or a folder of the stack."""
    return word == "-" or (word[:1] in ("-", "+") and word[1:].isdecimal())


def note_dirs(parser: Parser, words: tuple[str, ...], dynamic: tuple[bool, ...]) -> None:
    """The directories a command changes to: `cd DIR`/`pushd DIR` (a bare `cd`: `~`; `cd -`,
    `pushd +1`, `popd`: a folder of $OLDPWD or the folder stack, `~-`, any), and the argument of
    `-C`, `--chdir`, `--directory`, `--cwd` (git, make, tar, env, …). A folder only known when it
    runs is noted as written (`cd $HOME`: the rules expand what they can, and any other is any
    folder)."""
    i = _skip_assignments(words, 0)
    if i < len(words) and words[i] in ("cd", "pushd", "popd"):
        args = [k for k in range(i + 1, len(words)) if not words[k].startswith("-")]
        if words[i] == "popd" or any(_stack_word(w) for w in words[i + 1 :]):
            parser.dirs.append("~-")
        elif not args:
            parser.dirs.append("~")
        else:
            parser.dirs.append(words[args[0]])
    for k in range(i + 1, len(words)):
        word = words[k]
        if word in ("-C", "--chdir", "--directory", "--cwd") and k + 1 < len(words):
            parser.dirs.append(words[k + 1])
        elif word.startswith(("--chdir=", "--directory=", "--cwd=")):
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


# A name with a subscript that is not a number (`a[v]`, `a[$i]`): the subscript is arithmetic
# (patterns compiled by `re` when first used: a hook's start-up does not pay for them)
_SUBSCRIPTED = r"[A-Za-z_][A-Za-z0-9_]*\[(?!\s*-?\d+\s*\])"
_IDENTIFIER = r"[A-Za-z_]"


def _arithmetic(base: str, args: tuple[str, ...]) -> str | None:
    """The word of a builtin's arguments that makes it evaluate arithmetic on the value of a
    variable (which runs any `a[$(cmd)]` in that value): a subscript that is not a number
    (`printf -v 'a[v]'`, `read 'a[v]'`, `unset 'a[v]'`), any name `let` evaluates, `declare -i`
    (every later assignment to the name is evaluated)."""
    if base == "printf":  # only its `-v` name: a format or an argument is text
        names = args[1:2] if args[:1] == ("-v",) else [a[2:] for a in args[:1] if a[:2] == "-v"]
    elif base in ("test", "[", "[["):  # only the name of a `-v` test
        names = [args[k + 1] for k in range(len(args) - 1) if args[k] == "-v"]
    else:
        names = list(args)
    for arg in names:
        if "[" in arg and re.search(_SUBSCRIPTED, arg):
            return arg
    if base == "let":
        return next((a for a in args if re.search(_IDENTIFIER, a)), None)
    if base in _DECLARES:
        for arg in args:
            if arg == "--" or not arg.startswith(("-", "+")):
                break
            if "i" in arg[1:]:
                return arg
    return None


_DECLARES = frozenset({"declare", "typeset", "local", "export", "readonly"})
# Options of the builtins that assign variables, which take an argument (not a name)
_NAME_OPTIONS = {
    "printf": "",
    "read": "dinNptu",
    "mapfile": "dnOsuCc",
    "readarray": "dnOsuCc",
}


def _exported_values(parser: Parser, base: str, args: tuple[str, ...], names: list[str]) -> None:
    """`export GIT_EDITOR='…'`, `declare -x LESSOPEN=…`: a value later programs run is read as a
    prefix's would be; one `read` or `printf -v` gives (or `BASH_ENV`, which a later `bash` runs)
    is only known when it runs."""
    values = (
        {  # (`NAME+=value` appends: the value is read as `NAME=value`'s)
            _unsubscripted(a.partition("=")[0].removesuffix("+")): a.partition("=")[2]
            for a in args
            if "=" in a and not a.startswith(("-", "+"))
        }
        if base in _DECLARES
        else {}
    )
    for name in map(_unsubscripted, names):
        if name in ("BASH_ENV", "ENV") or (name not in values and _runs_or_gives(name)):
            parser.opaque.append(f"{name} is set to a value a later program reads when it runs")
        elif name in values:
            parser.run_value(name, values[name], "$" in values[name], 0)


def _unsubscripted(name: str) -> str:
    """A variable's name without its subscript: `PS4[0]` is `PS4` (an array's element 0 is what
    `$PS4` gives)."""
    return name.partition("[")[0]


def _runs_or_gives(name: str) -> bool:
    return (
        name in RUN_BY_PROGRAMS
        or name in PROMPTS
        or name in CHARSET_VARIABLES
        or gives_options(name)
    )


def _nameref(args: tuple[str, ...]) -> bool:
    """`declare -n` (`typeset`, `local`): the options before the first name include `n`."""
    for arg in args:
        if arg == "--" or not arg.startswith(("-", "+")):
            return False
        if arg.startswith("-") and "n" in arg[1:]:
            return True
    return False


def _assigned(parser: Parser, base: str, args: tuple[str, ...]) -> list[Part]:
    """The variables a builtin assigns (`printf -v PATH …`, `read PATH`, `declare PATH=…`,
    `getopts o PATH`), as an assignment of their own would be: `PATH=/x; ls` changes what later
    commands run. A shell variable by convention (lower case) is not one (`_local_assignment`)."""
    names: list[str] = []
    if base == "printf":
        if len(args) >= 2 and args[0] == "-v":
            names.append(args[1])
        elif args and args[0].startswith("-v") and len(args[0]) > 2:
            names.append(args[0][2:])
    elif base in ("read", "mapfile", "readarray"):
        takes = _NAME_OPTIONS[base]
        k = 0
        while k < len(args) and args[k].startswith("-") and args[k] != "-":
            if args[k] == "--":
                k += 1
                break
            letters = args[k][1:]
            for n, letter in enumerate(letters):
                if letter == "a" and base == "read":  # read -a NAME
                    names.append(letters[n + 1 :] or (args[k + 1] if k + 1 < len(args) else ""))
                    if not letters[n + 1 :]:
                        k += 1
                    break
                if letter in takes:
                    if not letters[n + 1 :]:
                        k += 1
                    break
            k += 1
        names.extend(args[k:] if base == "read" else args[k:][-1:])
    elif base == "getopts" and len(args) >= 2:
        names.append(args[1])
    elif base in _DECLARES:
        names.extend(
            a.partition("=")[0].removesuffix("+")
            for a in args
            if not a.startswith(("-", "+")) and "=" in a
        )
    parser.git_environment(names)
    _exported_values(parser, base, args, names)
    kept = tuple(f"{name}=" for name in names if name and not _local_assignment(f"{name}="))
    return [Part(kept, role="command", assigns=kept)] if kept else []
