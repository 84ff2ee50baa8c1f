"""The `symposium-tui` console script.

A CLI's hook (`symposium-tui hook claude|codex|gemini`) is a new process for every tool call, so
it is handed to `bridge.hooks` before the command line's parser (argparse) and the rest of
`symposium_tui.cli` are imported. Everything else is `symposium_tui.cli.main`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"]:
        from bridge.hooks.command import main as hook_main

        return hook_main(args[1:])
    from symposium_tui.cli import main as cli_main

    return cli_main(argv)
