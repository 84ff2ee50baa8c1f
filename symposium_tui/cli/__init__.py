"""`symposium-tui` and its subcommands: each command line parsed (`parser`), then handed to what
runs it — the console process, `symposium_tui.hosting` (the endpoint, `serve`, `acp`),
`symposium_tui.wire` (`link`), `symposium_tui.web`, the bridge's own tools, `rules` / `audit`
(`rules`) and `config` (`config`). Output whose reader has gone ends the command quietly with
status 1 (`symposium_tui.closed_output`).

Importing this module costs only the standard library: `vscodelm` must answer its first request
within a few bare Python start-ups, and `registry` runs once per chat request.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from symposium_tui.closed_output import run_to_closed_output
from symposium_tui.collector import resume_collection

LOG_LEVELS = ("error", "warn", "warning", "info", "debug", "trace")


def build_parser() -> argparse.ArgumentParser:
    """The `symposium-tui` argument parser (`symposium_tui.cli.parser`)."""
    from symposium_tui.cli.parser import build_parser as build

    return build()


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


def bridge_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.idle_timeout is not None:
        options["idle_timeout"] = args.idle_timeout or None
    if args.max_agents is not None:
        options["max_agents"] = args.max_agents or None
    return options


def cmd_vscodelm(args: argparse.Namespace) -> int:
    trace = None
    if args.trace_dir:
        from bridge.trace import TraceWriter

        trace = TraceWriter(args.trace_dir)
    _setup_logging(args.log, args.log_dir, trace)
    from symposium_tui.hosting import endpoint

    return endpoint.run(
        trace, cwd=args.cwd, event_log=args.event_log, bridge_options=bridge_options(args)
    )


def cmd_serve(args: argparse.Namespace) -> int:
    _setup_logging(args.log or "info", args.log_dir, None)
    from symposium_tui.hosting import serve

    return serve.run(
        cwd=args.cwd,
        event_log=args.event_log,
        bridge_options=bridge_options(args),
        approval_timeout=args.approval_timeout,
        openai=args.openai,
        api_key=args.api_key,
        allowed_hosts=args.allowed_host or (),
        allowed_origins=args.allow_origin or (),
    )


def cmd_acp(args: argparse.Namespace) -> int:
    # stdout is the protocol: logs go to stderr (--log) or a file (--log-dir) only.
    _setup_logging(args.log, args.log_dir, None)
    if getattr(args, "trace_dir", None):
        print(
            "symposium-tui acp: --trace-dir records vscodelm traffic and is ignored here; "
            "use --event-log FILE for this session's events",
            file=sys.stderr,
        )
    from symposium_tui.hosting import acp_front_door

    spec = acp_front_door.agent_spec(args.agent, list(args.agent_command or []))
    return acp_front_door.run(
        spec, cwd=args.cwd, event_log=args.event_log, bridge_options=bridge_options(args)
    )


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
    from symposium_tui.cli.config import show

    return show(args)


def cmd_console(args: argparse.Namespace) -> int:
    _setup_logging(args.log, args.log_dir, None)
    from symposium_tui.console_process import run_console

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
    from symposium_tui.wire import mux

    runtime = runtime_dir()
    if not mux.sockets(runtime):
        print(
            f"symposium-tui link: no Symposium bridge runs here (no console socket in "
            f"{runtime}); start `symposium-tui serve` or `symposium-tui`",
            file=sys.stderr,
        )
        return 3
    import asyncio

    code = asyncio.run(mux.run(runtime))
    if code == 3:
        print("symposium-tui link: no Symposium bridge here accepted the console", file=sys.stderr)
    return code


def _targets(args: argparse.Namespace, hosts: list[str]) -> list[Any] | None:
    from symposium_tui.wire.transport import Target

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
    from symposium_tui.web.server import serve_web

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


# The commands whose app turns the garbage collector back on after its first frame
# (`symposium_tui.collector`); every other one has it back as soon as it is chosen.
FIRST_FRAME_COMMANDS = frozenset({"console", "attach"})


def _rules_cli() -> Any:
    from symposium_tui.cli import rules

    return rules


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
    if command not in FIRST_FRAME_COMMANDS:
        resume_collection()
    return COMMANDS[command](args) or 0
