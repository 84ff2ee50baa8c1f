"""`symposium-tui rules check|explain` and `symposium-tui audit head|verify|export`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any


def add_parsers(sub: Any, common: Any) -> None:
    p = sub.add_parser("rules", help="check the approval rules, or explain a decision")
    common(p, suppress=True)
    rsub = p.add_subparsers(dest="rules_command", metavar="check | explain", required=True)
    c = rsub.add_parser("check", help="validate the rules and run their match/not_match examples")
    c.add_argument("--file", metavar="SETTINGS", help="a settings file (default: yours)")
    e = rsub.add_parser(
        "explain",
        help="which rule decides a request, and why",
        description="REQUEST is an ACP tool call as JSON (title, kind, rawInput, locations; "
        'plus "agent"), or use --agent and a shell command: '
        "symposium-tui rules explain --agent claude -- git push --force",
    )
    e.add_argument("request", nargs="*", metavar="REQUEST", help="JSON, or a command after --")
    e.add_argument("--agent", help="the agent asking (its settings id or name)")
    e.add_argument(
        "--kind",
        choices=_KINDS,
        metavar="KIND",
        help=f"the tool kind, one of ACP's: {', '.join(_KINDS)} (default: execute for a command)",
    )
    e.add_argument("--file", metavar="SETTINGS", help="a settings file (default: yours)")
    e.add_argument("--json", action="store_true", help="print the explanation as JSON")

    p = sub.add_parser("audit", help="verify or export the approval audit log")
    common(p, suppress=True)
    asub = p.add_subparsers(dest="audit_command", metavar="head | verify | export", required=True)
    h = asub.add_parser("head", help="print the chain's head (SEQ:HASH): keep it somewhere else")
    h.add_argument("--file", metavar="AUDIT", help="an audit log (default: yours)")
    v = asub.add_parser("verify", help="check the hash chain: edited, removed, reordered entries")
    v.add_argument("--file", metavar="AUDIT", help="an audit log (default: yours)")
    v.add_argument(
        "--head",
        metavar="HEAD",
        help="a head recorded earlier (SEQ:HASH or HASH from `audit head`), or a record of the "
        "heads a console saw (its audit-heads.json): the chain must still pass through it",
    )
    x = asub.add_parser("export", help="the entries since a time, as JSON lines or CSV")
    x.add_argument("--file", metavar="AUDIT", help="an audit log (default: yours)")
    x.add_argument("--since", metavar="WHEN", help="2026-11-24, 2026-11-24T10:00 (UTC), 12h, 7d")
    x.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")


def _settings(path: str | None) -> Any:
    from bridge.settings import Settings

    return Settings.load(path) if path else Settings.load()


def cmd_rules(args: argparse.Namespace) -> int:
    from bridge.settings import SettingsError

    if args.rules_command == "check":
        from bridge.settings import rule_problems

        try:
            problems, settings = rule_problems(args.file)
        except SettingsError as exc:
            print(f"symposium-tui rules check: {exc}", file=sys.stderr)
            return 1
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print(
                f"{len(problems)} problem(s): the file is not applied (the last good rules stay "
                "in force in a running console)",
                file=sys.stderr,
            )
            return 1
        examples = sum(len(r.match) + len(r.not_match) for r in settings.rules)
        print(f"{len(settings.rules)} rule(s), {examples} example(s): all hold ({settings.path})")
        return 0
    return _explain(args)


# ACP's tool kinds (`acp.schema.ToolKind`; named here: this command does not import the SDK)
_KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode",
          "other")  # fmt: skip


def _explain(args: argparse.Namespace) -> int:
    from bridge.settings import SettingsError

    try:
        settings = _settings(args.file)
    except SettingsError as exc:
        print(f"symposium-tui rules explain: {exc}", file=sys.stderr)
        return 1
    try:
        request = _request(args, settings)
    except ValueError as exc:
        print(f"symposium-tui rules explain: {exc}", file=sys.stderr)
        return 2
    policy = settings.policy()
    decision = policy.ruleset().explain(request)
    bypass = request.agent in policy.bypass_agents
    verdict = _verdict(decision.action, bypass)
    if args.json:
        out = decision.to_dict()
        out["verdict"] = verdict.split(" ")[0]
        out["bypass"] = bypass
        print(json.dumps(out, indent=2))
        return 0
    print(f"verdict: {verdict}")
    if decision.label:
        print(f"decided by: {decision.label}")
    if decision.why and decision.why != f"{decision.action} by {decision.label}":
        print(f"why: {decision.why}")
    if decision.rule is not None and decision.rule.reason:
        print(f"reason told to the agent: {decision.rule.reason}")
    if bypass and decision.action in ("deny", "ask"):
        print(f"note: {request.agent} is on bypass, but a {decision.action} rule beats bypass")
    for part in decision.parts:
        status = part.action or ("wrapper" if part.role == "wrapper" else "no allow")
        print(f"  {part.part}: {status} — {part.rule or 'no rule'}")
    return 0


def _agent_id(agent: str, settings: Any) -> str:
    """The agent as rules and bypass know it — its settings id — given its id or its name (as the
    console shows it: "Eliza (built in)", a configured agent's `name`)."""
    from bridge.settings import BUILTIN_AGENT_IDS, agent_display_name

    if not agent or agent in settings.agents or agent in BUILTIN_AGENT_IDS:
        return agent
    for agent_id in (*settings.agents, BUILTIN_AGENT_IDS[0]):
        if agent_display_name(agent_id, settings).casefold() == agent.casefold():
            return str(agent_id)
    return agent


def _request(args: argparse.Namespace, settings: Any) -> Any:
    """The request `rules explain` is given: an ACP tool call as JSON, or a shell command
    (ValueError: neither)."""
    from bridge.rules import Request

    words = list(args.request)
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        try:
            call = json.loads(words[0])
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"not JSON: {exc}") from None
        if not isinstance(call, dict):
            raise ValueError("expected a JSON object")
        agent = args.agent or str(call.get("agent") or "")
        return Request.from_tool_call(_agent_id(agent, settings), call)
    if not words:
        raise ValueError("give a JSON request or a command")
    # one word is a script (`-- 'git status && ls'`); several are the argv the shell gave us
    # (`-- bash -c "git status"`), written back as the script that runs exactly that argv
    command = shlex.join(words) if len(words) > 1 else words[0]
    kind = args.kind or "execute"
    return Request.from_tool_call(
        _agent_id(args.agent or "", settings),
        {"title": command, "kind": kind, "rawInput": {"command": command}},
    )


def _verdict(action: str | None, bypass: bool) -> str:
    if action == "deny":
        return "deny"
    if action == "ask":
        return "ask (a person decides)"
    if bypass:
        return "allow (the agent is on bypass)"
    if action == "allow":
        return "allow"
    return "ask (no rule decides; a person is asked)"


def _recorded_heads(text: str, log: Any) -> list[Any]:
    """`--head`: SEQ:HASH, a HASH, or a file: a console's record of audit heads (the heads it saw
    for this host's log at `log`) or a file holding one head."""
    import json
    import os
    from pathlib import Path

    from bridge.audit import Head

    candidate = Path(text).expanduser()
    if not candidate.is_file():
        return [Head.parse(text)]
    body = candidate.read_text()
    try:
        record = json.loads(body)
    except (ValueError, RecursionError):
        return [Head.parse(body)]
    from bridge.approvals import host_name
    from symposium_tui.audit_heads import heads_for

    host = host_name()
    heads = heads_for(record, host, os.path.abspath(log))
    if not heads:
        raise ValueError(f"{candidate} records no head of {log} on {host}")
    return heads


def cmd_audit(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bridge import audit

    if args.file:
        path = Path(args.file)
    else:
        from symposium_tui.hosting.hosted import audit_path

        path = audit_path()
    if not path.exists():
        print(f"symposium-tui audit: no audit log at {path}", file=sys.stderr)
        return 1
    if args.audit_command == "head":
        print(audit.head(path))
        return 0
    if args.audit_command == "verify":
        try:
            heads = _recorded_heads(args.head, path) if args.head else []
        except ValueError as exc:
            print(f"symposium-tui audit verify: {exc}", file=sys.stderr)
            return 2
        result = audit.verify(path, heads=heads)
        for problem in result.problems:
            print(f"{path}: {problem}", file=sys.stderr)
        note = (
            f", {result.unchained} older unchained line(s) before the chain"
            if result.unchained
            else ""
        )
        if result.ok:
            print(f"{path}: {result.entries} entries, the chain holds{note}; head {result.head}")
            return 0
        print(
            f"{path}: the chain is broken ({len(result.problems)} problem(s)){note}",
            file=sys.stderr,
        )
        return 1
    try:
        since = audit.parse_since(args.since) if args.since else None
    except ValueError as exc:
        print(f"symposium-tui audit export: {exc}", file=sys.stderr)
        return 2
    for chunk in audit.export(audit.read_entries(path), since=since, fmt=args.format):
        sys.stdout.write(chunk)
    return 0
