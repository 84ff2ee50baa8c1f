"""`symposium-tui hook …`: the hook itself (`hook claude|codex|gemini`) or its installer
(`hook install|uninstall|status`). Reached before the CLI's argument parser is built: the hook
runs once per tool call."""

from __future__ import annotations

import sys

from bridge.hooks.clis import CLIS

USAGE = (
    "usage: symposium-tui hook claude|codex|gemini [--timeout SECONDS]   (run by the CLI)\n"
    "       symposium-tui hook install|uninstall claude|codex|gemini [--project|--user]\n"
    "       symposium-tui hook status [claude|codex|gemini] [--project|--user]\n"
)


def main(argv: list[str]) -> int:
    if argv and argv[0] in CLIS:
        from bridge.hooks.decide import main as decide

        return decide(argv)
    if argv and argv[0] in ("install", "uninstall", "status"):
        from bridge.hooks.install import main as install

        return install(argv)
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    # Anything else is an error of the command line, answered as a block: a CLI whose settings
    # run `hook` with a wrong name must not take an error for a "go ahead".
    what = f"unknown command {argv[0]!r}" if argv else "which CLI, or install|uninstall|status?"
    sys.stderr.write(f"symposium-tui hook: {what}\n{USAGE}")
    return 2
