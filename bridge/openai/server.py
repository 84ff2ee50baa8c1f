"""Serving the front door with uvicorn inside the bridge's own event loop.

`OpenAIServer(bridge, "127.0.0.1:8080", api_key=…)` → `await start()` … `await stop()`. Loopback by
default; binding any other address needs an API key (anyone on the network could otherwise drive
the agents). The key comes from `--api-key` or `$SYMPOSIUM_OPENAI_API_KEY`. Every request passes
`bridge.httpguard` first (Host 421, Origin 403, Content-Type 415): `allowed_hosts` are the names a
non-loopback server answers for (`--allowed-host`), `allowed_origins` the browser origins allowed
to call it (`--allow-origin`, with CORS preflights answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from typing import TYPE_CHECKING, Any

import uvicorn

from bridge.httpguard import GuardPolicy, HttpGuard, is_loopback
from bridge.openai.app import create_app

if TYPE_CHECKING:
    from bridge.core import Bridge

log = logging.getLogger(__name__)

API_KEY_ENV = "SYMPOSIUM_OPENAI_API_KEY"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080


class ServeError(Exception):
    pass


def parse_address(value: str | None) -> tuple[str, int]:
    """`HOST:PORT`, `:PORT`, `PORT`, `[::1]:PORT` or `HOST` → (host, port); loopback by default."""
    if not value:
        return DEFAULT_HOST, DEFAULT_PORT
    value = value.strip()
    host, port = DEFAULT_HOST, str(DEFAULT_PORT)
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            raise ServeError(f"bad address {value!r}: expected [IPv6]:PORT")
        host, rest = value[1:end], value[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise ServeError(f"bad address {value!r}: expected [IPv6]:PORT")
            port = rest[1:]
    elif value.isdigit():
        port = value
    elif value.count(":") == 1:
        host, port = value.split(":")
        host = host or DEFAULT_HOST
    elif ":" in value:
        host = value  # a bare IPv6 address
    else:
        host = value
    try:
        number = int(port)
    except ValueError:
        raise ServeError(f"bad port in {value!r}") from None
    if not 0 <= number <= 65535:
        raise ServeError(f"bad port in {value!r}")
    return host, number


class _Server(uvicorn.Server):
    def capture_signals(self) -> contextlib.AbstractContextManager[None]:  # type: ignore[override]  # uvicorn's is a generator context manager; any context manager does
        return contextlib.nullcontext()  # the host owns the process's signals


class OpenAIServer:
    def __init__(
        self,
        bridge: Bridge,
        address: str | None = None,
        *,
        api_key: str | None = None,
        allowed_hosts: tuple[str, ...] | list[str] = (),
        allowed_origins: tuple[str, ...] | list[str] = (),
        **options: Any,
    ) -> None:
        self.host, self.port = parse_address(address)
        self.api_key = api_key if api_key is not None else (os.environ.get(API_KEY_ENV) or None)
        if not is_loopback(self.host) and not self.api_key:
            raise ServeError(
                f"serving the OpenAI API on {self.host} (not loopback) needs an API key: "
                f"pass --api-key or set {API_KEY_ENV}"
            )
        self.app = create_app(bridge, api_key=self.api_key, **options)
        self.front_door = self.app.state.front_door
        # Host / Origin / Content-Type before anything else (bridge/httpguard.py)
        self.guard = GuardPolicy(
            self.host,
            allowed_hosts=tuple(allowed_hosts),
            allowed_origins=tuple(allowed_origins),
            name="OpenAI API",
        )
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    async def start(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say they are TCP (else Nagle
        # and delayed ACKs add ~40 ms to every response on a kept-alive connection)
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise ServeError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from None
        self.port = sock.getsockname()[1]
        self.guard.port = self.port
        self._sock = sock
        config = uvicorn.Config(
            HttpGuard(self.app, self.guard),
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            ws="none",
            proxy_headers=False,
            timeout_graceful_shutdown=2,
            timeout_keep_alive=30,
        )
        self._server = _Server(config)
        self._task = asyncio.ensure_future(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise ServeError("the OpenAI server stopped while starting")
            await asyncio.sleep(0.005)
        log.debug("OpenAI-compatible API on %s", self.url)  # its host prints it

    async def stop(self) -> None:
        await self.front_door.close()
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 5)
            self._task = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def __aenter__(self) -> OpenAIServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
