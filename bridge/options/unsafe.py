"""What an allow rule must name: the options that make a program run another program or write a
file, and the assignments that can change what a program runs."""

from __future__ import annotations

import re

# Options that make a read-only program run another program or write a file: an allow rule that
# does not name them does not cover them (`allow git log` does not allow `git log --output=x` or
# `git -c core.pager=sh log`). Per program: option (as written; long ones also with `=value`)
# → why. Checked on the words as written, every short option of a group too.
_GIT_UNSAFE = {
    "-c": "sets configuration that can run programs",
    "--config-env": "sets configuration that can run programs",
    "--exec-path": "runs git programs from another directory",
    "--paginate": "runs a pager program",
    "-p": "runs a pager program",
}
# after git's subcommand (`-p` there is `--patch`, `-u` is `--unified`…)
_GIT_SUB_UNSAFE = {
    "--output": "writes a file",
    "--ext-diff": "runs an external diff program",
    "--textconv": "runs text conversion programs",
    "--upload-pack": "runs a program",
    "--receive-pack": "runs a program",
    "--exec": "runs a program",
    "--open-files-in-pager": "runs a pager program",
    "--paginate": "runs a pager program",
    "--show-signature": "runs gpg to check signatures",
    "--help": "runs man (or a web browser) to show git's manual",
}
_GIT_SUB_SHORT = {("grep", "-O"): "runs a pager program", ("clone", "-u"): "runs a program",
                  ("fetch", "-u"): "runs a program", ("ls-remote", "-u"): "runs a program",
                  ("pull", "-u"): "runs a program", ("archive", "--remote"): ""}  # fmt: skip
_FIND_UNSAFE = {
    name: "runs a program" if name.startswith(("-exec", "-ok")) else "deletes or writes files"
    for name in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0",
                 "-fprintf", "-fls")
}  # fmt: skip
UNSAFE: dict[str, dict[str, str]] = {
    "git": _GIT_UNSAFE,
    "find": _FIND_UNSAFE,
    "sort": {"-o": "writes a file", "--output": "writes a file",
             "--compress-program": "runs a program"},
    "sed": {"-i": "edits files in place", "--in-place": "edits files in place"},
    "rg": {"--pre": "runs a program", "--hostname-bin": "runs a program",
           "-z": "runs decompression programs", "--search-zip": "runs decompression programs"},
    "tar": {"--to-command": "runs a program", "-I": "runs a program",
            "--use-compress-program": "runs a program", "-F": "runs a program",
            "--info-script": "runs a program", "--new-volume-script": "runs a program",
            "--checkpoint-action": "runs a program"},
    "man": {"-P": "runs a pager program", "--pager": "runs a pager program",
            "-H": "runs a browser", "--html": "runs a browser"},
    "less": {},  # every `+cmd` / `-k` / … : see unsafe_options
    "vim": {"-c": "runs editor commands", "--cmd": "runs editor commands",
            "-S": "runs editor commands"},
    "base64": {"-o": "writes a file", "--output": "writes a file"},
    "diff": {"--to-file": "", "--from-file": ""},
}  # fmt: skip
for _name in ("vi", "nvim", "view", "ex", "gvim"):
    UNSAFE[_name] = UNSAFE["vim"]
for _name in ("gsed",):
    UNSAFE[_name] = UNSAFE["sed"]
del UNSAFE["diff"]

# (compiled on first use, by `re`'s cache: only sed and awk commands need them)
# (an awk program with a pipe anywhere — `print … | cmd`, `cmd | getline`, `|&` — or a `>` after a
# print, even inside a string: a reading of awk's strings would have to be exact; this is generous)
_AWK_RUNS_OR_WRITES = r"system\s*\(|(?<!\|)\|(?!\|)|print[f]?[^}]*>"


def may_be_made_unsafe(name: str) -> bool:
    """Whether a word only known when it runs (`git log $REF`, `xargs find`) could make this
    program run another program or write a file: it has options (or `+command` words, or a
    script) that do."""
    return name in UNSAFE or name in _SCRIPTED


_SCRIPTED = frozenset({"sed", "gsed", "awk", "gawk", "mawk", "nawk", "less", "more", "most"})


def unsafe_options(words: tuple[str, ...]) -> list[tuple[int, str]]:
    """The words of a command (as written) that make it run another program or write a file,
    with why: what an allow rule must name to cover them."""
    name = words[0].rsplit("/", 1)[-1]
    out = _git_unsafe(words) if name == "git" else _program_unsafe(name, words)
    if name in ("sed", "gsed"):
        script = _sed_script(words)
        if script is None or sed_runs_or_writes(script):
            out.append((len(words) - 1, "a sed script that runs commands or writes files"))
    if name in ("awk", "gawk", "mawk", "nawk"):
        if any(
            w in ("-f", "--file", "-E", "--exec", "-i", "--include")
            or w.startswith(("--file=", "--exec=", "--include="))
            for w in words[1:]
        ):
            out.append((len(words) - 1, "an awk program read from a file"))
        elif any(re.search(_AWK_RUNS_OR_WRITES, w) for w in words[1:]):
            out.append((len(words) - 1, "an awk program that runs commands or writes files"))
    return out


def _program_unsafe(name: str, words: tuple[str, ...]) -> list[tuple[int, str]]:
    """The unsafe options of a program other than git (UNSAFE), and its `+command` words."""
    out: list[tuple[int, str]] = []
    table = UNSAFE.get(name)
    ended = False
    for k in range(1, len(words)):
        word = words[k]
        if word == "--" and name != "find":  # find's expression comes after its `--`
            ended = True
        if ended or not word.startswith("-") or word == "-":
            if name in ("less", "more", "most") and word.startswith("+"):
                out.append((k, "runs a pager command"))
            if name in ("vim", "vi", "nvim", "view", "ex") and word.startswith("+"):
                out.append((k, "runs editor commands"))
        elif word.startswith(("--git-dir=", "--work-tree=")):
            if _outside(word.partition("=")[2]):
                out.append((k, "uses a repository outside the working folder"))
        elif table is not None:
            why = _table_says(name, table, word)
            if why is not None:
                out.append((k, why))
    return out


def _git_unsafe(words: tuple[str, ...]) -> list[tuple[int, str]]:
    """git's unsafe options: its own (`-c`, `-p`, a repository outside the working folder, …)
    before the subcommand, the subcommand's after it."""
    out: list[tuple[int, str]] = []
    ended = False
    takes_next = False
    k = 1
    while k < len(words):  # git's own options
        word = words[k]
        k += 1
        if takes_next:
            takes_next = False
            continue
        if word == "--":
            ended = True
        if not word.startswith("-"):
            out.extend(_git_subcommand_unsafe(words, k - 1, ended))
            break
        takes_next = word in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env")
        if ended or word == "-":
            continue
        repository = _repository(word, words, k - 1)
        if repository is not None:
            if _outside(repository):
                out.append((k - 1, "uses a repository outside the working folder"))
        elif word.startswith("-c") and len(word) > 2:
            out.append((k - 1, _GIT_UNSAFE["-c"]))  # `-ccore.pager=…`
        else:
            why = _table_says("git", _GIT_UNSAFE, word)
            if why is not None:
                out.append((k - 1, why))
    return out


def _git_subcommand_unsafe(words: tuple[str, ...], at: int, ended: bool) -> list[tuple[int, str]]:
    """The unsafe options of git's subcommand, words[at]."""
    out: list[tuple[int, str]] = []
    sub = words[at]
    for k in range(at + 1, len(words)):
        word = words[k]
        if word == "--":
            ended = True
        if (sub, word[:2]) in _GIT_SUB_SHORT:
            out.append((k, _GIT_SUB_SHORT[(sub, word[:2])] or "runs a program"))
            continue
        if ended or not word.startswith("-") or word == "-":
            continue
        repository = _repository(word, words, k)
        if repository is not None:
            if _outside(repository):
                out.append((k, "uses a repository outside the working folder"))
            continue
        why = _table_says("git", _GIT_SUB_UNSAFE, word)
        if why is None and word.startswith(("--format", "--pretty")):
            value = word if "=" in word else (words[k + 1] if k + 1 < len(words) else "")
            if re.search(r"%[-+ ]?G", value):  # (`%+G?`, `%-GS`, `% GK` too)
                why = "runs gpg to check signatures (a %G placeholder)"
        if why is not None:
            out.append((k, why))
    return out


def _repository(word: str, words: tuple[str, ...], k: int) -> str | None:
    """The directory git's `-C`, `--git-dir`, `--work-tree` at words[k] names, else None."""
    if word.startswith(("--git-dir=", "--work-tree=")):
        return word.partition("=")[2]
    if word in ("-C", "--git-dir", "--work-tree"):
        return words[k + 1] if k + 1 < len(words) else ""
    return None


def _table_says(name: str, table: dict[str, str], word: str) -> str | None:
    """Why an option (a group of short ones, an abbreviated long one) is unsafe, by the
    program's table; None when it is not."""
    key = word.partition("=")[0]
    if key in table:
        return table[key]
    if not word.startswith("--") and name not in ("find", "git"):
        for letter in word[1:]:
            if "-" + letter in table:
                return table["-" + letter]
    elif word.startswith("--"):  # an abbreviation of an unsafe long option
        stem = key[2:]  # (getopt takes any prefix, one letter too, that names one option)
        if stem and any(t.startswith("--" + stem) for t in table if t.startswith("--")):
            return "may be an option that runs a program or writes a file"
    return None


def _outside(path: str) -> bool:
    """A directory outside the working folder (or only known when it runs)."""
    return not path or path.startswith(("/", "~", "$")) or ".." in path.split("/") or "`" in path


def _sed_script(words: tuple[str, ...]) -> str | None:
    """The script(s) of a sed command, its options read as GNU sed reads them (`-l N` and `-s`
    take no script; `-e`/`--expression` give one; `-f`/`--file` read one from a file: None)."""
    scripts: list[str] = []
    k = 1
    first: str | None = None
    ended = False
    while k < len(words):
        word = words[k]
        if ended or not word.startswith("-") or word == "-":
            if first is None and not scripts:
                first = word
        elif word == "--":
            ended = True
        else:
            got = _sed_option(words, k)
            if got is None:
                return None  # a script from a file, or an option this reading does not know
            k, script = got
            if script is not None:
                scripts.append(script)
        k += 1
    if first is not None and not scripts:
        scripts.append(first)
    return "\n".join(scripts)


def _sed_option(words: tuple[str, ...], k: int) -> tuple[int, str | None] | None:
    """The sed option at words[k]: the index of its last word and the script it gives (None:
    none); None when it reads a script from a file or is not known."""
    word = words[k]
    following = words[k + 1] if k + 1 < len(words) else ""
    if word.startswith("--"):
        given, eq, value = word.partition("=")
        name = _sed_long(given)
        if name is None or name == "--file":
            return None
        if name in ("--expression", "--line-length") and not eq:
            value, k = following, k + 1
        return k, value if name == "--expression" else None
    for n, letter in enumerate(word[1:], 1):
        if letter == "i":  # `-i[SUFFIX]`: the rest of the word is its suffix
            return k, None
        if letter in "efl":  # each takes the rest of the word, or the next word
            value = word[n + 1 :]
            if not value:
                value, k = following, k + 1
            if letter == "f":
                return None
            return k, value if letter == "e" else None
    return k, None


# GNU sed's long options (any unique prefix names one: `--expr=SCRIPT`)
_SED_LONG = ("--expression", "--file", "--line-length", "--null-data", "--zero-terminated",
             "--in-place", "--regexp-extended", "--quiet", "--silent", "--sandbox", "--separate",
             "--unbuffered", "--posix", "--debug", "--follow-symlinks", "--help", "--version",
             "--binary")  # fmt: skip


def _sed_long(name: str) -> str | None:
    """The sed long option `name` names, in full (None: none, or more than one)."""
    if name in _SED_LONG:
        return name
    found = [o for o in _SED_LONG if o.startswith(name)]
    return found[0] if len(found) == 1 else None


def sed_runs_or_writes(script: str) -> bool:
    """Whether a sed script may run a command or write a file — its `e`, `w`, `W` commands,
    `s///e` or `s///w` — read command by command as sed reads it (addresses with their own
    delimiters and flags, `{…}`, `!`, text commands); True for what it cannot read."""
    reader = _SedReader(script)
    try:
        return reader.runs_or_writes()
    except ValueError:  # what it cannot read
        return True


class _SedReader:
    def __init__(self, script: str) -> None:
        self.s = script
        self.k = 0

    def runs_or_writes(self) -> bool:
        s, n = self.s, len(self.s)
        while self.k < n:
            c = s[self.k]
            if c in " \t\n;{}!":
                self.k += 1
            elif c == "#":
                self.to_line_end()
            else:
                self.address()
                if self.k < n and self.command():
                    return True
        return False

    def to_line_end(self) -> None:
        end = self.s.find("\n", self.k)
        self.k = len(self.s) if end < 0 else end

    def regex_end(self, at: int, delim: str, regex: bool = True) -> int:
        """The index just past the delimiter that closes a regex (or a replacement: not `regex`)
        at `at`. In a regex, GNU sed reads a bracket expression whole: a delimiter in it ends
        nothing (`s/[/]/}/e` is `s` with the regex `[/]` and the `e` flag)."""
        s = self.s
        while at < len(s) and s[at] != delim:
            if regex and s[at] == "[":
                at = self.bracket_end(at)
            else:
                at += 2 if s[at] == "\\" else 1
        if at >= len(s):
            raise ValueError("an unclosed regex")
        return at + 1

    def bracket_end(self, at: int) -> int:
        """The index just past the `]` that closes a bracket expression at `at` (a `]` first in
        it, `[:class:]`, `[=c=]`, `[.c.]` are its text; a backslash is a character of its own)."""
        s = self.s
        k = at + 1
        if s[k : k + 1] == "^":
            k += 1
        if s[k : k + 1] == "]":
            k += 1
        while k < len(s) and s[k] != "]":
            if s[k] == "[" and s[k + 1 : k + 2] in (":", "=", "."):
                close = s.find(s[k + 1] + "]", k + 2)
                if close == -1:
                    raise ValueError("an unclosed bracket expression")
                k = close + 2
            else:
                k += 1
        if k >= len(s):
            raise ValueError("an unclosed bracket expression")
        return k + 1

    def address(self) -> None:
        """A line number, `$`, `first~step`, `/re/` or `\\cREc` with I/M flags, a range."""
        s = self.s
        while self.k < len(s) and (s[self.k].isdigit() or s[self.k] in "$~,+/\\IM "):
            if s[self.k] == "/":
                self.k = self.regex_end(self.k + 1, "/")
            elif s[self.k] == "\\":
                if self.k + 1 >= len(s):
                    raise ValueError("a lone backslash")
                self.k = self.regex_end(self.k + 2, s[self.k + 1])
            else:
                self.k += 1

    def command(self) -> bool:
        """Read one command at `k`: whether it runs something or writes a file."""
        s, c = self.s, self.s[self.k]
        if c in "!{ ;\n":
            return False
        if c in "ewW":
            return True
        if c in "aic":  # text to the end of the line (a `\\` continues it)
            while self.k < len(s) and s[self.k] != "\n":
                self.k += 2 if s[self.k] == "\\" else 1
        elif c in "rR":  # a file read: its name runs to the end of the line
            self.to_line_end()
        elif c in "btTv:":  # a label (or `v`'s version), after blanks: GNU sed 4.9 ends it at a
            self.k += 1  # blank, `;` or a newline (`:x e id` is `:x` then `e id`), `}` or `#`
            while self.k < len(s) and s[self.k] in " \t":
                self.k += 1
            while self.k < len(s) and s[self.k] not in " \t;\n}#":
                self.k += 1
        elif c in "sy":
            return self.substitution(c)
        elif c in "=dDgGhHlnNpPqQxzF":
            self.k += 1
        else:
            raise ValueError(f"a command {c!r} this reading does not know")
        return False

    def substitution(self, c: str) -> bool:
        """`s/re/replacement/flags` (`e` runs the pattern space, `w FILE` writes) or `y/…/…/`."""
        s = self.s
        if self.k + 1 >= len(s) or s[self.k + 1] in "\\\n":
            raise ValueError("a substitution without a delimiter")
        delim = s[self.k + 1]
        self.k = self.regex_end(self.regex_end(self.k + 2, delim, c == "s"), delim, False)
        if c == "y":
            return False
        start = self.k
        while self.k < len(s) and s[self.k] not in ";\n}":
            if s[self.k] in "ew":
                return True
            self.k += 1
        if s[start : self.k].strip(" gpiImM0123456789"):
            raise ValueError("a flag this reading does not know")
        return False


# Variables a command may be given without a rule naming them: they only choose a language, a
# time zone, colours or a terminal size (and `LC_*`). Every other assignment (`GIT_PAGER`,
# `LD_PRELOAD`, `PATH`, `BASH_ENV`, …) can make a harmless program run something else.
INERT_VARIABLES = frozenset(
    {"LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
     "COLUMNS", "LINES", "TERM"}
)  # fmt: skip
