"""`symposium-tui hook install|uninstall|status claude|codex|gemini [--project|--user]`.

Writes the hook entries into each CLI's own settings file, idempotently, keeping everything else
in the file; `uninstall` removes exactly the entries it added (recognised by their command:
this program's `hook CLI`), and `status` says what is installed where.

* Claude Code: `~/.claude/settings.json` (`--user`, the default) or `<cwd>/.claude/settings.json`
  (`--project`): `hooks.PreToolUse`, `PostToolUse`, `PostToolUseFailure` (matcher `*`),
  `SessionStart`, `SessionEnd`. Timeouts in seconds.
* Gemini CLI: `~/.gemini/settings.json` or `<cwd>/.gemini/settings.json`: `hooks.BeforeTool`,
  `AfterTool` (matcher `.*`), `SessionStart`, `SessionEnd`. Timeouts in milliseconds.
* Codex: `$CODEX_HOME/config.toml` (default `~/.codex`) or `<cwd>/.codex/config.toml`:
  `[[hooks.PreToolUse]]`, `PostToolUse`, `SessionStart`, `SessionEnd` (edited with tomlkit: comments survive).
  Codex runs an unmanaged hook only once it is trusted: install then records the trust as Codex
  itself does (`[hooks.state."<key>"] trusted_hash`, with the hash Codex's app-server reports),
  and `status` says when Codex would skip one.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bridge.hooks.clis import CLIS, DISPLAY
from bridge.hooks.where import gemini_trusts, settings_file, switched_off

#: Seconds each CLI gives the hook before a tool (the hook answers a little before: docs/hooks.md)
#: and after one (or at a session's start or end).
PRE_TIMEOUT = 300
AFTER_TIMEOUT = 15

EVENTS = {
    "claude": {
        "PreToolUse": True,
        "PostToolUse": False,
        "PostToolUseFailure": False,
        "SessionStart": False,
        "SessionEnd": False,
    },
    "gemini": {"BeforeTool": True, "AfterTool": False, "SessionStart": False, "SessionEnd": False},
    "codex": {"PreToolUse": True, "PostToolUse": False, "SessionStart": False, "SessionEnd": False},
}
TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"}


def program() -> str:
    """This program's command, absolute (the CLI runs hooks with its own PATH)."""
    exe = shutil.which("symposium-tui")
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if here is not None and here.name == "symposium-tui" and here.exists():
        return str(here)
    return exe or "symposium-tui"


def command(cli: str, pre: bool) -> str:
    base = f"{shlex.quote(program())} hook {cli}"
    return f"{base} --timeout {PRE_TIMEOUT}" if pre else f"{base} --timeout {AFTER_TIMEOUT}"


def is_ours(cmd: Any, cli: str) -> bool:
    if not isinstance(cmd, str):
        return False
    try:
        words = shlex.split(cmd)
    except ValueError:
        return False
    return (
        len(words) >= 3
        and os.path.basename(words[0]) == "symposium-tui"
        and words[1:3] == ["hook", cli]
    )


def _entry(cli: str, event: str) -> dict[str, Any]:
    pre = EVENTS[cli][event]
    seconds = PRE_TIMEOUT if pre else AFTER_TIMEOUT
    hook: dict[str, Any] = {"type": "command", "command": command(cli, pre)}
    if cli == "gemini":
        hook = {"name": "symposium", **hook, "timeout": seconds * 1000}
    else:
        hook["timeout"] = seconds
    group: dict[str, Any] = {"hooks": [hook]}
    if event in TOOL_EVENTS:
        group = {"matcher": ".*" if cli == "gemini" else "*", **group}
    return group


# --- JSON settings (Claude Code, Gemini CLI) -------------------------------------------------------


def _read_json(path: Path) -> tuple[dict[str, Any], str]:
    """The settings, and the file's text when it has comments (Gemini CLI allows them), else ""."""
    from bridge.hooks.jsonc import blank_comments

    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}, ""
    if not text.strip():
        return {}, ""
    try:
        blank = blank_comments(text)
        data = json.loads(blank)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path} is not JSON ({exc}); it was left as it is") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object; it was left as it is")
    return data, (text if blank != text else "")


def _write_json(path: Path, commented: str, data: dict[str, Any]) -> None:
    """`data` into `path`: a file with comments (its text, `commented`) keeps them, and every
    byte but its `hooks`."""
    from bridge.hooks.jsonc import set_member

    if commented:
        _write_atomic(path, set_member(commented, "hooks", data.get("hooks")))
    else:
        _write_atomic(path, json.dumps(data, indent=2) + "\n")


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        with_suppress_unlink(tmp)
        raise


def with_suppress_unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _strip_ours(groups: Any, cli: str) -> tuple[list[Any], int]:
    """The event's hook groups without our commands (a group left empty goes too)."""
    if not isinstance(groups, list):
        return [], 0
    out: list[Any] = []
    removed = 0
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            out.append(group)
            continue
        kept = [
            h
            for h in group["hooks"]
            if not (isinstance(h, dict) and is_ours(h.get("command"), cli))
        ]
        removed += len(group["hooks"]) - len(kept)
        if kept:
            out.append({**group, "hooks": kept})
        elif not group["hooks"]:
            out.append(group)
    return out, removed


def _json_install(cli: str, path: Path) -> bool:
    data, commented = _read_json(path)
    hooks = data.get("hooks")
    if hooks is None:
        hooks = {}
    if not isinstance(hooks, dict):
        raise ValueError(f"{path}: `hooks` is not an object")
    before = json.dumps(hooks, sort_keys=True)
    for event in EVENTS[cli]:
        groups, _ = _strip_ours(hooks.get(event), cli)
        hooks[event] = [*groups, _entry(cli, event)]
    data["hooks"] = hooks
    if json.dumps(hooks, sort_keys=True) == before and path.exists():
        return False
    _write_json(path, commented, data)
    return True


def _json_uninstall(cli: str, path: Path) -> int:
    if not path.exists():
        return 0
    data, commented = _read_json(path)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    total = 0
    for event in list(hooks):
        groups, removed = _strip_ours(hooks[event], cli)
        if removed:
            total += removed
            if groups:
                hooks[event] = groups
            else:
                del hooks[event]
    if total:
        if not hooks:
            del data["hooks"]
        _write_json(path, commented, data)
    return total


def _json_events(cli: str, path: Path) -> list[str]:
    try:
        hooks = _read_json(path)[0].get("hooks") or {}
    except OSError:
        return []
    found = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else ():
                if isinstance(hook, dict) and is_ours(hook.get("command"), cli):
                    found.append(event)
    return found


# --- Codex's TOML ---------------------------------------------------------------------------------


def _toml_install(cli: str, path: Path) -> bool:
    import tomlkit

    text = path.read_text() if path.exists() else ""
    doc = tomlkit.parse(text)
    before = tomlkit.dumps(doc)
    _toml_strip(doc, cli)
    hooks = doc.get("hooks")
    if hooks is None:
        hooks = tomlkit.table(is_super_table=True)
        doc["hooks"] = hooks
    for event in EVENTS[cli]:
        entry = _entry(cli, event)
        group = tomlkit.table()
        if "matcher" in entry:
            group["matcher"] = entry["matcher"]
        handlers = tomlkit.aot()
        for hook in entry["hooks"]:
            item = tomlkit.table()
            for key, value in hook.items():
                item[key] = value
            handlers.append(item)
        group["hooks"] = handlers
        groups = hooks.get(event)
        if groups is None:
            groups = tomlkit.aot()
            hooks[event] = groups
        groups.append(group)
    after = tomlkit.dumps(doc)
    if after == before and path.exists():
        return False
    _write_atomic(path, after)
    return True


def _toml_strip(doc: Any, cli: str) -> int:
    hooks = doc.get("hooks")
    if hooks is None:
        return 0
    removed = 0
    for event in list(hooks.keys()):
        groups = hooks[event]
        if event == "state" or not hasattr(groups, "__iter__"):
            continue
        keep = []
        for group in list(groups):
            handlers = group.get("hooks") if hasattr(group, "get") else None
            if handlers is None:
                keep.append(group)
                continue
            mine = [h for h in handlers if is_ours(h.get("command"), cli)]
            if not mine:
                keep.append(group)
                continue
            removed += len(mine)
            left = [h for h in handlers if not is_ours(h.get("command"), cli)]
            if left:
                for h in mine:
                    handlers.remove(h)
                keep.append(group)
        if len(keep) != len(list(groups)):
            if keep:
                for group in [g for g in list(groups) if g not in keep]:
                    groups.remove(group)
            else:
                del hooks[event]
    if not [k for k in hooks if k != "state"] and not hooks.get("state"):
        del doc["hooks"]
    return removed


def _toml_uninstall(cli: str, path: Path) -> int:
    import tomlkit

    if not path.exists():
        return 0
    doc = tomlkit.parse(path.read_text())
    removed = _toml_strip(doc, cli)
    if removed:  # the blank line install put before our tables goes with them
        _write_atomic(path, tomlkit.dumps(doc).rstrip("\n") + "\n")
    return removed


def _toml_events(cli: str, path: Path) -> list[str]:
    import tomllib

    try:
        data = tomllib.loads(path.read_text())
    except OSError:
        return []
    found = []
    for event, groups in (data.get("hooks") or {}).items():
        if event == "state":
            continue
        for group in groups if isinstance(groups, list) else ():
            for hook in group.get("hooks") or ():
                if is_ours(hook.get("command"), cli):
                    found.append(event)
    return found


# --- the command -----------------------------------------------------------------------------------


# --- Codex's hook trust ----------------------------------------------------------------------------
# Codex runs an unmanaged hook only when `[hooks.state."<source>:<event>:<group>:<handler>"]` in
# the user's config.toml records `trusted_hash` equal to the hook's current hash. The hash is
# Codex's own: `codex app-server` lists every hook with its key, `currentHash` and `trustStatus`
# (`hooks/list`), and we record exactly what it reports, as its `/hooks` review does.


def codex_hooks(cwd: str) -> list[dict[str, Any]] | None:
    """Codex's own list of the hooks it sees from `cwd` (None when Codex cannot be run)."""
    import subprocess

    codex = shutil.which("codex")
    if codex is None:
        return None
    messages = [
        {
            "id": 0,
            "method": "initialize",
            "params": {"clientInfo": {"name": "symposium-tui", "version": "1"}},
        },
        {"method": "initialized"},
        {"id": 1, "method": "hooks/list", "params": {"cwds": [cwd]}},
    ]
    try:
        proc = subprocess.Popen(
            [codex, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return None
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        import threading

        timer = threading.Timer(30, proc.kill)
        timer.start()
        try:
            for line in proc.stdout:
                try:
                    msg = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if msg.get("id") == 1:
                    data = (msg.get("result") or {}).get("data") or []
                    return [h for entry in data for h in entry.get("hooks") or ()]
        finally:
            timer.cancel()
        return None
    finally:
        proc.kill()
        proc.wait()


def _codex_user_config() -> Path:
    return settings_file("codex", project=False)


def codex_trust(cwd: str) -> tuple[int, str | None]:
    """Record Codex's trust of our hooks as Codex reports them: (how many now trusted, the
    reason when it could not be done)."""
    import tomlkit

    hooks = codex_hooks(cwd)
    if hooks is None:
        return 0, "Codex could not be run (`codex` on PATH) to record its trust"
    ours = [h for h in hooks if is_ours(h.get("command"), "codex")]
    todo = [h for h in ours if h.get("trustStatus") != "trusted" and h.get("currentHash")]
    if todo:
        path = _codex_user_config()
        doc = tomlkit.parse(path.read_text() if path.exists() else "")
        table = doc.get("hooks")
        if table is None:
            table = tomlkit.table(is_super_table=True)
            doc["hooks"] = table
        state = table.get("state")
        if state is None:
            state = tomlkit.table(is_super_table=True)
            table["state"] = state
        for hook in todo:
            entry = tomlkit.table()
            entry["trusted_hash"] = hook["currentHash"]
            state[str(hook["key"])] = entry
        _write_atomic(path, tomlkit.dumps(doc))
    return len(ours), None


def _codex_untrust(path: Path, removed_keys: list[str]) -> None:
    """Forget the trust recorded for hooks `uninstall` removed."""
    import tomlkit

    user = _codex_user_config()
    if not removed_keys or not user.exists():
        return
    doc = tomlkit.parse(user.read_text())
    state = (doc.get("hooks") or {}).get("state")
    if state is None:
        return
    changed = False
    for key in removed_keys:
        if key in state:
            del state[key]
            changed = True
    if changed:
        if not state:
            del doc["hooks"]["state"]
            if not doc["hooks"]:
                del doc["hooks"]
        _write_atomic(user, tomlkit.dumps(doc))


def _snake(event: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in event).lstrip("_")


def _codex_keys(cli: str, path: Path) -> list[str]:
    """Codex's trust keys of our handlers in `path` (source:event:group:handler)."""
    import tomllib

    try:
        data = tomllib.loads(path.read_text())
    except (OSError, ValueError):
        return []
    keys = []
    for event, groups in (data.get("hooks") or {}).items():
        if event == "state" or not isinstance(groups, list):
            continue
        for gi, group in enumerate(groups):
            for hi, hook in enumerate(group.get("hooks") or ()):
                if is_ours(hook.get("command"), cli):
                    keys.append(f"{path}:{_snake(event)}:{gi}:{hi}")
    return keys


def install(cli: str, project: bool) -> tuple[Path, bool]:
    path = settings_file(cli, project)
    if cli == "codex":
        try:
            events = _toml_events(cli, path)
        except ValueError:  # a file that does not read: `_toml_install` says so, and keeps it
            events = []
        if sorted(events) == sorted(EVENTS[cli]) and all(
            command(cli, EVENTS[cli][e]) in path.read_text() for e in EVENTS[cli]
        ):
            return path, False
        _codex_untrust(path, _codex_keys(cli, path))  # what moves is trusted again below
    changed = _toml_install(cli, path) if cli == "codex" else _json_install(cli, path)
    return path, changed


def uninstall(cli: str, project: bool) -> tuple[Path, int]:
    path = settings_file(cli, project)
    if cli == "codex":
        keys = _codex_keys(cli, path)
        removed = _toml_uninstall(cli, path)
        _codex_untrust(path, keys)
        return path, removed
    return path, _json_uninstall(cli, path)


def status_lines(cli: str, project: bool, cwd: str | None = None) -> list[str]:
    path = settings_file(cli, project, cwd)
    scope = "project" if project else "user"
    try:
        events = _toml_events(cli, path) if cli == "codex" else _json_events(cli, path)
    except ValueError as exc:  # (tomllib's and json's errors are ValueErrors)
        return [f"{DISPLAY[cli]} ({scope}): {path} does not read, so no hook in it runs: {exc}"]
    if not events:
        return [f"{DISPLAY[cli]} ({scope}): not installed in {path}"]
    lines = [f"{DISPLAY[cli]} ({scope}): installed in {path}: {', '.join(events)}"]
    for why in switched_off(cli, Path(cwd or os.getcwd())):  # (it runs no hook at all)
        lines.append(f"  {DISPLAY[cli]} SKIPS these: {why}")
    if cli == "codex":
        hooks = codex_hooks(str(Path(cwd or os.getcwd())))
        ours = [h for h in hooks or () if is_ours(h.get("command"), "codex")]
        untrusted = [h for h in ours if h.get("trustStatus") != "trusted"]
        if hooks is None:
            lines.append(
                "  Codex could not be run to check its trust: it runs a hook only once trusted "
                "(/hooks in Codex); an untrusted hook is skipped and the tool runs"
            )
        elif untrusted or not ours:
            names = ", ".join(str(h.get("eventName")) for h in untrusted) or "all"
            lines.append(
                f"  Codex SKIPS these (not trusted: {names}): run `symposium-tui hook install "
                "codex` again, or trust them with /hooks in Codex"
            )
        else:
            lines.append(f"  Codex trusts them ({len(ours)} hooks)")
    if cli == "gemini" and project:
        folder = Path(cwd or os.getcwd()).resolve()
        if gemini_trusts(folder):
            lines.append(f"  Gemini CLI trusts {folder}: it runs these project hooks")
        else:
            lines.append(
                f"  Gemini CLI SKIPS these: {folder} is not a trusted folder "
                "(trust it in Gemini CLI, ~/.gemini/trustedFolders.json)"
            )
    return lines


def main(argv: list[str]) -> int:
    action = argv[0]
    rest = argv[1:]
    project = "--project" in rest
    names = [a for a in rest if not a.startswith("-")]
    unknown = [n for n in names if n not in CLIS]
    if unknown or (action != "status" and len(names) != 1):
        sys.stderr.write(
            f"usage: symposium-tui hook {action} claude|codex|gemini [--project|--user]\n"
        )
        return 2
    try:
        if action == "install":
            path, changed = install(names[0], project)
            word = "installed in" if changed else "already installed in"
            print(f"{DISPLAY[names[0]]}: {word} {path}")
            if names[0] == "codex":
                count, why = codex_trust(os.getcwd())
                print(
                    f"  trust recorded for {count} hooks in {_codex_user_config()}, as Codex reports them"
                    if why is None
                    else f"  {why}: trust the hook with /hooks in Codex, or it is skipped"
                )
            for line in status_lines(names[0], project)[1:]:
                print(line)
        elif action == "uninstall":
            path, removed = uninstall(names[0], project)
            print(f"{DISPLAY[names[0]]}: removed {removed} hook entries from {path}")
        else:
            for cli in names or CLIS:
                for line in status_lines(cli, project):
                    print(line)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"symposium-tui hook {action}: {exc}\n")
        return 1
    return 0
