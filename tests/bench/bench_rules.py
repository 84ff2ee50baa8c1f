"""Deciding a permission request against 1,000 rules, against an empty rule set in the same run.

    .venv/bin/python tests/bench/bench_rules.py [--rules 1000] [--repeats 31]

What is timed is `Policy.decide(ctx)` — the broker's whole policy step: the request built from the
ACP tool call, the command parsed, the rules consulted, the resolution made — for a mix of 200
requests (simple and compound shell commands, some behind a wrapper such as `sudo` or `timeout 5`
or with options before a subcommand, edits with paths, fetches with URLs, reads, other calls;
some allowed, some denied, most matching nothing, the costly case), each timed on its own.

The rule set is a realistic 1,000: command prefix rules over a few hundred programs (allow and
deny), title globs and regexes, path rules, URL rules, agent-specific rules, most with a kind;
three deny path rules have none, so they look at the paths every shell command's words name.

Two numbers:

1. **matching**: the median per-request time with 1,000 rules minus the median with none, with
   each command already parsed (the parse is cached, as it is for a request's second rule).
   Target: <= 0.2 ms.
2. **parsing**: the median cost of parsing a request's command once (`bashlex` for compound
   commands, a plain `shlex` split for simple ones) — paid once per request that has a command,
   whatever the number of rules; reported, not part of the target.

Times are this process's CPU time; medians over the repeats of the per-request median.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bridge import rules as rules_mod
from bridge.approvals import ApprovalContext, Policy
from bridge.rules import Rule
from tests.bench.report import row, spread

OPTIONS = [
    {"optionId": "a", "name": "Allow", "kind": "allow_once"},
    {"optionId": "r", "name": "Reject", "kind": "reject_once"},
]
KINDS = ["read", "edit", "execute", "fetch", "search", "other", "delete", "move"]


def programs(n: int) -> list[str]:
    base = ["git", "npm", "pnpm", "yarn", "cargo", "go", "make", "pytest", "python", "node",
            "docker", "kubectl", "ls", "cat", "grep", "rg", "sed", "awk", "find", "curl"]  # fmt: skip
    return base + [f"tool{i}" for i in range(n - len(base))]


def build_rules(n: int, root: Path, rng: random.Random) -> list[Rule]:
    progs = programs(300)
    subs = ["status", "diff", "log", "build", "test", "run", "install", "push", "show", "list"]
    out: list[Rule] = []
    while len(out) < n:
        r = rng.random()
        agent = rng.choice([None, None, None, "claude-*", "gemini", f"bot-{rng.randint(0, 50)}"])
        if r < 0.55:
            action = "deny" if rng.random() < 0.2 else "allow"
            prefix = (
                f"{rng.choice(progs)} {rng.choice(subs)}"
                if rng.random() < 0.7
                else rng.choice(progs)
            )
            out.append(Rule(action, agent=agent, kind="execute", command=prefix))
        elif r < 0.75:
            kind = rng.choice(KINDS)
            word = rng.choice(subs + progs[:40])
            if rng.random() < 0.5:
                out.append(
                    Rule(
                        rng.choice(["allow", "deny", "ask"]),
                        agent=agent,
                        kind=kind,
                        title=f"*{word}*{rng.randint(0, 99)}",
                    )
                )
            else:
                out.append(Rule("deny", agent=agent, kind=kind, title_regex=rf"\b{word}\d{{3}}\b"))
        elif r < 0.9:
            kind = rng.choice(["edit", "read", "delete", "move"])
            out.append(
                Rule(
                    rng.choice(["allow", "deny"]),
                    agent=agent,
                    kind=kind,
                    path=str(root / f"p{rng.randint(0, 300)}"),
                )
            )
        else:
            out.append(Rule(rng.choice(["allow", "deny"]), agent=agent, kind="fetch", url=f"https://h{rng.randint(0, 200)}.example/d{rng.randint(0, 9)}/"))  # fmt: skip
    # Directories no call may touch, whatever its kind: these look at every shell command's words.
    out[-3:] = [Rule("deny", path=str(root / "secrets")), Rule("deny", path="~/.ssh"),
                Rule("deny", path="/etc/ssl/private")]  # fmt: skip
    return out


def build_requests(root: Path, rng: random.Random, n: int = 200) -> list[ApprovalContext]:
    progs = programs(300)
    out = []
    for i in range(n):
        r = rng.random()
        agent = rng.choice(["claude-code", "gemini", "bot-7", "codex"])
        if r < 0.5:
            if rng.random() < 0.5:
                command = (
                    f"{rng.choice(progs)} {rng.choice(['status', 'build', 'x', '--help'])} -v f{i}"
                )
            else:
                command = f"cd src && {rng.choice(progs)} test f{i} | grep -v ok"
            shape = rng.random()
            if shape < 0.15:  # a wrapper, whose command is checked too
                wrapper = rng.choice(["sudo", "timeout 5", "env -i", "nice -n 5", "xargs"])
                command = f"{wrapper} {command}"
            elif shape < 0.25:  # options between a program and its subcommand
                command = f"git -C dir{i} --no-pager {rng.choice(['push', 'status', 'log'])} x"
            call = {
                "toolCallId": f"t{i}",
                "title": command,
                "kind": "execute",
                "rawInput": {"command": command},
            }
        elif r < 0.7:
            path = str(root / f"p{rng.randint(0, 400)}" / f"f{i}.py")
            call = {
                "toolCallId": f"t{i}",
                "title": f"Edit {path}",
                "kind": "edit",
                "locations": [{"path": path}],
            }
        elif r < 0.8:
            url = f"https://h{rng.randint(0, 300)}.example/d{rng.randint(0, 9)}/page{i}"
            call = {"toolCallId": f"t{i}", "title": url, "kind": "fetch", "rawInput": {"url": url}}
        else:
            kind = rng.choice(KINDS)
            call = {"toolCallId": f"t{i}", "title": f"{rng.choice(progs)} thing {i}", "kind": kind}
        out.append(ApprovalContext("c", "s", agent, call, OPTIONS, cwd=str(root)))  # fmt: skip
    return out


def per_request(policy: Policy, requests: list[ApprovalContext]) -> float:
    """The median CPU time of one decision over the requests."""
    times = []
    clock = time.process_time_ns
    for ctx in requests:
        t0 = clock()
        policy.decide(ctx)
        times.append(clock() - t0)
    return statistics.median(times) / 1e6  # ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=31)
    args = ap.parse_args()
    rng = random.Random(13)
    root = Path("/tmp/bench-rules-root")
    rules = build_rules(args.rules, root, rng)
    requests = build_requests(root, rng)
    full = Policy(rules=rules)
    empty = Policy()
    # One pass to warm every cache (the parses, the rule set's index); then alternate the two.
    for ctx in requests:
        full.decide(ctx)
        empty.decide(ctx)
    with_rules, without = [], []
    for _ in range(args.repeats):
        with_rules.append(per_request(full, requests))
        without.append(per_request(empty, requests))
    m_full, m_empty = statistics.median(with_rules), statistics.median(without)
    decisions = [full.decide(ctx) for ctx in requests]
    decided = sum(d is not None for d in decisions)
    print(f"rules: {len(rules)}; requests: {len(requests)} ({decided} decided by a rule, "
          f"{len(requests) - decided} left to a person)")  # fmt: skip
    print(f"median decision, {len(rules)} rules: {m_full * 1000:.1f} us")
    print(f"median decision, no rules:   {m_empty * 1000:.1f} us")
    cost = m_full - m_empty
    print(f"matching cost of {len(rules)} rules: {cost * 1000:.1f} us "
          f"(target <= 200 us: {'met' if cost <= 0.2 else 'NOT met'}; ratio to target {cost / 0.2:.2f})")  # fmt: skip
    _, low, high, count = spread([(a - b) * 1000 for a, b in zip(with_rules, without)])
    row(
        f"{len(rules):,} rules, per ordinary decision",
        baseline="no rules",
        target="<= 200 us",
        result=cost * 1000,
        unit="us",
        met=cost <= 0.2,
        low=low,
        high=high,
        samples=count,
    )
    commands = [ctx.tool_call["rawInput"]["command"] for ctx in requests
                if "command" in ctx.tool_call.get("rawInput", {})]  # fmt: skip
    parse_simple, parse_compound = [], []
    for command in commands:
        t0 = time.process_time_ns()
        rules_mod.parse_command(command)
        (parse_compound if "&&" in command else parse_simple).append(time.process_time_ns() - t0)
    print(f"parsing a command once (not in the target): simple {statistics.median(parse_simple) / 1000:.1f} us, "
          f"compound (bashlex) {statistics.median(parse_compound) / 1000:.1f} us")  # fmt: skip


if __name__ == "__main__":
    main()
