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

Nothing outlives its browser session (`SessionService`): each console runs in its own process
group, without a shell in between, with `symposium_tui.web.driver.ConsoleWebDriver` (which leaves
when its input ends, and within 2 s of SIGTERM). Its output is read to the end even after the
browser is gone (a console blocked on a full pipe can neither draw nor quit). When the session's
websocket closes, however abruptly, the console is asked to quit and its input is closed; a
console still there `QUIT_GRACE` seconds later gets SIGTERM, then SIGKILL, and the server reaps
it. Stopping the server stops every session the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import shlex
import signal
import socket
import sys
from typing import Any

log = logging.getLogger(__name__)

TOKEN_PARAM = "token"
DRIVER = "symposium_tui.web.driver:ConsoleWebDriver"
QUIT_GRACE = 5.0
"""Seconds a console has to quit by itself once its browser session ended (then SIGTERM)."""
TERM_GRACE = 2.0
"""Seconds from SIGTERM to SIGKILL."""


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


def _session_service_class() -> Any:
    from textual_serve.app_service import AppService

    class SessionService(AppService):
        """One browser session's console process, which never outlives the session."""

        _stopping: asyncio.Task[None] | None = None

        def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
            environment = super()._build_environment(width, height)
            environment["TEXTUAL_DRIVER"] = DRIVER
            return environment

        async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
            self._process = process = await asyncio.create_subprocess_exec(
                *shlex.split(self.command),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._build_environment(width=width, height=height),
                start_new_session=True,  # its own process group: whatever it started goes too
            )
            assert process.stdin is not None
            self._stdin = process.stdin
            return process

        async def on_data(self, payload: bytes) -> None:
            try:
                await self.remote_write_bytes(payload)
            except (ConnectionError, RuntimeError):
                pass  # the browser is gone: keep reading (and dropping) what the console writes

        async def stop(self) -> None:
            """Ask the console to quit, close its input, wait `QUIT_GRACE`, then SIGTERM its group,
            `TERM_GRACE` later SIGKILL; reap it. Every caller waits for the same stop."""
            if self._stopping is None:
                self._stopping = asyncio.ensure_future(self._stop())
            await asyncio.shield(self._stopping)

        async def _stop(self) -> None:
            process = self._process
            if process is None:
                return
            if process.returncode is None:
                await self.send_meta({"type": "quit"})
                if self._stdin is not None:
                    with contextlib.suppress(Exception):
                        self._stdin.close()
            for sig, grace in (
                (None, QUIT_GRACE),
                (signal.SIGTERM, TERM_GRACE),
                (signal.SIGKILL, None),
            ):
                if sig is not None and process.returncode is None:
                    log.warning(
                        "web console: session process %s did not quit: %s", process.pid, sig.name
                    )
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, sig)
                try:
                    await asyncio.wait_for(process.wait(), grace)
                    break
                except TimeoutError:
                    continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # anything it left in its group
            if self._task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._task, TERM_GRACE)  # its output, to the end
                self._task = None

    return SessionService


def make_server(command: str, *, port: int, token: str) -> Any:
    """A textual-serve `Server` behind the guard and the token, bound to 127.0.0.1:`port`."""
    server_class = _guarded_server_class(_guard(port, token), _session_service_class())
    return server_class(command, host="127.0.0.1", port=port, title="Symposium")


def _guard(port: int, token: str) -> Any:
    """The middleware every request meets first: the Host / Origin checks, then the token (from
    the query, after which a cookie carries it); 403 otherwise."""
    from aiohttp import web

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

    return guard


def _guarded_server_class(guard: Any, session_service: Any) -> Any:
    """textual-serve's `Server` behind `guard`, each browser session's console a `SessionService`
    that is always stopped."""
    from aiohttp import web
    from textual_serve import server as textual_server
    from textual_serve.server import Server

    class GuardedServer(Server):
        sessions: set[Any]

        async def _make_app(self) -> web.Application:
            self.sessions = set()
            app = await super()._make_app()
            app.middlewares.insert(0, guard)
            return app

        async def on_startup(self, app: web.Application) -> None:
            return None  # the URL (with its token) is printed once, by serve_web

        async def on_shutdown(self, app: web.Application) -> None:
            await asyncio.gather(
                *(service.stop() for service in list(self.sessions)), return_exceptions=True
            )

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            """textual-serve's session handler, with a `SessionService` that is always stopped."""
            websocket = web.WebSocketResponse(heartbeat=15)
            width = textual_server.to_int(request.query.get("width", "80"), 80)
            height = textual_server.to_int(request.query.get("height", "24"), 24)
            service = None
            try:
                await websocket.prepare(request)
                service = session_service(
                    self.command,
                    write_bytes=websocket.send_bytes,
                    write_str=websocket.send_str,
                    close=websocket.close,
                    download_manager=self.download_manager,
                    debug=self.debug,
                )
                self.sessions.add(service)
                await service.start(width, height)
                await self._process_messages(websocket, service)
            except asyncio.CancelledError:
                pass  # the server is stopping
            except Exception:
                log.exception("web console: session failed")
            finally:
                if service is not None:
                    await service.stop()
                    self.sessions.discard(service)
                with contextlib.suppress(Exception):
                    await websocket.close()
            return websocket

    return GuardedServer


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
