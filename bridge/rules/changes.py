"""What a shell command changes, for the guard (`bridge.rules.guards`): the programs that delete,
move, overwrite, unpack into or change the permissions of what they are given or go down, where
they write, and why what a command changes cannot be known (`unknown_change`). Loaded with the
guard: no pattern is compiled, nor module loaded, until a command needs it."""

from __future__ import annotations

import os
import posixpath

TYPE_CHECKING = False  # (as in bridge.rules.guards: no `typing` on a hook's start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from bridge.shell import ParsedCommand, Part

# Programs that change what is inside a folder they go down, given one above a guarded one
# (`chmod -R 777 ~`; `rm -r` and `mv` take it along) ...
_WALKING_CHANGERS = frozenset({"rm", "mv", "chmod", "chown", "chgrp", "setfacl", "shred"})
# ... and those that change the files they are given (or may: interpreters, `git`): given what
# another finds (`find ~ | xargs truncate -s 0`), they may change anything it found
CHANGERS = _WALKING_CHANGERS | frozenset(
    {
        "rmdir", "unlink", "cp", "rsync", "ln", "install", "chattr", "truncate", "dd", "tee",
        "touch", "sed", "sort", "shuf", "uniq", "split", "csplit", "sponge", "ex", "vi", "vim",
        "ed", "awk", "gawk", "gzip", "gunzip", "bzip2", "xz", "zstd", "lz4", "tar",
        "unzip", "patch", "git", "perl", "ruby", "python", "python3", "node", "sh", "bash",
        "dash", "zsh",
    }
)  # fmt: skip
# ... programs that change who may read or write what they are given (a folder above a guarded
# one included: `chmod 000 ~/.config`), and those that write an archive's files into a folder
# (`tar x`, `unzip`, `7z x`, `cpio -i`: an archive may hold `.claude/settings.json`); and `git
# clean -f`, which deletes the untracked files of the folder it runs in; `cp -r` and `rsync`
# write what they copy into their destination
PERMISSIONS = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr"})
# ... compressors, which replace each file they are given by its packed (or unpacked) copy, the
# files of a folder with `-r`, and what moves files to the trash: what they are given is changed
REPLACERS = frozenset(
    {
        "gzip", "gunzip", "pigz", "unpigz", "bzip2", "bunzip2", "xz", "unxz", "lzma", "zstd",
        "unzstd", "lz4", "brotli", "gio", "trash", "trash-put", "gvfs-trash",
    }
)  # fmt: skip
_UNPACKERS = frozenset(
    {"tar", "bsdtar", "unzip", "7z", "7za", "7zr", "cpio", "jar", "cp", "rsync", "git"}
    | {"python", "python3"}  # (`python3 -m zipfile -e`, `-m tarfile -e`)
)
# ... and `find` with an action that changes or runs something (spared when one `-name` decides
# what it acts on, and no guarded name matches it: not with these)
_FIND_COMBINES = frozenset(
    {"-o", "-or", "!", "-not", ",", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
     "-iregex", "-lname", "-ilname", "-samefile", "-inum", "-links", "-depth", "-prune"}
)  # fmt: skip
_FIND_ACTIONS = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)


def walks_and_changes(words: tuple[str, ...], programs: frozenset[str] = _WALKING_CHANGERS) -> bool:
    """Whether a simple command changes the files it is given: one of `programs`, or a `find`
    with an action (`_FIND_ACTIONS`)."""
    program = posixpath.basename(words[0]) if words else ""
    if program == "find":
        return not _FIND_ACTIONS.isdisjoint(words)
    if program in ("tar", "bsdtar"):  # what it packs, deleted
        return _long(words[1:], "remove-files")
    if program == "zip":  # `-m`: what it packs, moved into the archive
        return _long(words[1:], "move") or _short(words[1:], "m")
    return program in programs


def find_spares(words: tuple[str, ...], names: frozenset[str]) -> bool:
    """Whether a `find` acts only on what one `-name` (or `-iname`) pattern before its actions
    matches, and that pattern matches none of `names` — what governs the agents and every folder
    above it (`find . -name '*.pyc' -delete`, not `find ~ -name proj -exec rm -rf {} +`): what
    governs the agents is not among what it changes."""
    import fnmatch

    args = words[1:]
    if not _FIND_COMBINES.isdisjoint(args):
        return False
    tests = [k for k, w in enumerate(args[:-1]) if w in ("-name", "-iname")]
    acts = [k for k, w in enumerate(args) if w in _FIND_ACTIONS]
    if len(tests) != 1 or not acts or tests[0] > acts[0]:
        return False  # (an action before the test acts on everything)
    pattern = args[tests[0] + 1].lower()
    if "\\" in pattern or "[:" in pattern:
        return False  # (escapes and classes find reads otherwise than fnmatch)
    return not any(fnmatch.fnmatchcase(n.lower(), pattern) for n in names)


def changes_where(words: tuple[str, ...]) -> bool:
    """Whether a simple command changes permissions, unpacks an archive or cleans untracked
    files (`Guards._changed_in` looks at where)."""
    program = posixpath.basename(words[0]) if words else ""
    if program in PERMISSIONS or program in REPLACERS:
        return True
    return program in _UNPACKERS and writes_into(words) is not None


def _short(args: tuple[str, ...], letters: str) -> bool:
    """One of these short options among `args`, alone or in a group (`-rf`)."""
    return any(w[:1] == "-" and w[1:2] != "-" and not set(letters).isdisjoint(w) for w in args)


def _long(args: tuple[str, ...], *names: str) -> bool:
    """One of these long options among `args`, as GNU getopt reads them: abbreviated too
    (`--extr` is `--extract`), with or without a `=value`."""
    for w in args:
        if w[:2] == "--" and len(w) > 3:
            given = w[2:].partition("=")[0]
            if any(name.startswith(given) for name in names):
                return True
    return False


def writes_into(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """Where an archive's files (or what git's deletes) go when the command names it (`tar -C
    DIR`, `unzip -d DIR`, `7z x -oDIR`, `cpio -D DIR`, `git clean PATHSPEC`): those words; ()
    for the folder it runs in; None when the command unpacks or cleans nothing."""
    program = posixpath.basename(words[0]) if words else ""
    args = words[1:]

    def given(short: str, long: str = "") -> tuple[str, ...]:  # `-X DIR`, `-XDIR`, `--long=DIR`
        out = [args[k + 1] for k, w in enumerate(args[:-1]) if w in (short, long)]
        out += [w[len(short) :] for w in args if w.startswith(short) and len(w) > len(short)]
        return (*out, *(w.partition("=")[2] for w in args if long and w.startswith(long + "=")))

    if program in ("tar", "bsdtar"):
        first = args[0] if args else ""
        if (
            (first[:1] != "-" and "x" in first)
            or _short(args, "x")
            or _long(args, "extract", "get")
        ):
            return given("-C", "--directory")
        return None
    if program == "unzip":
        return given("-d")
    if program == "jar":
        return () if (args and args[0][:1] != "-" and "x" in args[0]) or _short(args, "x") else None
    if program in ("python", "python3"):  # its archive modules' command lines
        module = args[args.index("-m") + 1] if "-m" in args[:-1] else ""
        flag = next((w for w in args if w in ("-e", "--extract")), None)
        if module in ("zipfile", "tarfile") and flag is not None:
            rest = [w for w in args[args.index(flag) + 1 :] if not w.startswith("-")]
            return tuple(rest[1:2])  # (after the archive: the folder, else the one it runs in)
        return None
    if program in ("7z", "7za", "7zr"):
        return given("-o") if args and args[0] in ("x", "e") else None
    if program == "cpio":
        return given("-D", "--directory") if _short(args, "i") or _long(args, "extract") else None
    if program in ("cp", "rsync"):  # a recursive copy: into its destination
        if program == "cp" and not (_short(args, "rRa") or _long(args, "recursive", "archive")):
            return None
        return _copies_into(program, args, given("-t", "--target-directory"))
    if program == "git":
        return _git_deletes(args)
    return None


def _temporary(path: str) -> bool:
    """A path in the temporary folder a program of its own makes (ssh-agent's socket:
    `$TMPDIR/ssh-XXXXXXXXXX/agent.PID`)."""
    return path.startswith("$TMPDIR/ssh-XXXXXXXXXX/")


def _script_run(words: tuple[str, ...]) -> str | None:
    """The script file a simple command runs (`bash x.sh`, `. x.sh`, `./x.sh`), or None."""
    program = posixpath.basename(words[0]) if words else ""
    if program in ("sh", "bash", "dash", "zsh", "ksh", "source", "."):
        return next((w for w in words[1:] if not w.startswith("-")), None)
    return words[0] if words and "/" in words[0] else None


def _copies_into(
    program: str, args: tuple[str, ...], into: tuple[str, ...]
) -> tuple[str, ...] | None:
    """Where a recursive copy writes: a folder copied whole lands in one of its own name (`cp -r
    build ~/` writes ~/build); its contents (`src/.`, rsync's `src/`), a glob or `.` land in the
    destination itself (its last operand, or `-t DIR`)."""
    operands = [w for w in args if not w.startswith("-") and w not in into]
    if not into and len(operands) > 1 and ":" not in operands[-1]:
        into, operands = (operands[-1],), operands[:-1]
    if not into:
        return None
    if _short(args, "T") or _long(args, "no-target-directory"):
        return into  # (`-T`: the destination is the copy itself)
    out: list[str] = []
    for source in operands:
        name = posixpath.basename(source.rstrip("/"))
        whole = name not in ("", ".", "..") and not set(source) & set("*?[{$`")
        if whole and not (program == "rsync" and source.endswith("/")):
            out += [posixpath.join(d, name) for d in into]
        else:
            out += list(into)
    return tuple(dict.fromkeys(out)) or into


def _git_deletes(args: tuple[str, ...]) -> tuple[str, ...] | None:
    """Where a git command deletes what it finds (its pathspecs; () for the folder it runs in),
    or None: `clean` (forced or not: its config may say it need not be), `rm -r`, `stash -u`."""
    sub = next((w for w in args if w in _GIT_DELETES), None)
    if sub is None:
        return None
    rest = args[args.index(sub) + 1 :]

    if sub == "clean" and (_short(rest, "n") or _long(rest, "dry-run")):
        return None
    if sub == "rm" and not _short(rest, "r"):
        return None  # (a file it names is named)
    if sub == "reset":  # `--hard`: the work tree made the commit's, what it lacks deleted
        return () if _long(rest, "hard", "merge", "keep") else None
    if sub == "stash":  # its untracked files go with the stash
        return () if _short(rest, "ua") or _long(rest, "include-untracked", "all") else None
    skip = {k + 1 for k, w in enumerate(rest) if w in ("-e", "--exclude")}
    return tuple(w for k, w in enumerate(rest) if k not in skip and not w.startswith("-") and w)


# git's subcommands that delete what is in the folder it runs in (the untracked files `clean`
# removes, `rm -r`, the untracked files `stash -u` takes)
_GIT_DELETES = ("clean", "rm", "stash")
# ... and those that write its index or work tree: from another work tree or repository than the
# folder's own (`--work-tree`, `--git-dir`, `checkout-index --prefix`, `checkout --orphan`), what
# they write is not the project's
_GIT_WRITES = frozenset(
    {"add", "checkout", "checkout-index", "restore", "reset", "read-tree", "switch", "stash",
     "merge", "pull", "rebase", "cherry-pick", "revert", "am", "apply", "worktree"}
)  # fmt: skip
# The programs whose operands, when only known when it runs, may be a folder above what governs
# the agents (or in it): what they do to it is not known
_PATH_CHANGERS = frozenset(
    {
        "rm", "rmdir", "unlink", "mv", "cp", "ln", "install", "chmod", "chown", "chgrp",
        "setfacl", "chattr", "shred", "truncate", "dd", "tee", "touch", "rsync", "zip",
        "sponge",
    }
    | REPLACERS
)  # fmt: skip
# Programs that run the command their arguments spell, which the shell reading does not unwrap
# (`prlimit … rm -rf ~`, `script -qc 'rm -rf ~'`)
_LAUNCHERS = frozenset(
    {
        "prlimit", "setpriv", "fakeroot", "dbus-run-session", "valgrind", "unshare", "strace",
        "ltrace", "script", "nsenter", "firejail", "chpst", "proot", "faketime", "systemd-run",
        "entr", "watchexec", "parallel", "at", "batch", "unbuffer", "catchsegv", "capsh",
        "logsave", "bwrap", "gdb", "lldb", "vim", "vi", "nvim", "ex", "ed", "emacs", "sqlite3",
        "tmux", "screen", "expect", "busybox", "toybox",
    }
)  # fmt: skip
# What deletes, moves or overwrites files, or a shell that may: named in code a program runs, or
# in a command that cannot be read in full, it may change anything
_DESTROYERS = frozenset(
    {
        "rm", "rmdir", "unlink", "mv", "cp", "ln", "shred", "truncate", "dd", "tee", "chmod",
        "chown", "chgrp", "setfacl", "chattr", "rsync", "sh", "bash", "dash", "zsh",
        "ksh", "eval", "source", "exec", "xargs", "find", "gzip", "zstd", "xz", "bzip2", "tar",
        "unzip", "patch", "sponge",
    }
)  # fmt: skip
_DESTROYS: Any = None
# What a variable set to a fresh temporary folder stands for (`d=$(mktemp -d)`)
_FRESH = "/tmp/tmp.X"
# What in git's configuration runs a program (an alias with `!`, a hook folder, fsmonitor …) or
# brings in more of it: given by the command (`-c`, GIT_CONFIG_*, a written .git/config), what
# runs is only known when it runs
_GIT_RUNS_FROM_CONFIG = (
    "alias", "hooksPath", "hookspath", "fsmonitor", "include.path", "includeIf", ".command",
    "core.editor", "core.pager", "sshCommand", "sshcommand", "diff.external", "filter.",
    "GIT_CONFIG",
)  # fmt: skip
# git's commands that bring in or make history (what a checkout in the same command then writes
# to the work tree is not the project's own)
_GIT_BRINGS = frozenset(
    {"fetch", "pull", "commit-tree", "update-ref", "mktree", "hash-object", "fast-import", "am"}
)
# Programs that copy into a destination (their last operand, or `-t`): what they write there
_COPIERS = frozenset({"cp", "rsync", "install", "ln"})


def _names_changer(text: str) -> bool:
    """Whether a text names a program that deletes, moves or overwrites files, or a shell
    (`_destroys`), writes by redirection to a path with an expansion in it, or runs one of git's
    deleting commands."""
    if _destroys(text):
        return True
    import re

    if re.search(r">\s*[^\s;&|]*[*?\[{$~`]", text):
        return True
    return "git" in text and any(sub in text for sub in _GIT_DELETES)


def assigned(parsed: ParsedCommand, raw: str) -> dict[str, str | None]:
    """The variables the command assigns: each one's value when every assignment of it is plain
    text (`out=build/x.txt`), else None (only known when it runs)."""
    import re

    texts = [w for part in parsed.parts for w in (*part.assigns, *part.words)]
    texts += [
        m.group(0)
        for m in re.finditer(r"(?<![^\s;&|(])[A-Za-z_]\w*=\S*", raw)
        if "=$(mktemp" not in m.group(0)
    ]
    texts = [t for t in texts if "=$(mktemp" not in t]
    # a loop over plain names or globs (`for f in *.log`), a fresh temporary folder (`d=$(mktemp
    # -d)`, where TMPDIR is not the command's): a path of their own, not one guarded (a glob
    # naming one is looked at as a name)
    for m in re.finditer(r"\bfor\s+([A-Za-z_]\w*)\s+in\s+([^;\n]*)", raw):
        listed = m.group(2).split()
        safe = all(_plain_path(w) and not set(w) & set("$`'\"") for w in listed) and (
            len(listed) == 1
        )  # (one word or glob: the guard reads it as the loop's value)
        texts.append(f"{m.group(1)}={listed[0]}" if safe and "/" not in m.group(2) else "")
        if not safe:
            texts.append(f"{m.group(1)}=$")  # (its values only known when it runs)
    if "TMPDIR" not in raw:
        texts += [
            f"{m.group(1)}={_FRESH}"
            for m in re.finditer(r"\b([A-Za-z_]\w*)=\$\(mktemp(?: -d)?\)", raw)
        ]
    # a variable added to, or set by a builtin (`x+=…`, `printf -v x`, `read x`, `declare -n`):
    # only known when it runs
    texts += [
        f"{m.group(1) or m.group(2)}=$"
        for m in re.finditer(r"\b([A-Za-z_]\w*)\+=|-v\s+([A-Za-z_]\w*)", raw)
    ]
    texts += [
        f"{name}=$"
        for m in re.finditer(
            r"\b(?:read|mapfile|readarray|declare|typeset|local|readonly|export)\b([^;&|\n]*)", raw
        )
        for name in re.findall(r"(?<![\w-])([A-Za-z_]\w*)(?![\w=])", m.group(1))
    ]
    values: dict[str, str | None] = {}
    for word in texts:
        name, eq, value = word.partition("=")
        if eq and name.isidentifier():
            value = value.rstrip(";&|)")
            plain = not set(value) & set("$`~'\"\\") and value and "=$(mktemp" not in word
            if name in values and values[name] != value:
                values[name] = None
            else:
                values[name] = value if plain else None
    return values


def substituted(word: str, values: dict[str, str | None]) -> str | None:
    """A word with the command's own plain variables put in (`$out`, `${a}b`), or None when it
    still holds an expansion."""
    import re

    def put(m: Any) -> str:
        value = values.get(m.group(1) or m.group(2))
        return "\0" if value is None else value

    text = re.sub(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", put, word)
    return None if "\0" in text or "$" in text or "`" in text else text


def unknown_change(
    parsed: ParsedCommand,
    raw: str | None,
    names: frozenset[str],
    values: Callable[[], dict[str, str | None]],
) -> str | None:
    """Why what a command changes cannot be known (so whether it changes what governs the
    agents cannot), or None: a command that cannot be read in full, or runs code or another
    program, naming a program that changes files (`[[ -d ~ ]] && rm -rf ~`, `echo 'rm -rf ~' |
    bash`, `awk 'BEGIN{system("rm -rf ~")}'`, `prlimit … rm -rf ~`); a command that writes a file
    and runs a script naming one; a program that changes the paths it is given, given one only
    known when it runs (`d=$(…); rm -rf $d`, `… | xargs rm -rf`, `cp -r x ~+`) or run in a folder
    only known when it runs (`cd $(echo ..) && rm -rf proj`); a redirection to such a path; or a
    symlink the command makes itself beside a program that changes files (`ln -s ~ x; rm -rf
    x/`). A variable the command gives a plain value is read as that value (`out=build/x; echo >
    $out`; `a=.cl; b=aude; sed -i … ~/$a$b/…` names `.claude`)."""
    text = raw or ""
    ran = _runs_what_may_change(parsed, text)
    if ran is not None:
        return ran
    known: dict[str, str | None] | None = None
    links = changer = False
    for part in parsed.parts:
        words = part.words
        program = posixpath.basename(words[0]) if words else ""
        links = links or _links(words)
        targets = list(part.writes)
        if program in _PATH_CHANGERS or walks_and_changes(words) or changes_where(words):
            changer = changer or program != "ln"
            if part.open_args:
                return f"{program} is given paths only known when it runs"
            targets += _changed_words(part, program)
        for word in targets:
            if _stack_word(word):  # $PWD, $OLDPWD, the folder stack's
                return f"{program} is given {word!r}, only known when it runs"
            if not _expansion(word):
                continue
            if known is None:
                known = values()
            plain = substituted(word, known)
            fresh = plain is not None and (plain == _FRESH or plain.startswith(_FRESH + "/"))
            if not fresh and (plain is None or not _plain_path(plain)):
                return f"{program or 'it'} is given {word!r}, only known when it runs"
            if plain is not None and any(name in plain for name in names):
                return f"{word!r} is {plain!r} when it runs"
    if changer:
        for folder in parsed.dirs:
            if _stack_word(folder) or _expansion(folder):
                return f"it changes files in a folder only known when it runs ({folder!r})"
    if links and changer:
        return "a link it makes itself may lead anywhere"
    return None


def with_values(part: Part, values: dict[str, str | None]) -> Part:
    """A part with the command's own plain variables put into its words (`x=build; rm -rf $x`
    is read as `rm -rf build`); a word that still holds an expansion stays unknown."""
    if not part.unknown:
        return part
    words = list(part.words)
    unknown = set(part.unknown)
    for k in sorted(part.unknown):
        plain = substituted(words[k], values) if k < len(words) else None
        if plain is not None:
            words[k] = plain
            unknown.discard(k)
    return part.but(words=tuple(words), unknown=frozenset(unknown))


def _plain_path(path: str) -> bool:
    """A path with no `..`, not the home nor the folder it runs in, its globs (if any) in its
    last name and matching no hidden file (`build/out.txt`, `*.log`): what a variable the command
    gives a plain value may stand for (the guard reads such a path as it reads any other)."""
    parts = path.split("/")
    globbed = [p for p in parts if set(p) & set("*?[")]
    return not (
        set(path) & set("{~")
        or ".." in parts
        or path in (".", "")
        or path.startswith(("/", "~", "./."))
        or any(p.startswith(".") for p in globbed)
        or globbed[:-1]
        or (globbed and globbed[-1] is not parts[-1])
    )


def destination(folder: str, base: str, values: dict[str, str | None]) -> str:
    """The real path of a destination word read in `base`, the command's own plain variables put
    in (`/`, any folder, when it holds an expansion only known when it runs: `-C$X`)."""
    from bridge.rules.named import expand_words

    plain = substituted(folder, values) if "$" in folder else folder
    expanded = expand_words(plain, os.path.expanduser("~")) if plain is not None else None
    if expanded is None or len(expanded) != 1:
        return "/"
    return os.path.realpath(os.path.join(base, expanded[0]))


def _without_programs(code: str, parsed: ParsedCommand) -> str:
    """A command's text without the names of the programs it runs itself (the rules read those):
    what is left is what they are given."""
    for part in parsed.parts:
        if part.words:
            code = code.replace(part.words[0], " ")
    return code


def _git_config_runs(parsed: ParsedCommand, words: tuple[str, ...], text: str) -> bool:
    """Whether git runs what configuration the command gives it, and that may change files: an
    alias that runs a shell command (`!…`), settings from a file the command writes
    (`GIT_CONFIG_GLOBAL=g.cfg`, `include.path`, `.git/config`), or a program a setting names
    (`-c core.fsmonitor='rm -rf ~;'`) that deletes or overwrites files."""
    if "alias" in text and "!" in text:
        return True
    writes = any(p.writes or (p.words and p.words[0] in ("tee", "cp", "mv")) for p in parsed.parts)
    if writes and any(key in text for key in _GIT_RUNS_FROM_CONFIG):
        return True
    given = any(w == "-c" or w.startswith(("-c", "--config")) for w in words) or any(
        key in text for key in ("GIT_CONFIG", "include.path", "includeIf")
    )
    return given and _names_changer(text)


def _links(words: tuple[str, ...]) -> bool:
    """Whether a simple command makes a symlink (`ln -s`)."""
    return (
        bool(words)
        and posixpath.basename(words[0]) == "ln"
        and (_short(words[1:], "s") or _long(words[1:], "symbolic"))
    )


def _runs_what_may_change(parsed: ParsedCommand, text: str) -> str | None:
    """A command that cannot be read in full, or runs code or another program, naming a program
    that changes files; one that writes a file and runs a script; `patch`; git run with config
    given on its command line (a hook, fsmonitor or alias it names may run)."""
    if parsed.opaque and _names_changer(text):
        return f"it cannot be read in full ({parsed.opaque[0]}) and may change files"
    for code in parsed.code:  # what awk, gdb, vim, sqlite3, a shell's input … run
        if (" " in code or "\n" in code) and _destroys(_without_programs(code, parsed)):
            return "it runs code that may change files"
    for part in parsed.parts:
        words = part.words
        program = posixpath.basename(words[0]) if words else ""
        if program in _LAUNCHERS:
            runs = next((w for w in words[1:] if _destroys(w)), None)
            if runs is not None:
                return f"{program} may run {runs!r}"
        if program == "patch" or (program == "git" and ("apply" in words or "am" in words)):
            return f"{program} changes the files its diff names"
        if program == "git" and _git_config_runs(parsed, words, text):
            return "git runs what configuration the command gives it says, which may change files"
        if (
            program == "git"
            and not _GIT_WRITES.isdisjoint(words)
            and (
                any(
                    w.startswith(("--work-tree", "--git-dir", "--prefix", "--orphan"))
                    for w in words
                )
                or any(a.startswith(("GIT_WORK_TREE=", "GIT_DIR=")) for a in part.assigns)
            )
        ):
            return "git writes a work tree or an index from one the command chooses"
        if program == "git" and "read-tree" in words:  # (plumbing: the index replaced)
            return "git read-tree replaces the index its next commands write the work tree from"
    subcommands = {w for p in parsed.parts if p.words and p.words[0] == "git" for w in p.words}
    brings = subcommands & _GIT_BRINGS
    if brings and (subcommands & _GIT_WRITES) - brings:
        return "git writes its work tree from history the command brings in or makes"
    runs_script = any(
        _script_run(p.words) is not None or (p.words and p.words[0] in ("make", "gmake"))
        for p in parsed.parts
    )
    writes = any(p.writes or (p.words and p.words[0] in _COPIERS) for p in parsed.parts)
    if runs_script and writes and _names_changer(_without_programs(text, parsed)):
        return "it writes a file and runs a script, either of which may change files"
    return None


def _changed_words(part: Part, program: str) -> list[str]:
    """The words a program that changes files writes to, as given: a copier's destination, any
    other's words only known when it runs, and a folder of the stack it is given."""
    words = part.words
    if program in _COPIERS:
        into = writes_into(words) if program in ("cp", "rsync") else None
        operands = [w for w in words[1:] if not w.startswith("-")]
        out = list(into or operands[-1:])
    else:
        out = [words[k] for k in sorted(part.unknown) if k]
    return out + [w for w in words[1:] if _stack_word(w)]


def _expansion(word: str) -> bool:
    """Whether a word holds an expansion the rules cannot undo (braces, `$HOME` and globs they
    can), outside a temporary file's name (`_temporary`)."""
    if ("$" not in word and "`" not in word) or _temporary(word):
        return False
    from bridge.rules.named import expand_words

    return expand_words(word, os.path.expanduser("~")) is None


def _stack_word(word: str) -> bool:
    """`~+` ($PWD), `~-` ($OLDPWD) or `~N` (a folder of the stack), alone or leading a path."""
    if word[:1] != "~" or len(word) < 2:
        return False
    head = word[1:].split("/", 1)[0]
    return head in ("+", "-") or head.lstrip("+-").isdecimal()


def _destroys(text: str) -> bool:
    """Whether a text names a program that deletes, moves or overwrites files, or a shell."""
    global _DESTROYS
    if _DESTROYS is None:
        import re

        names = sorted(_DESTROYERS, key=len, reverse=True)
        _DESTROYS = re.compile(r"(?<![\w.-])(?:" + "|".join(names) + r")(?![\w-])")
    text = text.replace("\\n", " ").replace("\\t", " ")  # (`printf 'a:\\n\\trm …'`)
    return _DESTROYS.search(text) is not None
