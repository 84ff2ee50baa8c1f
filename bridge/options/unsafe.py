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
_SED_RUNS_OR_WRITES = r"(?:^|[;\n{}!]|[0-9$/])\s*[ewW](?:\s|$)|s(.).*?\1.*?\1[gpiImM0-9]*[ew]"
_AWK_RUNS_OR_WRITES = r"system\s*\(|\|\s*(?:getline|&)|\|\s*\"|print[f]?[^;}]*[>|]"


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
        if script is None or re.search(_SED_RUNS_OR_WRITES, script, re.DOTALL):
            out.append((len(words) - 1, "a sed script that runs commands or writes files"))
    if name in ("awk", "gawk", "mawk", "nawk"):
        if any(re.search(_AWK_RUNS_OR_WRITES, w) for w in words[1:]):
            out.append((len(words) - 1, "an awk program that runs commands or writes files"))
    return out


def _program_unsafe(name: str, words: tuple[str, ...]) -> list[tuple[int, str]]:
    """The unsafe options of a program other than git (UNSAFE), and its `+command` words."""
    out: list[tuple[int, str]] = []
    table = UNSAFE.get(name)
    ended = False
    for k in range(1, len(words)):
        word = words[k]
        if word == "--":
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
        stem = key[2:]
        if len(stem) >= 2 and any(t.startswith("--" + stem) for t in table if t.startswith("--")):
            return "may be an option that runs a program or writes a file"
    return None


def _outside(path: str) -> bool:
    """A directory outside the working folder (or only known when it runs)."""
    return not path or path.startswith(("/", "~", "$")) or ".." in path.split("/") or "`" in path


def _sed_script(words: tuple[str, ...]) -> str | None:
    """The script(s) of a sed command; None when it reads them from a file."""
    scripts: list[str] = []
    k = 1
    first: str | None = None
    while k < len(words):
        word = words[k]
        if word in ("-e", "--expression") and k + 1 < len(words):
            scripts.append(words[k + 1])
            k += 2
            continue
        if word.startswith("--expression="):
            scripts.append(word.partition("=")[2])
        elif word in ("-f", "--file") or word.startswith("--file="):
            return None
        elif word.startswith("-") and not word.startswith("--") and len(word) > 1:
            body = word[1:]
            if "f" in body:
                return None
            if "e" in body:
                rest = body[body.index("e") + 1 :]
                if rest:
                    scripts.append(rest)
                elif k + 1 < len(words):
                    scripts.append(words[k + 1])
                    k += 1
        elif not word.startswith("-") and first is None and not scripts:
            first = word
        k += 1
    if first is not None and not scripts:
        scripts.append(first)
    return "\n".join(scripts)


# Variables a command may be given without a rule naming them: they only choose a language, a
# time zone, colours or a terminal size (and `LC_*`). Every other assignment (`GIT_PAGER`,
# `LD_PRELOAD`, `PATH`, `BASH_ENV`, …) can make a harmless program run something else.
INERT_VARIABLES = frozenset(
    {"LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
     "COLUMNS", "LINES", "TERM"}
)  # fmt: skip
