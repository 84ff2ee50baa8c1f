"""What speaks over the console socket, beside VS Code's relayed traffic: no Textual here.

The console protocol (`docs/console-protocol.md`) on the host's side (`attached_console`) and the
console's (`host_link`, one bridge; `link_set`, all of them; `transport`, ssh or local), the
multiplexer `symposium-tui link` runs on each host (`mux`), and the lines the other front doors
open into a console: the ACP door's (`acp_console`, the proxy's end; `acp_door`, the console's)
and the hook door's (`hook_door`, the console's end; the hook's is `bridge.hooks.decide`).
"""
