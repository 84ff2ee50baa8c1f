"""`registry resolve-agent` and `registry list`: spawn -> exit, against `python -c pass`.

    .venv/bin/python tests/bench/bench_registry.py [--spawns 30] [--no-bytecode]

The Symposium extension spawns `<symposium.acpAgentPath> registry resolve-agent '<json>'` before
every chat request and `registry list` for its model picker, so each is a whole Python start-up
the person waits for. Compared, interleaved (the first one of each round rotates), in the same run:

- `symposium-tui registry resolve-agent '<json>'` (the venv's console script, as the extension
  runs it, with the JSON the extension sends for the built-in agent: its distribution and name are
  in the request, so no settings are read);
- `symposium-tui registry resolve-agent claude` (an agent of the settings file, named by its id:
  the settings are read);
- `symposium-tui registry list`;
- `python -c pass` (the baseline: spawn -> exit of a bare interpreter).

Each runs from a temporary directory, with a private `SYMPOSIUM_CONFIG_DIR` whose settings file
holds three agents and a dozen rules (the registry reads the agents; a file with rules must not
cost more). Python writes the project's bytecode into a private cache (`PYTHONPYCACHEPREFIX`)
during the warm-up rounds, as an installed package has its `.pyc` files; `--no-bytecode` measures
a tree whose modules are compiled at every start (`PYTHONDONTWRITEBYTECODE`). Target: median
command / median `python -c pass` <= 2x. Exit code is always 0: this reports, it does not gate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.report import ratio_row

TARGET = 2.0
PY = sys.executable
SCRIPT = str(Path(PY).parent / "symposium-tui")
RESOLVE_JSON = json.dumps(
    {"id": "elizacp", "name": "ElizACP", "distribution": {"symposium": {"subcommand": "eliza"}}}
)

SETTINGS = """\
[preferences]
theme = "textual-dark"

[agents.claude]
command = "npx"
args = ["-y", "@zed-industries/claude-agent-acp"]
env = { ANTHROPIC_LOG = "warn" }

[agents.codex]
command = "npx"
args = ["-y", "@zed-industries/codex-acp"]
description = "Codex through its ACP adapter"

[agents.gemini]
command = "gemini"
args = ["--experimental-acp"]
bypass = false
"""
RULES = [
    ("allow", 'kind = "read"'),
    ("allow", 'command = "git status"'),
    ("allow", 'command = "git diff"'),
    ("allow", 'command = "ls"'),
    ("allow", 'command = "cat"'),
    ("deny", 'command = "rm -rf"'),
    ("deny", 'path = "~/.ssh/**"'),
    ("ask", 'url = "https://*.example.com/**"'),
    ("allow", 'title = "Read *"'),
    ("deny", 'title_regex = "(?i)drop table"'),
    ("allow", 'command = "pytest"'),
    ("allow", 'command = "npm test"'),
]


def settings_text() -> str:
    rules = "".join(f'\n[[rules]]\naction = "{a}"\n{body}\n' for a, body in RULES)
    return SETTINGS + rules


def spawn_time(argv: list[str], cwd: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=cwd,
        env=env,
    )
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{argv[1:]} failed ({proc.returncode}): {proc.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spawns", type=int, default=30)
    parser.add_argument("--no-bytecode", action="store_true")
    options = parser.parse_args()

    cwd = tempfile.mkdtemp(prefix="bench-registry-")
    config = os.path.join(cwd, "config")
    os.mkdir(config)
    Path(config, "settings.toml").write_text(settings_text())
    env = dict(os.environ)
    env["SYMPOSIUM_CONFIG_DIR"] = config
    env["SYMPOSIUM_RUNTIME_DIR"] = os.path.join(cwd, "run")
    if options.no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(cwd, "pycache")

    commands = {
        "python -c pass": [PY, "-c", "pass"],
        "registry resolve-agent": [SCRIPT, "registry", "resolve-agent", RESOLVE_JSON],
        "resolve-agent claude": [SCRIPT, "registry", "resolve-agent", "claude"],
        "registry list": [SCRIPT, "registry", "list"],
    }
    listed = subprocess.run(
        commands["registry list"], capture_output=True, text=True, env=env, cwd=cwd
    )
    ids = [entry["id"] for entry in json.loads(listed.stdout)]
    assert ids == ["elizacp", "claude", "codex", "gemini"], (ids, listed.stderr)

    # The settings file's start-up cache (`bridge.startcache`) is written once the file is 2 s old,
    # as a settings file written before the chats it serves is.
    cache = Path(config, ".settings.toml.registry-cache.json")
    deadline = time.monotonic() + 10
    while not cache.exists() and time.monotonic() < deadline:
        spawn_time(commands["registry list"], cwd, env)
    print(f"(the settings file's start-up cache {'in use' if cache.exists() else 'NOT written'})")

    names = list(commands)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(options.spawns + 2):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            elapsed = spawn_time(commands[name], cwd, env)
            if round_ >= 2:  # two warm-up rounds (they also write the bytecode cache)
                times[name].append(elapsed)

    base = statistics.median(times["python -c pass"])
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    print(
        f"{options.spawns} spawns each, interleaved; load average {load}; "
        f"bytecode {'not written (compiled each start)' if options.no_bytecode else 'cached'}"
    )
    for name in names:
        values = sorted(times[name])
        median = statistics.median(values)
        line = (
            f"  {name:<24} median {median * 1000:6.1f} ms  "
            f"(min {values[0] * 1000:.1f}, max {values[-1] * 1000:.1f})"
        )
        if name != "python -c pass":
            ratio = median / base
            line += f"  ratio {ratio:.2f}x  target <= {TARGET:g}x  {'met' if ratio <= TARGET else 'MISSED'}"
        print(line)
    for name in names[1:]:
        ratio_row(
            f"`{name}`",
            baseline="`python -c pass`",
            ratio=statistics.median(times[name]) / base,
            target=TARGET,
            subject=times[name],
            against=times["python -c pass"],
        )


if __name__ == "__main__":
    main()
