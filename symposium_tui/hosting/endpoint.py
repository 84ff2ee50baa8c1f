"""`symposium-tui vscodelm`: the endpoint the VS Code extension spawns, wired to a console.

A console running here answers: the endpoint relays its bytes (`relay`, standard library only)
and, should the console go away, serves what remains itself. Without one it serves headless: the
fast path answers cheap requests while the bridge is imported, then the bridge, whose connection
is handed to a console that starts later (`switch`) and, with `approval_timeout` set, holds what
it cannot ask anyone about for a console to attach to. Standard library only at import: VS Code's
first request must be answered within a few bare Python start-ups.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: importing this module costs the standard library alone
    from collections.abc import Awaitable, Callable

    from bridge.core import Bridge, ConnectionCore
    from bridge.rpc import JsonRpcPeer
    from bridge.trace import TraceWriter
    from symposium_tui.hosting.console_socket import ConsoleHost
    from symposium_tui.hosting.relay import RelayResult


def run(
    trace: TraceWriter | None,
    *,
    cwd: str | None,
    event_log: str | None,
    bridge_options: dict[str, Any],
) -> int:
    """Relay to a running console, else (or once it goes) serve stdin headless; `trace` (a
    --trace-dir writer) records the traffic either way and is closed at the end."""
    on_recv = trace.recv if trace else None
    on_send = trace.send if trace else None
    rest = b""
    try:
        relayed = _relay(on_recv, on_send) if _console_socket_exists() else None
        if relayed is not None:
            rest = relayed.rest
            if relayed.eof and not rest.strip():
                return 0  # all of stdin was relayed (what the console left unread is served here)
        return _serve_headless(trace, rest, cwd=cwd, event_log=event_log, options=bridge_options)
    finally:
        if trace is not None:
            trace.close()


def _load_bridge() -> None:
    # Run in a background thread while the fast path answers cheap requests.
    import bridge.vscodelm.stdio  # noqa: F401  (asyncio, pydantic, the core)
    from bridge.core import settle_heap

    # The ACP SDK and Eliza too (the first chat request needs them), then what all of it built
    # kept out of the collector's full passes, which otherwise stall a streaming reply now and then.
    settle_heap()


def _relay(
    on_recv: Callable[[bytes], None] | None, on_send: Callable[[bytes], None] | None
) -> RelayResult | None:
    """Relay to the running console until stdin ends or it goes away (what remains is then
    served here); None when no console accepts."""
    from symposium_tui.hosting import relay

    inode = relay.socket_inode()  # before the connection: a console that replaced it differs
    sock = relay.connect()
    if sock is None:
        return None
    relay.log.info("relaying to the console")
    return relay.run(sock, on_recv=on_recv, on_send=on_send, inode=inode)


def _console_socket_exists() -> bool:
    # Most spawns find no console and should not pay for importing the relay.
    from bridge.paths import runtime_dir_path

    return os.path.exists(os.path.join(runtime_dir_path(), "console.sock"))


def _serve_headless(
    trace: Any, rest: bytes, *, cwd: str | None, event_log: str | None, options: dict[str, Any]
) -> int:
    from bridge.vscodelm.fastpath import serve_until_loaded, start_loader

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
    from bridge.vscodelm import stdio

    return stdio.run(
        cwd=cwd,
        handover=handover,
        trace=trace,
        event_log=event_log,
        bridge_options=options,
        configure=configure_endpoint,
    )


def configure_endpoint(peer: JsonRpcPeer, core: ConnectionCore) -> Callable[[], Awaitable[None]]:
    """The headless endpoint's connection: handed to a console that starts later (the switch),
    and, with `approval_timeout` set, a socket for consoles to reach what it holds. Both end with
    the connection (what this returns is awaited then)."""
    from symposium_tui.hosting.switch import ConsoleSwitch

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


def hold_for_consoles(bridge: Bridge) -> ConsoleHost | None:
    """With `approval_timeout` set in the preferences, a headless endpoint holds what it cannot
    ask anyone about (its client offered no round trip) for a console to attach — `symposium-tui
    attach` reaches it through its own socket, `<runtime dir>/endpoints/<pid>.sock` — until that
    timeout denies it. Without the preference it denies at once (decision 11), as VS Code expects
    of an endpoint nobody watches, and no socket is made (None). The returned host's socket is
    starting; the caller stops it when the endpoint ends."""
    from bridge.settings import Settings
    from symposium_tui.hosting.console_socket import ConsoleHost, endpoints_dir

    preferred = Settings.load_quietly().prefs.approval_timeout
    if not preferred:
        return None
    broker = bridge.approvals
    broker.timeout = float(preferred)
    broker.hold_unasked = True
    host = ConsoleHost(bridge, endpoints_dir() / f"{os.getpid()}.sock", consoles_only=True)
    host.start_soon()
    return host
