"""`symposium-tui` and its subcommands.

Importing this module costs only the standard library: `vscodelm` must answer its first request
within a few bare Python start-ups, and `registry` runs once per chat request.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from symposium_tui.closed_output import run_to_closed_output

if TYPE_CHECKING:  # types only: importing this module costs the standard library alone
    from collections.abc import Awaitable, Callable

    from bridge.core import ConnectionCore
    from bridge.rpc import JsonRpcPeer

LOG_LEVELS = ("error", "warn", "warning", "info", "debug", "trace")


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

    from symposium_tui import rules_cli

    rules_cli.add_parsers(sub, _tool_flags)
    for action in sub._choices_actions:  # commands added elsewhere: their summary heads their help
        command = sub.choices[action.dest]
        if command.description is None and action.help:
            command.description = _sentence(action.help)

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
    return parser


def _use_dirs(args: argparse.Namespace) -> None:
    """--config-dir / --runtime-dir: the same as the environment variables, for this process and
    what it starts."""
    for flag, variable in (
        ("config_dir", "SYMPOSIUM_CONFIG_DIR"),
        ("runtime_dir", "SYMPOSIUM_RUNTIME_DIR"),
    ):
        value = getattr(args, flag, None)
        if value:
            os.environ[variable] = os.path.abspath(os.path.expanduser(value))


def _setup_logging(level: str | None, log_dir: str | None, trace: Any) -> None:
    if not level and not log_dir and trace is None:
        return
    import logging

    name = (level or "info").lower()
    if name not in LOG_LEVELS:
        print(f"symposium-tui: unknown log level {level!r}; using info", file=sys.stderr)
        name = "info"
    numeric = {"warn": logging.WARNING, "trace": logging.DEBUG}.get(name) or getattr(
        logging, name.upper()
    )
    root = logging.getLogger()
    root.setLevel(numeric)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handler: logging.Handler
    if level:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(fmt)
        root.addHandler(handler)
    if log_dir:
        from bridge.paths import open_private

        path = os.path.join(log_dir, f"symposium-tui-{os.getpid()}.log")
        open_private(path).close()  # created 0600 in a 0700 directory before logging opens it
        handler = logging.FileHandler(path)
        handler.setFormatter(fmt)
        root.addHandler(handler)
    if trace is not None:

        class _TraceHandler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    trace.stderr(self.format(record))
                except Exception:
                    pass

        handler = _TraceHandler()
        handler.setFormatter(fmt)
        root.addHandler(handler)


def _load_bridge() -> None:
    # Run in a background thread while the fast path answers cheap requests.
    import gc

    import acp  # noqa: F401  (the ACP SDK: needed by the first chat request)

    import bridge.agents.eliza
    import bridge.stdio  # noqa: F401  (asyncio, pydantic, the core)

    # The long-lived objects of those imports need no more collecting: keep them out of the
    # collector's full passes, which otherwise stall a streaming reply now and then.
    gc.freeze()


def bridge_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.idle_timeout is not None:
        options["idle_timeout"] = args.idle_timeout or None
    if args.max_agents is not None:
        options["max_agents"] = args.max_agents or None
    return options


def _console_socket_exists() -> bool:
    # Most spawns find no console and should not pay for importing the relay.
    from bridge.paths import runtime_dir_path

    return os.path.exists(os.path.join(runtime_dir_path(), "console.sock"))


def cmd_vscodelm(args: argparse.Namespace) -> int:
    trace = None
    if args.trace_dir:
        from bridge.trace import TraceWriter

        trace = TraceWriter(args.trace_dir)
    _setup_logging(args.log, args.log_dir, trace)
    on_recv = trace.recv if trace else None
    on_send = trace.send if trace else None
    rest = b""
    try:
        sock = None
        if _console_socket_exists():
            from symposium_tui import relay

            sock = relay.connect()
        if sock is not None:
            # A console is running: it answers. Should it go away, serve what remains ourselves.
            import logging

            logging.getLogger("symposium_tui.relay").info("relaying to the console")
            result = relay.run(sock, on_recv=on_recv, on_send=on_send)
            if result.eof:
                return 0
            rest = result.rest
        return _serve_headless(args, trace, rest)
    finally:
        if trace is not None:
            trace.close()


def _serve_headless(args: argparse.Namespace, trace: Any, rest: bytes) -> int:
    from bridge.fastpath import serve_until_loaded, start_loader

    loaded = start_loader(_load_bridge)
    handover = serve_until_loaded(
        loaded,
        on_recv=trace.recv if trace else None,
        on_send=trace.send if trace else None,
        initial=rest,
    )
    if handover.eof and not handover.lines:
        return 0  # the client left before asking anything the fast path could not answer
    loaded.wait()
    from bridge import stdio

    return stdio.run(
        cwd=args.cwd,
        handover=handover,
        trace=trace,
        event_log=args.event_log,
        bridge_options=bridge_options(args),
        configure=configure_endpoint,
    )


def configure_endpoint(peer: JsonRpcPeer, core: ConnectionCore) -> Callable[[], Awaitable[None]]:
    """The headless endpoint's connection: handed to a console that starts later (the switch),
    and, with `approval_timeout` set, a socket for consoles to reach what it holds. Both end with
    the connection (what this returns is awaited then)."""
    from symposium_tui.host import hold_for_consoles
    from symposium_tui.switch import ConsoleSwitch

    async def on_switch() -> None:
        await core.reset("requests now go to the console")

    switch = ConsoleSwitch(peer, on_switch)
    peer.intercept = switch
    host = hold_for_consoles(core.bridge)  # the endpoint's socket for consoles, or None

    async def close() -> None:
        await switch.close()
        if host is not None:
            await host.stop()

    return close


def cmd_serve(args: argparse.Namespace) -> int:
    _setup_logging(args.log or "info", args.log_dir, None)
    import asyncio

    from symposium_tui.host import (
        ConsoleHost,
        HostError,
        another_console_listening,
        build_hosted,
        serve_forever,
    )

    taken = another_console_listening()
    if taken is not None:
        print(serve_taken(taken), file=sys.stderr)
        return 1

    async def main() -> int:
        hosted = build_hosted(
            cwd=args.cwd,
            event_log=args.event_log,
            bridge_options=bridge_options(args),
            hold=True,
            approval_timeout=args.approval_timeout,
        )
        bridge = hosted.bridge
        if hosted.settings_error:
            print(f"symposium-tui: {hosted.settings_error}", file=sys.stderr)
        openai = None
        errors: tuple[type[Exception], ...] = (HostError,)
        if args.openai:
            from bridge.openai import OpenAIServer, ServeError

            errors = (HostError, ServeError)

            try:
                openai = OpenAIServer(
                    bridge,
                    args.openai,
                    api_key=args.api_key,
                    allowed_hosts=args.allowed_host or (),
                    allowed_origins=args.allow_origin or (),
                )
            except ServeError as exc:
                print(f"symposium-tui: {exc}", file=sys.stderr)
                await hosted.close()
                return 2
        try:
            await serve_forever(hosted, ConsoleHost(bridge), openai=openai)
        except errors as exc:
            print(f"symposium-tui: {exc}", file=sys.stderr)
            await hosted.close()
            return 1
        return 0

    return asyncio.run(main())


def serve_taken(socket_path: str) -> str:
    """What `serve` says when a console runs here already: that console is the bridge, and how to
    get what `serve` would have given."""
    return (
        f"symposium-tui serve: another Symposium console is already running (socket {socket_path}); "
        "it runs the bridge, so there is nothing to serve. Instead:\n"
        "  - OpenAI clients: quit that console and start it as `symposium-tui --openai "
        "127.0.0.1:8000` (the console serves the API itself);\n"
        "  - answer its approvals from another terminal: `symposium-tui attach local` "
        "(or `attach HOST` from another machine);\n"
        "  - VS Code and `symposium-tui acp` find the running console by themselves."
    )


def _acp_agent(args: argparse.Namespace) -> Any:
    """The agent `symposium-tui acp` forwards to, as the bridge's agent spec (exits on error)."""
    command = list(args.agent_command or [])
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(args.agent):
        print(
            "symposium-tui acp: name the agent: --agent NAME (see `symposium-tui registry list`) "
            "or -- COMMAND ARGS…",
            file=sys.stderr,
        )
        raise SystemExit(2)
    from bridge.protocol import ElizaAgent, parse_agent

    if command:
        return parse_agent(
            {"name": os.path.basename(command[0]), "command": command[0], "args": command[1:]}
        )
    if args.agent in ("elizacp", "eliza"):
        return ElizaAgent()
    if args.agent == "claude_code":
        return parse_agent("claude_code")
    from bridge import registry
    from bridge.settings import Settings

    try:
        resolved = registry.resolve(args.agent, Settings.load_quietly())
    except registry.ResolveError as exc:
        print(f"symposium-tui acp: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return parse_agent({**resolved, "id": args.agent})


def cmd_acp(args: argparse.Namespace) -> int:
    # stdout is the protocol: logs go to stderr (--log) or a file (--log-dir) only.
    _setup_logging(args.log, args.log_dir, None)
    if getattr(args, "trace_dir", None):
        print(
            "symposium-tui acp: --trace-dir records vscodelm traffic and is ignored here; "
            "use --event-log FILE for this session's events",
            file=sys.stderr,
        )
    spec = _acp_agent(args)
    import asyncio

    from bridge.acp_proxy import serve_stdio
    from symposium_tui.acp_link import ConsoleLink
    from symposium_tui.host import build_hosted

    async def main() -> int:
        # No timeout of its own: a card waits in the linked console, whose timeout denies it
        # (and audits that, once); without a console the client's own UI is asked.
        hosted = build_hosted(
            cwd=args.cwd,
            event_log=args.event_log,
            bridge_options=bridge_options(args),
            approval_timeout=0,
        )
        if hosted.settings_error:
            print(f"symposium-tui: {hosted.settings_error}", file=sys.stderr)
        bridge = hosted.bridge
        link = ConsoleLink(bridge)

        def configure(proxy: Any) -> None:
            link.proxy = proxy
            proxy.before_session = link.check

        try:
            await link.check()
            return await serve_stdio(bridge, spec, configure=configure)
        finally:
            await link.close()

    return asyncio.run(main())


def cmd_eliza(args: argparse.Namespace) -> int:
    _setup_logging(args.log, args.log_dir, None)
    from bridge.agents.eliza import main_stdio

    argv = ["--deterministic"] if args.deterministic else []
    if args.chunk_delay:
        argv += ["--chunk-delay", str(args.chunk_delay)]
    return main_stdio(argv)


def cmd_replay(args: argparse.Namespace) -> int:
    from bridge.trace import main_replay

    return main_replay(args.trace, args.json)


def cmd_registry(args: argparse.Namespace) -> int:
    from bridge import registry

    if args.registry_command is None:
        print("usage: symposium-tui registry list | registry resolve-agent AGENT", file=sys.stderr)
        return 2
    argv = [args.registry_command]
    if args.registry_command == "resolve-agent":
        argv.append(args.agent)
    return registry.main(argv)


def cmd_config(args: argparse.Namespace) -> int:
    import json
    import shlex

    from bridge.paths import settings_path
    from bridge.settings import Settings, SettingsError

    path = settings_path()
    try:
        settings = Settings.load(path)
    except SettingsError as exc:
        if args.json:
            print(
                json.dumps(
                    {"path": str(path), "exists": path.exists(), "error": exc.to_dict()}, indent=2
                )
            )
        print(f"symposium-tui config: {exc}", file=sys.stderr)
        print(
            "symposium-tui config: the file was left as it is; fix it and run this again",
            file=sys.stderr,
        )
        return 1
    if args.json:
        print(json.dumps({**settings.to_public_dict(), "files": _files(settings)}, indent=2))
        return 0
    out = ["files:"]
    for what, (where, note) in _files(settings).items():
        out.append(f"  {what + ':':<12} {where}" + (f"  ({note})" if note else ""))
    out.append(
        "agents:" if settings.agents else "agents: none configured (Eliza (built in), id elizacp)"
    )
    for agent_id, agent in settings.agents.items():
        label = agent_id if agent.name == agent_id else f"{agent_id} ({agent.name})"
        run = (
            shlex.join([agent.command, *agent.args])
            if agent.command
            else "no command: settings only (its name and bypass apply when VS Code or "
            "`symposium-tui acp` runs it; the chat cannot start it)"
        )
        out.append(f"  {label}: {run}" + ("  [bypass]" if agent.bypass else ""))
        if agent.env:
            out.append(f"    env: {', '.join(agent.env)} (values hidden)")
        if agent.description:
            out.append(f"    {agent.description}")
    bypass = sorted(settings.bypass_agents())
    out.append(f"bypass (approvals skipped): {', '.join(bypass) if bypass else 'none'}")
    out.append("rules:" if settings.rules else "rules: none (every request is asked)")
    for i, rule in enumerate(settings.rules, 1):
        out.append(f"  {i}. {rule.describe()}")
    out.append("preferences (under [preferences]; “default” where the file sets none):")
    out.extend(f"  {line}" for line in _preference_lines(settings.preferences))
    for warning in settings.warnings:
        out.append(f"warning: {warning}")
    print("\n".join(out))
    return 0


def _files(settings: Any) -> dict[str, tuple[str, str]]:
    """Every file and directory Symposium uses: where, and a word on it."""
    from bridge.paths import audit_path, runtime_dir_path, themes_dir

    themes = themes_dir()
    own = sorted(p.stem for p in themes.glob("*.toml")) if themes.is_dir() else []
    runtime = runtime_dir_path()
    console = os.path.join(runtime, "console.sock")
    return {
        "settings": (
            str(settings.path),
            "" if settings.exists else "not there yet: the console writes it when you change one",
        ),
        "themes": (
            str(themes / "*.toml"),
            f"yours: {', '.join(own)}" if own else "your own themes; none yet",
        ),
        "audit log": (str(audit_path()), "every approval decision, hash-chained"),
        "runtime": (
            runtime,
            "a console is running" if os.path.exists(console) else "the console's socket",
        ),
        "logs": ("none", "--log LEVEL logs to stderr, --log-dir DIR to a file per process"),
        "event log": ("none", "--event-log FILE records every bridge event; `replay` explains it"),
    }


# (preference, its default in words, what it does)
_PREFERENCES = (
    ("theme", "symposium-dark", "the console's colours (F4 or the palette's “Theme: …”)"),
    ("mouse", "true", "the console takes the mouse (false suits SSH; so does --no-mouse)"),
    ("arm_delay", "0.5 seconds", "a new card ignores its keys this long"),
    ("idle_timeout", "1800 seconds", "an agent with no requests this long is stopped (0: never)"),
    ("max_agents", "16", "agent processes running at once (0: no limit)"),
    (
        "approval_timeout",
        "600 seconds with serve, none in the console",
        "an approval nobody answers is denied after this long (0: never)",
    ),
)


def _preference_lines(table: dict[str, Any]) -> list[str]:
    import json

    lines = []
    for key, default, what in _PREFERENCES:
        value = f"{json.dumps(table[key])}" if key in table else f"{default} (default)"
        lines.append(f"{key} = {value}: {what}")
    known = {key for key, _, _ in _PREFERENCES}
    for key, value in table.items():
        if key not in known:
            lines.append(f"{key} = {json.dumps(value)}")
    return lines


def cmd_console(args: argparse.Namespace) -> int:
    _setup_logging(args.log, args.log_dir, None)
    from symposium_tui.host import run_console

    return run_console(
        cwd=args.cwd,
        mouse=not getattr(args, "no_mouse", False),
        event_log=args.event_log,
        bridge_options=bridge_options(args),
        openai=getattr(args, "openai", None),
        api_key=getattr(args, "api_key", None),
        allowed_hosts=getattr(args, "allowed_host", None) or (),
        allowed_origins=getattr(args, "allow_origin", None) or (),
    )


def cmd_link(args: argparse.Namespace) -> int:
    from bridge.paths import runtime_dir
    from symposium_tui import linkmux

    runtime = runtime_dir()
    if not linkmux.sockets(runtime):
        print(
            f"symposium-tui link: no Symposium bridge runs here (no console socket in "
            f"{runtime}); start `symposium-tui serve` or `symposium-tui`",
            file=sys.stderr,
        )
        return 3
    import asyncio

    code = asyncio.run(linkmux.run(runtime))
    if code == 3:
        print("symposium-tui link: no Symposium bridge here accepted the console", file=sys.stderr)
    return code


def _targets(args: argparse.Namespace, hosts: list[str]) -> list[Any] | None:
    from symposium_tui.links import Target

    try:
        return [Target.parse(h, ssh=args.ssh, remote_command=args.remote_command) for h in hosts]
    except ValueError as exc:
        print(f"symposium-tui: {exc}", file=sys.stderr)
        return None


def cmd_attach(args: argparse.Namespace) -> int:
    _setup_logging(args.log, args.log_dir, None)
    targets = _targets(args, args.hosts)
    if targets is None:
        return 2
    from symposium_tui.app import run_attached

    return run_attached(targets, mouse=not args.no_mouse)


def cmd_web(args: argparse.Namespace) -> int:
    _setup_logging(args.log or "warning", args.log_dir, None)
    if _targets(args, args.hosts or ["local"]) is None:
        return 2
    from symposium_tui.web import serve_web

    return serve_web(
        args.hosts or ["local"], port=args.port, ssh=args.ssh, remote_command=args.remote_command
    )


def cmd_hook(args: argparse.Namespace) -> int:
    """`hook …` after global flags (`--config-dir`, `--runtime-dir`), once they are applied."""
    from bridge.hooks.command import main as hook_main

    return hook_main(list(args.hook_args))


COMMANDS = {
    "hook": cmd_hook,
    "link": cmd_link,
    "attach": cmd_attach,
    "web": cmd_web,
    "vscodelm": cmd_vscodelm,
    "acp": cmd_acp,
    "eliza": cmd_eliza,
    "replay": cmd_replay,
    "registry": cmd_registry,
    "config": cmd_config,
    "rules": lambda args: _rules_cli().cmd_rules(args),
    "audit": lambda args: _rules_cli().cmd_audit(args),
    "console": cmd_console,
    "serve": cmd_serve,
}


def _rules_cli() -> Any:
    from symposium_tui import rules_cli

    return rules_cli


def main(argv: list[str] | None = None) -> int:
    return run_to_closed_output(lambda: _run(argv))


def _run(argv: list[str] | None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["hook"]:  # a CLI's hook: a new process per tool call, so no argparse tree
        from bridge.hooks.command import main as hook_main

        return hook_main(args_in[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    _use_dirs(args)
    command = args.command or "console"
    return COMMANDS[command](args) or 0
