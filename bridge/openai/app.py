"""The OpenAI-compatible front door: an ASGI app (Starlette routing) over the shared bridge core.

Routes (each also without the `/v1` prefix):

| route | what |
|---|---|
| `GET /v1/models`, `GET /v1/models/{id}` | Eliza and the agents configured in the settings file |
| `POST /v1/chat/completions` | chat, streaming (SSE), tools, legacy functions |
| `POST /v1/responses`, `GET`/`DELETE /v1/responses/{id}` | the Responses API, `previous_response_id` |
| `GET /v1/tools` | the configured MCP servers' tools (`catalog.py`), `?tags=a,b&name=get_*` |
| `GET /health` | liveness (no key needed) |

**Connections** (`spaces.py`). One `ConnectionCore` (one history tracker and its agent sessions) per
*principal*, `user` and `x-conversation-id`: the principal is whoever holds the API key (with no
key: the local user); the `user` field and the `x-conversation-id` header, when a client sets them,
give it a conversation space of its own, and requests naming the same `x-conversation-id` are
answered one at a time (each waits for the previous one of that conversation to end).

**Conversations.** The tracker runs the EXTEND policy here (`bridge.history.MatchPolicy`): a
request continues an agent session only when it extends that session's complete transcript (our
reply included) and the session is idle; anything else is a new session with the earlier turns
replayed. Concurrent requests never cancel each other, whatever they share.

**Bounds.** What the front door keeps per conversation is bounded by count and by age, oldest
(least recently used) first, with the defaults below (`OpenAIFrontDoor` options; docs/openai.md):
conversation spaces (`max_spaces` 256, `space_idle` 1 h: an evicted space's agent sessions are
stopped, and its next request is a new conversation whose earlier turns are replayed to a fresh
agent session, as for any request that extends no live session); finished exchanges kept for
retries and `Idempotency-Key`s (`max_exchanges` 1,024, `retry_window` 120 s: a retry of an evicted
one runs again as a new request); stored responses (`ResponseStore`: 512, 24 h: an evicted
`previous_response_id` is answered 404 `not_found`, as an unknown id); remembered reply shapes
(`ReplyMemory`: 2,048, 1 h: an evicted one is read in the wire order). A space with an exchange
running is never evicted. Shared by all conversations: the definitions of the last eight tool
arrays validated, none over 1 MB serialized (`tools.SEEN_TOOLS`: an evicted one is validated
again).

**State.** Only a request marked as a retry — `x-stainless-retry-count` >= 1 with the same body
and `x-conversation-id`, or the same `Idempotency-Key` (with them) — joins the exchange already running or replays one that completed
unseen; a disconnect cancels the agent's turn (after `retry_grace` when the client may still
retry, i.e. before the response started). See `exchange.py`. Structured output, `stop` and the
refused parameters: `structured.py`, `params.py`, `convert.py`.

**Tools.** Pass-through (default): the request's `tools` become the agent's `vscode_tools` MCP
server; an agent's call ends the response with `tool_calls` and the agent's turn waits for the
next request's `tool` messages. Auto-execute (`tool_execution: "auto"` or `use_vscode_tools:
true`): the `[mcp_servers.*]` of the settings file are given to the agent, which runs them itself
(its permission requests go through the approval broker); `max_tool_rounds` (default 10, 0 = no
limit) caps the tool calls it starts in one answer, ending it with `finish_reason: "length"`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.routing import Route

from bridge import events as ev
from bridge.openai.asgi import answer as answer_exchange
from bridge.openai.asgi import (
    conversation_id,
    endpoint,
    is_retry,
    may_retry,
    read_body,
    send_json,
)
from bridge.openai.body import KnownTools
from bridge.openai.catalog import Catalog
from bridge.openai.chat_wire import ChatEncoder
from bridge.openai.convert import parse_chat
from bridge.openai.errors import (
    OpenAIError,
    bad_request,
    invalid_api_key,
    model_not_found,
    not_found,
)
from bridge.openai.exchange import Exchange
from bridge.openai.memory import ReplyMemory
from bridge.openai.responses import (
    ResponsesEncoder,
    ResponseStore,
    StoredResponse,
    parse_responses,
    reply_message,
)
from bridge.openai.spaces import ConversationSpaces

if TYPE_CHECKING:
    from bridge.core import Bridge

MAX_SPACES = 256
"""Conversation spaces (principal, `user`, `x-conversation-id`) kept at once."""
SPACE_IDLE = 3600.0
"""Seconds after its last request a conversation space is closed."""
MAX_EXCHANGES = 1024
"""Finished exchanges kept for a retry or an `Idempotency-Key` (each for `retry_window` at most)."""


class OpenAIFrontDoor:
    """The front door's state over one `Bridge`: connections, exchanges in flight, stored responses."""

    def __init__(
        self,
        bridge: Bridge,
        *,
        api_key: str | None = None,
        catalog: Catalog | None = None,
        retry_grace: float = 2.0,
        retry_window: float = 120.0,
        coalesce: bool = True,
        max_spaces: int = MAX_SPACES,
        space_idle: float = SPACE_IDLE,
        max_exchanges: int = MAX_EXCHANGES,
    ) -> None:
        self.bridge = bridge
        self.api_key = api_key or None
        self._key_digest = hashlib.sha256((api_key or "").encode()).digest()
        self.catalog = catalog or Catalog()
        self.retry_grace = retry_grace
        self.retry_window = retry_window
        self.coalesce = coalesce
        self.memory = ReplyMemory()
        # A body's `tools` array, resent unchanged with every request, is decoded once.
        self.bodies = KnownTools()
        self.responses = ResponseStore()
        self.max_exchanges = max_exchanges
        self.spaces = ConversationSpaces(
            bridge, self._busy_cores, max_spaces=max_spaces, space_idle=space_idle
        )
        # Conversation spaces, least recently used first (the spaces' own table).
        self.connections = self.spaces.cores
        self._closing_spaces = self.spaces.closing
        # The latest exchange of each conversation named by `x-conversation-id`: the next one waits
        # for it (a named conversation's requests are answered one at a time, in arrival order).
        self.named: dict[tuple[str, str | None, str], Exchange] = {}
        self.exchanges: OrderedDict[bytes, Exchange] = OrderedDict()
        self.running: set[Exchange] = set()

    # --- plumbing -----------------------------------------------------------------------------------

    def principal(self, scope: Any) -> str:
        if self.api_key is None:
            return "local"
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                # constant time, and independent of the length of either (digests compared)
                if scheme.lower() == "bearer" and hmac.compare_digest(
                    hashlib.sha256(token.strip().encode()).digest(), self._key_digest
                ):
                    return "key"
                break
        raise invalid_api_key()

    def connection(self, principal: str, user: str | None, conversation: str | None = None) -> Any:
        return self.spaces.open((principal, user, conversation))

    def _busy_cores(self) -> set[int]:
        """Spaces with an exchange running are never closed."""
        return {id(ex.core) for ex in self.running if ex.core is not None}

    def _prune(self) -> None:
        now = time.monotonic()
        table = self.exchanges
        while table:
            key, oldest = next(iter(table.items()))
            if oldest.done and (
                now - (oldest.finished_at or now) > self.retry_window
                or len(table) > self.max_exchanges
            ):
                del table[key]
            elif not oldest.done and len(table) > 16384:
                table.move_to_end(key)  # still running: keep it, look at the next one once
                break
            else:
                break

    def _find(self, key: bytes, retry: bool) -> Exchange | None:
        """The exchange a request marked as a retry joins (running, or completed unseen within
        `retry_window`); an unmarked request never joins anything."""
        if not retry:
            return None
        ex = self.exchanges.get(key)
        if ex is None or not ex.replayable:
            return None
        if ex.done and time.monotonic() - (ex.finished_at or 0) > self.retry_window:
            return None
        return ex

    def _start(
        self, key: bytes, params: Any, principal: str, conversation: str | None = None
    ) -> Exchange:
        agent = self.catalog.agent_for(params.model)
        if agent is None:
            raise model_not_found(params.model)
        core = self.connection(principal, params.user, conversation)
        budget = params.max_tokens * 4 if params.max_tokens else None
        ex = Exchange(
            key,
            params,
            budget=budget,
            max_tool_calls=params.max_tool_rounds if params.auto_tools else 0,
            stop=getattr(params, "stop", ()),
            output_format=getattr(params, "output_format", None),
        )
        ex.core = core  # (its space is busy from now on: see _prune_spaces)
        try:
            request = core.make_request(ex.request_id, agent, params.messages, params.tools)
        except ValueError as exc:
            raise bad_request(f"Invalid model configuration: {exc}", "model") from None
        request.prompt_suffix = params.prompt_suffix
        request.parallel_tool_calls = params.parallel_tool_calls
        if params.auto_tools:
            servers = self.catalog.mcp_servers()
            request.mcp_servers = [s.acp() for s in servers]
            # A session's MCP servers are fixed when it starts: auto-execute conversations get
            # sessions of their own.
            request.agent_key += "|mcp:" + json.dumps(request.mcp_servers, sort_keys=True)
        core.bus.publish(
            lambda: ev.RequestReceived(
                connection=core.name,
                request_id=ex.request_id,
                agent=agent,
                messages=[m.model_dump(mode="json") for m in params.messages],
                tools=[t.name for t in params.tools],
            )
        )
        self.exchanges[key] = ex
        self.exchanges.move_to_end(key)
        self._prune()
        self.running.add(ex)
        ex.on_done.append(self._finished)
        after = None
        if conversation is not None:
            name = (principal, params.user, conversation)
            after = self.named.get(name)
            self.named[name] = ex
            ex.on_done.append(lambda done: self._forget_named(name, done))
        ex.task = asyncio.ensure_future(ex.run(core, request, after=after))
        return ex

    def _forget_named(self, name: tuple[str, str | None, str], ex: Exchange) -> None:
        if self.named.get(name) is ex:
            del self.named[name]

    def _finished(self, ex: Exchange) -> None:
        self.running.discard(ex)
        if ex.error is not None and ex.key is not None and self.exchanges.get(ex.key) is ex:
            del self.exchanges[ex.key]
        if ex.error is None:
            self._remember(ex)

    def _remember(self, ex: Exchange) -> None:
        if ex.parts:
            self.memory.remember_answer(ex.parts, legacy=getattr(ex.params, "legacy", False))

    @staticmethod
    def _fingerprint(principal: str, route: bytes, body: bytes) -> bytes:
        return hashlib.sha256(principal.encode() + b"\0" + route + b"\0" + body).digest()

    def _json(self, body: bytes) -> Any:
        try:
            return self.bodies.decode(body)
        except (ValueError, UnicodeDecodeError, RecursionError):  # nested past the decoder's depth
            raise bad_request(
                "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your "
                "HTTP library correctly. The OpenAI API expects a JSON payload.)"
            ) from None

    # --- answering -----------------------------------------------------------------------------------

    async def _exchange(
        self, scope: Any, receive: Any, endpoint: bytes, parse: Callable[[Any, str], Any]
    ) -> tuple[Exchange, str, dict[bytes, bytes], bool]:
        """The exchange a POST asks for: a retry of one still known joins it, anything else starts
        one. Returns it with the caller's principal, the headers, and whether it is new."""
        if scope["method"] != "POST":
            raise OpenAIError(405, "Method not allowed: use POST.", code="method_not_allowed")
        principal = self.principal(scope)
        body = await read_body(receive)
        headers = dict(scope["headers"])
        idempotency = headers.get(b"idempotency-key")
        conversation = conversation_id(headers)
        # The same request is the same body for the same conversation: a retry naming another
        # `x-conversation-id` is a request of that conversation, not this one's sent again.
        route = endpoint + b"\0" + (conversation or "").encode("utf-8", "surrogatepass")
        body_key = self._fingerprint(principal, route, body)
        if idempotency:
            # An Idempotency-Key names the request: the same key is the same request, sent again.
            key = self._fingerprint(principal, endpoint + b"\0idempotency-key", idempotency)
            ex = self._find(key, True)
            if ex is not None and ex.body_key != body_key:
                raise OpenAIError(
                    409,
                    "This Idempotency-Key was used with a different request body.",
                    code="idempotency_key_reused",
                )
        else:
            key = body_key
            ex = self._find(key, is_retry(headers))
        if ex is not None:
            return ex, principal, headers, False
        ex = self._start(key, parse(self._json(body), principal), principal, conversation)
        ex.body_key = body_key
        return ex, principal, headers, True

    async def _answer(
        self,
        ex: Exchange,
        encoder: Any,
        receive: Any,
        send: Any,
        headers: dict[bytes, bytes],
        whole: Callable[[], Any],
    ) -> None:
        grace = self.retry_grace if may_retry(headers) else 0.0
        await answer_exchange(ex, encoder, ex.params.stream, receive, send, grace, whole)

    async def chat_completions(self, scope: Any, receive: Any, send: Any) -> None:
        ex, _, headers, _ = await self._exchange(
            scope, receive, b"chat", lambda data, _p: parse_chat(data, self.memory)
        )
        encoder = ChatEncoder(ex, coalesce=self.coalesce)
        await self._answer(ex, encoder, receive, send, headers, encoder.completion)

    async def responses_create(self, scope: Any, receive: Any, send: Any) -> None:
        ex, principal, headers, new = await self._exchange(
            scope, receive, b"responses", lambda data, p: parse_responses(data, self.responses, p)
        )
        encoder = ResponsesEncoder(ex)
        if new:
            ex.on_done.append(lambda done: self._store_response(done, principal))
        await self._answer(
            ex, encoder, receive, send, headers, lambda: self._stored_body(encoder, principal)
        )

    def _store_response(self, ex: Exchange, principal: str) -> None:
        if ex.error is not None or not ex.params.store:
            return
        reply = reply_message(ex.parts)
        messages = list(ex.params.messages) + ([reply] if reply is not None else [])
        body = ResponsesEncoder(ex).whole()
        assert ex.response_id is not None  # set by the encoder above
        self.responses.put(StoredResponse(ex.response_id, principal, messages, body))

    def _stored_body(self, encoder: ResponsesEncoder, principal: str) -> Any:
        stored = self.responses.get(encoder.id, principal)
        return stored.body if stored is not None else encoder.whole()

    async def responses_item(self, scope: Any, receive: Any, send: Any) -> None:
        principal = self.principal(scope)
        response_id = scope["path_params"]["response_id"]
        if scope["method"] == "GET":
            stored = self.responses.get(response_id, principal)
            if stored is None:
                raise not_found(f"Response with id '{response_id}' not found.")
            await send_json(send, 200, stored.body)
        elif scope["method"] == "DELETE":
            if not self.responses.delete(response_id, principal):
                raise not_found(f"Response with id '{response_id}' not found.")
            await send_json(
                send, 200, {"id": response_id, "object": "response.deleted", "deleted": True}
            )
        else:  # e.g. POST /v1/responses/compact: not offered here
            raise OpenAIError(
                404, f"Invalid URL ({scope['method']} {scope['path']})", code="unknown_url"
            )

    async def models(self, scope: Any, receive: Any, send: Any) -> None:
        self.principal(scope)
        await send_json(send, 200, {"object": "list", "data": self.catalog.models()})

    async def model(self, scope: Any, receive: Any, send: Any) -> None:
        self.principal(scope)
        model_id = scope["path_params"]["model"]
        for model in self.catalog.models():
            if model["id"] == model_id:
                await send_json(send, 200, model)
                return
        if self.catalog.agent_for(model_id) is not None:  # an alias
            await send_json(
                send,
                200,
                {"id": model_id, "object": "model", "created": 0, "owned_by": "symposium"},
            )
            return
        raise model_not_found(model_id)

    async def tools(self, scope: Any, receive: Any, send: Any) -> None:
        self.principal(scope)
        from urllib.parse import parse_qs

        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        tags = [t.strip() for raw in query.get("tags", []) for t in raw.split(",") if t.strip()]
        name = query.get("name", [None])[-1]
        data = await self.catalog.tools(tags=tags, name=name)
        await send_json(send, 200, {"object": "list", "data": data})

    async def health(self, scope: Any, receive: Any, send: Any) -> None:
        await send_json(send, 200, {"status": "ok"})

    async def unknown(self, scope: Any, receive: Any, send: Any) -> None:
        self.principal(scope)
        raise OpenAIError(
            404, f"Invalid URL ({scope['method']} {scope['path']})", code="unknown_url"
        )

    async def close(self) -> None:
        for ex in list(self.running):
            ex.cancel("Request cancelled: the bridge is shutting down")
        tasks = [ex.task for ex in self.running if ex.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        await self.spaces.close()

    # --- the app ---------------------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        table = [
            ("/chat/completions", self.chat_completions),
            ("/responses", self.responses_create),
            ("/responses/{response_id}", self.responses_item),
            ("/models", self.models),
            ("/models/{model:path}", self.model),
            ("/tools", self.tools),
        ]
        routes = [
            Route(prefix + path, endpoint(fn)) for prefix in ("/v1", "") for path, fn in table
        ]
        routes.append(Route("/health", endpoint(self.health)))
        routes.append(Route("/{path:path}", endpoint(self.unknown)))
        return routes


def create_app(bridge: Bridge, **options: Any) -> Starlette:
    """The ASGI app; `app.state.front_door` is the `OpenAIFrontDoor` (close it on shutdown)."""
    door = OpenAIFrontDoor(bridge, **options)
    app = Starlette(routes=door.routes())
    app.state.front_door = door
    return app
