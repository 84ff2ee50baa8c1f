"""The `symposium-tui` console script (and `python -m symposium_tui`).

A CLI's hook (`symposium-tui hook claude|codex|gemini`) is a new process for every tool call: it is
handed to `bridge.hooks` before anything else is imported. The VS Code extension spawns `symposium-tui registry resolve-agent '<json>'` before every chat
request and `registry list` for its model picker: in exactly the forms it spawns them, they are
answered from here with `os`, `json` and the settings file (`bridge.registry.main`, the agents
table kept in the settings file's start-up cache, `bridge.startcache`), without importing the
command-line parser (`argparse`, `typing`), the settings module or, while the cache holds, `tomllib`. Every other
command line, including help, abbreviated flags and mistakes, goes to `symposium_tui.cli.main`,
which also knows the `registry` commands.
"""

from __future__ import annotations

import os
import sys

# The flags `registry` takes (`symposium_tui.cli._tool_flags`), before or after `registry`.
REGISTRY_FLAGS = ("--log", "--log-dir", "--config-dir", "--runtime-dir")
DIR_VARIABLES = (
    ("--config-dir", "SYMPOSIUM_CONFIG_DIR"),
    ("--runtime-dir", "SYMPOSIUM_RUNTIME_DIR"),
)


def registry_argv(argv: list[str]) -> list[str] | None:
    """`["list"]` or `["resolve-agent", AGENT]` when `argv` is a `registry` command spelled out in
    full (flags as `--flag VALUE` or `--flag=VALUE`, before the `list` / `resolve-agent` word),
    with the directory flags applied to the environment as the parser's path applies them; None
    for anything else."""
    words: list[str] = []
    dirs: dict[str, str] = {}
    i = 0
    while i < len(argv):
        word = argv[i]
        flag, eq, value = word.partition("=")
        if flag in REGISTRY_FLAGS and len(words) < 2:
            if not eq:
                if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                    return None  # (the parser says what is missing)
                i += 1
                value = argv[i]
            dirs[flag] = value
        elif word.startswith("-"):
            return None
        else:
            words.append(word)
        i += 1
    if words != ["registry", "list"] and not (
        len(words) == 3 and words[:2] == ["registry", "resolve-agent"]
    ):
        return None
    for flag, variable in DIR_VARIABLES:
        if dirs.get(flag):
            os.environ[variable] = os.path.abspath(os.path.expanduser(dirs[flag]))
    return words[1:]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"]:
        # A hook process lives for one tool call: the garbage collector's passes over what its
        # imports create (and its last pass at exit), a millisecond or more of each call, would
        # free nothing it needs (what it drops without a cycle is freed all the same)
        import gc

        gc.disable()
        from bridge.hooks.clis import CLIS
        from bridge.hooks.command import main as hook_main

        code = hook_main(args[1:])
        if argv is None and args[1:2] and args[1] in CLIS:
            # The process's own command line, a CLI's hook: its answer is written (with `os.write`)
            # and its audit line synced, and nothing it holds needs finalizing, so it ends here
            # rather than tearing the interpreter down module by module (~3 ms of every call)
            for stream in (sys.stdout, sys.stderr):  # (None when the CLI gave no such descriptor)
                try:
                    if stream is not None:
                        stream.flush()
                except (OSError, ValueError):  # a closed pipe: the exit status still answers
                    pass
            os._exit(code)
        return code
    registry = registry_argv(args)
    if registry is not None:
        from bridge.registry import main as registry_main
        from bridge.startcache import RegistryAgents
        from symposium_tui.closed_output import run_to_closed_output

        # The agents table from the settings file's start-up cache (`bridge.startcache`), or read.
        return run_to_closed_output(
            lambda: registry_main(registry, RegistryAgents())  # type: ignore[arg-type]
        )
    from symposium_tui.collector import hold_collection

    hold_collection()
    from symposium_tui.cli import main as cli_main

    return cli_main(argv)
