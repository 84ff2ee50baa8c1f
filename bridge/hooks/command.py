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
HELP = (
    USAGE
    + """
Claude Code, Codex and Gemini CLI run `symposium-tui hook CLI` around each tool call, with the
call as JSON on its input: the approval rules decide it, else a card on the running console,
else the CLI's own prompt (`hook_no_console = "deny"` in the settings: a denial). The answer goes
to its output in that CLI's schema; a denial reaches the model with its reason.

  install CLI    add the hooks to the CLI's settings (--user: its user settings, the default;
                 --project: the current folder's), keeping everything else in the file
  uninstall CLI  remove them again
  status [CLI]   where they are installed, and whether the CLI will run them
  --timeout S    (run by the CLI) answer within S seconds whatever happens (install sets it)

Docs: docs/hooks.md.
"""
)


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv[:2]):  # `hook --help`, `hook claude --help`
        sys.stdout.write(HELP)
        return 0
    if argv and argv[0] in CLIS:
        from bridge.hooks.decide import main as decide

        return decide(argv)
    if argv and argv[0] in ("install", "uninstall", "status"):
        flags = {a for a in argv[1:] if a.startswith("-")}
        if flags - {"--project", "--user"} or len(flags) > 1:  # not silently one of them
            which = "one of --project and --user" if len(flags) > 1 else f"{min(flags)!r}"
            sys.stderr.write(
                f"symposium-tui hook {argv[0]}: {which}?\nusage: symposium-tui hook {argv[0]} "
                "claude|codex|gemini [--project|--user]\n"
            )
            return 2
        from bridge.hooks.install import main as install

        return install(argv)
    # Anything else is an error of the command line, answered as a block: a CLI whose settings
    # run `hook` with a wrong name must not take an error for a "go ahead".
    what = f"unknown command {argv[0]!r}" if argv else "which CLI, or install|uninstall|status?"
    sys.stderr.write(f"symposium-tui hook: {what}\n{USAGE}")
    return 2
