"""One rule: its fields, what it matches, its settings table and its own examples."""

from __future__ import annotations

import os
import posixpath
import re

from bridge.options import may_be_made_unsafe, program_name, unsafe_options
from bridge.record import Record
from bridge.rules.commands import (
    _CODE_TOKEN,
    EXACT_MARK,
    _assigns_covered,
    _assigns_named,
    _match_options,
    _match_rest,
    _token_matches,
    allow_walk,
    moved_away,
    operand_commands,
    spell,
)
from bridge.rules.request import CARRYING, WALKING, Request
from bridge.rules.table import RuleError, _show, rule_fields, rule_table
from bridge.rules.verdicts import ACTIONS, MIGHT, NO, YES, Action
from bridge.shell import GLOB_CHARS as _GLOB_CHARS
from bridge.shell import ParsedCommand, Part, is_assignment
from bridge.shell.words import split_words

TYPE_CHECKING = False  # (`typing` costs a hook's start-up a millisecond: names for the checker)
if TYPE_CHECKING:
    from typing import Any

    from bridge.rules.urls import UrlReading


def _resolve_path(path: str) -> str:
    """`paths.resolve_path` (the module loads with the first path rule)."""
    from bridge.rules.paths import resolve_path

    return resolve_path(path)


def _inside(path: str, root: str) -> bool:
    """`paths.inside` (the module loads with the first path rule)."""
    from bridge.rules.paths import inside

    return inside(path, root)


def _compile_glob(pattern: str, *, ignore_case: bool) -> re.Pattern[str]:
    import fnmatch  # (only for a rule with an agent or a title)

    return re.compile(fnmatch.translate(pattern), re.IGNORECASE if ignore_case else 0)


def agent_folded(name: str) -> str:
    """An agent's name as rules compare it: the vscodelm door's `claude_code` is the hooks'
    `claude-code` (and `Claude-Code`)."""
    return name.lower().replace("_", "-")


class Rule(Record):
    """A standing decision. Every given field must match (see the module docstring). `line`: where
    it is in the settings file (shown, not compared)."""

    _fields = (
        "action",
        "kind",
        "title",
        "agent",
        "path",
        "title_regex",
        "command",
        "url",
        "reason",
        "match",
        "not_match",
    )
    _shown = (*_fields, "line")

    def __init__(
        self,
        action: Action,
        kind: str | None = None,
        title: str | None = None,  # glob, case-insensitive
        agent: str | None = None,  # glob
        path: str | None = None,  # a directory: inside it after resolution
        title_regex: str | None = None,  # re.search
        command: tuple[str, ...] | str | None = None,  # command prefixes, any of them
        url: str | None = None,  # scheme://host/path prefix
        reason: str | None = None,  # told to the agent (and the audit log) when it denies
        match: list[Any] | None = None,  # examples it must match
        not_match: list[Any] | None = None,  # examples it must not match
        line: int | None = None,
    ) -> None:
        self.action = action
        self.kind = kind
        self.title = title
        self.agent = agent
        self.path = path
        self.title_regex = title_regex
        self.command: tuple[str, ...] | None = (command,) if isinstance(command, str) else command
        self.url = url
        self.reason = reason
        self.match: list[Any] = [] if match is None else match
        self.not_match: list[Any] = [] if not_match is None else not_match
        self.line = line
        if self.action not in ACTIONS:
            raise RuleError(
                f"a rule's action must be allow, ask or deny, not {self.action!r}", "action"
            )
        self._compile()

    def _compile(self) -> None:
        self._title = _compile_glob(self.title, ignore_case=True) if self.title else None
        self._agent = (
            _compile_glob(agent_folded(self.agent), ignore_case=False) if self.agent else None
        )
        try:
            self._title_re = re.compile(self.title_regex) if self.title_regex else None
        except re.error as exc:
            raise RuleError(f"not a valid regular expression: {exc}", "title_regex") from None
        self._names = bool(self.agent or self.title or self.title_regex)  # beyond the kind
        self._prefixes: list[tuple[str, ...]] = []
        self._assigns: list[tuple[str, ...]] = []  # the `NAME=value` words a prefix starts with
        self._exact: list[bool] = []  # a prefix ending in ` $`: the command exactly, for allow
        for text in self.command or ():
            try:
                tokens = tuple(split_words(text))
            except ValueError as exc:
                raise RuleError(
                    f"cannot read the command prefix {text!r}: {exc}", "command"
                ) from None
            exact = len(tokens) > 1 and tokens[-1] == EXACT_MARK
            if exact:
                tokens = tokens[:-1]
            if not tokens:
                raise RuleError("a command prefix must not be empty", "command")
            start = 0
            while start < len(tokens) and is_assignment(tokens[start]):
                start += 1
            if start == len(tokens):
                raise RuleError("a command prefix must name a command", "command")
            self._assigns.append(tokens[:start])
            self._prefixes.append(tokens[start:])
            self._exact.append(exact)
        self._spelled = [spell(p) for p in self._prefixes]
        self._root: str | None = None
        if self.path:
            self._root = _resolve_path(self.path)
        self._root_names = frozenset(
            n
            for n in (
                os.path.basename(self._root or ""),
                os.path.basename(os.path.normpath(os.path.expanduser(self.path or ""))),
            )
            if n not in ("", ".", "..")
        )
        self._url: UrlReading | None = None
        if self.url:
            from bridge.rules.urls import read_url, url_allows, url_denies  # URL rules only

            view = read_url(self.url.strip())
            if not view.readings:
                raise RuleError(f"not a URL with a scheme and a host: {self.url!r}", "url")
            if view.doubt is not None:
                raise RuleError(f"not a plain URL ({view.doubt}): {self.url!r}", "url")
            self._url = next(iter(view.readings))
            # every reading plain and under it (allow), or any reading (deny and ask)
            self._url_matches = url_allows if self.action == "allow" else url_denies

    # description ----------------------------------------------------------------------------------

    def fields(self) -> list[tuple[str, Any]]:
        return [
            (k, v)
            for k, v in (
                ("agent", self.agent),
                ("kind", self.kind),
                ("title", self.title),
                ("title_regex", self.title_regex),
                ("command", " or ".join(self.command) if self.command else None),
                ("path", self.path),
                ("url", self.url),
            )
            if v
        ]

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.fields()]
        return f"{self.action} " + (" ".join(parts) or "everything")

    def label(self, index: int | None = None) -> str:
        """`rule 3 (line 12): deny command=rm` — how decisions name the rule."""
        where = []
        if index is not None:
            where.append(f"rule {index}")
        head = " ".join(where) or "rule"
        if self.line is not None:
            head += f" (line {self.line})"
        return f"{head}: {self.describe()}"

    # matching -------------------------------------------------------------------------------------

    def facets_match(self, req: Request) -> bool:
        """Everything but the command. Request fields that are None are not compared."""
        return self.facets(req) == YES

    def facets(self, req: Request) -> int:
        """Everything but the command: YES, NO, or (a deny or ask path rule against a shell
        command) MIGHT when a word only known when it runs could name a path inside."""
        if self.kind and req.kind is not None and req.kind != self.kind:
            return NO
        if self._names and not self._names_match(req):
            return NO
        verdict = YES
        if self._root is not None:
            verdict = self._path_facet(req, self._root)
            if verdict == NO:
                return NO
        if self._url is not None and not self._url_facet(req, self._url):
            return NO
        return verdict

    def _names_match(self, req: Request) -> bool:
        """The agent and the title, where the request gives them."""
        if self._agent is not None and req.agent is not None:
            if not self._agent.match(agent_folded(req.agent)):
                return False
        if self._title is not None and req.title is not None and not self._title.match(req.title):
            return False
        return not (
            self._title_re is not None
            and req.title is not None
            and not self._title_re.search(req.title)
        )

    def _path_facet(self, req: Request, root: str) -> int:
        """This rule's directory against the request: an allow rule needs every path plain and
        inside; a deny or ask rule any path (or a path a shell command names) inside — MIGHT when
        a path cannot be resolved or a word only known when it runs could name one."""
        if self.action == "allow":
            if req.command is not None and not self._prefixes:
                return NO  # an allow path rule never allows a shell command by itself
            if req.paths is not None:
                real = req.real_paths()
                if not real or req.path_doubts() or not all(_inside(p, root) for p in real):
                    return NO
            if self._url is None and req.urls:
                return NO  # it says nothing about URLs: a call that names one is not covered
            return YES
        verdict = NO
        readings = req.path_readings()
        if any(_inside(p, root) for names, _ in readings for p in names) or any(
            _inside(p, root) for p in req.loose_readings()
        ):
            verdict = YES
        elif req.kind in CARRYING and req.paths is not None and req.walks_into(root):
            verdict = YES  # a delete of a folder that holds this rule's takes it along
        elif req.command is not None:
            verdict = self._command_path_verdict(req)
        elif req.kind in WALKING and req.paths is not None and req.walks_into(root):
            verdict = MIGHT  # a search of a folder that holds this rule's may read inside it
        elif req.paths is None:
            verdict = YES  # an example that names no path: not compared
        if verdict == NO and req.unresolved():
            verdict = MIGHT  # a path that cannot be resolved may name anything
        return verdict

    def _url_facet(self, req: Request, url: UrlReading) -> bool:
        """This rule's URL against the request: an allow rule needs every URL plain and under it,
        a deny or ask rule any reading of any URL (a shell command's too)."""
        if self.action == "allow":
            if req.command is not None and not self._prefixes:
                return False  # an allow URL rule never allows a shell command by itself
            if req.urls is not None:
                views = req.url_views()
                if not views or req.odd_urls or not all(self._url_matches(url, v) for v in views):
                    return False
            # it says nothing about paths: a call that names one is not covered
            return not (self._root is None and req.paths)
        if req.urls is not None or req.command is not None or req.text_urls:
            views = req.url_views() + req.command_url_views()
            return any(self._url_matches(url, v) for v in views)
        return True

    def _command_path_verdict(self, req: Request) -> int:
        """Whether a shell command names a path inside this (deny or ask) rule's directory: it
        runs there, or a word names a path inside (YES); a word only known when it runs, or a
        longer word, names a path with the directory's name in it (or its start: `named.starts`),
        or a glob matched too many files to look at (MIGHT)."""
        root = self._root
        assert root is not None
        key = f"{root}\0{' '.join(sorted(self._root_names))}"
        verdict = req._named_in.get(key)
        if verdict is None:
            named = req.named_paths()
            under = root.rstrip(os.sep) + os.sep
            ran_inside = named.cwd is not None and _inside(named.cwd, root)
            if ran_inside or root in named.real or any(p.startswith(under) for p in named.real):
                verdict = YES
            elif (
                named.too_many
                or any(_inside(p, root) for p in named.maybe)
                or not self._root_names.isdisjoint(named.parts)
                or any(under.startswith(p) for p in named.starts)
            ):
                verdict = MIGHT
            else:  # a folder above the rule's, gone down (`grep -r x ~`) or taken along (`rm -r ~`)
                verdict = req.walks_above(root, named.cwd)
            req._named_in[key] = verdict
        return verdict

    def part_matches(self, part: Part, reach: int | None = None) -> bool:
        """Whether this rule covers one command: an allow rule's prefix as the words are written
        (longer than `reach` words when given), a deny or ask rule's for certain."""
        if self.action != "allow":
            return self.part_verdict(part) == YES
        words = part.words
        for prefix, assigns, exact in zip(self._prefixes, self._assigns, self._exact, strict=True):
            if len(words) < len(prefix) or (reach is not None and len(prefix) <= reach):
                continue
            if exact and len(words) != len(prefix):
                continue
            if not all(_token_matches(p, w) for p, w in zip(prefix, words, strict=False)):
                continue
            if not _assigns_covered(assigns, part):
                continue
            start = reach if reach is not None else 0  # the command a privileged wrapper runs
            if _unsafe_uncovered(part, len(prefix), start):
                continue  # an option that runs a program or writes a file (or may be), not named
            return True
        return False

    def part_verdict(self, part: Part, moved: bool = False) -> int:
        """A deny or ask rule against one command (`moved`: after a `cd` elsewhere): YES, NO, or
        MIGHT when words only known when it runs (`git $SUB`, `xargs git`) could make it match.
        Both in one spelling (bridge.options): `deny rm -rf` stops `rm -R --force`, `/bin/rm -fr`."""
        best = NO
        spelled = spell(part.words, part.unknown)
        for prefix, assigns, rule_spelled in zip(
            self._prefixes, self._assigns, self._spelled, strict=True
        ):
            first = rule_spelled.words[0]
            if not (
                _token_matches(first, spelled.words[0])
                or _token_matches(prefix[0], part.words[0])
                or _token_matches(prefix[0], posixpath.basename(part.words[0]))
            ):
                continue
            if not _assigns_named(assigns, part):
                continue
            verdict = min(
                _match_rest(rule_spelled, spelled, part.open_args, moved),
                _match_options(rule_spelled, spelled, part.open_args, moved),
            )
            if verdict == YES:
                return YES
            best = max(best, verdict)
        return best

    def named_in_code(self, parsed: ParsedCommand, names: set[str] | None = None) -> bool:
        """Whether a program this rule names is named in code a shell or an interpreter runs that
        is not parsed (`python -c "os.system('rm -rf /')"`, `ssh host rm -rf /`): `_code_names`."""
        if not parsed.code:
            return False
        names = _code_names(parsed.code) if names is None else names  # (made once a request)
        for prefix, spelled in zip(self._prefixes, self._spelled, strict=True):
            for first in {prefix[0], spelled.words[0], posixpath.basename(prefix[0])}:
                if any(_token_matches(first, name) for name in names):
                    return True
        return False

    def command_verdict(self, parsed: ParsedCommand, names: set[str] | None = None) -> int:
        """A deny or ask rule against a whole command: YES if any part matches; MIGHT if what cannot
        be known could match."""
        best = MIGHT if parsed.opaque or self.named_in_code(parsed, names) else NO
        moved = moved_away(parsed)
        for part in parsed.parts:
            verdict = self.part_verdict(part, moved)
            if verdict == YES:
                return YES
            best = max(best, verdict)
        return MIGHT if best == NO and runs_among_operands(self, parsed) else best

    def verdict(self, req: Request) -> int:
        """A deny or ask rule against a request: YES, NO, or MIGHT (what cannot be known could
        match it)."""
        facets = self.facets(req)
        if facets == NO or not self._prefixes:
            return facets
        if req.command is None:
            return facets if _example_without_command(req) else NO
        parsed = req.parsed
        assert parsed is not None
        return min(facets, self.command_verdict(parsed, req.code_names(_code_names)))

    def matches(self, req: Request) -> bool:
        """Whether this rule, alone, applies to the request: an allow rule must cover every part of
        a command, a deny or ask rule any part."""
        if not self.facets_match(req):
            return False
        if not self._prefixes or req.command is None:
            return not self._prefixes or (req.command is None and _example_without_command(req))
        parsed = req.parsed
        assert parsed is not None
        if self.action == "allow":
            if parsed.opaque or not parsed.parts:
                return False

            def find(part: Part, reach: int | None) -> tuple[int, Rule] | None:
                return (0, self) if self.part_matches(part, reach) else None

            _, first, missing = allow_walk(parsed.parts, find)
            return first is not None and not missing
        return self.verdict(req) == YES

    # settings -------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        """A rule from its settings table; RuleError (naming the field) when it is not usable."""
        return cls(**rule_fields(data))

    def to_dict(self) -> dict[str, Any]:
        return rule_table(self)

    # examples -------------------------------------------------------------------------------------

    def example_request(self, example: Any) -> Request:
        if isinstance(example, str):
            if self.command:
                return Request(command=example)
            if self.url:
                return Request(urls=(example,))
            if self.path:
                return Request(paths=(example,))
            if self.title or self.title_regex:
                return Request(title=example)
            if self.agent:
                return Request(agent=example)
            return Request(kind=example)
        return Request(
            agent=example.get("agent"),
            kind=example.get("kind"),
            title=example.get("title"),
            command=example.get("command"),
            paths=(example["path"],) if "path" in example else None,
            urls=(example["url"],) if "url" in example else None,
        )

    def check_examples(self) -> list[str]:
        """What is wrong with this rule's own examples (empty: they all hold)."""
        problems = []
        for example in self.match:
            if not self.matches(self.example_request(example)):
                problems.append(f"does not match its example {_show(example)}")
        for example in self.not_match:
            if self.matches(self.example_request(example)):
                problems.append(f"matches {_show(example)}, listed under not_match")
        return problems


def _code_names(code: tuple[str, ...]) -> set[str]:
    """The programs code names: its words (`rm` of `os.system('rm -rf /')`), by the name a rule
    knows them by too, and the files a glob among the programs' files the command names matches
    (`cp /usr/bin/r[m] x`: `rm`)."""
    tokens = {t for text in code for t in re.findall(_CODE_TOKEN, text)}
    names = {program_name(t)[0] for t in tokens} | tokens
    for text in code:
        if text.startswith("/") and " " not in text and not _GLOB_CHARS.isdisjoint(text):
            names |= _glob_names(text)
    return names


def _glob_names(pattern: str) -> frozenset[str]:
    """The names (and their programs') of the files an absolute glob matches (`/usr/bin/r[m]`:
    `rm`), up to a few dozen: a command given more than that is not given one program. Looked at
    for each request (`Request.code_names`), never kept: the files change."""
    import glob
    import itertools

    found = list(itertools.islice(glob.iglob(pattern), _GLOB_NAMES + 1))
    if len(found) > _GLOB_NAMES:
        return frozenset()
    bases = {posixpath.basename(f) for f in found}
    return frozenset(bases | {program_name(b)[0] for b in bases})


_GLOB_NAMES = 64


def _example_without_command(req: Request) -> bool:
    # A command rule and a request without a command: a real request (its kind is known) does not
    # match; an example that names no command is not compared on it.
    return req.kind is None and req.title is None


def runs_among_operands(rule: Rule, parsed: ParsedCommand) -> tuple[Part, Part] | None:
    """A part of the command (a program not known to run only what it is) whose arguments spell
    a command `rule` matches (`chrt -o 0 rm -rf x` for `deny rm -rf`), and that command: it might
    run it."""

    firsts = {p[0] for p in rule._prefixes} | {posixpath.basename(p[0]) for p in rule._prefixes}
    firsts |= {s.words[0] for s in rule._spelled}

    def could_start(word: str) -> bool:  # a command the rule names could start with `word`
        base = posixpath.basename(word)
        names = {word, base, program_name(base)[0]}
        return any(_token_matches(first, name) for first in firsts for name in names)

    for part in parsed.parts:
        for _, sub in operand_commands(part, could_start):
            if rule.part_verdict(sub) == YES:
                return part, sub
    return None


def _unsafe_uncovered(part: Part, covered: int, start: int) -> bool:
    """Whether the command (from word `start`: the one a privileged wrapper runs) has, past the
    `covered` words a prefix names, an option that makes it run a program or write a file — or
    words only known when it runs (or appended by `xargs`) that could be one."""
    words = part.words
    if any(k + start >= covered for k, _ in unsafe_options(words[start:]) if k):
        return True
    return (part.open_args or any(k >= covered for k in part.unknown)) and may_be_made_unsafe(
        posixpath.basename(words[start])
    )
