"""`symposium-tui hook claude|codex|gemini`: the process a CLI runs before and after each tool.

It reads the hook's JSON on stdin and answers on stdout in the CLI's schema (`bridge.hooks.clis`),
nothing else. Order, as at every door: the rules (deny > ask > bypass > allow), then a card in a
running console — this machine's console socket, which is also where `symposium-tui serve` listens
for consoles attached over ssh — and with no console, or none answering in time, what the
`hook_no_console` preference says ("ask": the CLI's own prompt; "deny").

Fail closed: all three CLIs run the tool when a hook exits non-zero (other than 2), prints what
they cannot parse or overruns its timeout. So every error of this process — unreadable or
oversized input, an unknown event, a broken settings file, a console link that drops, an
exception — answers a block with its reason, and a watchdog answers before the timeout the CLI
was given (`--timeout`, written by `hook install`) whatever the process is doing: a `SIGALRM`
timer, whose handler interrupts a blocking read or wait (no thread to start: a hook's start-up is
felt on every tool call).

With a console running, the console decides (its rules, its cards) and audits; without one, this
process applies the rules itself and appends the decision to the audit log. Standard library only
(bashlex when a shell command that is not plain meets a command rule): no console, no ACP SDK, no pydantic.
"""

from __future__ import annotations

import json
import os
import sys
import time

from bridge.hooks import audit_append, clis
from bridge.hooks.clis import END, POST, PRE, START, Answer, HookCall
from bridge.hooks.link import DECIDE, EVENT, connect, connection_name, hello, read_result, send
from bridge.hooks.link import shorten as _shorten
from bridge.paths import runtime_dir_path as _runtime_dir

TYPE_CHECKING = False  # `typing` costs milliseconds of a hook's start: names for the checker only
if TYPE_CHECKING:
    import signal
    from _socket import socket
    from typing import Any

    from bridge.hooks.policy import HookPolicy
else:  # `signal` wraps its C core's numbers in enums (~0.5 ms of a hook's start): the core will do
    try:
        import _signal as signal
    except ImportError:  # another Python
        import signal

MAX_INPUT = 4 * 1024 * 1024  # bytes of hook input read; more is refused (blocked)
DEFAULT_TIMEOUT = {"claude": 600.0, "codex": 600.0, "gemini": 60.0}  # each CLI's own default
SPARE = 1.0  # seconds kept back from a console's wait, to apply the rules when none answers


class _Reply:
    """The one answer this process gives: written once, by the work or the watchdog, whichever
    gets there first. (The watchdog's handler runs in the one thread, between two steps of the
    work: `done` is set before anything is written, so the handler, finding it set, leaves the
    work to finish its answer.)"""

    def __init__(self) -> None:
        self.done = False
        # What the watchdog answers if the deadline comes first: changes as the work goes on.
        self.on_timeout: Answer = clis.blocked(
            "the hook did not finish in time (its input was not read)"
        )
        self.call: HookCall | None = None  # once the input is read

    def give(self, answer: Answer) -> bool:
        if self.done:
            return False
        self.done = True
        try:
            if answer.stderr:
                os.write(2, answer.stderr.encode("utf-8", "replace"))
            data = answer.stdout.encode("utf-8", "replace")
            while data:
                data = data[os.write(1, data) :]
        except OSError:
            pass
        return True


def _deadline_seconds(cli: str, argv: list[str]) -> float:
    """Seconds this process has: the CLI's timeout (`--timeout`, else its default) less a margin."""
    timeout = DEFAULT_TIMEOUT[cli]
    if "--timeout" in argv:
        try:
            timeout = float(argv[argv.index("--timeout") + 1])
        except (IndexError, ValueError):
            pass
    margin = min(3.0, max(0.2, timeout * 0.1))
    return max(0.2, timeout - margin)


def main(argv: list[str]) -> int:
    """The hook process. Returns the exit status; everything it prints goes through `_Reply`."""
    started = time.monotonic()
    cli = argv[0] if argv else ""
    reply = _Reply()
    if cli not in clis.CLIS:
        reply.give(clis.blocked(f"unknown CLI {cli!r}: expected one of {', '.join(clis.CLIS)}"))
        return 2
    seconds = _deadline_seconds(cli, argv[1:])

    def watchdog(signum: int, frame: Any) -> None:
        if reply.give(reply.on_timeout):
            os._exit(reply.on_timeout.code)

    signal.signal(signal.SIGALRM, watchdog)
    signal.setitimer(signal.ITIMER_REAL, max(0.001, seconds - (time.monotonic() - started)))
    try:
        answer = _run(cli, reply, started + seconds)
    except BaseException as exc:  # never a traceback on stdout, never an accidental allow
        answer = _failed_answer(reply.call, f"the hook failed: {type(exc).__name__}: {exc}")
    signal.setitimer(signal.ITIMER_REAL, 0)
    reply.give(answer)
    return answer.code


def _failed_answer(call: HookCall | None, reason: str) -> Answer:
    """An error's answer: a deny before a tool, nothing after one, else a block (no event)."""
    if call is None:
        return clis.blocked(reason)
    if call.event == PRE:
        try:  # audited like every decision (unless the audit log is what failed)
            _audit(call, {"rawInput": call.tool_input}, "deny", "default", None, reason)
        except Exception:  # noqa: BLE001 — the CLI is answered whatever the log does
            pass
        return clis.decision(call, "deny", f"symposium: {reason}")
    return clis.nothing()


class _Oversized(clis.HookInputError):
    def __init__(self, head: bytes) -> None:
        super().__init__(f"the hook input is larger than {MAX_INPUT // (1024 * 1024)} MiB: refused")
        self.head = head


def _read_stdin(deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        chunks.append(chunk)
        if size > MAX_INPUT:
            raise _Oversized(b"".join(chunks)[:65536])
        if time.monotonic() > deadline:
            raise clis.HookInputError("the hook input did not end in time")


def _event_named_in(cli: str, head: bytes) -> str | None:
    """The event an oversized input names in its first bytes (each CLI names it first), or None."""
    import re

    found = re.search(rb'"hook_event_name"\s*:\s*"(\w+)"', head)
    return clis.EVENTS[cli].get(found.group(1).decode()) if found else None


def _run(cli: str, reply: _Reply, deadline: float) -> Answer:
    try:
        raw = _read_stdin(deadline)
        if not raw.strip():
            raise clis.HookInputError("the hook input is empty")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise clis.HookInputError(f"the hook input is not JSON ({exc})") from None
        call = clis.parse(cli, data)
    except _Oversized as exc:
        if _event_named_in(cli, exc.head) in (POST, START, END):
            return clis.nothing()  # after the tool (a large output): nothing left to block
        return clis.blocked(str(exc))
    except clis.HookInputError as exc:
        return clis.blocked(str(exc))
    reply.call = call
    if call.event == PRE:
        reply.on_timeout = clis.decision(
            call, "deny", "symposium: no decision in time (the hook's timeout)"
        )
        return _pre(call, reply, deadline)
    reply.on_timeout = clis.nothing()  # after the tool, at a session's start or end: no verdict
    _after(call)
    return clis.nothing()


# --- settings, the console -------------------------------------------------------------------------


def _policy() -> HookPolicy:
    """The rules, bypasses and fallback of the settings file (its start-up cache when it holds)."""
    from bridge.hooks.policy import load_policy

    return load_policy()


def _config_dir() -> str:
    from bridge.paths import config_dir_path

    return config_dir_path()


def _context(call: HookCall, tool_call: dict[str, Any]) -> dict[str, Any]:
    return {
        "connection": connection_name(call),
        "session_id": call.session_id,
        "agent": call.agent,
        "tool_call": _shorten(tool_call),
        "cwd": call.cwd,
    }


# --- before the tool -------------------------------------------------------------------------------


def _pre(call: HookCall, reply: _Reply, deadline: float) -> Answer:
    tool_call = clis.tool_call(call)
    sock = connect()
    if sock is not None:  # the console decides (its rules, its cards): no settings read here
        return _ask_console(call, sock, tool_call, deadline, reply)
    try:
        policy = _policy()
    except Exception as exc:  # a broken settings file: its rules cannot be applied
        why = f"the settings file is broken: {exc}"
        _audit(call, tool_call, "deny", "default", None, why)  # a fail-closed default, recorded
        return clis.decision(call, "deny", f"symposium: {why}")
    return _decide_here(call, policy, tool_call, policy.no_console)


def _fallback_verdict(call: HookCall, no_console: str, rule_asks: bool = False) -> str:
    """What a call no rule and no person decided gets: "deny" when so configured, for a tool
    this door does not know, or when a rule asks and the CLI would run it unasked; else "ask"."""
    unasked = rule_asks and clis.asks_nobody(call)
    return "deny" if no_console == "deny" or not call.known_tool or unasked else "ask"


def _fallback(call: HookCall, no_console: str, why: str, *, rule_asks: bool = False) -> Answer:
    if _fallback_verdict(call, no_console, rule_asks) == "deny":
        what = "" if call.known_tool else f" (an unknown tool, {call.tool_name!r})"
        if rule_asks and (unasked := clis.asks_nobody(call)):  # Codex, whatever its mode
            what = f" (Codex would run it unasked, in {unasked})"
        return clis.decision(call, "deny", f"symposium: denied{what}: {why}")
    # Claude Code asks its user; Codex and Gemini CLI take no decision as "your own policy":
    # an approval mode that runs tools unasked (yolo, never) runs it
    then = "asks instead" if call.cli == "claude" else "decides by its own approval mode"
    if rule_asks and call.cli == "gemini":
        then = "asks instead"  # (Gemini CLI asks on "ask" whatever its approval mode)
    said = f"symposium: {why}; {clis.DISPLAY[call.cli]} {then}"
    return clis.decision(call, "ask", said, rule_asks=rule_asks)


def _ask_console(
    call: HookCall, sock: socket, tool_call: dict[str, Any], deadline: float, reply: _Reply
) -> Answer:
    """The console's broker decides: it knows how long a card may wait (`hook_wait`, within the
    time left less `SPARE`, kept to decide here if it does not answer)."""
    until = max(time.monotonic(), deadline - SPARE)
    params = {
        **_context(call, tool_call),
        "cli": call.cli,
        "wait": max(0.0, until - time.monotonic() - 0.1),
    }
    try:
        send(sock, hello(call), {"id": 1, "method": DECIDE, "params": params})
        result = read_result(sock, until)
    except TimeoutError:
        sock.close()  # the console withdraws the card
        return _unanswered(call, tool_call, reply)
    except (OSError, ValueError) as exc:
        sock.close()
        why = f"the console link failed before answering ({exc})"
        _audit(call, tool_call, "deny", "default", None, why)  # (the console may have audited none)
        return clis.decision(call, "deny", f"symposium: denied: {why}")
    sock.close()
    outcome = result.get("outcome")
    no_console = "deny" if result.get("fallback") == "deny" else "ask"
    if outcome in ("no_console", "timeout"):
        why = "no console answered in time" if outcome == "timeout" else "no console is attached"
        if result.get("asked_by"):
            why += f" ({result['asked_by']} asks a person)"
        return _fallback(call, no_console, why, rule_asks=bool(result.get("asked_by")))
    if outcome in ("allow_once", "allow_always"):
        return clis.decision(call, "allow", f"symposium: allowed by {_decided_by(result)}")
    why = result.get("reason") or f"denied by {_decided_by(result)}"
    return clis.decision(call, "deny", f"symposium: {why}")


def _unanswered(call: HookCall, tool_call: dict[str, Any], reply: _Reply) -> Answer:
    """A console that took the call and did not answer in time (hung, stopped, a `serve` link
    stalling): the rules, applied and audited here as with no console (a deny rule still denies),
    then `hook_no_console`; a denial when the settings cannot be read."""
    why = "no console answered in time"
    reply.on_timeout = clis.decision(call, "deny", f"symposium: denied: {why} (nor the settings)")
    try:
        policy = _policy()
    except Exception as exc:  # a broken settings file: neither its rules nor its preference
        why += f" (the settings file is broken: {exc})"
        _audit(call, tool_call, "deny", "default", None, why)
        return _fallback(call, "deny", why)
    return _decide_here(call, policy, tool_call, policy.no_console, why)


def _decided_by(result: dict[str, Any]) -> str:
    """Who decided, in words the agent is shown: a rule's label, or the person on the console."""
    rule = str(result.get("rule") or "")
    if result.get("resolver") == "console" or rule.startswith("answered by "):
        who = result.get("who")
        return f"{who} on the console" if who else "a person on the console"
    return rule or {"policy": "the rules"}.get(str(result.get("resolver")), "the console")


def _decide_here(
    call: HookCall,
    policy: HookPolicy,
    tool_call: dict[str, Any],
    no_console: str,
    why: str = "no console is running",
) -> Answer:
    """No console (or none answering): the rules, applied here (and audited here)."""
    from bridge.rules import Request, RuleSet

    request = Request.from_tool_call(call.agent, tool_call, cwd=call.cwd)
    try:
        # The rules run even when there are none, as the broker runs them: what cannot be judged
        # (a Bash call without one command, a control character in it) is asked, bypass included.
        verdict = RuleSet(policy.rules).decide(request)
    except Exception as exc:
        return _audited(call, tool_call, "deny", "policy", None, f"the rules failed: {exc}")
    action, label = verdict.action, verdict.label
    if action == "deny":
        rule_reason = verdict.rule.reason if verdict.rule is not None else None
        return _audited(call, tool_call, "deny", "policy", label, rule_reason or verdict.why)
    if action != "ask" and call.agent in policy.bypass:
        return _audited(
            call, tool_call, "allow", "policy", "agent bypass", f"always allow {call.agent}"
        )
    if action == "allow":
        return _audited(call, tool_call, "allow", "policy", label or "rule", verdict.why)
    if action == "ask":
        # the rule that asks, or the rule that might match and why (`… | sh`: what the shell
        # reads is not known), not a deny rule named as if it asked
        why += f" ({verdict.why.removeprefix('ask: ')})"
    asks = action == "ask"
    _audit(call, tool_call, _fallback_verdict(call, no_console, asks), "default", label, why)
    return _fallback(call, no_console, why, rule_asks=asks)


def _audited(
    call: HookCall,
    tool_call: dict[str, Any],
    verdict: str,
    resolver: str,
    rule: str | None,
    reason: str,
) -> Answer:
    approval_id = _audit(call, tool_call, verdict, resolver, rule, reason)
    if verdict == "allow" and approval_id is not None:
        _mark_approved(call, approval_id)
    word = "allowed" if verdict == "allow" else "denied"
    by = rule or resolver
    said = f"symposium: {word} by {by}" if by in reason else f"symposium: {word} by {by}: {reason}"
    return clis.decision(call, verdict, said)


def _audit(
    call: HookCall,
    tool_call: dict[str, Any],
    verdict: str,
    resolver: str,
    rule: str | None,
    reason: str,
) -> str | None:
    """The decision's line in the audit log, with the fields the broker writes for every door."""
    approval_id = _approval_id(call)
    outcome = {"allow": "allow_once", "deny": "reject_once"}.get(verdict, "cli_prompt")
    kind = "rule" if (rule or "").startswith("rule") else (rule or "default").replace(" ", "_")
    record = {
        "type": "decision",
        "ts": time.time(),
        "approval_id": approval_id,
        "connection": connection_name(call),
        "session_id": call.session_id,
        "agent": call.agent,
        "tool_call_id": tool_call.get("toolCallId"),
        "title": tool_call.get("title"),
        "kind": tool_call.get("kind"),
        "request": {
            k: tool_call[k] for k in ("title", "kind", "rawInput", "locations") if k in tool_call
        },
        "args_sha256": audit_append.args_hash(tool_call.get("rawInput")),
        "outcome": outcome,
        "option_id": verdict if verdict in ("allow", "deny") else None,
        "resolver": resolver,
        "decider": {"kind": kind, "rule": rule}
        if resolver == "policy"
        else {"kind": "default", "reason": reason},
        "answer": None,
        "rule": rule,
        "asked_by": rule if verdict == "ask" else None,
        "reason": reason,
        "host": os.environ.get("SYMPOSIUM_HOST_NAME") or os.uname().nodename,  # (gethostname)
    }
    audit_append.append(os.path.join(_config_dir(), "audit.jsonl"), record)
    return approval_id


def _approval_id(call: HookCall) -> str:
    key = f"{call.cli}\0{call.session_id}\0{call.tool_use_id or os.getpid()}"
    return "hook-" + audit_append.digest(key)[:12]


def _marker(call: HookCall) -> str:
    return os.path.join(_runtime_dir(), "hooks", _approval_id(call))


def _mark_approved(call: HookCall, approval_id: str) -> None:
    """Remember, for the `PostToolUse` process, that this process approved the call."""
    if not call.tool_use_id:
        return
    path = _marker(call)
    audit_append.private_dir(os.path.dirname(path))
    with open(path, "w") as fh:
        fh.write(approval_id)


# --- after the tool, sessions ----------------------------------------------------------------------


def _after(call: HookCall) -> None:
    """A tool's outcome (audited against its approval), a session's start or end: to the console."""
    status = None
    if call.event == POST:
        status = "failed" if call.failed else "completed"
        _outcome_here(call, status)
    sock = connect()
    if sock is None:
        return
    params: dict[str, Any] = {
        "event": {POST: "post", START: "start", END: "end"}[call.event],
        "connection": connection_name(call),
        "session_id": call.session_id,
        "agent": call.agent,
        "cli": call.cli,
        "cwd": call.cwd,
    }
    if call.event == POST:
        tool_call = clis.tool_call(call)
        params.update(
            tool_call=_shorten(tool_call),
            status=status,
            content=_shorten(_response_text(call.tool_response)),
        )
    if call.event == END:
        params["reason"] = call.extra.get("reason") or call.extra.get("trigger") or "ended"
    from _socket import SHUT_WR

    try:
        send(sock, hello(call), {"method": EVENT, "params": params})
        sock.shutdown(SHUT_WR)
        sock.settimeout(1.0)
        while sock.recv(4096):  # the console closes its end once it has read ours
            pass
    except OSError:
        pass
    finally:
        sock.close()


def _response_text(response: Any) -> str:
    if response is None:
        return ""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        for key in ("stdout", "output", "llmContent", "returnDisplay", "content"):
            if isinstance(response.get(key), str) and response[key]:
                return str(response[key])
    return json.dumps(response, default=str)


def _outcome_here(call: HookCall, status: str) -> None:
    """A call this process's kind approved without a console: its outcome, audited here."""
    if not call.tool_use_id:
        return
    path = _marker(call)
    try:
        with open(path) as fh:
            approval_id = fh.read().strip()
        os.unlink(path)
    except OSError:
        return
    audit_append.append(
        os.path.join(_config_dir(), "audit.jsonl"),
        {
            "type": "tool_outcome",
            "ts": time.time(),
            "approval_id": approval_id,
            "connection": connection_name(call),
            "session_id": call.session_id,
            "tool_call_id": call.tool_use_id,
            "status": status,
        },
    )


def run() -> None:
    """Entry point for `python -m bridge.hooks.decide CLI`."""
    sys.exit(main(sys.argv[1:]))


if __name__ == "__main__":
    run()
