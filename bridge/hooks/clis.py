"""Each CLI's hook contract: the events it sends, its tool names as our requests, its answers.

Standard library only: this runs in a new process for every tool call.

What each CLI sends on stdin (common fields: `session_id`, `cwd`, `hook_event_name`):

* Claude Code — `PreToolUse` / `PostToolUse` / `PostToolUseFailure` with `tool_name`,
  `tool_input`, `tool_use_id` (and `tool_response` after); `SessionStart` / `SessionEnd`. A
  `PreToolUse` is answered with `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason": …}}`; the reason of a
  deny is what the model is told.
* Codex — the same event names and the same `PreToolUse` deny (its shell tool is `Bash`, file
  edits `apply_patch` with the patch as `tool_input.command`, MCP tools `mcp__server__tool`).
  It takes no "allow" or "ask" there (either is reported as a failed hook, and the tool runs):
  those are answered with no decision, which leaves the call to Codex's own approval policy.
* Gemini CLI — `BeforeTool` / `AfterTool` with `tool_name`, `tool_input` (and `tool_response`
  after), `SessionStart` / `SessionEnd`. A `BeforeTool` is answered with `{"decision": "allow"|
  "deny", "reason": …}`; leaving the decision out hands it to Gemini CLI's approval mode, and
  `{"decision": "ask"}` (what a rule asks about) makes it ask its user, yolo or not.

Every CLI also blocks a tool when the hook exits with status 2, taking stderr as the reason: that
is the answer when the input cannot even be read (no event is known to answer in).
"""

from __future__ import annotations

import os

# Only names for the type checker: `typing` and `dataclasses` cost milliseconds of a hook's start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

CLIS = ("claude", "codex", "gemini")
#: The agent label the rules see (a rule's `agent = "claude-code"`), and the cards show.
AGENT = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli"}
#: What a person reads for each CLI.
DISPLAY = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}

PRE, POST, START, END = "pre", "post", "start", "end"
EVENTS: dict[str, dict[str, str]] = {
    "claude": {
        "PreToolUse": PRE,
        "PostToolUse": POST,
        "PostToolUseFailure": POST,
        "SessionStart": START,
        "SessionEnd": END,
    },
    "codex": {
        "PreToolUse": PRE,
        "PostToolUse": POST,
        "SessionStart": START,
        "SessionEnd": END,
    },
    "gemini": {
        "BeforeTool": PRE,
        "AfterTool": POST,
        "SessionStart": START,
        "SessionEnd": END,
    },
}

# Tool names → ACP tool kinds (the `kind` a rule matches), per CLI.
_CLAUDE_KINDS = {
    "Bash": "execute",
    "BashOutput": "read",
    "KillShell": "execute",
    "KillBash": "execute",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Read": "read",
    "NotebookRead": "read",
    "Glob": "search",
    "Grep": "search",
    "LS": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "Task": "think",
    "Agent": "think",
    "TodoWrite": "think",
    "TaskCreate": "think",
    "TaskUpdate": "think",
    "TaskList": "think",
    "TaskGet": "think",
    "AskUserQuestion": "think",
    "ExitPlanMode": "switch_mode",
    "EnterPlanMode": "switch_mode",
    "Skill": "other",
    "SlashCommand": "other",
    "ToolSearch": "search",
}
_CODEX_KINDS = {
    "Bash": "execute",
    "shell": "execute",
    "exec_command": "execute",
    "local_shell": "execute",
    "apply_patch": "edit",
    "update_plan": "think",
    "view_image": "read",
    "web_search": "fetch",
}
_GEMINI_KINDS = {
    "run_shell_command": "execute",
    "replace": "edit",
    "edit": "edit",
    "write_file": "edit",
    "read_file": "read",
    "read_many_files": "read",
    "list_directory": "search",
    "glob": "search",
    "search_file_content": "search",
    "grep_search": "search",
    "web_fetch": "fetch",
    "google_web_search": "fetch",
    "save_memory": "think",
    "write_todos": "think",
}
KINDS = {"claude": _CLAUDE_KINDS, "codex": _CODEX_KINDS, "gemini": _GEMINI_KINDS}

_PATH_KEYS = ("file_path", "path", "notebook_path", "absolute_path", "dir_path", "directory")
# Codex's parser trims each line before it reads a header (`*** Add File: PATH`): padding too.
_PATCH_PATH = r"^\s*\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$"


def _regex(pattern: str, *, multiline: bool = False) -> re.Pattern[str]:
    import re  # only for a patch or a URL in a prompt: `re.compile` caches the pattern

    return re.compile(pattern, re.MULTILINE if multiline else 0)


class HookInputError(ValueError):
    """Input the hook cannot act on: the reason it blocks with."""


class HookCall:
    """One hook invocation, as read from stdin."""

    __slots__ = (
        "cli",
        "cwd",
        "event",
        "extra",
        "failed",
        "raw_event",
        "session_id",
        "tool_input",
        "tool_name",
        "tool_response",
        "tool_use_id",
    )

    def __init__(
        self, cli: str, raw_event: str, event: str, session_id: str, cwd: str | None = None
    ) -> None:
        self.cli = cli
        self.raw_event = raw_event
        self.event = event  # PRE, POST, START or END
        self.session_id = session_id
        self.cwd = cwd
        self.tool_name = ""
        self.tool_input: dict[str, Any] = {}
        self.tool_use_id: str | None = None
        self.tool_response: Any = None
        self.failed = False
        self.extra: dict[str, Any] = {}

    @property
    def agent(self) -> str:
        return AGENT[self.cli]

    @property
    def known_tool(self) -> bool:
        return (
            self.tool_name in KINDS[self.cli] or mcp_name(self.cli, self.tool_name, {}) is not None
        )


def parse(cli: str, data: Any) -> HookCall:
    """The call a CLI's hook JSON describes; HookInputError when it is not one we know."""
    if not isinstance(data, dict):
        raise HookInputError("the hook input is not a JSON object")
    raw_event = data.get("hook_event_name")
    if not isinstance(raw_event, str) or not raw_event:
        raise HookInputError("the hook input names no hook_event_name")
    event = EVENTS[cli].get(raw_event)
    if event is None:
        raise HookInputError(f"unknown hook event {raw_event!r} for {DISPLAY[cli]}")
    session = data.get("session_id")
    cwd = data.get("cwd")
    call = HookCall(
        cli=cli,
        raw_event=raw_event,
        event=event,
        session_id=str(session) if isinstance(session, str | int) and session != "" else "default",
        cwd=cwd if isinstance(cwd, str) and cwd else None,
    )
    if event in (PRE, POST):
        name = data.get("tool_name")
        if not isinstance(name, str) or not name:
            raise HookInputError("the hook input names no tool_name")
        tool_input = data.get("tool_input")
        if tool_input is None:
            tool_input = {}
        if not isinstance(tool_input, dict):
            raise HookInputError("the hook input's tool_input is not a JSON object")
        call.tool_name = name
        call.tool_input = tool_input
        tool_use_id = data.get("tool_use_id") or data.get("call_id")
        call.tool_use_id = str(tool_use_id) if tool_use_id else None
        if isinstance(data.get("mcp_context"), dict):
            call.extra["mcp_context"] = data["mcp_context"]
    if event == POST:
        call.tool_response = data.get("tool_response")
        response = call.tool_response
        call.failed = raw_event == "PostToolUseFailure" or bool(
            isinstance(response, dict) and (response.get("error") or response.get("is_error"))
        )
        if raw_event == "PostToolUseFailure" and call.tool_response is None:
            call.tool_response = data.get("error")
    for key in ("source", "reason", "trigger", "permission_mode"):
        if isinstance(data.get(key), str):
            call.extra[key] = data[key]
    return call


def asks_nobody(call: HookCall) -> str | None:
    """Where the CLI runs, with nobody asked, a call the hook answers with no decision, or None.
    Codex takes no "ask" from a hook, and no decision leaves the call to an approval policy that
    runs it unasked in every mode: `bypassPermissions` (approval `never`: `codex exec`,
    `--dangerously-bypass-approvals-and-sandbox`), `dontAsk`, and `default` (`on-request`,
    `on-failure`, `untrusted`: a command its sandbox allows, or one it deems safe, runs)."""
    if call.cli != "codex":
        return None
    mode = call.extra.get("permission_mode")
    return mode if mode in ("bypassPermissions", "dontAsk") else f"its sandbox, {mode or 'default'}"


def mcp_name(cli: str, tool: str, extra: dict[str, Any]) -> tuple[str, str] | None:
    """(server, tool) of an MCP tool, or None. Claude Code and Codex name them
    `mcp__server__tool`, Gemini CLI `mcp_server_tool` (with `mcp_context` giving the parts)."""
    if tool.startswith("mcp__"):
        server, sep, name = tool[5:].partition("__")
        if sep and server and name:
            return server, name
        return None
    if cli == "gemini":
        ctx = extra.get("mcp_context") or {}
        named = ctx.get("server_name"), ctx.get("tool_name")
        if all(isinstance(part, str) and part for part in named):
            return str(named[0]), str(named[1])
        if tool.startswith("mcp_") and tool.count("_") >= 2:
            first, _, rest = tool[4:].partition("_")
            return first, rest
    return None


def _absolute(path: str, cwd: str | None) -> str:
    """`path` read in `cwd`, with its `..` left in: the rules resolve it as the kernel does (a
    `..` after a symlink leaves the symlink's target) and judge the written spelling too."""
    path = os.path.expanduser(path)
    if cwd and not os.path.isabs(path):
        return os.path.join(cwd, path)
    return path


def _execute_title(raw: dict[str, Any], call: HookCall) -> str:
    """Bash-like tools: the command (a string, or an argv list — `bash -lc SCRIPT` is the script)
    and its working folder, made absolute; the title is the command."""
    if "cmd" in raw and "command" not in raw:  # Codex's exec_command: one command, judged once
        raw["command"] = raw.pop("cmd")
    command = raw.get("command")
    title = command if isinstance(command, str) else call.tool_name
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        # an argv: judged as the words it is (`["bash", "-c", "rm -rf /"]` runs `rm -rf /`);
        # titled as a shell would write it, or as the script of `bash -lc SCRIPT`
        import shlex  # (with `re`: only for an argv, off the plain command's start-up path)

        lc = len(command) == 3 and command[1] == "-lc"
        title = command[2] if lc else shlex.join(command)
    cwd = raw.get("dir_path") or raw.get("workdir") or raw.get("directory")
    if isinstance(cwd, str) and cwd:
        raw["cwd"] = _absolute(cwd, call.cwd)
    return title


def _patch_title(raw: dict[str, Any], paths: list[str]) -> str:
    """Codex's apply_patch: the patch text (however it is passed) and every file it names."""
    patch = raw.pop("command", None) or raw.pop("patch", None) or raw.pop("input", None)
    if isinstance(patch, list):
        patch = "\n".join(str(p) for p in patch)
    if isinstance(patch, str):
        raw["patch"] = patch
        paths.extend(m.group(1) for m in _regex(_PATCH_PATH, multiline=True).finditer(patch))
    return "apply_patch " + " ".join(paths)


def _named_paths(raw: dict[str, Any]) -> list[str]:
    """The paths an edit, read or search names, in every field the three CLIs use."""
    paths = [raw[key] for key in _PATH_KEYS if isinstance(raw.get(key), str) and raw[key]]
    for value in raw.get("paths") or raw.get("file_paths") or ():
        if isinstance(value, str) and value:
            paths.append(value)
    return paths


def _fetch_title(raw: dict[str, Any], name: str) -> str:
    """WebFetch-like tools: the URL, or every one in the prompt (Gemini CLI's web_fetch fetches
    each word of its prompt that holds `://`, as its `parsePrompt` reads them: a rule judges them
    all); else the search query."""
    url = raw.get("url")
    if not isinstance(url, str) and isinstance(raw.get("prompt"), str):
        words = [w for w in raw["prompt"].split() if "://" in w]
        if words:
            raw["urls"] = words
            url = words[0]
    if isinstance(url, str) and url:
        return url
    if isinstance(raw.get("query"), str):
        return f"{name} {raw['query']}"
    return name


def tool_call(call: HookCall) -> dict[str, Any]:
    """The call as an ACP `ToolCallUpdate` (camelCase JSON): what the rules, the cards and the
    tool-call log see from every door. Bash → `execute` with its command; Edit / Write /
    MultiEdit / apply_patch → `edit` with every path; WebFetch → `fetch` with its URL; an MCP
    tool → `other` titled `mcp__server__tool` (the same for all three CLIs)."""
    name = call.tool_name
    raw = dict(call.tool_input)
    kind = KINDS[call.cli].get(name)
    mcp = mcp_name(call.cli, name, call.extra)
    title = name
    paths: list[str] = []
    if mcp is not None:
        kind = "other"
        title = f"mcp__{mcp[0]}__{mcp[1]}"
        raw = {"server": mcp[0], "tool": mcp[1], "arguments": raw}
    elif kind is None:
        kind = "other"
    elif kind == "execute":
        title = _execute_title(raw, call)
    else:
        if name == "apply_patch":
            title = _patch_title(raw, paths)
        if kind in ("edit", "read", "search"):
            paths.extend(_named_paths(raw))
            if call.cli == "gemini" and name in ("read_many_files", "glob"):
                from bridge.hooks.globs import gemini_paths  # (node-glob's reading of a glob)

                paths.extend(gemini_paths(name, raw, call.cwd))
            if paths and name != "apply_patch":
                title = f"{name} {paths[0]}"
        elif kind == "fetch":
            title = _fetch_title(raw, name)
    paths = [_absolute(p, call.cwd) for p in paths]
    for key in _PATH_KEYS:  # the rules resolve these keys too: keep them absolute as well
        if isinstance(raw.get(key), str) and raw[key]:
            raw[key] = _absolute(raw[key], call.cwd)
    out: dict[str, Any] = {
        "toolCallId": call.tool_use_id or "",
        "title": title,
        "kind": kind,
        "rawInput": raw,
    }
    if paths:
        out["locations"] = [{"path": p} for p in dict.fromkeys(paths)]
    return out


# --- answers ----------------------------------------------------------------------------------


class Answer:
    """What the hook process writes and how it exits."""

    __slots__ = ("code", "stderr", "stdout")

    def __init__(self, stdout: str = "", stderr: str = "", code: int = 0) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.code = code


def blocked(reason: str) -> Answer:
    """The answer every CLI reads as "do not run it" when no event is known: exit status 2 with
    the reason on stderr, nothing on stdout."""
    return Answer("", f"symposium-tui: {reason}\n", 2)


def decision(call: HookCall, verdict: str, reason: str, *, rule_asks: bool = False) -> Answer:
    """A tool-call decision (`verdict`: allow, deny or ask) in the CLI's schema. `rule_asks`: an
    ask a rule made (one that beats bypass), not the fallback of a call no rule decided."""
    import json

    if call.cli == "codex" and verdict != "deny":
        # Codex 0.169 takes only "deny" from a PreToolUse hook: "allow" or "ask" there is a hook
        # failure, after which the tool runs anyway. No decision leaves it to Codex's own
        # approval policy, which is what both mean.
        return Answer("", "", 0)
    if call.cli == "gemini":
        if verdict == "ask" and rule_asks:
            # Gemini CLI asks its user on "ask" whatever its approval mode (yolo included): what a
            # rule asks about is not run unasked
            return Answer(json.dumps({"decision": "ask", "systemMessage": reason}) + "\n")
        if verdict == "ask":  # no decision hands a call no rule decided to Gemini CLI's own mode
            return Answer(json.dumps({"systemMessage": reason}) + "\n")
        return Answer(json.dumps({"decision": verdict, "reason": reason}) + "\n")
    body = {
        "hookSpecificOutput": {
            "hookEventName": call.raw_event,
            "permissionDecision": verdict,
            "permissionDecisionReason": reason,
        }
    }
    return Answer(json.dumps(body) + "\n")


def nothing() -> Answer:
    """The answer to an event that decides nothing (after the tool, a session start or end)."""
    return Answer("", "", 0)
