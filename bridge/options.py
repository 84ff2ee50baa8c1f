"""How a command spells its options: the table deny rules read commands with.

A deny (or ask) rule with options — `deny rm -rf` — must stop every spelling the shell gives the
same options: grouped or split short options (`-rf`, `-r -f`, `-fr`), their long forms
(`--recursive --force`, GNU and git abbreviations such as `--recur`), and the program's own
equivalents (`rm -R` is `rm -r`; `git branch -D` is `--delete --force`; `cp -a` implies `-R`).
`read` turns a command's words into a `Spelling`: the program (its equivalents folded: `mkfs.ext4`
is `mkfs -t ext4`, `podman` is `docker`, `tofu` is `terraform`), its words with every option
written one canonical way, and the set of options with their values. The rule's own words are read
the same way, so both sides compare in one spelling.

`PROGRAMS` is the table (see docs/rules.md). A program not in it still has its short options
split (`-rf` is `-r` and `-f`, in any order), which may read an option's argument as more letters
— harmless for a deny rule, which only becomes more generous.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache


@dataclass(frozen=True)
class Program:
    """One program's options. `short`: getopt letters (`k:` takes an argument). `long`: long
    name → its canonical short letter, or "" when it has none (a name ending in `=` takes an
    argument). `implies`: an option → the options it also means (`-D` → `-d -f`). `dash_long`:
    options are whole words with one or two dashes (`find -delete`, Go's `-auto-approve`), never
    grouped. `operands`: `name=value` words are options too, in any order (`dd of=/dev/sda`).
    `subcommands`: the first word that is not an option picks the table for the words after it.
    `aliases`: word sequences that name the same subcommand (`container rm` is `rm`). `words`:
    other words with another spelling (`kubectl delete ns` is `namespace`)."""

    short: str = ""
    long: dict[str, tuple[str, int]] = field(default_factory=dict)
    implies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    dash_long: bool = False
    operands: bool = False
    subcommands: dict[str, Program] = field(default_factory=dict)
    aliases: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    words: dict[str, str] = field(default_factory=dict)

    def takes(self) -> dict[str, bool]:
        return _short_table(self.short)


@lru_cache(maxsize=256)
def _short_table(short: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for k, letter in enumerate(short):
        if letter != ":":
            out[letter] = k + 1 < len(short) and short[k + 1] == ":"
    return out


def _longs(text: str) -> dict[str, tuple[str, int]]:
    """`"recursive:r force:f output=:o color=="` → {name: (canonical short or "", 0 no argument |
    1 an argument | 2 an optional one, attached with `=`)}."""
    out = {}
    for item in text.split():
        spelled, _, short = item.partition(":")
        name = spelled.rstrip("=")
        out[name] = (short, len(spelled) - len(name))
    return out


_GIT_PUSH = Program(
    short="fdnqvuo:",
    long=_longs(
        "force:f delete:d dry-run:n quiet:q verbose:v set-upstream:u push-option=:o "
        "force-with-lease== force-if-includes mirror all tags prune follow-tags no-verify "
        "atomic receive-pack= exec= repo= signed=="
    ),
)
_GIT = Program(
    short="C:c:pPvh",
    long=_longs(
        "git-dir= work-tree= namespace= exec-path== no-pager paginate:p bare config-env= "
        "super-prefix= literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs "
        "no-replace-objects no-optional-locks list-cmds= version:v help:h"
    ),
    subcommands={
        "push": _GIT_PUSH,
        "reset": Program(short="qpN", long=_longs("hard soft mixed keep merge quiet:q patch:p")),
        "clean": Program(
            short="fdxXnqie:",
            long=_longs("force:f dry-run:n quiet:q interactive:i exclude=:e"),
        ),
        "branch": Program(
            short="dDfmMcCrarlvtu:",
            long=_longs(
                "delete:d force:f move:m copy:c remotes:r all:a list:l verbose:v track== "
                "set-upstream-to=:u unset-upstream"
            ),
            implies={"D": ("d", "f"), "M": ("m", "f"), "C": ("c", "f")},
        ),
        "tag": Program(
            short="dfalvsam:F:u:",
            long=_longs("delete:d force:f annotate:a list:l verify:v sign:s message=:m file=:F"),
        ),
        "checkout": Program(
            short="fqb:B:mpt",
            long=_longs("force:f quiet:q merge:m patch:p track== orphan= detach ours theirs"),
            implies={"B": ("b", "f")},
        ),
        "switch": Program(
            short="c:C:dfmqt",
            long=_longs("create=:c force-create=:C detach:d force:f discard-changes merge:m"),
            implies={"C": ("c", "f")},
        ),
        "commit": Program(
            short="am:F:nqvse",
            long=_longs(
                "all:a message=:m file=:F no-verify:n quiet:q verbose:v signoff:s edit:e amend "
                "allow-empty fixup= squash="
            ),
        ),
        "rm": Program(short="frnq", long=_longs("force:f dry-run:n quiet:q cached")),
        "stash": Program(short="q", long=_longs("quiet:q")),
        "rebase": Program(short="i", long=_longs("interactive:i exec= onto= root")),
        "restore": Program(short="s:SW", long=_longs("source=:s staged:S worktree:W")),
        "gc": Program(long=_longs("prune== aggressive auto")),
        "fetch": Program(short="fpu:", long=_longs("force:f prune:p upload-pack=:u all")),
        "pull": Program(short="fr", long=_longs("force:f rebase==:r")),
        "clone": Program(short="u:", long=_longs("upload-pack=:u mirror bare")),
    },
)
_RM = Program(
    short="fiIrRdv",
    long=_longs(
        "force:f interactive== recursive:r dir:d verbose:v no-preserve-root preserve-root== "
        "one-file-system"
    ),
    implies={"R": ("r",)},
)
_CHMOD = Program(
    short="cfvR",
    long=_longs("changes:c silent:f quiet:f verbose:v recursive:R reference= preserve-root"),
)
_CHOWN = Program(
    short="cfvhHLPR",
    long=_longs(
        "changes:c silent:f quiet:f verbose:v no-dereference:h dereference recursive:R from= "
        "reference= preserve-root"
    ),
)
_CP = Program(
    short="abdfHilLnpPrRsStTuvxZ",
    long=_longs(
        "archive:a backup==:b force:f interactive:i link:l dereference:L no-clobber:n "
        "no-dereference:P recursive:r parents symbolic-link:s suffix=:S target-directory=:t "
        "no-target-directory:T update==:u verbose:v one-file-system:x preserve== remove-destination"
    ),
    implies={"R": ("r",), "a": ("r", "d", "p")},
)
_MV = Program(
    short="bfinS:t:TuvZ",
    long=_longs(
        "backup==:b force:f interactive:i no-clobber:n suffix=:S target-directory=:t "
        "no-target-directory:T update==:u verbose:v"
    ),
)
_FIND = Program(dash_long=True)
_CURL = Program(
    short="X:d:o:OT:F:H:u:K:kLsSfvIiGe:A:x:",
    long=_longs(
        "request=:X data=:d data-binary= data-raw= data-urlencode= output=:o remote-name:O "
        "upload-file=:T form=:F header=:H user=:u config=:K insecure:k location:L silent:s "
        "show-error:S fail:f verbose:v head:I include:i get:G referer=:e user-agent=:A "
        "proxy=:x json="
    ),
)
_WGET = Program(
    short="O:o:a:rmkpNc:qvi:e:P:",
    long=_longs(
        "output-document=:O output-file=:o append-output=:a recursive:r mirror:m "
        "convert-links:k page-requisites:p timestamping:N quiet:q verbose:v input-file=:i "
        "execute=:e directory-prefix=:P post-data= post-file= method= body-data= "
        "delete-after no-check-certificate"
    ),
)
_DD = Program(operands=True)
_MKFS = Program(short="t:V", long=_longs("type=:t verbose:V"))
_KUBE_RESOURCES = {
    "ns": "namespace", "namespaces": "namespace", "po": "pod", "pods": "pod",
    "deploy": "deployment", "deployments": "deployment", "svc": "service", "services": "service",
    "sts": "statefulset", "statefulsets": "statefulset", "ds": "daemonset",
    "daemonsets": "daemonset", "cm": "configmap", "configmaps": "configmap", "secrets": "secret",
    "no": "node", "nodes": "node", "pv": "persistentvolume", "persistentvolumes": "persistentvolume",
    "pvc": "persistentvolumeclaim", "persistentvolumeclaims": "persistentvolumeclaim",
    "crd": "customresourcedefinition", "crds": "customresourcedefinition",
    "customresourcedefinitions": "customresourcedefinition", "rs": "replicaset",
    "replicasets": "replicaset", "jobs": "job", "cj": "cronjob", "cronjobs": "cronjob",
    "ing": "ingress", "ingresses": "ingress", "sa": "serviceaccount",
    "serviceaccounts": "serviceaccount",
}  # fmt: skip
_KUBECTL = Program(
    short="n:Af:l:o:R",
    long=_longs(
        "namespace=:n all-namespaces:A filename=:f selector=:l output=:o recursive:R context= "
        "cluster= user= kubeconfig= server= token= all force grace-period= now cascade== "
        "wait== dry-run== field-selector="
    ),
    words=_KUBE_RESOURCES,
)
_DOCKER = Program(
    short="H:c:D",
    long=_longs("host=:H context=:c debug:D config= log-level="),
    subcommands={
        name: Program(
            short="favtqs:pe:u:w:idP",
            long=_longs(
                "force:f all:a volumes:v time=:t quiet:q signal=:s privileged publish=:p "
                "env=:e user=:u workdir=:w interactive:i tty:t detach:d rm filter= "
                "volume= network= pid= mount= cap-add="
            ),
        )
        for name in (
            "rm",
            "rmi",
            "kill",
            "stop",
            "run",
            "exec",
            "system",
            "volume",
            "network",
            "image",
            "container",
            "prune",
            "compose",
            "builder",
        )
    },
    aliases={
        ("container", "rm"): ("rm",),
        ("container", "remove"): ("rm",),
        ("container", "kill"): ("kill",),
        ("container", "stop"): ("stop",),
        ("container", "run"): ("run",),
        ("container", "exec"): ("exec",),
        ("container", "prune"): ("container", "prune"),
        ("image", "rm"): ("rmi",),
        ("image", "remove"): ("rmi",),
        ("volume", "remove"): ("volume", "rm"),
        ("network", "remove"): ("network", "rm"),
    },
)
_TERRAFORM = Program(dash_long=True)

PROGRAMS: dict[str, Program] = {
    "rm": _RM,
    "git": _GIT,
    "chmod": _CHMOD,
    "chown": _CHOWN,
    "chgrp": _CHOWN,
    "cp": _CP,
    "mv": _MV,
    "find": _FIND,
    "curl": _CURL,
    "wget": _WGET,
    "dd": _DD,
    "mkfs": _MKFS,
    "kubectl": _KUBECTL,
    "docker": _DOCKER,
    "terraform": _TERRAFORM,
}

# other names of a program: the name a deny rule is written with stops them too
SAME_PROGRAM: dict[str, str] = {
    "podman": "docker",
    "nerdctl": "docker",
    "tofu": "terraform",
    "mke2fs": "mkfs",
    "oc": "kubectl",
    "gfind": "find",
    "grm": "rm",
}


def program_name(word: str) -> tuple[str, tuple[str, ...]]:
    """A command's first word as the table knows it (basename, equivalents folded), with the
    options its name stands for (`mkfs.ext4` → `mkfs`, `-t=ext4`)."""
    base = word.rsplit("/", 1)[-1]
    if base.startswith("mkfs.") and len(base) > 5:
        return "mkfs", (f"-t={base[5:]}",)
    return SAME_PROGRAM.get(base, base), ()


@dataclass(frozen=True)
class Spelling:
    """A command's words in one spelling. `words`: the program, then every word with options
    written canonically (`-r`, `-f`, `--force-with-lease`, `-X=DELETE`); a value given as the next
    word stays a word of its own (it may also be read as an argument). `unknown`: the indexes of
    `words` only known when it runs. `options`: canonical option → the values it was given (None
    for none). `ended`: the index of `--` in `words`, or len(words)."""

    words: tuple[str, ...]
    unknown: frozenset[int]
    options: dict[str, tuple[str | None, ...]]
    ended: int
    values: frozenset[int] = frozenset()  # indexes of words that are an option's value
    expanded: frozenset[str] = frozenset()  # options that stand for others (`-D`: `-d -f`)

    def required(self) -> dict[str, tuple[str | None, ...]]:
        """What a rule written this way asks for: its options, those that stand for others
        replaced by them."""
        return {k: v for k, v in self.options.items() if k not in self.expanded}


def read(words: tuple[str, ...], unknown: frozenset[int] = frozenset()) -> Spelling:
    """Read a command's words with the table (see the module docstring)."""
    name, implied = program_name(words[0])
    spec = PROGRAMS.get(name)
    out: list[str] = [name]
    dyn: set[int] = set()
    values: set[int] = set()
    expanded: set[str] = set()
    options: dict[str, list[str | None]] = {}

    def add(option: str, value: str | None, *, attach: bool) -> None:
        options.setdefault(option, []).append(value)
        more = spec.implies.get(option.lstrip("-"), ()) if spec else ()
        if more:
            expanded.add(option)
        for other in more:
            options.setdefault("-" + other, []).append(None)
        out.append(f"{option}={value}" if attach and value is not None else option)

    for option in implied:
        key, _, value = option.partition("=")
        add(key, value, attach=True)
    ended = None
    positionals = 0
    value_next = False
    k = 1
    while k < len(words):
        word = words[k]
        if k in unknown or value_next:
            if k in unknown:
                dyn.add(len(out))
            if value_next:
                values.add(len(out))
            out.append(word)
            value_next = False
            k += 1
            continue
        if ended is None and word == "--":
            ended = len(out)
            out.append(word)
            k += 1
            continue
        if ended is not None or not word.startswith("-") or word == "-":
            if spec is not None and spec.operands and "=" in word and ended is None:
                key, _, value = word.partition("=")
                add("--" + key, value, attach=True)
                k += 1
                continue
            if spec is not None and ended is None and positionals == 0 and word in spec.subcommands:
                rest = tuple(words[k : k + 3])
                sub = word
                for alias, canonical in spec.aliases.items():
                    if rest[: len(alias)] == alias:
                        out.extend(canonical)
                        k += len(alias)
                        sub = canonical[0]
                        break
                else:
                    out.append(word)
                    k += 1
                spec = spec.subcommands.get(sub, spec)
                positionals += 1
                continue
            if name == "chmod" and word.isdigit():  # `0777` is `777`
                word = word.lstrip("0") or "0"
            if spec is not None and spec.words:
                for piece in word.split("/", 1) if "/" in word else (word,):
                    out.append(spec.words.get(piece, piece))
            else:
                out.append(word)
            positionals += 1
            k += 1
            continue
        value_next = _option(spec, words, k, unknown, add)
        k += 1
    if name == "git" and "push" in out:
        for word in out[2:]:  # `+main` force-pushes, `:main` deletes
            if word[:1] == "+" and len(word) > 1:
                add("-f", None, attach=False)
                out.pop()
            elif word[:1] == ":" and len(word) > 1:
                add("-d", None, attach=False)
                out.pop()
    if name == "terraform" and "apply" in out and "--destroy" in options:
        out[out.index("apply")] = "destroy"
    return Spelling(
        tuple(out),
        frozenset(dyn),
        {key: tuple(v) for key, v in options.items()},
        len(out) if ended is None else ended,
        frozenset(values),
        frozenset(expanded),
    )


def _option(
    spec: Program | None,
    words: tuple[str, ...],
    k: int,
    unknown: frozenset[int],
    add: Callable[..., None],
) -> bool:
    """Read the option at words[k], calling `add(option, value, attach=…)` for each option it
    holds; whether it takes the next word as its value."""
    word = words[k]
    nxt = words[k + 1] if k + 1 < len(words) else None
    if (spec is not None and spec.dash_long) or word.startswith("--"):
        name, eq, value = word.lstrip("-").partition("=")
        longs = spec.long if spec is not None else {}
        if name in longs:
            matches = [name]
        else:  # GNU and git accept an unambiguous abbreviation; more than one: the program errs
            matches = [n for n in longs if n.startswith(name)] if len(name) >= 2 else []
        if not matches:
            add("--" + name, value if eq else None, attach=bool(eq))
            return False
        used = False
        for match in matches:
            short, takes = longs[match]
            canonical = "-" + short if short else "--" + match
            if eq:
                add(canonical, value, attach=True)
            elif takes == 1 and nxt is not None:
                add(canonical, None if k + 1 in unknown else nxt, attach=False)
                used = True
            else:
                add(canonical, None, attach=False)
        return used and len(matches) == 1
    takes_arg = spec.takes() if spec is not None else {}
    j = 1
    while j < len(word):
        letter = word[j]
        if takes_arg.get(letter):
            value = word[j + 1 :]
            if value:
                add("-" + letter, value, attach=True)
                return False
            add("-" + letter, None if k + 1 in unknown else nxt, attach=False)
            return nxt is not None
        add("-" + letter, None, attach=False)
        j += 1
    return False


# --- options an allow rule must name ---------------------------------------------------------------

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

_SED_RUNS_OR_WRITES = re.compile(
    r"(?:^|[;\n{}!]|[0-9$/])\s*[ewW](?:\s|$)|s(.).*?\1.*?\1[gpiImM0-9]*[ew]", re.DOTALL
)
_AWK_RUNS_OR_WRITES = re.compile(r"system\s*\(|\|\s*(?:getline|&)|\|\s*\"|print[f]?[^;}]*[>|]")


def unsafe_options(words: tuple[str, ...]) -> list[tuple[int, str]]:
    """The words of a command (as written) that make it run another program or write a file,
    with why: what an allow rule must name to cover them."""
    name = words[0].rsplit("/", 1)[-1]
    out: list[tuple[int, str]] = []
    table = UNSAFE.get(name)
    ended = False
    sub: str | None = None
    takes_next = False
    for k in range(1, len(words)):
        word = words[k]
        if takes_next:
            takes_next = False
            continue
        if word == "--":
            ended = True
        if name == "git" and sub is None and not word.startswith("-"):
            sub = word
            table = _GIT_SUB_UNSAFE
            continue
        if (
            name == "git"
            and sub is None
            and word in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env")
        ):
            takes_next = True
        if name == "git" and sub is not None and (sub, word[:2]) in _GIT_SUB_SHORT:
            out.append((k, _GIT_SUB_SHORT[(sub, word[:2])] or "runs a program"))
            continue
        if ended or not word.startswith("-") or word == "-":
            if name in ("less", "more", "most") and word.startswith("+"):
                out.append((k, "runs a pager command"))
            if name in ("vim", "vi", "nvim", "view", "ex") and word.startswith("+"):
                out.append((k, "runs editor commands"))
            continue
        if (name == "git" and word in ("-C", "--git-dir", "--work-tree")) or word.startswith(
            ("--git-dir=", "--work-tree=")
        ):
            value = (
                word.partition("=")[2]
                if "=" in word
                else (words[k + 1] if k + 1 < len(words) else "")
            )
            if _outside(value):
                out.append((k, "uses a repository outside the working folder"))
            continue
        if name == "git" and sub is None and word.startswith("-c") and len(word) > 2:
            out.append((k, _GIT_UNSAFE["-c"]))  # `-ccore.pager=…`
            continue
        if table is None:
            continue
        key = word.partition("=")[0]
        if key in table:
            out.append((k, table[key]))
            continue
        if not word.startswith("--") and name not in ("find", "git"):
            for letter in word[1:]:
                if "-" + letter in table:
                    out.append((k, table["-" + letter]))
                    break
        elif word.startswith("--"):  # an abbreviation of an unsafe long option
            stem = key[2:]
            if len(stem) >= 2 and any(
                t.startswith("--" + stem) for t in table if t.startswith("--")
            ):
                out.append((k, "may be an option that runs a program or writes a file"))
    if name in ("sed", "gsed"):
        script = _sed_script(words)
        if script is None or _SED_RUNS_OR_WRITES.search(script):
            out.append((len(words) - 1, "a sed script that runs commands or writes files"))
    if name in ("awk", "gawk", "mawk", "nawk"):
        if any(_AWK_RUNS_OR_WRITES.search(w) for w in words[1:]):
            out.append((len(words) - 1, "an awk program that runs commands or writes files"))
    return out


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
