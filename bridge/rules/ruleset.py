"""A rule set: rules indexed for deciding, deny > ask > allow."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

from bridge.options import program_name
from bridge.rules.commands import allow_walk, operand_commands
from bridge.rules.guards import check as guarded_by
from bridge.rules.guards import check_unknown as guarded_unknown
from bridge.rules.request import WALKING, Request
from bridge.rules.rule import Rule, runs_among_operands
from bridge.rules.verdicts import ACTIONS, MIGHT, Decision
from bridge.shell import GLOB_CHARS as _GLOB_CHARS
from bridge.shell import ParsedCommand, Part, unknown_target


class RuleSet:
    """Rules indexed for deciding: by action, by tool kind and, for command rules, by the first
    word of their prefixes — so a request looks at the few rules that could apply to it."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules = list(rules)
        self._by_action: dict[str, _Bucket] = {a: _Bucket() for a in ACTIONS}
        for index, rule in enumerate(self.rules, 1):
            self._by_action[rule.action].add(index, rule)

    def __len__(self) -> int:
        return len(self.rules)

    def decide(self, req: Request) -> Decision:
        if req.more_commands:
            return self._decide_each(req)
        return self._decide(req)

    def _decide_each(self, req: Request) -> Decision:
        """A call that carries more than one command (an MCP tool's `arguments.command` beside
        its own `command`) runs each: a deny or an ask of any of them is the call's, and it is
        allowed only when every one of them is."""
        first = self._decide(req)
        decisions = [first]
        for command in req.more_commands:
            decision = self._decide(req.with_command(command))
            text = command if isinstance(command, str) else " ".join(command)
            decisions.append(
                Decision(
                    decision.action,
                    decision.rule,
                    decision.label,
                    f"{decision.why} (the call's other command: {text[:120]!r})",
                )
            )
        for action in ("deny", "ask", None):
            for decision in decisions:
                if decision.action == action:
                    return decision
        return first

    def _decide(self, req: Request) -> Decision:
        too_long = req.too_long()
        if too_long is not None:  # nothing is parsed or matched: a person decides, bypass or not
            return Decision("ask", None, None, f"ask: {too_long}")
        parsed = req.parsed
        decision = self._deny_or_ask(req, parsed)
        if decision is not None:
            return decision
        # What governs the agents (Symposium's folders, each CLI's settings): a person decides
        guarded = guarded_by(req)
        if guarded is not None:
            return Decision("ask", why=guarded)
        # What cannot be judged goes to a person whoever asks, bypass included: an execute call
        # without exactly one command, a command with a control character in it.
        if req.malformed:
            return Decision("ask", why=f"ask: {req.malformed}")
        if parsed is not None and parsed.suspect:
            return Decision("ask", why="ask: " + "; ".join(parsed.suspect))
        decision = self._might(req, parsed)
        if decision is not None:
            return decision
        # ... and a command whose changes cannot be known may change what governs the agents
        unknown = guarded_unknown(req)
        if unknown is not None:
            return Decision("ask", why=unknown)
        return self._allow(req, parsed)

    def _deny_or_ask(self, req: Request, parsed: ParsedCommand | None) -> Decision | None:
        """The first deny rule that matches, else the first ask rule (a command rule earlier in
        the list than a whole-request rule comes first)."""
        for action in ("deny", "ask"):
            bucket = self._by_action[action]
            hit = bucket.first_whole(req)
            if parsed is not None:  # a command rule earlier in the list comes first
                for part in parsed.parts:
                    cand = bucket.first_part(req, part)
                    if cand is not None and (hit is None or cand[0] < hit[0]):
                        hit = cand
            if hit is not None:
                index, rule = hit
                return Decision(action, rule, rule.label(index), f"{action} by {rule.label(index)}")
        return None

    def _might(self, req: Request, parsed: ParsedCommand | None) -> Decision | None:
        """What cannot be known goes to a person when a deny or ask rule could match it — even
        for an agent on bypass: otherwise `$CMD push` would get past `deny git push`."""
        unresolved = req.unresolved()
        if parsed is None and not unresolved and req.kind not in WALKING:
            return None
        for action in ("deny", "ask"):
            might = self._by_action[action].first_might(req, parsed)
            if might is not None:
                index, rule = might
                label = rule.label(index)
                unknown = _unknown_reason(rule, req, parsed, unresolved)
                return Decision("ask", None, label, f"ask: {label} might match ({unknown})")
        return None

    def _allow(self, req: Request, parsed: ParsedCommand | None) -> Decision:
        """The first allow rule for the whole request, else every part of its command allowed."""
        allow = self._by_action["allow"]
        hit = allow.first_whole(req)
        if hit is not None:
            index, rule = hit
            return Decision("allow", rule, rule.label(index), f"allowed by {rule.label(index)}")
        if parsed is None:
            doubts = req.path_doubts() + req.url_doubts()
            return Decision(None, why="ask: " + "; ".join(doubts) if doubts else "no rule matches")

        def find(part: Part, reach: int | None) -> tuple[int, Rule] | None:
            return allow.first_part(req, part, reach)

        verdicts, first, missing = allow_walk(parsed.parts, find, self._writable(req))
        if parsed.opaque:
            return Decision(None, why="ask: " + "; ".join(parsed.opaque), parts=verdicts)
        if missing or first is None:
            return Decision(
                None,
                why="not every command is allowed" if first else "no rule matches",
                parts=verdicts,
            )
        index, rule = first
        labels = sorted({v.rule for v in verdicts if v.rule and v.action == "allow"})
        return Decision(
            "allow",
            rule,
            rule.label(index),
            "every command allowed: " + "; ".join(labels),
            parts=verdicts,
        )

    def _writable(self, req: Request) -> Callable[[str], str | None]:
        """Whether a command may write a file: the label of an allow path rule for an edit of it."""
        allow = self._by_action["allow"]

        def writable(target: str) -> str | None:
            if unknown_target(target):
                return None  # (`> d/$x/f`, `> d/f*`: which file, only known when it runs)
            write = Request(agent=req.agent, kind="edit", paths=(target,), cwd=req.cwd)
            for index, rule in sorted(
                allow.whole_any + allow.whole_kind.get("edit", []), key=lambda t: t[0]
            ):
                if rule._root is not None and rule.facets_match(write):
                    return rule.label(index)
            return None

        return writable

    def explain(self, req: Request) -> Decision:
        """Like `decide`, with every part's own verdict filled in (`bridge.rules.explain`)."""
        from bridge.rules.explain import explain

        return explain(self, req)

    def check(self) -> list[tuple[int, Rule, str]]:
        """Every failing example: (rule number, rule, problem)."""
        return [
            (index, rule, problem)
            for index, rule in enumerate(self.rules, 1)
            for problem in rule.check_examples()
        ]


class _Bucket:
    """The rules of one action. Whole-request rules (no command) by kind; command rules by the
    first word of their prefixes (globbed first words go to `wild`)."""

    def __init__(self) -> None:
        self.whole_any: list[tuple[int, Rule]] = []
        self.whole_kind: dict[str, list[tuple[int, Rule]]] = {}
        self.cmd_first: dict[str, list[tuple[int, Rule]]] = {}
        self.cmd_wild: list[tuple[int, Rule]] = []
        self.cmd_all: list[tuple[int, Rule]] = []
        self.rooted_any: list[tuple[int, Rule]] = []  # path rules (no kind): they look at commands
        self.rooted_kind: dict[str, list[tuple[int, Rule]]] = {}
        self._merged: dict[str, list[tuple[int, Rule]]] = {}

    def add(self, index: int, rule: Rule) -> None:
        if rule._root is not None:
            if rule.kind:
                self.rooted_kind.setdefault(rule.kind, []).append((index, rule))
            else:
                self.rooted_any.append((index, rule))
        if not rule._prefixes:
            if rule.kind:
                self.whole_kind.setdefault(rule.kind, []).append((index, rule))
            else:
                self.whole_any.append((index, rule))
            self._merged.clear()
            return
        self.cmd_all.append((index, rule))
        # under the program's other names too: `deny podman rm` also looks at `docker rm`
        firsts = {p[0] for p in rule._prefixes} | {s.words[0] for s in rule._spelled}
        if any(_GLOB_CHARS & set(f) for f in firsts):
            self.cmd_wild.append((index, rule))
            return
        for first in firsts:
            self.cmd_first.setdefault(first, []).append((index, rule))

    def first_whole(self, req: Request) -> tuple[int, Rule] | None:
        kind = req.kind or ""
        merged = self._merged.get(kind)
        if merged is None:
            merged = sorted(self.whole_any + self.whole_kind.get(kind, []), key=lambda t: t[0])
            self._merged[kind] = merged
        for index, rule in merged:
            if rule.facets_match(req):
                return index, rule
        return None

    def _candidates(self, part: Part) -> list[tuple[int, Rule]]:
        first = part.words[0]
        cands = self.cmd_first.get(first, [])
        base = posixpath.basename(first)
        if base != first:
            cands = cands + [c for c in self.cmd_first.get(base, []) if c[1].action != "allow"]
        program = program_name(base)[0]  # `podman` for `deny docker`, `mkfs.ext4` for `mkfs`
        if program != base:
            cands = cands + [c for c in self.cmd_first.get(program, []) if c[1].action != "allow"]
        if self.cmd_wild:
            cands = cands + self.cmd_wild
        return cands

    def first_part(
        self, req: Request, part: Part, reach: int | None = None
    ) -> tuple[int, Rule] | None:
        best: tuple[int, Rule] | None = None
        for index, rule in self._candidates(part):
            if best is not None and index >= best[0]:
                continue
            if rule.part_matches(part, reach) and rule.facets_match(req):
                best = (index, rule)
        return best

    def _names_a_first_word(self, word: str) -> bool:
        """Whether a command rule of this action could start with `word`."""
        if self.cmd_wild:
            return True
        base = posixpath.basename(word)
        cmd_first = self.cmd_first
        return word in cmd_first or base in cmd_first or program_name(base)[0] in cmd_first

    def first_might(self, req: Request, parsed: ParsedCommand | None) -> tuple[int, Rule] | None:
        """The first deny or ask rule that might match what cannot be known: a command rule against
        a command that cannot be known, a path rule against words that might name a path or a
        path that cannot be resolved."""
        by_index: dict[int, tuple[int, Rule]] = {}
        if parsed is None:
            pass
        elif parsed.opaque or parsed.code:
            by_index.update((c[0], c) for c in self.cmd_all)
        else:
            for part in parsed.parts:
                if part.open_args or part.unknown:
                    by_index.update((c[0], c) for c in self._candidates(part))
                # a program that might run a command spelled among its arguments
                for _, sub in operand_commands(part, self._names_a_first_word):
                    by_index.update((c[0], c) for c in self._candidates(sub))
        if self.rooted_any or self.rooted_kind:
            by_index.update((c[0], c) for c in self.rooted_any)
            by_index.update((c[0], c) for c in self.rooted_kind.get(req.kind or "", ()))
        for index in sorted(by_index):
            rule = by_index[index][1]
            if rule.verdict(req) == MIGHT:
                return index, rule
        return None


def _unknown_reason(
    rule: Rule, req: Request, parsed: ParsedCommand | None, unresolved: list[str]
) -> str:
    """What cannot be known that a deny or ask rule might match: a path that cannot be resolved,
    a word that might name a path inside its directory, or the parts of the command only known
    when it runs."""
    if unresolved and rule.facets(req) == MIGHT:
        return "; ".join(unresolved)
    if parsed is None:
        if req.kind in WALKING and rule.path:
            what = {"move": "a move", "other": "a tool"}.get(req.kind or "", "a search")
            return f"{what} of a folder that holds {rule.path} may reach inside it"
        return "a path cannot be resolved"
    if rule.facets(req) == MIGHT:
        return f"a word of the command might name a path inside {rule.path}"
    among = runs_among_operands(rule, parsed) if not parsed.opaque else None
    if among is not None:
        return f"`{among[0].text}` might run `{among[1].text}`"
    return (
        "; ".join(parsed.opaque)
        or "; ".join(_part_unknown(p) for p in parsed.parts if rule.part_verdict(p) == MIGHT)
        or ("a program it runs is named in code that is not read" if parsed.code else "")
    )


def _part_unknown(part: Part) -> str:
    """Why a command might be one a deny or ask rule names."""
    if part.open_args:
        return f"`{part.text}` gets more arguments only known when it runs"
    if part.unknown:
        return f"`{part.text}` has words only known when it runs"
    return f"`{part.text}` reads more options from a file, its input or its configuration"
