"""The vscodelm front door: the Symposium VS Code extension's `lm/*` JSON-RPC methods.

* `fastpath` — what `symposium-tui vscodelm` answers at start-up with the standard library only
  (token counts, model information, malformed lines) while the rest is imported;
* `endpoint` — the methods of one connection (`VscodeLmEndpoint`, `serve_connection`);
* `prefix_cache` — reads only what a request adds to a history the connection has seen;
* `wire` — the methods' parameters (the messages inside them are the core's, `bridge.protocol`);
* `stdio` — the headless endpoint on this process's stdin/stdout.

This package's own import is free (the fast path imports `fastpath` through it): the endpoint,
with asyncio, pydantic and the core, loads when one of its names is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.vscodelm.endpoint import VscodeLmEndpoint, serve_connection

__all__ = ["VscodeLmEndpoint", "serve_connection"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from bridge.vscodelm import endpoint

        return getattr(endpoint, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
