"""`symposium-tui web`: the console in a browser, through textual-serve, on loopback only.

The page runs the same app as `symposium-tui attach` (textual-serve starts one per browser
session, with Textual's web driver), attached to this machine's bridge (`local`) or to the hosts
given. Every request passes, before anything else:

1. the Host / Origin checks every HTTP surface here uses (`bridge.httpguard.GuardPolicy`): Host
   must be a loopback form of our address and port; an Origin, when sent, must be the page's own;
2. a random token (`secrets.token_urlsafe`, printed once in the URL): in the query of the first
   request, then in a cookie the page sends with its own requests and its websocket
   (HttpOnly, SameSite=Strict, per port).

Anything refused gets 403 and reaches nothing. To use it from another machine, forward the port
with ssh (same port on both ends, since Host is checked): `ssh -L 8765:127.0.0.1:8765 HOST`.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import shlex
import socket
import sys
from typing import Any

log = logging.getLogger(__name__)

TOKEN_PARAM = "token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def attach_command(hosts: list[str], *, ssh: str, remote_command: str) -> str:
    """What textual-serve runs per browser session (it runs it through a shell: every part is
    quoted here)."""
    return shlex.join(
        [
            sys.executable,
            "-m",
            "symposium_tui",
            "attach",
            "--ssh",
            ssh,
            "--remote-command",
            remote_command,
            *hosts,
        ]
    )


def make_server(command: str, *, port: int, token: str) -> Any:
    """A textual-serve `Server` behind the guard and the token, bound to 127.0.0.1:`port`."""
    from aiohttp import web
    from textual_serve.server import Server

    from bridge.httpguard import GuardPolicy

    policy = GuardPolicy(
        "127.0.0.1",
        port=port,
        allowed_origins=(f"http://127.0.0.1:{port}", f"http://localhost:{port}"),
        name="web console",
    )
    cookie = f"symposium_web_{port}"

    def token_ok(value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), token.encode())

    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        hosts = request.headers.getall("Host", [])
        headers = {k.lower(): v for k, v in request.headers.items()}
        verdict = (
            policy.check(request.method, headers, port=port)
            if len(hosts) <= 1
            else "more than one Host header"
        )
        if verdict is not None:
            reason = verdict if isinstance(verdict, str) else verdict.message
            log.info("web console: refused %s %s: %s", request.method, request.path, reason)
            return web.Response(status=403, text=f"Forbidden: {reason}\n")
        from_query = token_ok(request.query.get(TOKEN_PARAM))
        if not from_query and not token_ok(request.cookies.get(cookie)):
            log.info("web console: refused %s %s: no valid token", request.method, request.path)
            return web.Response(
                status=403,
                text="Forbidden: open the URL symposium-tui web printed (with its token)\n",
            )
        response = await handler(request)
        if not response.prepared:  # (a websocket's answer went out long ago)
            if from_query:
                response.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/")
            response.headers.setdefault("Cache-Control", "no-store")
            response.headers.setdefault("Referrer-Policy", "no-referrer")  # the token stays here
        return response

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.insert(0, guard)
            return app

        async def on_startup(self, app: web.Application) -> None:
            return None  # the URL (with its token) is printed once, by serve_web

    return GuardedServer(command, host="127.0.0.1", port=port, title="Symposium")


def serve_web(hosts: list[str], *, port: int = 0, ssh: str, remote_command: str) -> int:
    port = port or free_port()
    token = secrets.token_urlsafe(24)
    server = make_server(
        attach_command(hosts, ssh=ssh, remote_command=remote_command), port=port, token=token
    )
    url = f"http://127.0.0.1:{port}/?{TOKEN_PARAM}={token}"
    print(f"symposium-tui web: open {url}", flush=True)
    print(
        f"symposium-tui web: from another machine: ssh -L {port}:127.0.0.1:{port} "
        f"{socket.gethostname()}, then open the same URL there",
        flush=True,
    )
    server.serve()
    return 0
