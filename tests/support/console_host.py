"""A console process for hosting tests: the real host (bridge in-process, console socket) with a
scripted console resolver instead of the Textual UI.

`python -m tests.support.console_host MODE [--cwd DIR]` where MODE says how it answers approvals:
approve, deny, bypass, or hold (never answers). It prints `READY` once listening, one line per
approval it sees (`APPROVAL <id> <title>`), and on SIGTERM detaches the console (what it held is
denied: fail closed) and shuts down.
"""

from __future__ import annotations

import asyncio
import signal
import sys

from bridge import events as ev
from symposium_tui.hosting.console_socket import ConsoleHost
from symposium_tui.hosting.hosted import build_hosted


async def main(mode: str, cwd: str | None) -> int:
    hosted = build_hosted(cwd=cwd)
    bridge = hosted.bridge
    host = ConsoleHost(bridge)
    handle = bridge.approvals.attach("test-console")

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.ApprovalRequested):
            print(f"APPROVAL {event.approval_id} {event.tool_call.get('title')}", flush=True)
            if mode != "hold":
                asyncio.get_running_loop().call_soon(handle.answer, event.approval_id, mode)
        elif isinstance(event, ev.ApprovalResolved):
            print(f"RESOLVED {event.approval_id} {event.outcome} {event.resolver}", flush=True)
        elif isinstance(event, ev.RequestReceived):
            print(f"REQUEST {event.request_id}", flush=True)

    bridge.bus.subscribe(on_event)
    await host.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    print("READY", flush=True)
    await stop.wait()
    handle.detach()
    await host.stop()
    await hosted.close()
    if bridge.approvals.audit is not None:
        bridge.approvals.audit.close()
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    cwd = args[args.index("--cwd") + 1] if "--cwd" in args else None
    sys.exit(asyncio.run(main(args[0], cwd)))
