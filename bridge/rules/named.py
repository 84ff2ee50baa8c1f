"""The paths a shell command's words name, for deny path rules: `~`, `$HOME`, braces and globs
expanded, relative to the cwd and every directory it changes to. Loaded with the first command a
deny path rule looks at."""

from __future__ import annotations

import glob
import itertools
import os
import re
import stat

from bridge.record import Frozen
from bridge.rules.bounds import MAX_BRACES, MAX_EXPANSIONS, MAX_GLOB_LEVELS
from bridge.rules.paths import _PROC, resolve_path
from bridge.shell import GLOB_CHARS as _GLOB_CHARS
from bridge.shell import ParsedCommand, Part

TYPE_CHECKING = False  # (as in bridge.rules.request: no `typing` on a hook's start-up)
if TYPE_CHECKING:
    from bridge.rules.links import LinkWalks


class NamedPaths(Frozen):
    """What a shell command's words name, for deny path rules: `real`, the real paths its words
    name (`~`, `$HOME`, `{a,b}` braces and globs expanded; relative ones against the session's
    cwd and every directory it changes to); `maybe`, real paths named inside longer words (a
    script's text: `python -c "open('/x/y')"`) or in a command that cannot be parsed; `parts`,
    the path components of words only known when it runs (`$DIR/.ssh/id`) and of such longer
    words; `cwd`, the session's directory when known; `too_many`, a glob matched more files than
    are looked at; `starts`, the real paths a word only known when it runs starts with (`/tmp/`
    of `/tmp/${d}t10/key`) and, in such a command, those its other words name (`/tmp/secre` of
    `d=/tmp/secre`): the path it names may be any that begins with one of them."""

    __slots__ = _fields = ("real", "maybe", "parts", "cwd", "too_many", "starts")

    def __init__(
        self,
        real: frozenset[str] = frozenset(),
        maybe: frozenset[str] = frozenset(),
        parts: frozenset[str] = frozenset(),
        cwd: str | None = None,
        too_many: bool = False,
        starts: frozenset[str] = frozenset(),
    ) -> None:
        self.real = real
        self.maybe = maybe
        self.parts = parts
        self.cwd = cwd
        self.too_many = too_many
        self.starts = starts


_TOKEN_SPLIT = re.compile(r"""[\s'"()=:,;<>|&`]+""")
_HOME_VAR = re.compile(r"\$\{HOME\}|\$HOME(?![A-Za-z0-9_])")


def named_paths(parsed: ParsedCommand, raw: str | None, cwd: str | None) -> NamedPaths:
    home = os.path.expanduser("~")
    start = resolve_path(cwd) if cwd else os.getcwd()
    names = _Names(home, _bases(start, parsed.dirs, home))
    for text, dynamic in parsed.words:
        if text:
            names.word(text, dynamic)
    # the names of the files it reads, in a file (`sort --files0-from=F`, `tar -T F`), or given
    # by xargs from its input (`… | xargs cat`, `xargs -I{} cat /tmp/{}/key`), or a `~` after the
    # command set HOME (`HOME=/tmp; cat ~/x`), or after `cd -` (`cd ~-`, `popd`) or a `cd` to a
    # folder only known when it runs (`cd $DIR`): any folder
    names.too_many = (
        names.too_many
        or any(p.open_args or _names_from_file(p.words) for p in parsed.parts)
        or _home_moved(parsed)
        or any(re.match(r"~(?:-|[-+]?\d+)(?:/|$)", d) for d in parsed.dirs)
        or any(_expand_words(d, home) is None for d in parsed.dirs)  # `cd $DIR`: any folder
    )
    if any(dynamic for _, dynamic in parsed.words):
        # a variable the command assigns, or what a `$(…)` prints, may fill in a word only known
        # when it runs (`x=.ssh; cat ~/$x/id`): the names its other words hold count too, and so
        # does the start of each word, as a path that may go on (`d=secre; cat /tmp/${d}t10/k`)
        unknown = any(d and _expand_words(t, home) is None for t, d in parsed.words)
        for text, dynamic in parsed.words:
            if not dynamic:
                names.parts.update(c for c in _TOKEN_SPLIT.split(text.replace("/", " ")) if c)
            if unknown and len(names.starts) < MAX_EXPANSIONS:
                names.start(text)
    if parsed.opaque and raw:
        names.fuzzy(raw)
        for token in _TOKEN_SPLIT.split(raw):
            for word in _expand_words(token, home) or ():
                names.resolve(word, names.maybe)
    return NamedPaths(
        frozenset(names.real),
        frozenset(names.maybe),
        frozenset(names.parts),
        start if cwd else None,
        names.too_many,
        frozenset(names.starts),
    )


def _home_moved(parsed: ParsedCommand) -> bool:
    """Whether the command assigns HOME (`HOME=/x`, `export HOME=…`, `read HOME`) and names a
    path from it (`~/x`, `$HOME/x`, a bare `cd`): that path is only known when it runs."""
    assigned = any(
        w.startswith("HOME=") for part in parsed.parts for w in (*part.words, *part.assigns)
    )
    return assigned and any(
        text.startswith("~") or _HOME_VAR.search(text)
        for text in (*(w for w, _ in parsed.words), *parsed.dirs)
    )


def _names_from_file(words: tuple[str, ...]) -> bool:
    """Whether a command reads the names of the files it works on from a file: `--files0-from`
    (sort, wc, du; find's `-files0-from`), `--files-from` (tar, rsync, cpio), tar's `-T`, by any
    abbreviation."""
    program = os.path.basename(words[0]) if words else ""
    if program not in _NAMES_FROM_FILE:
        return False
    for k, word in enumerate(words[1:], 1):
        name = word.partition("=")[0]
        if len(name) > 3 and any(o.startswith(name) for o in _NAMES_FROM_FILE[program]):
            return True
        if program in ("tar", "bsdtar") and re.match(
            r"-[A-Za-z]*T" if k > 1 else r"-?[a-z]*T", word
        ):
            return True  # (`tar cTf LIST x.tar`: the old style's first word)
    return False


_NAMES_FROM_FILE = {
    **dict.fromkeys(("sort", "wc", "du"), ("--files0-from",)),
    "find": ("-files0-from",),
    **dict.fromkeys(("tar", "bsdtar", "rsync", "cpio"), ("--files-from",)),
}


def _bases(start: str, dirs: tuple[str, ...], home: str) -> list[str]:
    """The directories relative words are read against: the cwd and every one a command changes
    to (relative to each of those before it)."""
    bases = [start]
    for directory in dirs:
        for text in _expand_words(directory, home) or ():
            for base in list(bases):
                if len(bases) < MAX_EXPANSIONS // 16:
                    bases.append(
                        os.path.realpath(text) if os.path.isabs(text) else _real_under(base, text)
                    )
    return list(dict.fromkeys(bases))


def _word_names(text: str) -> list[str]:
    """What a command word may name: an option's attached value (`--file=X`, `-oX`); a word, and
    the value of a `NAME=value` (`if=value`)."""
    if text.startswith("-"):
        if "=" in text:
            return [text.partition("=")[2]]
        if not text.startswith("--") and len(text) > 2:
            return [text[2:]]
        return []
    if "=" in text:
        return [text, text.partition("=")[2]]
    return [text]


class _Names:
    """The paths a command's words name, collected word by word (see `NamedPaths`)."""

    def __init__(self, home: str, bases: list[str]) -> None:
        self.home = home
        self.bases = bases
        self.real: set[str] = set()
        self.maybe: set[str] = set()
        self.parts: set[str] = set()
        self.too_many = False
        self.starts: set[str] = set()

    def start(self, text: str) -> None:
        """The real path a word begins (up to its first expansion), as a path that may go on."""
        head = re.split(r"[$`]", _HOME_VAR.sub(self.home, text), maxsplit=1)[0]
        if head.startswith("~"):
            head = os.path.expanduser(head)
        if not head.startswith(("/", ".")) and ("=" in head or head.startswith("-")):
            return  # (an option, an assignment: its value is a word of its own)
        folder, _, name = head.rpartition("/")
        if not folder and head.startswith("/"):
            folder = "/"
        for base in self.bases if not head.startswith("/") else [""]:
            real = os.path.realpath(os.path.join(base, folder)) if folder else base
            self.starts.add(real.rstrip("/") + "/" + name)

    def resolve(self, text: str, into: set[str]) -> None:
        if os.path.isabs(text):
            proc = re.match(_PROC, text) if text.startswith("/proc/") else None
            if proc is not None:  # the program's own process: `/proc/self/cwd` is where it runs
                if proc.group(1) in ("self", "thread-self") and proc.group(2) == "cwd":
                    rest = text[proc.end() :].lstrip("/")
                    into.update(_real_under(b, rest) if rest else b for b in self.bases)
                else:
                    self.too_many = True  # another process's folder or file: not known
                into.add(os.path.normpath(text))
                return
            into.add(os.path.realpath(text))
        else:
            into.update(_real_under(base, text) for base in self.bases)

    def fuzzy(self, text: str) -> None:
        """Paths inside a longer text or a word only known when it runs: their components, and
        the plain ones as a MIGHT."""
        for token in _TOKEN_SPLIT.split(text):
            if "/" in token or token.startswith("~"):
                plain = _HOME_VAR.sub(self.home, token)
                plain = os.path.expanduser(plain) if plain.startswith("~") else plain
                self.parts.update(c for c in plain.split("/") if c)
                if "$" not in plain and "`" not in plain:
                    self.resolve(plain, self.maybe)

    def word(self, text: str, dynamic: bool) -> None:
        for name in _word_names(text):
            if re.match(r"~[-+](?:/|$)", name):  # `~+` is $PWD, `~-` $OLDPWD (maybe any folder)
                self.too_many = self.too_many or name[1] == "-"
                name = "." + name[2:]
            expanded = _expand_words(name, self.home)
            if expanded is None:  # only known when it runs (or too many braces to expand)
                self.too_many = self.too_many or name.count("{") > MAX_BRACES
                self.fuzzy(name)
                continue
            self.too_many = self.too_many or len(expanded) >= MAX_EXPANSIONS
            for word in expanded:
                if _GLOB_CHARS & set(word):
                    matches, over = _glob(word, self.bases)
                    self.real.update(matches)
                    self.too_many = self.too_many or over
                self.resolve(word, self.real)
        if dynamic or len(_TOKEN_SPLIT.split(text)) > 1:
            self.fuzzy(text)


def expand_words(text: str, home: str) -> list[str] | None:
    """What a word becomes (`_expand_words`), for the guard."""
    return _expand_words(text, home)


def _real_under(base: str, name: str) -> str:
    """os.path.realpath(os.path.join(base, name)) for a real `base`; one lstat for a plain name."""
    if "/" in name or name in (".", ".."):
        return os.path.realpath(os.path.join(base, name))
    path = os.path.join(base, name)
    try:
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            return path
    except (OSError, ValueError):
        return path  # not there (yet): nothing to resolve
    return os.path.realpath(path)


def _expand_words(text: str, home: str) -> list[str] | None:
    """What a word becomes: `$HOME`, `{a,b}` braces and a leading `~` expanded; None when it holds
    another expansion, only known when it runs."""
    if "$" in text or "`" in text:
        text = _HOME_VAR.sub(home, text)
        if "$" in text or "`" in text:
            return None
    if "<(" in text or ">(" in text:
        return None
    if text.count("{") > MAX_BRACES:
        return None  # too many to expand: only its name is looked at
    words = _expand_braces(text)
    return [os.path.expanduser(w) if w.startswith("~") else w for w in words]


def _expand_braces(text: str) -> list[str]:
    """`a{b,c}d` → `abd`, `acd` (no ranges), at most MAX_EXPANSIONS words."""
    start = text.find("{")
    while start != -1:
        depth, commas, k = 0, [], start
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            elif text[k] == "," and depth == 1:
                commas.append(k)
            k += 1
        if k < len(text) and commas:
            bounds = [start, *commas, k]
            head, tail = text[:start], text[k + 1 :]
            out: list[str] = []
            for a, b in itertools.pairwise(bounds):
                for rest in _expand_braces(head + text[a + 1 : b] + tail):
                    if len(out) >= MAX_EXPANSIONS:
                        return out
                    out.append(rest)
            return out
        start = text.find("{", start + 1)
    return [text]


def _glob(pattern: str, bases: list[str]) -> tuple[list[str], bool]:
    """The real paths a glob matches (as bash would, dot files included), and whether there were
    more than are looked at."""
    out: list[str] = []
    if sum(1 for c in pattern.split("/") if _GLOB_CHARS & set(c)) > MAX_GLOB_LEVELS:
        return out, True
    for own in ("/proc/self/cwd/", "/proc/thread-self/cwd/"):  # the folder the command runs in
        if pattern.startswith(own):
            pattern = pattern[len(own) :]
    roots: list[str | None] = [None] if os.path.isabs(pattern) else list(bases)
    for root in roots:
        try:
            found = list(
                itertools.islice(
                    glob.iglob(pattern, root_dir=root, include_hidden=True), MAX_EXPANSIONS + 1
                )
            )
        except (OSError, ValueError):
            continue
        if len(found) > MAX_EXPANSIONS:
            return out, True
        out.extend(os.path.realpath(os.path.join(root or "", f)) for f in found)
    return out, False


# --- URLs ---------------------------------------------------------------------------------------------

# A URL is read two ways, as a browser or Node reads it (WHATWG, with `ada_url`: a backslash is a
# slash in http(s), tabs and newlines are dropped, `%61` in a host is `a`, `0x7f.1` is 127.0.0.1)
# and as Python's `urllib.parse` does. Each reading is normalized (scheme and host lowercased,
# the host's trailing dot, a default port and any userinfo dropped) to (scheme, host, port, path).
# A deny rule matches when any reading of any URL names its host or a subdomain of it, whatever the
# scheme or port, with its path prefix (compared percent-decoded and case-folded); an allow rule


# Programs that go down every folder they are given, and those that do with a recursive option
# (`-r`, `-R`, `--recursive`; `-a` for cp): a deny or ask rule on a path inside such a folder
# might match. `rm -r` and `mv` of such a folder take the rule's along: they are the rule's.
_WALK = frozenset({"find", "du", "tar", "bsdtar", "zip", "7z", "rsync", "rg", "ag", "ack", "tree"})
_WALK_RECURSIVE = frozenset(
    {"grep", "egrep", "fgrep", "cp", "ls", "chmod", "chown", "chgrp", "scp", "shred", "setfacl"}
)
_RECURSIVE = re.compile(r"-[A-Za-z]*[rRa][A-Za-z]*$|--recursive$|--archive$")


def _operands(words: tuple[str, ...], names: _Names) -> set[str]:
    """The real paths a simple command's operands (its words after the first that are not
    options) name, expanded as its other words are (`$HOME`, braces, `~`, globs: `rm -rf $HOME`,
    `rm -r ~/{a,b}`, `rm -rf /ho*`); a word only known when it runs otherwise names none."""
    found: set[str] = set()
    for word in words[1:]:
        if not word or word.startswith("-"):
            continue
        for text in _expand_words(word, names.home) or ():
            if _GLOB_CHARS & set(text):
                found.update(_glob(text, names.bases)[0])
            names.resolve(text, found)
    return found


def given_paths(
    parsed: ParsedCommand, cwd: str | None, words: tuple[str, ...]
) -> tuple[set[str], list[str]]:
    """The real paths one of the command's simple commands (`words`) is given as operands, read
    as `walks_above` reads them, and the folders it may run in (its cwd and every folder the
    command changes to)."""
    home = os.path.expanduser("~")
    bases = _bases(cwd or os.getcwd(), parsed.dirs, home)
    return _operands(words, _Names(home, bases)), bases


def walks_above(
    parsed: ParsedCommand, cwd: str | None, root: str, walks: LinkWalks | None = None
) -> int:
    """Whether a command goes down a folder that holds `root` (strictly above it): YES for one
    that deletes or moves it along (`rm -r ~` under `deny path=~/.ssh`), MIGHT for one that reads
    or changes what is inside (`grep -r key ~`, `tar c ~`, `chmod -R a+r ~`), else NO."""
    return walks_above_each(parsed, cwd, (root,), walks)[0]


def walks_above_each(
    parsed: ParsedCommand,
    cwd: str | None,
    roots: tuple[str, ...],
    walks: LinkWalks | None = None,
    parts: tuple[Part, ...] | None = None,
) -> list[int]:
    """`walks_above` for each of `roots`, the command's operands read once; of `parts` of it
    only, when given."""
    from bridge.rules.links import FOLLOWING, follows_into
    from bridge.rules.verdicts import MIGHT, NO, YES

    verdicts = [NO] * len(roots)
    home = os.path.expanduser("~")
    bases = _bases(cwd or os.getcwd(), parsed.dirs, home)  # and every folder it changes to
    names = _Names(home, bases)
    for part in parsed.parts if parts is None else parts:
        words = part.words
        program = os.path.basename(words[0]) if words else ""
        for n, root in enumerate(roots if program in FOLLOWING else ()):
            if verdicts[n] == NO and follows_into(words, bases, root, walks):
                verdicts[n] = MIGHT  # `grep -R x .`, `./up` → root
        recursive = any(_RECURSIVE.match(w) for w in words[1:])
        carries = program == "mv" or (program == "rm" and recursive)
        if not (carries or program in _WALK or (program in _WALK_RECURSIVE and recursive)):
            continue
        for real in _operands(words, names):
            above = real.rstrip(os.sep) + os.sep
            for n, root in enumerate(roots):
                if verdicts[n] != YES and real != root and root.startswith(above):
                    verdicts[n] = YES if carries else MIGHT
    return verdicts
