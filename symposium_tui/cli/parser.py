"""The `symposium-tui` argument parser: the flags, and the subcommands by what they are for.

Standard library only (`argparse`): `symposium_tui.cli` builds it for every command line that is
not one of the console script's fast paths.
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def _default(suppress: bool) -> Any:
    # Flags given before the subcommand land on the top-level parser; a subcommand's copy must not
    # overwrite them with its own default, hence SUPPRESS there.
    return argparse.SUPPRESS if suppress else None


def _log_flags(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    parser.add_argument(
        "--log",
        metavar="LEVEL",
        default=_default(suppress),
        help="log to stderr at LEVEL (error, warn, info, debug)",
    )
    parser.add_argument(
        "--log-dir",
        metavar="DIR",
        default=_default(suppress),
        help="also write the log to a file in DIR (one per process)",
    )


def _trace_flag(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    parser.add_argument(
        "--trace-dir",
        metavar="DIR",
        default=_default(suppress),
        help="record the wire traffic in DIR (upstream's trace format; vscodelm only)",
    )


def _dir_flags(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    parser.add_argument(
        "--config-dir",
        metavar="DIR",
        default=_default(suppress),
        help="where the settings, your themes and the audit log are "
        "(default: $SYMPOSIUM_CONFIG_DIR, else ~/.config/symposium)",
    )
    parser.add_argument(
        "--runtime-dir",
        metavar="DIR",
        default=_default(suppress),
        help="where the console's socket is (default: $SYMPOSIUM_RUNTIME_DIR, else "
        "$XDG_RUNTIME_DIR/symposium, else /tmp/symposium-UID)",
    )


def _bridge_flags(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """How the bridge runs its agents (console, serve, vscodelm)."""
    default = _default(suppress)
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        default=default,
        help="working directory for agent sessions (default: this process's)",
    )
    parser.add_argument(
        "--event-log",
        metavar="FILE",
        default=default,
        help="append every bridge event to FILE as JSON lines (each run starts with a marker "
        "`replay` honours)",
    )
    parser.add_argument(
        "--idle-timeout",
        metavar="SECONDS",
        type=float,
        default=default,
        help="stop an agent after SECONDS without requests (default 1800; 0 never)",
    )
    parser.add_argument(
        "--max-agents",
        metavar="N",
        type=int,
        default=default,
        help="at most N agent processes at once (default 16; 0 no limit)",
    )


def _tool_flags(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """One-shot commands that read the settings: logging and where the files are."""
    _log_flags(parser, suppress=suppress)
    _dir_flags(parser, suppress=suppress)


def _common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Every flag a bridge process takes, accepted before and after the subcommand (the extension
    puts `--log` and `--trace-dir` before `vscodelm`)."""
    _log_flags(parser, suppress=suppress)
    _trace_flag(parser, suppress=suppress)
    _bridge_flags(parser, suppress=suppress)
    _dir_flags(parser, suppress=suppress)


def _openai_flags(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--openai",
        metavar="HOST:PORT",
        default=default,
        help="also serve the OpenAI-compatible API (loopback unless an API key is set)",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        default=default,
        help="bearer key the OpenAI API requires (default: $SYMPOSIUM_OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--allowed-host",
        metavar="NAME[:PORT]",
        action="append",
        default=default,
        help="a Host name the OpenAI API answers for when not on loopback (repeatable; "
        "default: any, with the API key required)",
    )
    parser.add_argument(
        "--allow-origin",
        metavar="ORIGIN",
        action="append",
        default=default,
        help="a browser origin (e.g. http://localhost:5173) allowed to call the OpenAI API, with "
        "CORS (repeatable; default: none)",
    )


def _console_flags(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The console's own flags, accepted with or without the `console` subcommand."""
    parser.add_argument(
        "--no-mouse",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="do not capture the mouse (better over SSH)",
    )
    _openai_flags(parser, suppress=suppress)


def _attach_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ssh",
        metavar="COMMAND",
        default=os.environ.get("SYMPOSIUM_SSH", "ssh"),
        help="the ssh command, with any options (default: ssh, or $SYMPOSIUM_SSH)",
    )
    parser.add_argument(
        "--remote-command",
        metavar="COMMAND",
        default=os.environ.get("SYMPOSIUM_REMOTE_COMMAND", "symposium-tui link"),
        help="what to run on each host (default: symposium-tui link, or $SYMPOSIUM_REMOTE_COMMAND)",
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("symposium-tui")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """`--version`, looked up only when asked (importlib.metadata is not free at start-up)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"symposium-tui {_version()}")
        parser.exit()


def _command(sub: Any, name: str, summary: str, description: str | None = None) -> Any:
    """A subcommand whose --help starts with what it is for."""
    return sub.add_parser(
        name,
        help=summary,
        description=description or _sentence(summary),
    )


def _sentence(summary: str) -> str:
    return summary[:1].upper() + summary[1:] + "."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="symposium-tui",
        description="Drive ACP coding agents from VS Code's language-model API or any OpenAI client, "
        "and approve what they do from a terminal console. With no COMMAND: the console.",
        epilog="`symposium-tui COMMAND --help` describes each command and its flags; "
        "`symposium-tui config` shows where every file is.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    _common(parser, suppress=False)
    _console_flags(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _bridge_commands(sub)
    _console_commands(sub)
    _agent_commands(sub)
    _file_commands(sub)
    from symposium_tui.cli import rules

    rules.add_parsers(sub, _tool_flags)
    for action in sub._choices_actions:  # commands added elsewhere: their summary heads their help
        command = sub.choices[action.dest]
        if command.description is None and action.help:
            command.description = _sentence(action.help)
    _registry_commands(sub)
    return parser


def _bridge_commands(sub: Any) -> None:
    """The processes that run a bridge: the console, the VS Code endpoint, `serve`."""
    p = _command(
        sub,
        "console",
        "the Textual console (the default)",
        "The console: approval cards, sessions, tool calls, the built-in chat and the settings. "
        "It runs the bridge; VS Code's endpoint relays to it.",
    )
    _log_flags(p, suppress=True)
    _bridge_flags(p, suppress=True)
    _dir_flags(p, suppress=True)
    _console_flags(p, suppress=True)

    p = _command(
        sub,
        "vscodelm",
        "the JSON-RPC endpoint the Symposium VS Code extension spawns (stdio)",
        "The endpoint the Symposium VS Code extension spawns, on stdio. It relays to a running "
        "console, or serves on its own when there is none.",
    )
    _common(p, suppress=True)

    p = _command(
        sub,
        "serve",
        "run the bridge without a UI (the `serve` host VS Code's relay and consoles reach)",
        "The bridge without a UI: VS Code's endpoint relays to it, `attach` and `web` consoles "
        "answer its approvals, and --openai serves the OpenAI-compatible API.",
    )
    _log_flags(p, suppress=True)
    _bridge_flags(p, suppress=True)
    _dir_flags(p, suppress=True)
    _openai_flags(p, suppress=False)
    p.add_argument(
        "--approval-timeout",
        metavar="SECONDS",
        type=float,
        default=None,
        help="deny an approval no console answered within SECONDS (default: the "
        "approval_timeout preference, else 600; 0 waits for ever)",
    )


def _console_commands(sub: Any) -> None:
    """Consoles for bridges elsewhere, and what carries them: `attach`, `link`, `web`."""
    p = _command(
        sub,
        "attach",
        "a console for the bridges on other machines, through ssh ('local': this machine)",
    )
    _tool_flags(p, suppress=True)
    p.add_argument("hosts", nargs="+", metavar="[USER@]HOST", help="ssh destinations, or local")
    _attach_flags(p)
    p.add_argument(
        "--no-mouse", action="store_true", help="do not capture the mouse (better over SSH)"
    )

    p = _command(
        sub,
        "link",
        "speak the console protocol on stdio to this machine's console socket "
        "(what `attach` runs over ssh)",
    )
    _tool_flags(p, suppress=True)

    p = _command(
        sub,
        "web",
        "the console in a browser (textual-serve), on loopback behind a token",
    )
    _tool_flags(p, suppress=True)
    p.add_argument(
        "hosts",
        nargs="*",
        metavar="[USER@]HOST",
        help="hosts the page's console attaches to (default: local)",
    )
    p.add_argument("--port", type=int, default=0, help="loopback port (default: a free one)")
    _attach_flags(p)


def _agent_commands(sub: Any) -> None:
    """The agents' own doors: their hooks, `acp`, and the built-in Eliza."""
    p = _command(
        sub,
        "hook",
        "the command Claude Code, Codex or Gemini CLI runs around each tool call (docs/hooks.md)",
        "`hook claude|codex|gemini` answers a CLI's hook on stdin (the rules, then a console's "
        "card); `hook install|uninstall|status claude|codex|gemini [--project|--user]` manages "
        "the entries in each CLI's own settings.",
    )
    p.add_argument("hook_args", nargs=argparse.REMAINDER, metavar="ARGS")

    p = _command(
        sub,
        "acp",
        "be an ACP agent for any ACP client (Zed, Toad, JetBrains, acpx), forwarding to the real one",
        "Speak ACP on stdio to an ACP client and forward everything to the agent (--agent NAME "
        "from `registry list`, or the command after --). Its permission requests go through the "
        "rules, then a running console's cards, else the client's own permission UI.",
    )
    # Not --trace-dir: it records vscodelm traffic (given before `acp`, it is ignored with a note).
    _log_flags(p, suppress=True)
    _bridge_flags(p, suppress=True)
    _dir_flags(p, suppress=True)
    p.add_argument(
        "--agent",
        metavar="NAME",
        default=None,
        help="an agent of `registry list` (elizacp, or one in the settings), or claude_code",
    )
    p.add_argument(
        "agent_command",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND ARGS",
        help="the agent's command line instead of --agent",
    )

    p = _command(
        sub,
        "eliza",
        "run the built-in Eliza as an ACP agent on stdio",
        "The built-in Eliza, as an ACP agent on stdio (what `registry resolve-agent elizacp` "
        "launches). It asks permission when told to (try “ask permission to run the tests”).",
    )
    _log_flags(p, suppress=True)
    p.add_argument("--deterministic", action="store_true", help="reproducible replies")
    p.add_argument(
        "--chunk-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="pause between streamed chunks",
    )


def _file_commands(sub: Any) -> None:
    """What reads the files a bridge leaves: `replay` (traces, event logs) and `config`."""
    p = _command(
        sub,
        "replay",
        "explain every history decision recorded in a trace or event log",
        "Re-run the history decisions of a --trace-dir trace or an --event-log file and explain "
        "each one: why a request continued, committed, cancelled or started a session.",
    )
    p.add_argument("trace", metavar="TRACE", help="a --trace-dir file or an --event-log file")
    p.add_argument("--json", action="store_true", help="one JSON object per decision")

    p = _command(
        sub,
        "config",
        "show where every file is, the settings and the defaults in effect",
        "Where Symposium keeps its files (settings, your themes, the audit log, the console's "
        "socket, logs), then the agents, rules and preferences in effect, defaults included.",
    )
    _dir_flags(p, suppress=True)
    p.add_argument(
        "--json", action="store_true", help="print them as JSON (agents' env values hidden)"
    )


def _registry_commands(sub: Any) -> None:
    """`registry list | resolve-agent`, as the VS Code extension runs them."""
    p = _command(
        sub,
        "registry",
        "agent registry commands the VS Code extension runs",
        "The agents the VS Code extension can offer as models: the built-in Eliza and those in "
        "your settings.",
    )
    _tool_flags(p, suppress=True)
    registry = p.add_subparsers(dest="registry_command", metavar="list | resolve-agent")
    registry.add_parser(
        "list",
        help="every agent, as the JSON list the extension's model picker reads",
        description="Every agent, as the JSON list the extension's model picker reads.",
    )
    r = registry.add_parser(
        "resolve-agent",
        help="how to launch one agent, as JSON",
        description="How to launch one agent (command, args, env), as JSON.",
    )
    r.add_argument(
        "agent", metavar="AGENT", help='an agent id (e.g. elizacp) or a JSON object with its "id"'
    )
