"""The hook door: Claude Code, Codex and Gemini CLI, run in their own terminals, ask our rules.

Each CLI runs a command before (and after) a tool call — Claude Code's and Codex's `PreToolUse`,
Gemini CLI's `BeforeTool` — with the call as JSON on stdin. `symposium-tui hook CLI` is that
command: the call becomes the same request the rules see from every other door, a running console
(or the `serve` host a console attached to) decides what the rules leave open on a card, and the
answer goes back on stdout in the CLI's own schema.

  clis.py     each CLI's hook contract: its events, its tool names → our request, its answers
  decide.py   the hook process: read, decide (rules, else the console, else the fallback), answer
              — standard library only (and bashlex for shell commands), never a traceback
  install.py  `hook install|uninstall|status`: the entries in each CLI's own settings file
"""
