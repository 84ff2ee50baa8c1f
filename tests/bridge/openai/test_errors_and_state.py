"""Every error path as the SDK's typed exception; retries that join the running exchange; a
disconnect that cancels the agent's turn."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx2
import openai
import pytest

from tests.support.openai_server import ServerThread, read_log
from tests.support.waiting import until


def agent_events(logs) -> list[str]:
    return [e["event"] for e in read_log(logs["tool"])]


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# --- errors ---------------------------------------------------------------------------------------


def test_400_missing_model_and_bad_messages(client):
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model=None, messages=[{"role": "user", "content": "x"}])  # type: ignore[arg-type]
    assert info.value.body["param"] == "model"
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="eliza", messages=[])
    assert info.value.body["param"] == "messages"
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="eliza", messages=[{"role": "wizard", "content": "x"}])
    assert info.value.body["param"] == "messages[0].role"


def test_400_unparseable_json_in_openai_shape(server: ServerThread):
    r = httpx2.post(
        server.url + "/chat/completions",
        content=b"{nope",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400
    err = r.json()["error"]
    assert (
        set(err) == {"message", "type", "param", "code"} and err["type"] == "invalid_request_error"
    )


def test_404_model_not_found(client):
    with pytest.raises(openai.NotFoundError) as info:
        client.chat.completions.create(model="gpt-17", messages=[{"role": "user", "content": "x"}])
    assert info.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-17")


def test_404_unknown_route(server: ServerThread):
    r = httpx2.get(server.url + "/embeddings")
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_url"


def test_400_unsupported_n(client):
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model="eliza", messages=[{"role": "user", "content": "x"}], n=2
        )
    assert info.value.body["param"] == "n"


def test_500_agent_that_fails_to_start(client):
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model="broken", messages=[{"role": "user", "content": "x"}])
    assert info.value.status_code == 500 and info.value.code == "agent_error"
    assert "refusing to start" in info.value.message
    with pytest.raises(
        openai.InternalServerError
    ):  # streaming: the status is still an error status
        list(
            client.chat.completions.create(
                model="broken", messages=[{"role": "user", "content": "y"}], stream=True
            )
        )


@pytest.fixture
def one_slot_server(settings, tmp_path):
    srv = ServerThread(str(tmp_path), config={"max_agents": 1}, retry_grace=1.0).start()
    yield srv
    srv.stop()


def test_503_when_every_agent_slot_is_busy(one_slot_server: ServerThread, tmp_path):
    server = one_slot_server
    gate = tmp_path / "gate"  # the slot's agent answers once the 503 has been seen
    with (
        openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=60) as client,
        openai.OpenAI(base_url=server.url, api_key="x", max_retries=0) as other,
    ):
        result = {}
        t = threading.Thread(
            target=lambda: result.setdefault(
                "r",
                other.chat.completions.create(
                    model="tool", messages=[{"role": "user", "content": f"gate {gate}"}]
                ),
            )
        )
        t.start()
        assert wait_for(lambda: any(not s.is_idle for s in server.bridge.all_sessions()), 60)
        with pytest.raises(openai.InternalServerError) as info:
            client.chat.completions.create(
                model="echo", messages=[{"role": "user", "content": "x"}]
            )
        assert info.value.status_code == 503 and info.value.code == "agents_busy"
        gate.touch()
        t.join(60)
        assert result["r"].choices[0].message.content == "SLOW DONE"


@pytest.fixture
def keyed_server(settings, tmp_path):
    srv = ServerThread(str(tmp_path), api_key="s3cret").start()
    yield srv
    srv.stop()


def test_401_without_the_api_key(keyed_server: ServerThread):
    with openai.OpenAI(base_url=keyed_server.url, api_key="wrong", max_retries=0) as bad:
        with pytest.raises(openai.AuthenticationError) as info:
            bad.models.list()
        assert info.value.code == "invalid_api_key"
        with pytest.raises(openai.AuthenticationError):
            bad.chat.completions.create(model="eliza", messages=[{"role": "user", "content": "x"}])
    with openai.OpenAI(base_url=keyed_server.url, api_key="s3cret", max_retries=0) as good:
        assert (
            good.chat.completions.create(model="echo", messages=[{"role": "user", "content": "k"}])
            .choices[0]
            .message.content
            == "ECHO: k"
        )
    assert httpx2.get(keyed_server.url.removesuffix("/v1") + "/health").status_code == 200


# --- retries and disconnects ----------------------------------------------------------------------


async def raw_post(url: str, path: str, body: dict, headers: dict[str, str] | None = None):
    """An HTTP/1.1 POST on a socket of our own, so that closing it is a real disconnect."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    data = json.dumps(body).encode()
    head = [
        f"POST {parts.path}{path} HTTP/1.1",
        f"host: {parts.netloc}",
        "content-type: application/json",
        f"content-length: {len(data)}",
        *(f"{k}: {v}" for k, v in (headers or {}).items()),
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
    await writer.drain()
    return reader, writer


class TimesOutOnceThePromptArrived(httpx2.BaseTransport):
    """The SDK's transport, with its first attempt timing out at a moment chosen by state, not by
    a clock: the attempt is sent, the agent logs that it got the prompt, the connection is closed
    (as a client's timeout closes it) and the server has seen it go — then the SDK is told the
    read timed out, and retries. On the retry, the agent's gate opens once the retry has joined
    the exchange, so the answer can only come to the retry through the running exchange."""

    def __init__(self, server: ServerThread, agent_log, gate) -> None:
        self.server = server
        self.agent_log = agent_log
        self.gate = gate
        self.inner = httpx2.HTTPTransport()
        self.attempts = 0

    def _consumers(self) -> int:
        exchanges = list(self.server.door.exchanges.values())
        return sum(ex.consumers for ex in exchanges if not ex.done)

    def handle_request(self, request):
        self.attempts += 1
        if self.attempts > 1:
            opener = threading.Thread(target=self._open_gate_once_joined, daemon=True)
            opener.start()
            return self.inner.handle_request(request)
        import socket

        body = request.read()
        head = [f"{request.method} {request.url.raw_path.decode()} HTTP/1.1"]
        head += [f"{k}: {v}" for k, v in request.headers.items()]
        sock = socket.create_connection((request.url.host, request.url.port))
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        assert wait_for(
            lambda: any(e["event"] == "prompt" for e in read_log(self.agent_log)), 60
        ), "the agent never got the prompt"
        assert self._consumers() == 1
        sock.close()  # what the client's timeout does
        assert wait_for(lambda: self._consumers() == 0, 60), "the server never saw it go"
        raise httpx2.ReadTimeout("timed out (the test's first attempt)", request=request)

    def _open_gate_once_joined(self) -> None:
        if wait_for(lambda: self._consumers() == 1, 60):
            self.gate.touch()

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def patient_server(settings, tmp_path):
    """Holds a disconnected exchange for a retry long enough that only state decides the test."""
    srv = ServerThread(str(tmp_path), retry_grace=120.0).start()
    yield srv
    srv.stop()


def test_sdk_retry_after_a_timeout_joins_the_running_exchange(
    patient_server: ServerThread, logs, tmp_path
):
    gate = tmp_path / "gate"
    transport = TimesOutOnceThePromptArrived(patient_server, logs["tool"], gate)
    with openai.OpenAI(
        base_url=patient_server.url,
        api_key="x",
        max_retries=1,
        timeout=60,
        http_client=httpx2.Client(transport=transport),
    ) as c:
        r = c.chat.completions.create(
            model="tool", messages=[{"role": "user", "content": f"gate {gate}"}]
        )
    assert transport.attempts == 2
    assert r.choices[0].message.content == "SLOW DONE"
    events = read_log(logs["tool"])
    assert [e["event"] for e in events] == ["prompt", "done"]  # one prompt, never cancelled


async def test_retry_of_a_request_whose_answer_was_missed_replays_it(
    patient_server: ServerThread, logs, tmp_path
):
    server = patient_server
    gate = tmp_path / "gate"
    body = {"model": "tool", "messages": [{"role": "user", "content": f"gate {gate}"}]}
    _, writer = await raw_post(
        server.url, "/chat/completions", body, {"x-stainless-retry-count": "0"}
    )
    await until(lambda: agent_events(logs) == ["prompt"], what="the agent's prompt")
    (exchange,) = server.door.exchanges.values()
    writer.close()  # the client gives up on the first try
    await until(lambda: exchange.consumers == 0, what="the server seeing the client go")
    gate.touch()
    await until(lambda: exchange.done, what="the agent finishing while nobody listens")
    async with httpx2.AsyncClient(base_url=server.url, timeout=30) as http:
        # an SDK sends the very same bytes again
        retry = await http.post(
            "/chat/completions",
            content=json.dumps(body).encode(),
            headers={"x-stainless-retry-count": "1", "content-type": "application/json"},
        )
    assert (
        retry.status_code == 200 and retry.json()["choices"][0]["message"]["content"] == "SLOW DONE"
    )
    assert agent_events(logs) == ["prompt", "done"]


async def test_a_retry_naming_another_conversation_is_that_conversations_own_request(
    patient_server: ServerThread, logs, tmp_path
):
    """The same body marked as a retry, but for another `x-conversation-id`, is not the first
    request sent again: it gets a turn of its own (it joined the other conversation's answer)."""
    server = patient_server
    gate = tmp_path / "gate"
    body = {"model": "tool", "messages": [{"role": "user", "content": f"gate {gate}"}]}
    _, first = await raw_post(server.url, "/chat/completions", body, {"x-conversation-id": "a"})
    await until(lambda: agent_events(logs) == ["prompt"], what="conversation a's prompt")
    async with httpx2.AsyncClient(base_url=server.url, timeout=30) as http:
        other = asyncio.ensure_future(
            http.post(
                "/chat/completions",
                content=json.dumps(body).encode(),
                headers={
                    "x-conversation-id": "b",
                    "x-stainless-retry-count": "1",
                    "content-type": "application/json",
                },
            )
        )
        await until(lambda: len(server.door.exchanges) == 2, what="an exchange of b's own")
        gate.touch()
        answer = await other
    first.close()
    assert answer.status_code == 200
    assert agent_events(logs).count("prompt") == 2


def test_disconnect_mid_stream_cancels_the_agents_turn(client, logs):
    stream = client.chat.completions.create(
        model="tool", messages=[{"role": "user", "content": "stream 1000000"}], stream=True
    )
    for i, _ in enumerate(stream):
        if i == 5:
            break
    stream.close()
    assert wait_for(lambda: any(e["event"] == "cancel" for e in read_log(logs["tool"])), 60)
    assert wait_for(lambda: any(e.get("stop") == "cancelled" for e in read_log(logs["tool"])), 60)


@pytest.mark.parametrize("sdk", [False, True])
async def test_disconnect_of_a_waiting_request_cancels_the_turn(
    patient_server: ServerThread, logs, sdk
):
    """A client that goes away cancels the agent's turn at once — unless it is an SDK, which may
    retry a request it gave up on: then the turn is held for the retry grace (two minutes on
    this server, so that the state is seen while it holds)."""
    server = patient_server
    body = {"model": "tool", "messages": [{"role": "user", "content": f"slow 600 {sdk}"}]}
    _, writer = await raw_post(
        server.url, "/chat/completions", body, {"x-stainless-retry-count": "0"} if sdk else {}
    )
    await until(lambda: agent_events(logs) == ["prompt"], what="the agent's prompt")
    (exchange,) = server.door.exchanges.values()
    writer.close()
    await until(lambda: exchange.consumers == 0, what="the server seeing the client go")
    if sdk:
        assert not exchange.cancelled and exchange.cancel_handle is not None
        assert "cancel" not in agent_events(logs)
    else:
        assert exchange.cancelled and exchange.cancel_handle is None
        await until(lambda: "cancel" in agent_events(logs), what="the agent told to stop")


async def test_an_sdk_request_nobody_retried_is_cancelled_after_the_grace(
    server: ServerThread, logs
):
    body = {"model": "tool", "messages": [{"role": "user", "content": "slow 600"}]}
    _, writer = await raw_post(
        server.url, "/chat/completions", body, {"x-stainless-retry-count": "0"}
    )
    await until(lambda: agent_events(logs) == ["prompt"], what="the agent's prompt")
    writer.close()
    await until(lambda: "cancel" in agent_events(logs), what="the agent told to stop")
