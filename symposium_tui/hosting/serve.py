"""`symposium-tui serve`: the bridge and its console socket without a UI, until a signal."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.openai import OpenAIServer
    from symposium_tui.hosting.console_socket import ConsoleHost
    from symposium_tui.hosting.hosted import Hosted


async def serve_forever(
    hosted: Hosted, host: ConsoleHost, openai: OpenAIServer | None = None
) -> None:
    """`symposium-tui serve`: the host without a UI, until a signal."""
    import signal

    await host.start()
    if openai is not None:  # a bridge.openai.OpenAIServer, not started yet
        try:
            await openai.start()
        except BaseException:
            await host.stop()
            raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    from bridge.core import settle_heap

    settle_heap()
    print(f"symposium-tui serve: serving on {host.path}", flush=True)
    broker = hosted.bridge.approvals
    if broker.timeout:
        print(
            f"symposium-tui serve: approvals wait up to {broker.timeout:g} s for a console "
            "(symposium-tui attach)",
            flush=True,
        )
    if openai is not None:
        print(f"symposium-tui serve: OpenAI-compatible API on {openai.url}", flush=True)
    try:
        await stop.wait()
    finally:
        if openai is not None:
            await openai.stop()
        await host.stop()
        await hosted.close()


def run(
    *,
    cwd: str | None,
    event_log: str | None,
    bridge_options: dict[str, Any],
    approval_timeout: float | None,
    openai: str | None,
    api_key: str | None,
    allowed_hosts: Iterable[str],
    allowed_origins: Iterable[str],
) -> int:
    """`symposium-tui serve` from start to exit: 1 when a console runs here already or the socket
    cannot be served, 2 when the OpenAI API cannot be."""
    from symposium_tui.hosting.console_socket import another_console_listening

    taken = another_console_listening()
    if taken is not None:
        print(serve_taken(taken), file=sys.stderr)
        return 1
    return asyncio.run(
        _serve(
            cwd=cwd,
            event_log=event_log,
            bridge_options=bridge_options,
            approval_timeout=approval_timeout,
            openai=openai,
            api_key=api_key,
            allowed_hosts=tuple(allowed_hosts),
            allowed_origins=tuple(allowed_origins),
        )
    )


async def _serve(
    *,
    cwd: str | None,
    event_log: str | None,
    bridge_options: dict[str, Any],
    approval_timeout: float | None,
    openai: str | None,
    api_key: str | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
) -> int:
    from symposium_tui.hosting.console_socket import ConsoleHost, HostError
    from symposium_tui.hosting.hosted import build_hosted

    hosted = build_hosted(
        cwd=cwd,
        event_log=event_log,
        bridge_options=bridge_options,
        hold=True,
        approval_timeout=approval_timeout,
    )
    bridge = hosted.bridge
    if hosted.settings_error:
        print(f"symposium-tui: {hosted.settings_error}", file=sys.stderr)
    server = None
    errors: tuple[type[Exception], ...] = (HostError,)
    if openai:
        from bridge.openai import OpenAIServer, ServeError

        errors = (HostError, ServeError)
        try:
            server = OpenAIServer(
                bridge,
                openai,
                api_key=api_key,
                allowed_hosts=allowed_hosts,
                allowed_origins=allowed_origins,
            )
        except ServeError as exc:
            print(f"symposium-tui: {exc}", file=sys.stderr)
            await hosted.close()
            return 2
    try:
        await serve_forever(hosted, ConsoleHost(bridge), openai=server)
    except errors as exc:
        print(f"symposium-tui: {exc}", file=sys.stderr)
        await hosted.close()
        return 1
    return 0


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
