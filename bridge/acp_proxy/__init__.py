"""The ACP front door: a transparent proxy between an ACP client (Zed, Toad, acpx, …) and its agent.

Both sides are the official SDK's JSON-RPC connection (`acp.connection.Connection`) with a raw
method handler — the same thing its `AgentSideConnection` / `ClientSideConnection` are built on,
without their typed routing, which would validate every message into the SDK's models and
re-serialize it (dropping fields and update kinds this SDK version does not know, and turning
`_meta` into keyword arguments). So every request, response, notification and error is forwarded as
the JSON object it arrived as: `initialize` (the client learns exactly the agent's capabilities),
the `session/*` methods, every `session/update`, the agent's `fs/*`, `terminal/*` and elicitation
requests, extension methods (`_…`) and `_meta`.

What the proxy adds, it adds beside the traffic, never in it:

* every `session/request_permission` is decided by the approval broker — rules and policy first,
  then an attached console's cards, otherwise the client's own permission UI (the request is
  forwarded unchanged and the client's answer is audited); a `session/cancel` or the end of the
  turn withdraws what is still pending;
* events for the console and the event log: the session (labelled with the client's name), each
  turn (its prompt, streamed text, stop reason or cancellation), tool calls, the agent's stderr.

The ACP client is stateful end to end, so none of the stateless front doors' machinery (history
routing, replay, round trips through the next request) is involved: the agent is started with
`bridge.agents.launch` like theirs, and the core's broker, bus and settings are shared.

Its rooms: `proxy` (the connection, its sessions and turns, the update fast lane), `permissions`
(the agent's permission requests), `session` (what is remembered of one ACP session) and `stdio`
(the proxy on this process's stdin/stdout).
"""

from bridge.acp_proxy.permissions import ACP_DENIERS, PERMISSION, malformed_options
from bridge.acp_proxy.proxy import SESSION_OPENERS, AcpProxy, client_label
from bridge.acp_proxy.stdio import serve_stdio

__all__ = [
    "ACP_DENIERS",
    "PERMISSION",
    "SESSION_OPENERS",
    "AcpProxy",
    "client_label",
    "malformed_options",
    "serve_stdio",
]
