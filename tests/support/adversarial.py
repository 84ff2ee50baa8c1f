"""The adversarial pass, shared by the suite (`tests/bridge/openai/test_adversarial.py`, smaller counts) and the
stress script (`tests/bench/stress_adversarial.py`, the full 100,000 lines / 10,000 requests).

* `fuzz_vscodelm(n)`: n fuzzed lines, class by class, into one real `symposium-tui vscodelm`
  over real pipes; after each class a valid chat must be served, and the process never dies.
* `fuzz_openai(n)`: n malformed HTTP requests, class by class, over raw loopback sockets into one
  real OpenAI server (uvicorn, in a thread of its own); after each class the official `openai`
  client must be served, and the server thread never dies.

Every generator is seeded: a failure names its class and replays the same bytes.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import time
from collections.abc import Callable
from typing import Any

CHAT = "lm/provideLanguageModelChatResponse"


def _share(total: int, parts: int, i: int) -> int:
    """Class i's share of `total` (the counts add up exactly)."""
    return total // parts + (1 if i < total % parts else 0)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "value": text}]}


def _valid_chat(i: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": f"v{i}",
        "method": CHAT,
        "params": {
            "modelId": "m",
            "messages": [_user(f"fuzz {i}")],
            "agent": {"eliza": {"deterministic": True}},
        },
    }


def _mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """A structurally plausible JSON value with something wrong somewhere."""
    choices: list[Any] = [
        None,
        True,
        -1,
        2**70,
        1.5e308,
        "",
        "\u0000\ud800",
        [],
        {},
        "x" * rng.randint(0, 300),
        [None] * rng.randint(0, 5),
    ]
    if isinstance(value, dict) and value and depth < 6:
        out = dict(value)
        key = rng.choice(list(out))
        action = rng.randrange(4)
        if action == 0:
            del out[key]
        elif action == 1:
            out[key] = rng.choice(choices)
        elif action == 2:
            out[key] = _mutate(rng, out[key], depth + 1)
        else:
            out[rng.choice(["extra", "__proto__", "id", "méthode", ""])] = rng.choice(choices)
        return out
    if isinstance(value, list) and value and depth < 6:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        out_list[i] = _mutate(rng, out_list[i], depth + 1)
        return out_list
    return rng.choice(choices)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()  # ASCII: lone surrogates travel escaped, as JSON allows


# --- vscodelm line classes ------------------------------------------------------------------------


def _line_classes() -> dict[str, Callable[[random.Random, int], bytes]]:
    methods = [
        CHAT,
        "lm/provideTokenCount",
        "lm/provideLanguageModelChatInformation",
        "lm/cancel",
        "initialize",
        "no/such",
    ]

    def random_bytes(rng: random.Random, i: int) -> bytes:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 80))).replace(b"\n", b" ")

    def truncated(rng: random.Random, i: int) -> bytes:
        data = _dumps(_valid_chat(i))
        return data[: rng.randrange(1, len(data))]

    def mutated_chat(rng: random.Random, i: int) -> bytes:
        msg = _valid_chat(i)
        msg["id"] = 10_000_000 + i
        return _dumps(_mutate(rng, msg))

    def wrong_types(rng: random.Random, i: int) -> bytes:
        return _dumps(
            {
                "jsonrpc": rng.choice(["2.0", "1.0", 2, None]),
                "id": rng.choice([20_000_000 + i, f"s{i}", None, 1.5, [i], {"i": i}, True]),
                "method": rng.choice([*methods, 5, None, ["x"]]),
                "params": rng.choice([None, 1, "p", [], {}, {"messages": "no"}, {"requestId": {}}]),
            }
        )

    def deep(rng: random.Random, i: int) -> bytes:
        n = rng.choice([50, 500, 5000, 50000])
        return (
            b'{"jsonrpc":"2.0","id":%d,"method":"lm/provideTokenCount","params":' % (30_000_000 + i)
            + b"[" * n
            + b"]" * n
            + b"}"
        )

    def odd_json(rng: random.Random, i: int) -> bytes:
        return rng.choice(
            [
                b"[]",
                b"[1,2,3]",
                b"null",
                b"NaN",
                b'{"jsonrpc":"2.0","id":1,"method":"lm/provideTokenCount","params":{"text":NaN}}',
                b'{"a":1,"a":2}',
                b'"just a string"',
                b"{" * 3,
                b"\xef\xbb\xbf{}",
                b"\xff\xfe{}",
                b'{"jsonrpc":"2.0","method":"lm/cancel","params":{"requestId":"nope"}}',
                b'{"jsonrpc":"2.0","id":1,"result":{}}',
                b"   ",
            ]
        )

    def notifications(rng: random.Random, i: int) -> bytes:
        return _dumps(
            {
                "jsonrpc": "2.0",
                "method": rng.choice([*methods, "$/cancelRequest", "lm/responsePart"]),
                "params": _mutate(rng, {"requestId": i, "part": {"type": "text", "value": "x"}}),
            }
        )

    def big_values(rng: random.Random, i: int) -> bytes:
        return _dumps(
            {
                "jsonrpc": "2.0",
                "id": 40_000_000 + i,
                "method": "lm/provideTokenCount",
                "params": {
                    "modelId": "m",
                    "text": "y" * rng.choice([0, 10, 10_000, 200_000]),
                    "extra": [rng.random() for _ in range(rng.randint(0, 50))],
                },
            }
        )

    return {
        "random bytes": random_bytes,
        "truncated json": truncated,
        "mutated chat requests": mutated_chat,
        "wrong types": wrong_types,
        "deep nesting": deep,
        "odd json": odd_json,
        "notifications": notifications,
        "big values": big_values,
    }


async def fuzz_vscodelm(
    total: int, *, seed: int = 9, cwd: str, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """`total` fuzzed lines into one endpoint; returns per-class counts and timings."""
    from tests.support.raw_endpoint import RawEndpoint, final_chat

    classes = _line_classes()
    ep = await RawEndpoint.start("--cwd", cwd)
    stats: dict[str, Any] = {"lines": 0, "classes": {}}
    try:
        await final_chat(ep, "warm-up")
        for n, (name, make) in enumerate(classes.items()):
            per_class = _share(total, len(classes), n)
            rng = random.Random(seed * 1000 + n)
            started = time.monotonic()
            batch = bytearray()
            for i in range(per_class):
                batch += make(rng, i) + b"\n"
                if len(batch) > 256 * 1024:
                    await ep.write(bytes(batch))
                    batch.clear()
            await ep.write(bytes(batch))
            await _served_after(ep, n, name)
            assert ep.proc.returncode is None, f"the endpoint died during {name!r}"
            took = time.monotonic() - started
            stats["classes"][name] = {"lines": per_class, "seconds": round(took, 2)}
            stats["lines"] += per_class
            log(f"[fuzz vscodelm] {name}: {per_class} lines, {took:.1f} s, valid chat served")
        assert not ep.bad_output, ep.bad_output[:3]
    finally:
        ep.proc.stdin.close()
        try:
            await asyncio.wait_for(ep.proc.wait(), 30)
        except TimeoutError:
            ep.proc.kill()
            raise
    assert ep.proc.returncode == 0, ep.stderr.decode(errors="replace")[-3000:]
    return stats


async def _served_after(ep: Any, n: int, name: str) -> None:
    """A valid chat is served after the class. Valid-shaped fuzz chats may still be running and
    fill the busy-agent cap (answered with an error naming it): then wait for more of them to
    finish — a message written after that error — and ask again. (Counted from the error's place
    in the output, not from when this saw it: what they wrote may have come in with it.)"""
    from tests.support.raw_endpoint import line, request

    for attempt in range(200):
        id_ = f"after-{n}-{attempt}"
        params = {
            "modelId": "m",
            "messages": [_user(f"after {name} {attempt}")],
            "agent": {"eliza": {"deterministic": True}},
        }
        await ep.write(line(request(id_, CHAT, params)))
        await ep.wait_until(lambda id_=id_: bool(ep.answers(id_)), 60)
        (answer,) = ep.answers(id_)
        if answer.get("result") == {}:
            assert "".join(p["value"] for p in ep.parts_of(id_)).strip(), "Eliza answered nothing"
            return
        assert "busy" in answer["error"]["message"], answer
        after = next(i for i, m in enumerate(ep.messages) if m is answer) + 1
        await ep.wait_until(lambda after=after: len(ep.messages) > after, 60)
    raise AssertionError(f"no valid chat served after {name!r}")


# --- HTTP request classes -------------------------------------------------------------------------


def _http_classes(port: int) -> dict[str, Callable[[random.Random, int], bytes]]:
    host = f"127.0.0.1:{port}"
    body = json.dumps({"model": "eliza", "messages": [{"role": "user", "content": "hi"}]})

    def req(method: str, path: str, headers: dict[str, str], data: bytes = b"") -> bytes:
        lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data

    def garbage(rng: random.Random, i: int) -> bytes:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))) + b"\r\n\r\n"

    def bad_request_line(rng: random.Random, i: int) -> bytes:
        return rng.choice(
            [
                b"GET\r\n\r\n",
                b"GET / HTTP/9.9\r\nHost: %s\r\n\r\n" % host.encode(),
                b"POST /v1/chat/completions\r\n\r\n",
                b"\x00\x01 / HTTP/1.1\r\n\r\n",
                b"GET " + b"/a" * 5000 + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n",
                b"BREW /pot HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: " + host.encode() + b"\r\nBad Header\r\n\r\n",
            ]
        )

    def foreign(rng: random.Random, i: int) -> bytes:
        headers = {"Host": rng.choice([host, "evil.example", f"localhost:{port + 1}", "[::1]"])}
        if rng.random() < 0.6:
            headers["Origin"] = rng.choice(["https://evil.example", "null", "http://127.0.0.1"])
        headers["Content-Type"] = rng.choice(
            ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
        )
        headers["Content-Length"] = str(len(body))
        headers["Connection"] = "close"
        return req("POST", "/v1/chat/completions", headers, body.encode())

    def post(path: str, payload: bytes) -> bytes:
        """A POST of a JSON body, framed right, from an allowed host."""
        headers = {
            "Host": host,
            "Content-Type": "application/json",
            "Content-Length": str(len(payload)),
            "Connection": "close",
        }
        return req("POST", path, headers, payload)

    def bad_bodies(rng: random.Random, i: int) -> bytes:
        payload = rng.choice(
            [
                b"",
                b"{",
                b"null",
                b"[]",
                b'{"model": 5}',
                b'{"model": "eliza", "messages": "no"}',
                b'{"model": "eliza", "messages": [{"role": "user"}]}',
                b'{"model": "eliza", "messages": [{"role": "wizard", "content": 1}]}',
                b'{"model": "nope", "messages": []}',
                b'{"model": "eliza", "messages": [], "n": -1, "temperature": "hot"}',
                b"\xff\xfe\x00",
                json.dumps(_mutate(rng, json.loads(body))).encode(),
            ]
        )
        path = rng.choice(["/v1/chat/completions", "/v1/responses", "/v1/models", "/nope"])
        return post(path, payload)

    def deep_bodies(rng: random.Random, i: int) -> bytes:
        # Nested past any JSON decoder's depth, alone or where a field's value goes (a tool
        # array, a message, its content parts): a 400, like any body that does not parse.
        n = rng.choice([1_000, 5_000, 100_000])
        deep = b"[" * n + b"]" * n
        payload = rng.choice(
            [
                deep,
                b'{"model":"eliza","messages":[{"role":"user","content":"hi"}],"tools":%s}' % deep,
                b'{"model":"eliza","messages":%s}' % deep,
                b'{"model":"eliza","messages":[{"role":"user","content":%s}]}' % deep,
                b'{"model":"eliza","input":%s}' % deep,
            ]
        )
        path = rng.choice(["/v1/chat/completions", "/v1/responses"])
        return post(path, payload)

    def bad_framing(rng: random.Random, i: int) -> bytes:
        return rng.choice(
            [
                req(
                    "POST",
                    "/v1/chat/completions",
                    {
                        "Host": host,
                        "Content-Type": "application/json",
                        "Content-Length": "-5",
                        "Connection": "close",
                    },
                    b"{}",
                ),
                req(
                    "POST",
                    "/v1/chat/completions",
                    {
                        "Host": host,
                        "Content-Type": "application/json",
                        "Content-Length": "abc",
                        "Connection": "close",
                    },
                ),
                req(
                    "POST",
                    "/v1/chat/completions",
                    {
                        "Host": host,
                        "Content-Type": "application/json",
                        "Transfer-Encoding": "chunked",
                        "Connection": "close",
                    },
                    b"zz\r\nxx\r\n0\r\n\r\n",
                ),
                req(
                    "POST",
                    "/v1/chat/completions",
                    {
                        "Host": host,
                        "Content-Type": "application/json",
                        "Content-Length": "5",
                        "Transfer-Encoding": "chunked",
                        "Connection": "close",
                    },
                    b"0\r\n\r\n",
                ),
                req(
                    "GET", "/v1/models", {"Host": host, "X-Big": "h" * 70000, "Connection": "close"}
                ),
                req(
                    "GET",
                    "/v1/models",
                    {"Host": host, "Connection": "close", **{f"X-{k}": "v" for k in range(150)}},
                ),
            ]
        )

    def methods_and_paths(rng: random.Random, i: int) -> bytes:
        method = rng.choice(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"])
        path = rng.choice(
            [
                "/v1/chat/completions",
                "/v1/responses/x",
                "/v1/models/%00",
                "/../../etc/passwd",
                "/v1/tools?tags=%ff",
                "/health",
                "/v1/responses/" + "a" * 3000,
            ]
        )
        headers = {"Host": host, "Connection": "close"}
        if rng.random() < 0.3:
            headers["Authorization"] = rng.choice(["Bearer", "Basic x", "Bearer " + "k" * 1000])
        if method == "OPTIONS" and rng.random() < 0.5:
            headers["Origin"] = "https://evil.example"
            headers["Access-Control-Request-Method"] = "POST"
        return req(method, path, headers)

    return {
        "garbage": garbage,
        "bad request lines": bad_request_line,
        "foreign host, origin, content type": foreign,
        "bad bodies": bad_bodies,
        "deep bodies": deep_bodies,
        "bad framing": bad_framing,
        "methods and paths": methods_and_paths,
    }


def _send(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except OSError:
            pass
        return out


def fuzz_openai(
    server: Any, total: int, *, seed: int = 9, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """`total` malformed requests into a running `tests.support.openai_server.ServerThread`."""
    from concurrent.futures import ThreadPoolExecutor

    import openai

    port = server.server.port
    classes = _http_classes(port)
    stats: dict[str, Any] = {"requests": 0, "classes": {}}
    with (
        openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=60) as client,
        ThreadPoolExecutor(4) as pool,
    ):
        for n, (name, make) in enumerate(classes.items()):
            per_class = _share(total, len(classes), n)
            rng = random.Random(seed * 1000 + n)
            payloads = [make(rng, i) for i in range(per_class)]
            started = time.monotonic()
            answers = list(pool.map(lambda d: _send(port, d), payloads))
            took = time.monotonic() - started
            # never a 2xx for a request that should have been refused, never a server error page
            assert not any(a.startswith(b"HTTP/1.1 5") for a in answers), name
            assert server.thread.is_alive(), f"the server thread died during {name!r}"
            r = client.chat.completions.create(
                model="eliza", messages=[{"role": "user", "content": f"after {name}"}]
            )
            assert r.choices[0].message.content, name
            stats["classes"][name] = {"requests": per_class, "seconds": round(took, 2)}
            stats["requests"] += per_class
            log(f"[fuzz openai] {name}: {per_class} requests, {took:.1f} s, SDK served after")
    return stats
