"""A rule's command prefixes against one command — as written for allow rules, in one spelling
(bridge.options) with options skipped for deny and ask rules — and allow rules against every part
of a command (`allow_walk`: wrappers, privileged wrappers, writes)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from bridge.options import INERT_VARIABLES, Spelling
from bridge.options import read as read_options
from bridge.rules.verdicts import MIGHT, NO, YES, PartVerdict
from bridge.shell import GLOB_CHARS as _GLOB_CHARS
from bridge.shell import RUNS_CODE, RUNS_CODE_WHEN, ParsedCommand, Part
from bridge.shell.programs import is_interpreter

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from bridge.rules.rule import Rule

# A command prefix ending in this word (`command = ["rm -rf build $"]`) allows that command exactly,
# with no further arguments; a deny or ask rule ignores it (deny matches generously).
EXACT_MARK = "$"


@lru_cache(maxsize=8192)
def spell(words: tuple[str, ...], unknown: frozenset[int] = frozenset()) -> Spelling:
    """A command's words in the one spelling deny rules compare (bridge.options)."""
    return read_options(words, unknown)


def inert_assignment(word: str) -> bool:
    name = word.partition("=")[0].removesuffix("+")
    return name in INERT_VARIABLES or name.startswith("LC_")


def _assigns_covered(prefix_assigns: tuple[str, ...], part: Part) -> bool:
    """An allow rule covers the assignments given to a command when it names every one of them
    (but those that only choose a language, a time zone or colours) and each it names is given."""
    return _assigns_named(prefix_assigns, part) and all(
        inert_assignment(a) or any(_token_matches(p, a) for p in prefix_assigns)
        for a in part.assigns
    )


def _assigns_named(prefix_assigns: tuple[str, ...], part: Part) -> bool:
    """Every assignment a rule's prefix starts with is given to the command."""
    return all(any(_token_matches(a, b) for b in part.assigns) for a in prefix_assigns)


_CODE_TOKEN = r"[A-Za-z0-9_.+-]+"  # (compiled by `re` when first used: code only)


def _token_matches(pattern: str, word: str) -> bool:
    if _GLOB_CHARS & set(pattern):
        from fnmatch import fnmatchcase  # (a rule's word with a glob only)

        return fnmatchcase(word, pattern)
    return pattern == word


# Programs that never run their arguments as a command: a denied command spelled among them
# (`echo rm -rf x`, `man rm`, `grep 'git push' log`) is text.
TEXT_ONLY = frozenset(
    {"echo", "printf", "man", "which", "whereis", "type", "whatis", "apropos", "help", "info",
     "grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "head", "tail", "wc", "ls", "stat",
     "file", "less", "more", "test", "[", "true", "false", "pwd", ":", "git", "alias", "trap"}
)  # fmt: skip


def operand_commands(part: Part, starts: Callable[[str], bool]) -> Iterable[tuple[int, Part]]:
    """The commands a program might run from its arguments, where its own rules are not known
    (`chrt -o 0 rm -rf x`, `unbuffer git push`: a wrapper `bridge.shell.WRAPPERS` does not know):
    the words from each argument `starts` says a rule's command could begin with, as a command —
    and in an argument that is a script (`npm exec -c 'rm -rf /'`), from each of its words."""
    words = part.words
    if part.role not in ("command", "implied") or len(words) < 2:
        return
    name = words[0].rsplit("/", 1)[-1]
    if name in TEXT_ONLY:
        return
    # (a program that runs code says so itself, in the parser's `code`: `sed -n '/rm -rf/p'`)
    scripts = name not in RUNS_CODE and name not in RUNS_CODE_WHEN and not is_interpreter(name)
    for k in range(1, len(words)):
        word = words[k]
        if scripts and k not in part.unknown and _script_word(word):
            # a word that is a script (`npm exec -c 'rm -rf /'`): the commands its words spell
            tokens = [t for t in re.split(_SCRIPT_WORD, word) if t]
            found = (j for j, token in enumerate(tokens) if starts(token))
            for j in itertools.islice(found, _SCRIPT_COMMANDS):  # (a few: a long text is cheap)
                command = tuple(tokens[j : j + _SCRIPT_WORDS])
                yield k, Part(command, part.writes, "command", assigns=part.assigns)
            continue
        if k in part.unknown or word.startswith("-") or not starts(word):
            continue
        yield (
            k,
            Part(
                words[k:],
                part.writes,
                "command",
                open_args=part.open_args,
                unknown=frozenset(u - k for u in part.unknown if u > k),
                assigns=part.assigns,
            ),
        )


# what separates the words of a script given as one argument (blanks and operators)
_SCRIPT_WORD = r"[\s;&|()`]+"  # (compiled by `re` when first used: a word that is a script)
_SCRIPT_COMMANDS = 16  # the commands looked at in one such argument, of so many words at most
_SCRIPT_WORDS = 64


def _script_word(word: str) -> bool:
    """Whether a word has a blank or an operator in it (as `_SCRIPT_WORD` finds one)."""
    return any(c in ";&|()`" or c.isspace() for c in word)


def _word_match(want: str, word: str, moved: bool = False, lists: bool = False) -> int:
    """A rule's word against a command's: YES when it matches; MIGHT when the command's word is a
    glob that may expand to it (`/et?`, `/[e]tc` for `/etc`: generous, quoted or not), or a path
    with `..` that may name it (`/tmp/../etc`, `../../../etc`; after a `cd` elsewhere, `etc` or
    `.` too: `moved`); else NO. `lists`: the word may be a list (`kubectl delete ns,po x` deletes
    a namespace and a pod)."""
    if _token_matches(want, word) or (lists and "," in word and want in word.split(",")):
        return YES
    if _GLOB_CHARS & set(word):
        from fnmatch import fnmatchcase  # (a command's word with a glob only)

        if fnmatchcase(want, word):
            return MIGHT
    if want[:1] == "/" and not _GLOB_CHARS & set(want) and _may_name(want, word, moved):
        return MIGHT
    return NO


def _lexical(path: str) -> str:
    """An absolute path with each `..` taking the name before it away (`/tmp/../etc`: `/etc`)."""
    kept: list[str] = []
    for name in path.split("/"):
        if name == "..":
            del kept[-1:]
        elif name not in ("", "."):
            kept.append(name)
    return "/" + "/".join(kept)


def _may_name(want: str, word: str, moved: bool) -> bool:
    """Whether a path word may name the absolute path `want` where it runs: read without its
    `..` (`/etc/ssh/..`, `/tmp/../etc`: through a symlink it may be elsewhere, or there), or
    relative to a folder only known when it runs — a word climbing out with `..`, or any relative
    word after the command changed to another folder (`cd / && cp -r etc x`) — that ends in its
    last names (`../../../etc`, `etc`; after a `cd`, `.` and `..` too)."""
    parts = word.split("/")
    if parts[:2] == ["", "proc"] and parts[3:4] in (["root"], ["cwd"]) and len(parts) > 4:
        # another process's root or folder: `/proc/1/root/etc`, `/proc/self/cwd/../../etc`
        rest = "/".join(parts[4:])
        if parts[3] == "cwd":
            return _may_name(want, rest, True)
        rest = "/" + rest
        return _lexical(rest) == want or _may_name(want, rest, False)
    if word[:1] == "/":
        if ".." not in parts:
            return False
        return _lexical(word) == want
    if word[:1] == "~" and parts[0] != "~+":  # a home folder: somewhere only known when it runs
        head, parts = parts[0], parts[1:]
        if re.fullmatch(r"~-|~[-+]?\d+", head):
            moved = True  # `~-` ($OLDPWD), `~1` (the folder stack): any folder
        elif ".." not in parts:
            return False
    elif word[:1] == "~":  # `~+`: the folder it runs in
        parts = parts[1:]
    if not moved and ".." not in parts:
        return False
    last = max((k for k, name in enumerate(parts) if name == ".."), default=-1)
    tail = [name for name in parts[last + 1 :] if name not in ("", ".")]
    names = [name for name in want.split("/") if name]
    if not tail:
        return moved
    return len(tail) <= len(names) and names[len(names) - len(tail) :] == tail


def moved_away(parsed: ParsedCommand) -> bool:
    """Whether a command changes to a folder outside the one it runs in (`cd /`, `cd ~`, `cd ..`,
    `env --chdir=/`), or to any folder where `CDPATH` may say which (`CDPATH=/ cd etc`): its
    relative words may name any path."""
    dirs = parsed.dirs
    if any(d[:1] in ("/", "~", "-", "$") or ".." in d.split("/") or "`" in d for d in dirs):
        return True
    return bool(dirs) and any(
        "CDPATH" in text for part in parsed.parts for text in (*part.words, *part.assigns)
    )


def _is_path(word: str) -> bool:
    """A rule's word that names a path (`/etc`, `~/x`): matched among any of the command's other
    words (`cp -r a b /etc /tmp`, `cp -r -t /tmp a /etc`), not only at its place."""
    return word.startswith(("/", "~"))


def _is_option(word: str) -> bool:
    return len(word) > 1 and word.startswith("-") and word != "--"


def _match_rest(rule: Spelling, spelled: Spelling, open_args: bool, moved: bool = False) -> int:
    """A deny or ask rule's words that are not options against a command whose first word it
    matches (both read by bridge.options): the rule's words in order, with options skipped between
    them — an option (`-C`, `--no-pager`), the word right after an option (its possible argument:
    `-C dir`), and `--`; after `--` nothing is an option. Any other word in between ends the
    match: `git -C dir push` is a `git push`, `git log --grep push` is not. A word only known when
    it runs may be anything, even several words or none: MIGHT (skipped in an option's argument
    place, it does not make a YES uncertain). Words the command runs out of: MIGHT when arguments
    are added when it runs (`xargs git`), else NO. `moved`: the command changes to a folder
    elsewhere first (see `moved_away`): its relative words are relative to that folder."""
    prefix = tuple(
        w
        for i, w in enumerate(rule.words)
        if i == 0 or not ((i < rule.ended and _is_option(w)) or i in rule.values)
    )
    words = spelled.words
    unknown = spelled.unknown
    size = len(prefix)
    if size == 1:
        return YES
    paths = any(_is_path(w) for w in prefix[1:])
    lists = words[0] in ("kubectl", "oc") and any("," in w for w in words[1:])
    if not unknown and not paths and not lists and not any(w[:1] == "-" for w in words[1:]):
        # nothing can be skipped: the words at their places (the common case, and the fast one)
        if len(words) < size:
            return MIGHT if open_args else NO
        return min(map(_word_match, prefix[1:], words[1:size]), default=YES)
    best = NO
    # states: (next prefix word, the previous word is an option, after `--`) → YES or MIGHT
    states: dict[tuple[int, bool, bool], int] = {(1, False, False): YES}
    for i in range(1, len(words)):
        word = words[i]
        nxt: dict[tuple[int, bool, bool], int] = {}
        for (j, after_option, ended), sure in states.items():
            want = prefix[j]
            if i in unknown:
                best = max(best, MIGHT)  # it may be the rest of the prefix
                if after_option and not ended:
                    _add(nxt, (j, False, ended), sure)  # an option's argument, whatever it is
                _add(nxt, (j, True, ended), MIGHT)  # an option, or nothing
                continue
            option = not ended and _is_option(word)
            ends = ended or word == "--"
            matched = min(_word_match(want, word, moved, lists), sure)
            if matched and not option:
                if j + 1 == size:
                    best = max(best, matched)
                    if best == YES:
                        return YES
                else:
                    _add(nxt, (j + 1, option, ends), matched)
            if option or ends != ended or after_option or _is_path(want):
                _add(nxt, (j, option, ends), sure)  # skipped
        states = nxt
        if not states:
            break
    if states and (open_args or unknown):
        best = max(best, MIGHT)
    return best


def _match_options(rule: Spelling, spelled: Spelling, open_args: bool, moved: bool = False) -> int:
    """A deny or ask rule's options against a command's, in any order and spelling: each one the
    rule names is given (with the rule's value, when it names one). MIGHT when a word only known
    when it runs, or arguments added when it runs, could be the option."""
    required = rule.required()
    if not required:
        return YES
    open_args = open_args or spelled.reads_more_options()
    for option, wanted in required.items():
        given = spelled.options.get(option)
        if given is None:
            return MIGHT if (spelled.unknown or open_args) else NO
        for value in wanted:
            if value is None:
                continue
            if not any(v is not None and _token_matches(value, v) for v in given):
                if any(v is None for v in given) and spelled.unknown:
                    return MIGHT
                if any(v is not None and _word_match(value, v, moved) for v in given):
                    return MIGHT  # a path that may be it (`cd /dev && dd of=sda`)
                return NO
    return YES


def _add(
    states: dict[tuple[int, bool, bool], int], state: tuple[int, bool, bool], sure: int
) -> None:
    if states.get(state, NO) < sure:
        states[state] = sure


Find = Callable[[Part, "int | None"], "tuple[int, Rule] | None"]


def allow_walk(
    parts: Iterable[Part], find: Find, writable: Callable[[str], str | None] | None = None
) -> tuple[list[PartVerdict], tuple[int, Rule] | None, bool]:
    """Allow rules against every part: (each part's verdict, the first rule used, whether some
    part is not allowed). A harmless wrapper needs nothing (the command it runs decides); a
    privileged one needs an allow rule of its own as well; a rule whose prefix also names the
    command a wrapper runs (`allow sudo apt update`) covers that command too. A part that writes
    to a file (by redirection, `tee`) is a path request too: allowed only when `writable` names
    an allow path rule for every file it writes. A part implied by another (`find -delete` is
    `rm -r -f`) is for deny rules only."""
    parts = list(parts)
    verdicts: list[PartVerdict] = []
    first: tuple[int, Rule] | None = None
    missing = False
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.role == "implied":
            verdicts.append(
                PartVerdict(part.text, None, "what the command before it does", "implied")
            )
            i += 1
            continue
        if part.writes and (writable is None or not all(writable(w) for w in part.writes)):
            missing = True
            verdicts.append(PartVerdict(part.text, None, "writes to a file by redirection"))
            i += 1
            continue
        if part.role != "command" and part.reach is not None:
            cand = find(part, part.reach)
            if cand is not None:
                covered = parts[i : i + 1 + part.chain]
                label = cand[1].label(cand[0])
                verdicts.extend(PartVerdict(p.text, "allow", label, p.role) for p in covered)
                first = first if first is not None and first[0] <= cand[0] else cand
                i += len(covered)
                continue
        if part.role == "wrapper":
            verdicts.append(
                PartVerdict(part.text, None, "a wrapper: the command it runs decides", "wrapper")
            )
            i += 1
            continue
        cand = find(part, None)
        if cand is None:
            missing = True
            why = (
                "a privileged wrapper: it needs an allow rule"
                if part.role == "privileged"
                else "no rule"
            )
            verdicts.append(PartVerdict(part.text, None, why, part.role))
        else:
            verdicts.append(PartVerdict(part.text, "allow", cand[1].label(cand[0]), part.role))
            first = first if first is not None and first[0] <= cand[0] else cand
        i += 1
    return verdicts, first, missing
