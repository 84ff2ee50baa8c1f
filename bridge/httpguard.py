"""Who may talk to an HTTP server we run: Host, Origin and Content-Type, checked before anything else.

Every HTTP surface the bridge serves (the OpenAI-compatible API, the client-tool MCP server, and
anything added later) sits behind this guard. It exists because a web page in the user's browser can
reach a loopback server: a "simple" cross-site POST (`Content-Type: text/plain`, no preflight), a
DNS-rebinding page whose requests carry a foreign `Host`, or a page that just sends its `Origin`.

The rules, in the order they are checked:

1. **Host.** Listening on loopback, the `Host` header must be a loopback form of our own address —
   `127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT` — else **421** (DNS rebinding: a page at
   `evil.example` resolving to 127.0.0.1 still sends `Host: evil.example`). Listening elsewhere,
   when names are given (`--allowed-host`), `Host` must be one of them (a name alone matches any
   port, `name:port` only that port), our bind address itself or a loopback form, else 421; with
   no names given any `Host` passes (that server requires an API key anyway). A request without
   `Host` is refused the same way.
2. **Origin.** A request that carries an `Origin` (browsers add it to cross-site and to every
   non-GET request) must name an origin in the allow-list, else **403**. The list is empty by
   default (`--allow-origin` adds one, e.g. `http://localhost:5173`); an allowed origin gets proper
   CORS answers: preflights (`OPTIONS` with `Access-Control-Request-Method`) are answered 204 here
   and never reach the app, and its responses carry `Access-Control-Allow-Origin`.
3. **A browser page elsewhere.** A request a browser sends for a page of another origin without
   saying so — an `<img>` or `<script>` GET carries no `Origin` — says it with `Sec-Fetch-Site:
   cross-site` or `same-site` (every current browser adds it): without an allowed `Origin` it is
   refused, **403** (`GET /v1/tools` starts the configured MCP servers to list their tools).
   `same-origin` and `none` (an address typed by hand) pass, and so does a client that sends none.
4. **Content-Type.** `POST`/`PUT`/`PATCH`, and any request that declares a body, must send
   `application/json` (parameters such as `charset` allowed), else **415** — the one content type a
   browser cannot send cross-site without a preflight.

`GuardPolicy.check(...)` is the decision as a plain function of the method and headers, so a server
that is not ASGI can use it; `HttpGuard(app, policy)` is the ASGI middleware. Standard library only.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["GuardPolicy", "HttpGuard", "Verdict", "is_loopback", "normalize_origin"]

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_CORS_METHODS = "GET, POST, DELETE, OPTIONS"
_CORS_DEFAULT_HEADERS = "authorization, content-type"
_HEADER_LIST = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$")


def is_loopback(host: str) -> bool:
    """`localhost`, or an IPv4/IPv6 loopback address (brackets allowed)."""
    host = host.strip().lower().removeprefix("[").removesuffix("]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    return host.strip().removeprefix("[").removesuffix("]") in ("", "0.0.0.0", "::")


def normalize_origin(origin: str) -> str:
    """`HTTP://Example.com:8080/` → `http://example.com:8080` (how origins are compared)."""
    return origin.strip().lower().rstrip("/")


def _split_host(value: str) -> tuple[str, int | None] | None:
    """A `Host` header → (name, port); the name lower-cased, IPv6 without brackets. None if bad."""
    value = value.strip().lower()
    if not value:
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    elif ":" in value:
        return None  # a bare IPv6 address is not a valid Host
    else:
        name, port_text = value, ""
    if not name:
        return None
    if not port_text:
        return name, None
    if not port_text.isdigit() or len(port_text) > 5:
        return None
    return name, int(port_text)


@dataclass
class Verdict:
    """A refusal (or a preflight answer) the guard sends instead of calling the app."""

    status: int
    message: str
    code: str
    headers: list[tuple[str, str]] = field(default_factory=list)

    def body(self) -> bytes:
        if self.status == 204:
            return b""
        return json.dumps(
            {
                "error": {
                    "message": self.message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": self.code,
                }
            }
        ).encode()


@dataclass
class GuardPolicy:
    """What one server accepts. `port` may be set after binding an ephemeral port; until then the
    ASGI middleware uses the port the connection arrived on."""

    bind_host: str
    port: int | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    name: str = "http"

    def __post_init__(self) -> None:
        self.allowed_hosts = tuple(h.strip().lower() for h in self.allowed_hosts if h.strip())
        self.allowed_origins = tuple(normalize_origin(o) for o in self.allowed_origins if o.strip())

    @property
    def loopback(self) -> bool:
        return is_loopback(self.bind_host)

    # --- the decision -----------------------------------------------------------------------------

    def host_ok(self, host: str | None, port: int | None = None) -> bool:
        port = self.port if port is None else port
        parsed = _split_host(host) if host is not None else None
        if parsed is None:
            return False
        name, given_port = parsed
        effective = 80 if given_port is None else given_port
        loopback_form = name in _LOOPBACK_NAMES and (port is None or effective == port)
        if self.loopback:
            return loopback_form
        if not self.allowed_hosts:
            return True
        if loopback_form:
            return True
        bind = self.bind_host.strip().lower().removeprefix("[").removesuffix("]")
        if not _is_wildcard(bind) and name == bind and (port is None or effective == port):
            return True
        for entry in self.allowed_hosts:
            allowed = _split_host(entry)
            if allowed is None:
                continue
            allowed_name, allowed_port = allowed
            if allowed_name == name and (allowed_port is None or allowed_port == effective):
                return True
        return False

    def origin_ok(self, origin: str) -> bool:
        return normalize_origin(origin) in self.allowed_origins

    def check(
        self, method: str, headers: Mapping[str, str], *, port: int | None = None
    ) -> Verdict | None:
        """None when the request may go on to the app; else what to answer instead. `headers`
        maps lower-case names to values (the last value of a repeated header wins, except Host,
        which must not be repeated)."""
        host = headers.get("host")
        if not self.host_ok(host, port):
            return Verdict(
                421,
                f"Misdirected request: this server does not answer for Host {host!r}.",
                "misdirected_request",
            )
        origin = headers.get("origin")
        if origin is not None:
            if not self.origin_ok(origin):
                return Verdict(
                    403,
                    f"Origin {origin!r} is not allowed (start the server with --allow-origin "
                    "to allow it).",
                    "origin_not_allowed",
                )
            if method == "OPTIONS" and "access-control-request-method" in headers:
                return self._preflight(origin, headers)
        elif headers.get("sec-fetch-site", "").strip().lower() in ("cross-site", "same-site"):
            return Verdict(
                403,
                "A page of another site may not use this server (its request said Sec-Fetch-Site: "
                f"{headers['sec-fetch-site']}); start the server with --allow-origin to allow one.",
                "cross_site_request",
            )
        if method in _BODY_METHODS or _declares_body(headers):
            media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if media != "application/json":
                shown = headers.get("content-type")
                return Verdict(
                    415,
                    "Unsupported content type "
                    + (repr(shown) if shown is not None else "(none)")
                    + ": send the body as application/json.",
                    "unsupported_media_type",
                )
        return None

    def cors_headers(self, origin: str | None) -> list[tuple[str, str]]:
        """Headers an allowed origin's (non-preflight) response carries."""
        if origin is None or not self.origin_ok(origin):
            return []
        return [("access-control-allow-origin", origin.strip()), ("vary", "Origin")]

    def _preflight(self, origin: str, headers: Mapping[str, str]) -> Verdict:
        requested = headers.get("access-control-request-headers", "").strip()
        allow_headers = requested if requested and _HEADER_LIST.match(requested) else None
        return Verdict(
            204,
            "",
            "preflight",
            [
                ("access-control-allow-origin", origin.strip()),
                ("access-control-allow-methods", _CORS_METHODS),
                ("access-control-allow-headers", allow_headers or _CORS_DEFAULT_HEADERS),
                ("access-control-max-age", "600"),
                ("vary", "Origin"),
            ],
        )


def _declares_body(headers: Mapping[str, str]) -> bool:
    if "transfer-encoding" in headers:
        return True
    length = headers.get("content-length", "0").strip()
    return length != "0" and length != ""


def _headers_of(raw: Iterable[tuple[bytes, bytes]]) -> tuple[dict[str, str], bool]:
    """ASGI headers → a lower-case dict, and whether Host was repeated."""
    out: dict[str, str] = {}
    hosts = 0
    for name, value in raw:
        key = name.decode("latin-1").lower()
        if key == "host":
            hosts += 1
        out[key] = value.decode("latin-1")
    return out, hosts > 1


class HttpGuard:
    """ASGI middleware: refuse what `policy` refuses, answer allowed preflights, add CORS headers
    for allowed origins; everything else goes to `app` untouched. Lifespan passes through."""

    def __init__(self, app: Any, policy: GuardPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers, repeated_host = _headers_of(scope.get("headers", ()))
        server = scope.get("server")
        port = self.policy.port
        if port is None and server and len(server) > 1:
            port = server[1]
        method = scope.get("method", "GET") if kind == "http" else "GET"
        if repeated_host:
            verdict: Verdict | None = Verdict(
                421, "Misdirected request: more than one Host header.", "misdirected_request"
            )
        else:
            verdict = self.policy.check(method, headers, port=port)
        if verdict is not None:
            if verdict.status != 204:
                log.info(
                    "%s: refused %s %s (%d %s; host=%r origin=%r content-type=%r)",
                    self.policy.name,
                    method,
                    scope.get("path", ""),
                    verdict.status,
                    verdict.code,
                    headers.get("host"),
                    headers.get("origin"),
                    headers.get("content-type"),
                )
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await _answer(send, verdict)
            return
        extra = self.policy.cors_headers(headers.get("origin"))
        if not extra or kind != "http":
            await self.app(scope, receive, send)
            return
        encoded = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in extra]

        async def send_with_cors(message: Any) -> None:
            if message.get("type") == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers", ())) + encoded
            await send(message)

        await self.app(scope, receive, send_with_cors)


async def _answer(send: Any, verdict: Verdict) -> None:
    body = verdict.body()
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in verdict.headers]
    if verdict.status != 204:  # a 204 carries no body and no Content-Length
        headers.append((b"content-type", b"application/json"))
        headers.append((b"content-length", str(len(body)).encode()))
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": verdict.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
