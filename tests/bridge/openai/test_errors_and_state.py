"""Every error path as the SDK's typed exception; retries that join the running exchange; a
disconnect that cancels the agent's turn."""

from __future__ import annotations

import asyncio
import json
import time

import httpx2
import openai
import pytest

from tests.support.openai_server import ServerThread, read_log


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


def test_503_when_every_agent_slot_is_busy(one_slot_server: ServerThread):
    server = one_slot_server
    with (
        openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=60) as client,
        openai.OpenAI(base_url=server.url, api_key="x", max_retries=0) as other,
    ):
        import threading

        result = {}
        t = threading.Thread(
            target=lambda: result.setdefault(
                "r",
                other.chat.completions.create(
                    model="tool", messages=[{"role": "user", "content": "slow 3"}]
                ),
            )
        )
        t.start()
        assert wait_for(lambda: any(not s.is_idle for s in server.bridge.all_sessions()), 10)
        with pytest.raises(openai.InternalServerError) as info:
            client.chat.completions.create(
                model="echo", messages=[{"role": "user", "content": "x"}]
            )
        assert info.value.status_code == 503 and info.value.code == "agents_busy"
        t.join(20)
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


def test_sdk_retry_after_a_timeout_joins_the_running_exchange(server: ServerThread, logs):
    with openai.OpenAI(base_url=server.url, api_key="x", max_retries=2, timeout=1.0) as c:
        r = c.chat.completions.create(
            model="tool", messages=[{"role": "user", "content": "slow 1.6"}]
        )
    assert r.choices[0].message.content == "SLOW DONE"
    events = read_log(logs["tool"])
    assert [e["event"] for e in events] == ["prompt", "done"]  # one prompt, never cancelled


async def test_retry_of_a_request_whose_answer_was_missed_replays_it(server: ServerThread, logs):
    body = {"model": "tool", "messages": [{"role": "user", "content": "slow 0.5"}]}
    _, writer = await raw_post(
        server.url, "/chat/completions", body, {"x-stainless-retry-count": "0"}
    )
    await asyncio.sleep(0.2)
    writer.close()  # the client gives up on the first try
    await asyncio.sleep(0.6)  # the agent finishes while nobody listens
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
    assert [e["event"] for e in read_log(logs["tool"])] == ["prompt", "done"]


def test_disconnect_mid_stream_cancels_the_agents_turn(client, logs):
    stream = client.chat.completions.create(
        model="tool", messages=[{"role": "user", "content": "stream 1000000"}], stream=True
    )
    for i, _ in enumerate(stream):
        if i == 5:
            break
    stream.close()
    assert wait_for(lambda: any(e["event"] == "cancel" for e in read_log(logs["tool"])), 10)
    assert wait_for(lambda: any(e.get("stop") == "cancelled" for e in read_log(logs["tool"])), 10)


@pytest.mark.parametrize("sdk", [False, True])
async def test_disconnect_of_a_waiting_request_cancels_the_turn(server: ServerThread, logs, sdk):
    body = {"model": "tool", "messages": [{"role": "user", "content": f"slow 30 {sdk}"}]}
    _, writer = await raw_post(
        server.url, "/chat/completions", body, {"x-stainless-retry-count": "0"} if sdk else {}
    )
    while not any(e["event"] == "prompt" for e in read_log(logs["tool"])):
        await asyncio.sleep(0.05)
    writer.close()
    started = time.monotonic()
    while not any(e["event"] == "cancel" for e in read_log(logs["tool"])):
        assert time.monotonic() - started < 10
        await asyncio.sleep(0.02)
    elapsed = time.monotonic() - started
    if sdk:  # an SDK may retry a request it gave up on: the turn waits out the grace (1 s here)
        assert 0.9 < elapsed < 3
    else:
        assert elapsed < 0.8
