"""The table of programs: each one's options (short, long, which take a value, which imply others),
subcommands and aliases, and the other names a program goes by. Data, read by `spelling`.

Each program's table is built the first time it is looked up (`_Table`): a hook process is a new
process for every tool call, and one spelling `git status` needs git's table, not docker's or
kubectl's."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache

from bridge.record import Frozen


class Program(Frozen):
    """One program's options. `short`: getopt letters (`k:` takes an argument). `long`: long
    name → its canonical short letter, or "" when it has none (a name ending in `=` takes an
    argument). `implies`: an option → the options it also means (`-D` → `-d -f`). `dash_long`:
    options are whole words with one or two dashes (`find -delete`, Go's `-auto-approve`), never
    grouped. `operands`: `name=value` words are options too, in any order (`dd of=/dev/sda`).
    `subcommands`: the first word that is not an option picks the table for the words after it.
    `aliases`: word sequences that name the same subcommand (`container rm` is `rm`). `words`:
    other words with another spelling (`kubectl delete ns` is `namespace`)."""

    __slots__ = _fields = (
        "short",
        "long",
        "implies",
        "dash_long",
        "operands",
        "subcommands",
        "aliases",
        "words",
    )

    def __init__(
        self,
        short: str = "",
        long: dict[str, tuple[str, int]] | None = None,
        implies: dict[str, tuple[str, ...]] | None = None,
        dash_long: bool = False,
        operands: bool = False,
        subcommands: dict[str, Program] | None = None,
        aliases: dict[tuple[str, ...], tuple[str, ...]] | None = None,
        words: dict[str, str] | None = None,
    ) -> None:
        self.short = short
        self.long: dict[str, tuple[str, int]] = {} if long is None else long
        self.implies: dict[str, tuple[str, ...]] = {} if implies is None else implies
        self.dash_long = dash_long
        self.operands = operands
        self.subcommands: dict[str, Program] = {} if subcommands is None else subcommands
        self.aliases: dict[tuple[str, ...], tuple[str, ...]] = {} if aliases is None else aliases
        self.words: dict[str, str] = {} if words is None else words

    def takes(self) -> dict[str, bool]:
        return _short_table(self.short)


@lru_cache(maxsize=256)
def _short_table(short: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for k, letter in enumerate(short):
        if letter != ":":
            out[letter] = k + 1 < len(short) and short[k + 1] == ":"
    return out


class _Table(Mapping[str, Program]):
    """`PROGRAMS`: name → `Program`, each built by its function with its first look-up (and
    kept: the names that share a function share its table)."""

    def __init__(self, build: dict[str, Callable[[], Program]]) -> None:
        self._build = build
        self._built: dict[Callable[[], Program], Program] = {}

    def __getitem__(self, name: str) -> Program:
        build = self._build[name]
        program = self._built.get(build)
        if program is None:
            program = self._built[build] = build()
        return program

    def get(self, name: str, default: Program | None = None) -> Program | None:  # type: ignore[override]
        return self[name] if name in self._build else default

    def __contains__(self, name: object) -> bool:
        return name in self._build

    def __iter__(self) -> Iterator[str]:
        return iter(self._build)

    def __len__(self) -> int:
        return len(self._build)


def _longs(text: str) -> dict[str, tuple[str, int]]:
    """`"recursive:r force:f output=:o color=="` → {name: (canonical short or "", 0 no argument |
    1 an argument | 2 an optional one, attached with `=`)}."""
    out = {}
    for item in text.split():
        spelled, _, short = item.partition(":")
        name = spelled.rstrip("=")
        out[name] = (short, len(spelled) - len(name))
    return out


def _git_push() -> Program:
    return Program(
        short="fdnqvuo:",
        long=_longs(
            "force:f delete:d dry-run:n quiet:q verbose:v set-upstream:u push-option=:o "
            "force-with-lease== force-if-includes mirror all tags prune follow-tags no-verify "
            "atomic receive-pack= exec= repo= signed=="
        ),
        # `--mirror` force-updates and deletes the remote's refs to match the local ones
        implies={"mirror": ("f", "d")},
    )


def _git() -> Program:
    push = _git_push()
    return Program(
        short="C:c:pPvh",
        long=_longs(
            "git-dir= work-tree= namespace= exec-path== no-pager paginate:p bare config-env= "
            "super-prefix= literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs "
            "no-replace-objects no-optional-locks list-cmds= version:v help:h"
        ),
        subcommands={
            "push": push,
            "send-pack": push,  # the plumbing `git push` runs: the same refs, the same force
            "reset": Program(
                short="qpN", long=_longs("hard soft mixed keep merge quiet:q patch:p")
            ),
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
                long=_longs(
                    "delete:d force:f annotate:a list:l verify:v sign:s message=:m file=:F"
                ),
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
        aliases={("send-pack",): ("push",)},
    )


def _rm() -> Program:
    return Program(
        short="fiIrRdv",
        long=_longs(
            "force:f interactive== recursive:r dir:d verbose:v no-preserve-root preserve-root== "
            "one-file-system"
        ),
        implies={"R": ("r",)},
    )


def _chmod() -> Program:
    return Program(
        short="cfvR",
        long=_longs("changes:c silent:f quiet:f verbose:v recursive:R reference= preserve-root"),
    )


def _chown() -> Program:
    return Program(
        short="cfvhHLPR",
        long=_longs(
            "changes:c silent:f quiet:f verbose:v no-dereference:h dereference recursive:R from= "
            "reference= preserve-root"
        ),
    )


def _cp() -> Program:
    return Program(
        short="abdfHilLnpPrRsStTuvxZ",
        long=_longs(
            "archive:a backup==:b force:f interactive:i link:l dereference:L no-clobber:n "
            "no-dereference:P recursive:r parents symbolic-link:s suffix=:S target-directory=:t "
            "no-target-directory:T update==:u verbose:v one-file-system:x preserve== remove-destination"
        ),
        implies={"R": ("r",), "a": ("r", "d", "p")},
    )


def _mv() -> Program:
    return Program(
        short="bfinS:t:TuvZ",
        long=_longs(
            "backup==:b force:f interactive:i no-clobber:n suffix=:S target-directory=:t "
            "no-target-directory:T update==:u verbose:v"
        ),
    )


def _find() -> Program:
    return Program(dash_long=True)


def _curl() -> Program:
    return Program(
        short="X:d:o:OT:F:H:u:K:kLsSfvIiGe:A:x:",
        long=_longs(
            "request=:X data=:d data-binary= data-raw= data-urlencode= output=:o remote-name:O "
            "upload-file=:T form=:F header=:H user=:u config=:K insecure:k location:L silent:s "
            "show-error:S fail:f verbose:v head:I include:i get:G referer=:e user-agent=:A "
            "proxy=:x json="
        ),
    )


def _wget() -> Program:
    return Program(
        short="O:o:a:rmkpNc:qvi:e:P:",
        long=_longs(
            "output-document=:O output-file=:o append-output=:a recursive:r mirror:m "
            "convert-links:k page-requisites:p timestamping:N quiet:q verbose:v input-file=:i "
            "execute=:e directory-prefix=:P post-data= post-file= method= body-data= "
            "delete-after no-check-certificate"
        ),
    )


def _dd() -> Program:
    return Program(operands=True)


def _mkfs() -> Program:
    return Program(short="t:V", long=_longs("type=:t verbose:V"))


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


def _kubectl() -> Program:
    return Program(
        short="n:Af:l:o:R",
        long=_longs(
            "namespace=:n all-namespaces:A filename=:f selector=:l output=:o recursive:R context= "
            "cluster= user= kubeconfig= server= token= all force grace-period= now cascade== "
            "wait== dry-run== field-selector="
        ),
        words=_KUBE_RESOURCES,
    )


def _docker() -> Program:
    return Program(
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


def _terraform() -> Program:
    return Program(dash_long=True)


# name → the function building its table (`_Table`)
PROGRAMS = _Table(
    {
        "rm": _rm,
        "git": _git,
        "chmod": _chmod,
        "chown": _chown,
        "chgrp": _chown,
        "cp": _cp,
        "mv": _mv,
        "find": _find,
        "curl": _curl,
        "wget": _wget,
        "dd": _dd,
        "mkfs": _mkfs,
        "kubectl": _kubectl,
        "docker": _docker,
        "terraform": _terraform,
    }
)

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
    if base.startswith("git-") and len(base) > 4:  # `git-push`: git's own program for `git push`
        return "git", ()
    return SAME_PROGRAM.get(base, base), ()
