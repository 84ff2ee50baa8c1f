"""`symposium-tui` and its subcommands.

Importing this module costs only the standard library: `vscodelm` must answer its first request
within a few bare Python start-ups, and `registry` runs once per chat request.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

LOG_LEVELS = ("error", "warn", "warning", "info", "debug", "trace")


def _common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Flags accepted before and after the subcommand (the extension puts them before)."""
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--log",
        metavar="LEVEL",
        default=default,
        help="log to stderr at LEVEL (error, warn, info, debug)",
    )
    parser.add_argument(
        "--trace-dir",
        metavar="DIR",
        default=default,
        help="record the wire traffic in DIR (upstream's trace format)",
    )
    parser.add_argument(
        "--log-dir", metavar="DIR", default=default, help="also write the log to a file in DIR"
    )
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
        help="append every bridge event to FILE as JSON lines",
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="symposium-tui",
        description="Drive ACP coding agents from VS Code's language-model API or any OpenAI client, "
        "and approve what they do from a terminal console.",
    )
    _common(parser, suppress=False)
    _console_flags(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("console", help="the Textual console (the default)")
    _common(p, suppress=True)
    _console_flags(p, suppress=True)

    p = sub.add_parser(
        "vscodelm", help="the JSON-RPC endpoint the Symposium VS Code extension spawns (stdio)"
    )
    _common(p, suppress=True)

    p = sub.add_parser(
        "serve", help="run the bridge host without a UI (VS Code's relay reaches it)"
    )
    _common(p, suppress=True)
    _openai_flags(p, suppress=False)
    p.add_argument(
        "--approval-timeout",
        metavar="SECONDS",
        type=float,
        default=None,
        help="deny an approval no console answered within SECONDS (default: the "
        "approval_timeout preference, else 600; 0 waits for ever)",
    )

    p = sub.add_parser(
        "attach",
        help="a console for the bridges on other machines, through ssh ('local': this machine)",
    )
    _common(p, suppress=True)
    p.add_argument("hosts", nargs="+", metavar="[USER@]HOST", help="ssh destinations, or local")
    _attach_flags(p)
    p.add_argument(
        "--no-mouse", action="store_true", help="do not capture the mouse (better over SSH)"
    )

    p = sub.add_parser(
        "link",
        help="speak the console protocol on stdio to this machine's console socket "
        "(what `attach` runs over ssh)",
    )
    _common(p, suppress=True)

    p = sub.add_parser(
        "web",
        help="the console in a browser (textual-serve), on loopback behind a token",
    )
    _common(p, suppress=True)
    p.add_argument(
        "hosts",
        nargs="*",
        metavar="[USER@]HOST",
        help="hosts the page's console attaches to (default: local)",
    )
    p.add_argument("--port", type=int, default=0, help="loopback port (default: a free one)")
    _attach_flags(p)

    p = sub.add_parser("eliza", help="run the built-in Eliza as an ACP agent on stdio")
    _common(p, suppress=True)
    p.add_argument("--deterministic", action="store_true", help="reproducible replies")
    p.add_argument(
        "--chunk-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="pause between streamed chunks",
    )

    p = sub.add_parser(
        "replay", help="explain every history decision recorded in a trace or event log"
    )
    _common(p, suppress=True)
    p.add_argument("trace", metavar="TRACE", help="a --trace-dir file or an --event-log file")
    p.add_argument("--json", action="store_true", help="one JSON object per decision")

    p = sub.add_parser("config", help="show the settings file and the settings in effect")
    _common(p, suppress=True)
    p.add_argument(
        "--json", action="store_true", help="print them as JSON (agents' env values hidden)"
    )

    from symposium_tui import rules_cli

    rules_cli.add_parsers(sub, _common)

    p = sub.add_parser("registry", help="agent registry commands the VS Code extension runs")
    _common(p, suppress=True)
    p.add_argument("registry_args", nargs=argparse.REMAINDER, metavar="list | resolve-agent JSON")
    return parser


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

    import bridge.agents.eliza  # noqa: F401
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
    from symposium_tui.switch import ConsoleSwitch

    def configure(peer: Any, core: Any) -> None:
        async def on_switch() -> None:
            await core.reset("requests now go to the console")

        peer.intercept = ConsoleSwitch(peer, on_switch)

    return stdio.run(
        cwd=args.cwd,
        handover=handover,
        trace=trace,
        event_log=args.event_log,
        bridge_options=bridge_options(args),
        configure=configure,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    _setup_logging(args.log or "info", args.log_dir, None)
    import asyncio

    from symposium_tui.host import ConsoleHost, HostError, build_hosted, serve_forever

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
    from bridge.settings import Settings

    return registry.main(list(args.registry_args), Settings.load_quietly())


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
        print(json.dumps(settings.to_public_dict(), indent=2))
        return 0
    out = [f"settings: {path}" + ("" if settings.exists else " (not found: nothing configured)")]
    out.append("agents:" if settings.agents else "agents: none configured (built in: elizacp)")
    for agent_id, agent in settings.agents.items():
        label = agent_id if agent.name == agent_id else f"{agent_id} ({agent.name})"
        run = (
            shlex.join([agent.command, *agent.args])
            if agent.command
            else "not run from here: settings only"
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
    out.append("preferences:" if settings.preferences else "preferences: defaults")
    for key, value in settings.preferences.items():
        out.append(f"  {key} = {json.dumps(value)}")
    for warning in settings.warnings:
        out.append(f"warning: {warning}")
    print("\n".join(out))
    return 0


def cmd_console(args: argparse.Namespace) -> int:
    _setup_logging(args.log, args.log_dir, None)
    from symposium_tui.app import run_console

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
    from symposium_tui import relay

    sock = relay.connect()
    if sock is None:
        print(
            f"symposium-tui link: no Symposium bridge runs here (no console socket at "
            f"{relay.socket_path()}); start `symposium-tui serve` or `symposium-tui`",
            file=sys.stderr,
        )
        return 3
    relay.pipe(sock)
    return 0


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


COMMANDS = {
    "link": cmd_link,
    "attach": cmd_attach,
    "web": cmd_web,
    "vscodelm": cmd_vscodelm,
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
    parser = build_parser()
    args = parser.parse_args(argv)
    command = args.command or "console"
    return COMMANDS[command](args) or 0
