"""The console host and the stdio relay: a VS Code-like client → `symposium-tui vscodelm` (relay)
→ console socket → the bridge inside a console process → a real agent, and approvals answered by
the console. Everything runs as real processes over real pipes and a real unix socket."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

import pytest

from tests.support.lmclient import REPO, LmClient, assistant, echo_agent, user

ASK = "ask permission to deploy"


class ConsoleProcess:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, mode: str, cwd: Path) -> ConsoleProcess:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.support.console_host",
            mode,
            "--cwd",
            str(cwd),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=str(REPO),
        )
        console = cls(proc)
        await console.wait_for("READY")
        return console

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.lines.append(line.decode().rstrip())

    async def wait_for(self, prefix: str, timeout: float = 20) -> str:
        async with asyncio.timeout(timeout):
            while True:
                for line in self.lines:
                    if line.startswith(prefix):
                        return line
                if self.proc.returncode is not None:
                    raise AssertionError(f"console exited: {self.lines}")
                await asyncio.sleep(0.02)

    def seen(self, prefix: str) -> list[str]:
        return [line for line in self.lines if line.startswith(prefix)]

    async def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
            await asyncio.wait_for(self.proc.wait(), 15)


def audit(config_dir: Path, kind: str = "decision") -> list[dict]:
    """The audit log's entries of one type (decisions, or the tools' reported outcomes)."""
    path = config_dir / "audit.jsonl"
    entries = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [e for e in entries if e.get("type", "decision") == kind]


@pytest.fixture
def config_dir() -> Path:
    return Path(os.environ["SYMPOSIUM_CONFIG_DIR"])


@pytest.fixture
def runtime_dir() -> Path:
    return Path(os.environ["SYMPOSIUM_RUNTIME_DIR"])


async def test_relay_reaches_the_console_and_its_approve_lets_the_agent_continue(
    tmp_path, config_dir, runtime_dir
):
    console = await ConsoleProcess.start("approve", tmp_path)
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        resp = await client.chat([user(ASK)])
        assert resp.error is None
        assert resp.text.endswith("Permission granted (allow_once). I ran deploy.")
        assert console.seen("REQUEST"), "the request was served by the console's bridge"
        (record,) = audit(config_dir)
        assert (
            record["resolver"] == "console"
            and record["answer"] == "approve"
            and record["outcome"] == "allow_once"
        )
        (outcome,) = audit(config_dir, "tool_outcome")
        assert outcome["approval_id"] == record["approval_id"] and outcome["status"] == "completed"
        assert oct((runtime_dir / "console.sock").stat().st_mode & 0o777) == oct(0o600)
        assert oct(runtime_dir.stat().st_mode & 0o777) == oct(0o700)
    finally:
        await client.close()
        await console.stop()


async def test_console_deny_reaches_the_agent_as_reject_once_and_the_chat_goes_on(
    tmp_path, config_dir
):
    console = await ConsoleProcess.start("deny", tmp_path)
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        resp = await client.chat([user(ASK)])
        assert resp.text.endswith("Permission denied (reject_once). I did not run deploy.")
        nxt = await client.chat([user(ASK), assistant(resp.text), user("Hello")])
        assert nxt.error is None and nxt.text
        assert audit(config_dir)[0]["outcome"] == "reject_once"
    finally:
        await client.close()
        await console.stop()


async def test_bypass_is_persisted_and_a_restarted_console_no_longer_asks(tmp_path, config_dir):
    console = await ConsoleProcess.start("bypass", tmp_path)
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        resp = await client.chat([user(ASK)])
        assert resp.text.endswith("Permission granted (allow_once). I ran deploy.")
    finally:
        await client.close()
        await console.stop()
    assert "bypass = true" in (config_dir / "settings.toml").read_text()
    restarted = await ConsoleProcess.start("hold", tmp_path)  # would never answer: only policy can
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        resp = await client.chat([user("ask permission to deploy again")])
        assert resp.text.endswith("Permission granted (allow_once). I ran deploy again.")
        assert restarted.seen("APPROVAL") == []
        assert audit(config_dir)[-1]["resolver"] == "policy"
    finally:
        await client.close()
        await restarted.stop()


async def test_console_gone_mid_turn_fails_the_request_denies_its_approval_and_the_next_is_served_headless(
    tmp_path, config_dir
):
    console = await ConsoleProcess.start("hold", tmp_path)
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        fut = client.chat_start([user(ASK)])
        await console.wait_for("APPROVAL")
        await console.stop(signal.SIGTERM)
        resp = await asyncio.wait_for(fut, 20)
        assert resp.error is not None and resp.error["code"] == -32000
        assert "console" in resp.error["message"]
        records = audit(config_dir)
        assert (
            records
            and records[-1]["outcome"] == "reject_once"
            and "went away" in records[-1]["reason"]
        )
        # No console now: the endpoint serves the conversation itself, in a fresh session.
        nxt = await client.chat([user("Hello")])
        assert nxt.error is None and nxt.text
    finally:
        await client.close()
        await console.stop()


async def test_console_killed_outright_mid_turn_still_answers_the_request(tmp_path):
    console = await ConsoleProcess.start("hold", tmp_path)
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        fut = client.chat_start([user(ASK)])
        await console.wait_for("APPROVAL")
        await console.stop(signal.SIGKILL)
        resp = await asyncio.wait_for(fut, 20)
        assert resp.error is not None and resp.error["code"] == -32000
        nxt = await client.chat([user("Hello")])
        assert nxt.error is None and nxt.text
    finally:
        await client.close()


async def test_console_started_later_receives_the_following_requests_without_a_restart(tmp_path):
    client = await LmClient.start("--cwd", str(tmp_path))
    console = None
    try:
        agent = echo_agent()
        first = await client.chat([user("U1")], agent=agent)
        assert first.text == "ECHO: U1"
        console = await ConsoleProcess.start("approve", tmp_path)
        second = await client.chat([user("U1"), first.as_assistant(), user("U2")], agent=agent)
        assert console.seen("REQUEST"), "the request after the console started reached it"
        # The console's bridge never saw this conversation: it replays the earlier turns.
        assert "User: U1" in second.text and second.text.endswith("U2")
        third = await client.chat([user(ASK)])
        assert third.text.endswith("Permission granted (allow_once). I ran deploy.")
    finally:
        await client.close()
        if console is not None:
            await console.stop()


async def test_a_second_console_refuses_to_start_while_one_runs(tmp_path):
    console = await ConsoleProcess.start("approve", tmp_path)
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "symposium_tui",
            "serve",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(REPO),
        )
        _, err = await asyncio.wait_for(proc.communicate(), 20)
        assert proc.returncode == 1 and b"already running" in err
        # ... and what to do instead: the console serves OpenAI clients itself, `attach` answers
        # its approvals from elsewhere.
        said = " ".join(err.decode().split())
        assert "`symposium-tui --openai 127.0.0.1:8000`" in said, said
        assert "`symposium-tui attach local`" in said, said
    finally:
        await console.stop()


def _connect_as(uid: int, path: str, conn_r: int) -> None:
    """In a forked child: drop to `uid`, try the console socket, report what happened."""
    try:
        os.setgid(uid)
        os.setuid(uid)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(path)
        except PermissionError:
            os.write(conn_r, b"EACCES")
            os._exit(0)
        try:
            s.sendall(
                b'{"jsonrpc":"2.0","id":1,"method":"lm/provideTokenCount","params":{"modelId":"m","text":"abcd"}}\n'
            )
            data = s.recv(4096)
        except (ConnectionResetError, BrokenPipeError):  # the host hung up first
            data = b""
        os.write(conn_r, b"ANSWERED" if data else b"CLOSED")
    except Exception as exc:  # noqa: BLE001
        os.write(conn_r, f"ERROR {exc}".encode())
    os._exit(0)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
async def test_peers_of_another_uid_are_refused(tmp_path):
    import shutil
    import tempfile

    from symposium_tui.hosting.console_socket import ConsoleHost
    from symposium_tui.hosting.hosted import build_hosted

    bridge = build_hosted(cwd=str(tmp_path), audit=False).bridge
    sock_dir = Path(
        tempfile.mkdtemp(prefix="symposium-uid-test-", dir="/tmp")
    )  # reachable by others once loosened
    host = ConsoleHost(bridge, path=sock_dir / "console.sock")
    await host.start()
    try:
        path = str(host.path)

        async def attempt() -> bytes:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                _connect_as(65534, path, w)
            os.close(w)
            loop = asyncio.get_running_loop()
            data = await loop.run_in_executor(None, os.read, r, 100)
            await loop.run_in_executor(None, os.waitpid, pid, 0)
            os.close(r)
            return data

        # As configured, the filesystem already keeps another user out ...
        assert await attempt() == b"EACCES"
        # ... and should the permissions be loosened, the peer-credential check still refuses.
        os.chmod(sock_dir, 0o755)
        os.chmod(path, 0o666)
        assert await attempt() == b"CLOSED"
        assert host.refused == 1
    finally:
        await host.stop()
        await bridge.close()
        shutil.rmtree(sock_dir, ignore_errors=True)


async def test_after_the_console_goes_away_nothing_is_answered_twice(tmp_path):
    """Requests the console already rejected (ids it answered with null, because they were never
    valid: an object, a float) and requests it answered with their own id get no second answer
    when the console goes away; only what it still held gets the relay's -32000."""
    console = await ConsoleProcess.start("hold", tmp_path)
    client = await LmClient.start("--cwd", str(tmp_path))
    try:
        held = client.chat_start([user(ASK)])
        await console.wait_for("APPROVAL")
        for line in (
            '{"jsonrpc":"2.0","id":{"a":1},"method":"lm/provideTokenCount","params":{}}',
            '{"jsonrpc":"2.0","id":1.5,"method":"lm/provideTokenCount","params":{}}',
            '{"jsonrpc":"2.0","id":[7],"method":"lm/cancel"}',
            '{"jsonrpc":"1.0","id":77,"method":"lm/provideTokenCount","params":{}}',
            '{"jsonrpc":"2.0","id":78,"method":5}',
            '{"jsonrpc":"2.0","id":79,"method":"no/such/method"}',
        ):
            client.send_raw(line + "\n")

        def answered() -> list:
            return [m for m in client.unsolicited if "error" in m]

        async with asyncio.timeout(20):
            while len(answered()) < 6:
                await asyncio.sleep(0.02)
        await console.stop(signal.SIGTERM)
        resp = await asyncio.wait_for(held, 20)
        assert resp.error is not None and resp.error["code"] == -32000
        nxt = await client.chat([user("Hello")])  # served headless
        assert nxt.error is None and nxt.text
    finally:
        await client.close()
        await console.stop()
    ids = [json.dumps(m["id"]) for m in answered()]
    assert sorted(ids) == sorted(["null", "null", "null", "77", "78", "79"]), ids
    assert not [m for m in client.unsolicited if m.get("error", {}).get("code") == -32000]


async def test_after_a_console_that_took_over_goes_away_nothing_is_answered_twice(tmp_path):
    """The same when the console started after the endpoint (the switch hands it the traffic)."""
    client = await LmClient.start("--cwd", str(tmp_path))
    console = None
    try:
        first = await client.chat([user("Hello")])  # served headless
        assert first.error is None
        console = await ConsoleProcess.start("hold", tmp_path)
        held = client.chat_start([user(ASK)])  # the switch hands this to the console
        await console.wait_for("APPROVAL")
        for line in (
            '{"jsonrpc":"2.0","id":{"a":1},"method":"lm/provideTokenCount","params":{}}',
            '{"jsonrpc":"2.0","id":1.5,"method":"lm/provideTokenCount","params":{}}',
            '{"jsonrpc":"2.0","id":79,"method":"no/such/method"}',
        ):
            client.send_raw(line + "\n")

        def answered() -> list:
            return [m for m in client.unsolicited if "error" in m]

        async with asyncio.timeout(20):
            while len(answered()) < 3:
                await asyncio.sleep(0.02)
        await console.stop(signal.SIGTERM)
        resp = await asyncio.wait_for(held, 20)
        assert resp.error is not None and resp.error["code"] == -32000
        nxt = await client.chat([user("Hello again")])  # served headless once more
        assert nxt.error is None and nxt.text
    finally:
        await client.close()
        if console is not None:
            await console.stop()
    ids = sorted(json.dumps(m["id"]) for m in answered())
    assert ids == ["79", "null", "null"], ids


async def test_an_over_long_line_from_a_console_is_skipped_whole_and_what_follows_is_relayed(
    tmp_path, runtime_dir
):
    """The switch reads the console's lines with the endpoint's size limit. A line over it is read
    past to its end: the request it answered (its id shows in its first bytes) gets one error, a
    line whose id does not show is dropped, and the tail of neither ever reaches VS Code as a
    message of its own; the line after it is relayed as it is."""
    limit = 1024 * 1024  # the reader takes it in several reads, so a tail would be seen
    client = await LmClient.start(
        "--cwd", str(tmp_path), env={"SYMPOSIUM_MAX_MESSAGE_BYTES": str(limit)}
    )
    relayed: list[dict] = []
    server = None

    async def console(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while len(relayed) < 2:
            line = await reader.readline()
            if not line:
                return
            relayed.append(json.loads(line))
        long_id, tailed_id = relayed[0]["id"], relayed[1]["id"]
        # Over the limit, its id in its first bytes.
        writer.write(b'{"jsonrpc":"2.0","id":%d,"result":"' % long_id + b"x" * limit + b'"}\n')
        # Over the limit, its id out of sight: what follows the padding is a whole response.
        tail = {"jsonrpc": "2.0", "id": tailed_id, "result": "the tail"}
        writer.write(b" " * (limit + limit // 2) + json.dumps(tail).encode() + b"\n")
        valid = {"jsonrpc": "2.0", "id": tailed_id, "result": "the valid line"}
        writer.write(json.dumps(valid).encode() + b"\n")
        await writer.drain()
        await reader.read()  # until the endpoint goes

    try:
        first = await client.chat([user("Hello")])  # served headless: the switch is in place
        assert first.error is None
        runtime_dir.mkdir(parents=True, exist_ok=True)
        server = await asyncio.start_unix_server(
            console, path=str(runtime_dir / "console.sock"), limit=limit
        )
        counted = client.request("lm/provideTokenCount", {"modelId": "m", "text": "abcd"})
        tailed = client.request("lm/provideTokenCount", {"modelId": "m", "text": "efgh"})
        long_answer = await asyncio.wait_for(counted, 30)
        answer = await asyncio.wait_for(tailed, 30)
        assert [m["method"] for m in relayed] == ["lm/provideTokenCount"] * 2
        assert long_answer.error is not None and long_answer.error["code"] == -32603
        assert "longer than 1048576 bytes" in long_answer.error["message"]
        assert answer.error is None and answer.result == "the valid line"
    finally:
        await client.close()
        if server is not None:
            server.close()
    assert long_answer.order == ["response"] and answer.order == ["response"]
    assert client.unsolicited == []


async def test_a_request_sent_once_the_console_has_removed_its_socket_is_served_here(
    tmp_path, runtime_dir
):
    """A console leaving removes its socket before it answers what it has in flight; the
    endpoint relaying to it serves a request that comes after that itself, even while the
    console's connection is still open (the console never sees it)."""
    client = await LmClient.start("--cwd", str(tmp_path))
    relayed: list[dict] = []
    server = None
    socket_path = runtime_dir / "console.sock"

    async def console(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            message = json.loads(line)
            relayed.append(message)
            if "id" in message:
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": 1000 + len(relayed)}
                writer.write(json.dumps(answer).encode() + b"\n")
                await writer.drain()

    try:
        first = await client.chat([user("Hello")])  # served headless: the switch is in place
        assert first.error is None
        runtime_dir.mkdir(parents=True, exist_ok=True)
        server = await asyncio.start_unix_server(console, path=str(socket_path))
        params = {"modelId": "m", "text": "abcdefgh"}  # 8 bytes: 2 tokens, counted here
        by_console = await asyncio.wait_for(client.request("lm/provideTokenCount", params), 30)
        assert by_console.result == 1001 and len(relayed) == 1
        socket_path.unlink()  # the console is leaving; its connection is still open
        here = await asyncio.wait_for(client.request("lm/provideTokenCount", params), 30)
        assert here.error is None and here.result == 2
        assert len(relayed) == 1  # the console never saw it
    finally:
        await client.close()
        if server is not None:
            server.close()
