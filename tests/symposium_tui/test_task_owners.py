"""Every background task of the console's side has an owner: the links of an attached console,
the `link` multiplexer, a headless endpoint's switch to a console, an ACP front door's link to
one, the notifier. Closing the owner leaves none of its tasks (or processes) running when the
close returns, and a task's failure is logged, never lost.

The console on the other end is a real console process (`tests.support.console_host`, the real
host and bridge) listening on this test's runtime dir."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.approvals import ApprovalBroker
from bridge.config import BridgeConfig
from bridge.core import Bridge
from bridge.events import EventBus
from bridge.rpc import JsonRpcPeer
from symposium_tui.wire import mux as linkmux
from symposium_tui.wire.link_set import LinkSet
from symposium_tui.wire.transport import Target
from tests.support.lmclient import REPO
from tests.support.tasks import running_since
from tests.support.waiting import gone, until


async def nothing_lost(seen: list[dict[str, Any]]) -> None:
    gc.collect()
    await asyncio.sleep(0)  # the loop reports what it collected on its next turn
    assert seen == []


@pytest.fixture
def runtime() -> Path:
    return Path(os.environ["SYMPOSIUM_RUNTIME_DIR"])


@pytest.fixture
async def console(runtime: Path, tmp_path: Path) -> Any:
    """A console process (never answers approvals) on this test's console socket."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.console_host",
        "hold",
        "--cwd",
        str(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=str(REPO),
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 60)
    assert line.strip() == b"READY", line
    yield runtime / "console.sock"
    proc.terminate()
    await asyncio.wait_for(proc.wait(), 20)


class Lines:
    """A writer collecting what is written to it, line by line."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.data.splitlines()]


# --- an attached console's links ------------------------------------------------------------------

# A link command that never speaks the protocol and ignores SIGTERM (an ssh stuck on a dead
# network): it says its pid on stderr, then waits.
DEAF = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("pid", os.getpid(), file=sys.stderr, flush=True)
time.sleep(120)
"""


@pytest.fixture
def deaf_pids() -> Iterator[list[int]]:
    pids: list[int] = []
    yield pids
    for pid in pids:  # a failed test leaves none behind
        if not gone(pid):
            os.kill(pid, 9)


async def test_stopping_a_link_set_leaves_none_of_its_tasks_or_processes_running(
    console, deaf_pids, lost_exceptions
):
    before = asyncio.all_tasks()
    links = LinkSet(
        [Target("local", socket=console), Target("stuck", argv=[sys.executable, "-c", DEAF])],
        post=lambda event: None,
    )
    up, stuck = links.links
    links.start()
    await asyncio.wait_for(up.wait_up(), 30)
    detail = await until(lambda: stuck.detail.startswith("pid ") and stuck.detail, what="a pid")
    deaf_pids.append(int(detail.split()[1]))
    assert running_since(before)  # the links' loops, the stuck link's stderr reader
    await links.stop()
    assert running_since(before) == []
    assert gone(deaf_pids[0]), "the link's process deaf to SIGTERM is killed and reaped"
    await nothing_lost(lost_exceptions)


async def test_a_link_that_fails_is_logged_with_its_host_and_its_error_is_never_lost(
    tmp_path, caplog, lost_exceptions
):
    def post(event: Any) -> None:
        raise RuntimeError(f"the console could not show {event.type}")

    links = LinkSet([Target("devbox", socket=tmp_path / "no-such.sock")], post=post)
    with caplog.at_level(logging.ERROR, logger="bridge.tasks"):
        links.start()
        await until(lambda: [r for r in caplog.records if r.name == "bridge.tasks"], what="a log")
    (record,) = [r for r in caplog.records if r.name == "bridge.tasks"]
    assert record.getMessage() == "link to devbox: background task connection failed"
    assert record.exc_info is not None
    assert "the console could not show link_state" in str(record.exc_info[1])
    await links.stop()
    await nothing_lost(lost_exceptions)


# --- `symposium-tui link` -------------------------------------------------------------------------


async def test_when_the_consoles_end_closes_the_link_mux_leaves_nothing_running(
    console, runtime, lost_exceptions
):
    before = asyncio.all_tasks()
    reader = asyncio.StreamReader()
    out = Lines()
    serving = asyncio.ensure_future(linkmux.serve(runtime, reader, out))
    hello = {"protocol": 1, "console": "alice@laptop"}
    reader.feed_data(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "console/hello", "params": hello}).encode()
        + b"\n"
    )
    await until(lambda: out.data.endswith(b"\n"), what="the hello answered")
    (answer,) = out.messages()
    assert answer["id"] == 1 and answer["result"]["pending"] == []
    # The console's socket's reader and the watcher for new sockets run until the console goes.
    assert running_since(before, serving)
    reader.feed_eof()
    assert await asyncio.wait_for(serving, 30) == 0
    assert running_since(before) == []
    await nothing_lost(lost_exceptions)


# --- a headless endpoint's switch to a console ----------------------------------------------------


async def test_closing_the_console_switch_ends_its_reader_and_relays_nothing_more(
    console, lost_exceptions
):
    from symposium_tui.hosting.switch import ConsoleSwitch

    before = asyncio.all_tasks()
    out = Lines()
    peer = JsonRpcPeer(asyncio.StreamReader(), out, name="vscode")
    switched: list[bool] = []

    async def on_switch() -> None:
        switched.append(True)

    switch = ConsoleSwitch(peer, on_switch, path=console)
    request = {"jsonrpc": "2.0", "id": 7, "method": "no/such/method", "params": {}}
    assert await switch(json.dumps(request).encode())
    assert switched and switch.relaying
    await until(lambda: out.data.endswith(b"\n"), what="the console's answer relayed back")
    (answer,) = out.messages()
    assert answer["id"] == 7 and answer["error"]["code"] == -32601
    await switch.close()
    assert running_since(before) == []
    assert not switch.relaying
    assert not await switch(json.dumps({**request, "id": 8}).encode()), "served here again"
    await nothing_lost(lost_exceptions)


async def test_when_a_headless_endpoints_input_ends_its_switch_to_the_console_ends_with_it(
    console, tmp_path, lost_exceptions
):
    """The endpoint's connection as `symposium-tui vscodelm` serves it, handed to the console;
    when its client leaves, nothing of the relay is left running."""
    from bridge.vscodelm import serve_connection
    from symposium_tui.hosting.endpoint import configure_endpoint

    bus = EventBus()
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path)), bus=bus, approvals=ApprovalBroker(bus))
    before = asyncio.all_tasks()
    reader = asyncio.StreamReader()
    out = Lines()
    peers: list[JsonRpcPeer] = []

    def configure(peer: JsonRpcPeer, core: Any) -> Any:
        peers.append(peer)
        return configure_endpoint(peer, core)

    serving = asyncio.ensure_future(serve_connection(bridge, reader, out, configure=configure))
    request = {"jsonrpc": "2.0", "id": 7, "method": "no/such/method", "params": {}}
    reader.feed_data(json.dumps(request).encode() + b"\n")
    await until(lambda: out.data.endswith(b"\n"), what="the console's answer relayed back")
    (answer,) = out.messages()
    assert answer["id"] == 7 and answer["error"]["code"] == -32601
    assert peers[0].intercept.relaying  # type: ignore[attr-defined]  # the console answered
    reader.feed_eof()
    await asyncio.wait_for(serving, 30)
    assert running_since(before) == []
    await bridge.close()
    await nothing_lost(lost_exceptions)


# --- an ACP front door's link to a console --------------------------------------------------------


async def test_closing_the_acp_console_link_ends_its_reader(console, tmp_path, lost_exceptions):
    from symposium_tui.wire.acp_console import ConsoleLink

    bus = EventBus()
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path)), bus=bus, approvals=ApprovalBroker(bus))
    before = asyncio.all_tasks()
    link = ConsoleLink(bridge, path=console)
    await link.check()
    assert link.attached
    assert running_since(before)  # the reader of the console's answers
    await link.close()
    assert running_since(before) == []
    assert not link.attached
    await link.check()  # closed: it attaches no more
    assert not link.attached and running_since(before) == []
    await bridge.close()
    await nothing_lost(lost_exceptions)


# --- the notifier ---------------------------------------------------------------------------------


async def _lines(path: Path, n: int) -> list[list[str]]:
    await until(lambda: path.exists() and path.read_text().count("\n") >= n, what=f"{n} runs")
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_a_notify_command_that_cannot_start_is_logged_and_the_next_card_still_runs(
    tmp_path, caplog, lost_exceptions
):
    from bridge.settings import NotifyConfig
    from symposium_tui.hosting.notify import Notifier

    out = tmp_path / "args.jsonl"
    script = tmp_path / "record.py"
    script.write_text(
        "import json, sys\nopen(sys.argv[1], 'a').write(json.dumps(sys.argv[2:]) + '\\n')\n"
    )
    before = asyncio.all_tasks()
    notifier = Notifier(
        NotifyConfig(command=(sys.executable, str(script), str(out))), "devbox", sleep=asyncio.sleep
    )
    with caplog.at_level(logging.WARNING, logger="symposium_tui.hosting.notify"):
        notifier.card("a1", "eliza", "Run\x00 the tests")  # an agent's title with a NUL in it
        notifier.card("a2", "eliza", "Deploy")
        assert await _lines(out, 1) == [["eliza", "devbox", "Deploy"]]
    (warning,) = [r for r in caplog.records if r.name == "symposium_tui.hosting.notify"]
    assert "could not start" in warning.getMessage() and "null" in warning.getMessage()
    await notifier.close()
    assert running_since(before) == []
    notifier.card("a3", "eliza", "Too late")  # closed: nothing starts
    assert running_since(before) == []
    await nothing_lost(lost_exceptions)


async def test_a_notifier_whose_runner_fails_logs_it_and_the_next_card_starts_a_new_one(
    tmp_path, caplog, lost_exceptions
):
    from bridge.settings import NotifyConfig
    from symposium_tui.hosting.notify import Notifier

    out = tmp_path / "args.jsonl"
    script = tmp_path / "record.py"
    script.write_text(
        "import json, sys\nopen(sys.argv[1], 'a').write(json.dumps(sys.argv[2:]) + '\\n')\n"
    )
    reads: list[int] = []

    def clock() -> float:  # read once as the notifier is made, then by the runner: it fails once
        reads.append(1)
        if len(reads) == 2:
            raise OSError("no clock")
        return 0.0

    notifier = Notifier(
        NotifyConfig(command=(sys.executable, str(script), str(out)), interval=0),
        "devbox",
        clock=clock,
    )
    with caplog.at_level(logging.ERROR, logger="bridge.tasks"):
        notifier.card("a1", "eliza", "Lost")
        await until(lambda: [r for r in caplog.records if r.name == "bridge.tasks"], what="a log")
        notifier.card("a2", "eliza", "Deploy")
        assert await _lines(out, 1) == [["eliza", "devbox", "Deploy"]]
    (record,) = [r for r in caplog.records if r.name == "bridge.tasks"]
    assert record.getMessage() == "notifier: background task runner failed"
    assert "no clock" in str(record.exc_info[1])  # type: ignore[index]
    await notifier.close()
    await nothing_lost(lost_exceptions)


# --- a headless endpoint's socket for consoles ----------------------------------------------------


async def test_stopping_an_endpoints_socket_for_consoles_ends_its_start_and_its_consoles(
    runtime, tmp_path, lost_exceptions
):
    from symposium_tui.hosting.endpoint import hold_for_consoles

    config = Path(os.environ["SYMPOSIUM_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text("[preferences]\napproval_timeout = 120\n")
    bus = EventBus()
    bridge = Bridge(BridgeConfig(cwd=str(tmp_path)), bus=bus, approvals=ApprovalBroker(bus))
    before = asyncio.all_tasks()
    # Stopped while its socket is still being made: the start ends, and no socket is left.
    host = hold_for_consoles(bridge)
    assert host is not None and host.path.parent == runtime / "endpoints"
    await host.stop()
    assert running_since(before) == []
    assert not host.path.exists()
    # Stopped with a console attached to it: the console's connection ends, the socket goes.
    host = hold_for_consoles(bridge)
    assert host is not None
    await until(lambda: host.running, what="the socket made")
    reader, writer = await asyncio.open_unix_connection(str(host.path))
    hello = {"protocol": 1, "console": "alice@laptop"}
    writer.write(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "console/hello", "params": hello}).encode()
        + b"\n"
    )
    answer = json.loads(await asyncio.wait_for(reader.readline(), 30))
    assert answer["id"] == 1 and answer["result"]["pending"] == []
    await host.stop()
    assert running_since(before) == []
    assert not host.path.exists()
    assert await asyncio.wait_for(reader.read(), 30) == b"", "the console's connection closed"
    writer.close()
    await bridge.close()
    await nothing_lost(lost_exceptions)
