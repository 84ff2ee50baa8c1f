"""Every HTTP surface checks who is calling before anything else (bridge/httpguard.py): a foreign
Host gets 421, a foreign Origin 403, a body that is not JSON 415 — tried with raw sockets, as a web
page in the user's browser (or a DNS-rebinding one) would, against the real OpenAI server (in
process and as `serve --openai`) and the real client-tool MCP server. The official `openai` SDK and
a plain JSON request keep working, and an allowed origin gets proper CORS answers."""

from __future__ import annotations

import json
import os
import signal
import socket

import anyio
import openai
import pytest

from bridge.httpguard import GuardPolicy
from tests.support.openai_server import ServerThread, free_port, start, wait_line


def raw(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one HTTP/1.1 request on a fresh connection; the status, headers and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep:
                headers = _headers(head)
                length = headers.get("content-length")
                if length is not None and len(body) >= int(length):
                    break
                if head.split(b" ")[1] in (b"204", b"304"):
                    break
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    return status, _headers(head), body


def _headers(head: bytes) -> dict[str, str]:
    out = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        out[name.strip().lower()] = value.strip()
    return out


def post(
    port: int,
    path: str,
    body: bytes,
    *,
    host: str | None = None,
    content_type: str | None = "application/json",
    extra: str = "",
) -> tuple[int, dict[str, str], bytes]:
    lines = [f"POST {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}"]
    if content_type is not None:
        lines.append(f"Content-Type: {content_type}")
    lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: close")
    if extra:
        lines.append(extra)
    return raw(port, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)


CHAT = json.dumps(
    {"model": "echo", "messages": [{"role": "user", "content": "run rm -rf"}]}
).encode()


def port_of(server: ServerThread) -> int:
    return server.server.port


def turns_started(server: ServerThread) -> int:
    return sum(len(core.sessions) for core in server.door.connections.values()) + len(
        server.door.exchanges
    )


# --- the OpenAI API ------------------------------------------------------------------------------


def test_a_simple_cross_site_post_is_refused_before_any_agent_turn(server):
    port = port_of(server)
    for ctype in ("text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded"):
        status, _, body = post(port, "/v1/chat/completions", CHAT, content_type=ctype)
        assert status == 415, body
        assert json.loads(body)["error"]["code"] == "unsupported_media_type"
    status, _, _ = post(port, "/v1/chat/completions", CHAT, content_type=None)
    assert status == 415
    assert turns_started(server) == 0


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost", "127.0.0.1.nip.io:{port}"],
)
def test_a_foreign_host_gets_421(server, host):
    port = port_of(server)
    status, _, body = post(port, "/v1/chat/completions", CHAT, host=host.format(port=port))
    assert status == 421, body
    assert json.loads(body)["error"]["code"] == "misdirected_request"
    status, _, _ = raw(
        port,
        f"GET /v1/models HTTP/1.1\r\nHost: {host.format(port=port)}\r\n"
        "Connection: close\r\n\r\n".encode(),
    )
    assert status == 421
    assert turns_started(server) == 0


def test_a_request_without_host_or_with_two_is_refused(server):
    port = port_of(server)
    status, _, _ = raw(port, b"GET /v1/models HTTP/1.0\r\n\r\n")
    assert status == 421
    status, _, _ = raw(
        port,
        f"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\n"
        "Connection: close\r\n\r\n".encode(),
    )
    assert status in (400, 421)  # h11 itself may refuse a repeated Host first


def test_every_loopback_form_of_our_address_is_served(server):
    port = port_of(server)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
        status, _, body = raw(
            port, f"GET /v1/models HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
        )
        assert status == 200, (host, body)
    status, _, body = post(
        port, "/v1/chat/completions", CHAT, content_type="application/json; charset=utf-8"
    )
    assert status == 200, body
    assert json.loads(body)["choices"][0]["message"]["content"] == "ECHO: run rm -rf"


def test_a_foreign_origin_gets_403_even_with_json(server):
    port = port_of(server)
    status, _, body = post(port, "/v1/chat/completions", CHAT, extra="Origin: https://evil.example")
    assert status == 403, body
    assert json.loads(body)["error"]["code"] == "origin_not_allowed"
    # a preflight from it is refused too, so a browser never sends the real request
    status, headers, _ = raw(
        port,
        f"OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Origin: https://evil.example\r\nAccess-Control-Request-Method: POST\r\n"
        "Connection: close\r\n\r\n".encode(),
    )
    assert status == 403
    assert "access-control-allow-origin" not in headers
    # the "null" origin (sandboxed frames, file://) is foreign as well
    status, _, _ = post(port, "/v1/chat/completions", CHAT, extra="Origin: null")
    assert status == 403
    assert turns_started(server) == 0


def test_the_official_sdk_keeps_working(client):
    r = client.chat.completions.create(model="echo", messages=[{"role": "user", "content": "hi"}])
    assert r.choices[0].message.content == "ECHO: hi"
    assert any(m.id == "echo" for m in client.models.list().data)


def test_an_allowed_origin_gets_cors_preflight_and_headers(settings, tmp_path):
    srv = ServerThread(str(tmp_path), allowed_origins=["http://localhost:5173"]).start()
    try:
        port = port_of(srv)
        status, headers, body = raw(
            port,
            f"OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: localhost:{port}\r\n"
            "Origin: http://localhost:5173\r\nAccess-Control-Request-Method: POST\r\n"
            "Access-Control-Request-Headers: authorization, content-type, x-stainless-os\r\n"
            "Connection: close\r\n\r\n".encode(),
        )
        assert status == 204, body
        assert headers["access-control-allow-origin"] == "http://localhost:5173"
        assert "POST" in headers["access-control-allow-methods"]
        assert "x-stainless-os" in headers["access-control-allow-headers"]
        assert headers["vary"] == "Origin"
        status, headers, body = post(
            port, "/v1/chat/completions", CHAT, extra="Origin: http://localhost:5173"
        )
        assert status == 200, body
        assert headers["access-control-allow-origin"] == "http://localhost:5173"
        # allowed or not, the content type rule still holds
        status, _, _ = post(
            port,
            "/v1/chat/completions",
            CHAT,
            content_type="text/plain",
            extra="Origin: http://localhost:5173",
        )
        assert status == 415
        status, _, _ = post(
            port, "/v1/chat/completions", CHAT, extra="Origin: http://localhost:5174"
        )
        assert status == 403
    finally:
        srv.stop()


def test_serve_openai_applies_the_guard_and_its_flags(settings):
    """`serve --openai` as a real process: the same refusals, `--allow-origin` from the command
    line, and the SDK still served."""
    port = free_port()
    proc = start("--openai", f"127.0.0.1:{port}", "--allow-origin", "https://ok.example")
    try:
        wait_line(proc, "OpenAI-compatible API on")
        assert post(port, "/v1/chat/completions", CHAT, content_type="text/plain")[0] == 415
        assert post(port, "/v1/chat/completions", CHAT, host="attacker.example")[0] == 421
        assert post(port, "/v1/chat/completions", CHAT, extra="Origin: https://x.example")[0] == 403
        status, headers, _ = post(
            port, "/v1/chat/completions", CHAT, extra="Origin: https://ok.example"
        )
        assert status == 200 and headers["access-control-allow-origin"] == "https://ok.example"
        with openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0
        ) as c:
            r = c.chat.completions.create(
                model="echo", messages=[{"role": "user", "content": "after the refusals"}]
            )
            assert r.choices[0].message.content == "ECHO: after the refusals"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)


def test_the_api_key_never_reaches_the_log(settings, tmp_path):
    log_dir = tmp_path / "logs"
    port = free_port()
    secret = "sk-very-secret-key-1234567890"
    proc = start(
        "--log",
        "debug",
        "--log-dir",
        str(log_dir),
        "--openai",
        f"127.0.0.1:{port}",
        env={"SYMPOSIUM_OPENAI_API_KEY": secret},
    )
    try:
        wait_line(proc, "OpenAI-compatible API on")
        with openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key=secret, max_retries=0
        ) as c:
            c.chat.completions.create(model="echo", messages=[{"role": "user", "content": "k"}])
        with (
            openai.OpenAI(
                base_url=f"http://127.0.0.1:{port}/v1", api_key=secret + "x", max_retries=0
            ) as c,
            pytest.raises(openai.AuthenticationError),
        ):
            c.models.list()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    written = proc.stderr.read() + proc.stdout.read()
    for path in log_dir.rglob("*") if log_dir.exists() else []:
        if path.is_file():
            written += path.read_text(errors="replace")
    assert secret not in written


# --- the policy as a function -------------------------------------------------------------------


def test_policy_on_a_public_address_checks_allowed_hosts():
    policy = GuardPolicy("0.0.0.0", port=8080, allowed_hosts=("bridge.lan", "api.example:443"))
    assert policy.check("GET", {"host": "bridge.lan:8080"}) is None
    assert policy.check("GET", {"host": "bridge.lan"}) is None
    assert policy.check("GET", {"host": "api.example:443"}) is None
    assert policy.check("GET", {"host": "api.example:8080"}).status == 421
    assert policy.check("GET", {"host": "127.0.0.1:8080"}) is None
    assert policy.check("GET", {"host": "evil.example:8080"}).status == 421
    # no names given: any Host (the API key guards that server)
    assert GuardPolicy("0.0.0.0", port=8080).check("GET", {"host": "whatever:1"}) is None
    # a body that is not JSON is refused whatever the method
    assert policy.check("DELETE", {"host": "bridge.lan", "content-length": "3"}).status == 415
    assert policy.check("DELETE", {"host": "bridge.lan"}) is None


# --- the client-tool MCP server ------------------------------------------------------------------


async def test_the_client_tool_server_refuses_foreign_host_origin_and_content_type(tmp_path):
    from bridge.protocol import ToolDefinition
    from bridge.tools import ClientToolServer, ToolResult

    calls: list[str] = []

    async def handler(name: str, args: dict) -> ToolResult:
        calls.append(name)
        return ToolResult(text="ran")

    async with ClientToolServer(socket_dir=tmp_path / "s") as server:
        server.register("k", handler, [ToolDefinition(name="run", description="", inputSchema={})])
        url = server.http_server("k")["url"]
        path = "/" + url.split("/", 3)[3]
        port = server.port
        init = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        ).encode()
        accept = "Accept: application/json, text/event-stream"

        def go(**kw):
            return post(port, path, init, **kw)

        assert (
            await anyio.to_thread.run_sync(lambda: go(content_type="text/plain", extra=accept))
        )[0] == 415
        assert (await anyio.to_thread.run_sync(lambda: go(host="evil.example", extra=accept)))[
            0
        ] == 421
        assert (await anyio.to_thread.run_sync(lambda: go(host="127.0.0.1:1", extra=accept)))[
            0
        ] == 421
        status, _, body = await anyio.to_thread.run_sync(
            lambda: go(extra=accept + "\r\nOrigin: http://127.0.0.1:" + str(port))
        )
        assert status == 403, body  # no browser origin is allowed on the tool server
        status, _, body = await anyio.to_thread.run_sync(lambda: go(extra=accept))
        assert status == 200, body
        assert calls == []


def test_a_page_of_another_site_in_chromium_cannot_make_the_server_start_its_mcp_servers(
    server: ServerThread, tmp_path
):
    """An `<img>` on a page elsewhere sends a GET with no Origin: the browser's Sec-Fetch-Site says
    where it comes from, and the guard refuses it before `GET /v1/tools` starts anything."""
    import http.server
    import shutil
    import tempfile
    import threading

    from tests.symposium_tui.test_web import CHROMEDRIVER, CHROMIUM, chromium

    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("chromium / chromium-driver not installed (.ci/run installs them)")
    page = (
        f'<img src="{server.url}/tools" onload="document.title=\'loaded\'" '
        "onerror=\"document.title='refused'\">"
    ).encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args) -> None:
            pass

    elsewhere = http.server.HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    profile = tempfile.mkdtemp(prefix="symposium-chromium-")
    driver = chromium(profile)
    try:
        driver.get(f"http://127.0.0.1:{elsewhere.server_port}/")
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, 60).until(lambda d: d.title in ("loaded", "refused"))
        assert driver.title == "refused"
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        elsewhere.shutdown()
    catalog = server.door.catalog
    assert catalog._tools == {}, "the page's request listed the MCP servers' tools"
    # the oracle sees a listing when one happens: the same GET from a plain client lists them
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    request = f"GET /v1/tools HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    status, _, _ = raw(port, request.encode())
    assert status == 200 and catalog._tools != {}
