"""The processes behind the console, and how they find each other: no Textual here.

The bridge a console or `serve` hosts (`hosted`), the console socket (`console_socket`), `serve`,
the `vscodelm` endpoint (`endpoint`: relay into a running console, else headless, handing over to
a console that starts later through `switch`), the `acp` front door's process (`acp_front_door`),
the `[notify]` command (`notify`) and the console process's lifeline (`lifeline`). Each is
imported only by the command that needs it: this package imports nothing itself.
"""
