"""What each entry point costs to import, checked in a fresh interpreter.

`bridge/` must stay usable without Textual (architecture: Layout); the CLI module and the commands
the VS Code extension runs per chat request (`registry …`) must start in a bare Python start-up;
the vscodelm fast path must answer before asyncio and pydantic are loaded; the built-in Eliza
must not drag in the MCP SDK.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.lmclient import REPO

HEAVY = (
    "asyncio",
    "pydantic",
    "pydantic_core",
    "acp",
    "mcp",
    "mcp_types",
    "textual",
    "rich",
    "anyio",
    "uvicorn",
    "starlette",
)


def loaded_after(code: str, *, setup: str = "") -> dict:
    """Run `code` in a fresh interpreter; return the top-level packages it added to sys.modules
    (and the full module names), with what was loaded by `setup` (and by start-up) left out."""
    script = textwrap.dedent(
        f"""
        import json, sys
        {setup}
        before = set(sys.modules)
        {code}
        added = sorted(set(sys.modules) - before)
        sys.stderr.flush()
        print("\\n@@MODULES@@" + json.dumps(added))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=str(REPO), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    added = json.loads(proc.stdout.rsplit("@@MODULES@@", 1)[1])
    return {
        "modules": added,
        "top": sorted({m.split(".")[0] for m in added}),
        "stdout": proc.stdout.rsplit("\n@@MODULES@@", 1)[0],
    }


def not_stdlib(top: list[str]) -> list[str]:
    return [
        m for m in top if m not in sys.stdlib_module_names and m not in ("bridge", "symposium_tui")
    ]


def test_every_bridge_module_imports_without_textual():
    result = loaded_after(
        "import importlib, pkgutil, bridge\n"
        "        names = [m.name for m in pkgutil.walk_packages(bridge.__path__, 'bridge.')]\n"
        "        for name in names: importlib.import_module(name)\n"
        "        print(json.dumps(names))"
    )
    names = json.loads(result["stdout"].strip().splitlines()[-1])
    # The walk really covered the package (a broken walk would pass vacuously).
    for expected in (
        "bridge.vscodelm",
        "bridge.rpc",
        "bridge.sessions",
        "bridge.history",
        "bridge.protocol",
        "bridge.registry",
        "bridge.vscodelm.fastpath",
        "bridge.agents.eliza",
        "bridge.agents.process",
        "bridge.tools",
    ):
        assert expected in names
    assert "textual" not in result["top"], [
        m for m in result["modules"] if m.startswith("textual")
    ][:5]
    # Nor the console package, which is where Textual lives.
    assert not [m for m in result["modules"] if m.startswith("symposium_tui")], result["modules"]


def test_cli_module_imports_only_the_standard_library():
    result = loaded_after("import symposium_tui.cli")
    assert not_stdlib(result["top"]) == [], result["top"]
    for heavy in HEAVY:
        assert heavy not in result["top"], f"symposium_tui.cli imported {heavy}"
    # Only the CLI itself from this project (and its standard-library helpers: for a closed
    # output, and the garbage collector held at the start), nothing from the bridge.
    assert [m for m in result["modules"] if m.split(".")[0] in ("bridge", "symposium_tui")] == [
        "symposium_tui",
        "symposium_tui.cli",
        "symposium_tui.closed_output",
        "symposium_tui.collector",
    ]


def test_cli_parser_builds_with_the_standard_library_only():
    result = loaded_after(
        "import symposium_tui.cli as c\n        c.build_parser().parse_args(['vscodelm', '--log', 'debug'])"
    )
    assert not_stdlib(result["top"]) == []


@pytest.mark.parametrize(
    "module", ["bridge.vscodelm.fastpath", "bridge.jsonrpc", "bridge.registry", "bridge.paths"]
)
def test_cheap_modules_import_no_asyncio_or_pydantic(module):
    result = loaded_after(f"import {module}")
    for heavy in HEAVY:
        assert heavy not in result["top"], f"{module} imported {heavy}"
    assert not_stdlib(result["top"]) == [], result["top"]


@pytest.mark.parametrize(
    "argv",
    [
        ["registry", "list"],
        ["registry", "resolve-agent", "elizacp"],
        [
            "registry",
            "resolve-agent",
            '{"id":"elizacp","name":"ElizACP","distribution":{"symposium":{"subcommand":"eliza"}}}',
        ],
    ],
)
def test_registry_commands_run_on_the_standard_library(argv):
    """The extension spawns these for its model picker and before every chat request."""
    result = loaded_after(
        f"from symposium_tui.cli import main\n        code = main({argv!r})\n        assert code == 0, code",
    )
    assert not_stdlib(result["top"]) == [], result["top"]
    for heavy in HEAVY:
        assert heavy not in result["top"]
    assert json.loads(result["stdout"].strip())


def test_fast_path_answers_with_the_standard_library_only():
    """What `vscodelm` runs before the heavy imports: classify and answer cheap requests."""
    result = loaded_after(
        "from bridge.vscodelm.fastpath import answer_cheap\n"
        "        from bridge.jsonrpc import classify, dumps\n"
        '        for raw in (b\'{"jsonrpc":"2.0","id":1,"method":"lm/provideTokenCount","params":{"modelId":"m","text":"abcd"}}\',\n'
        '                    b\'{"jsonrpc":"2.0","id":2,"method":"lm/provideLanguageModelChatInformation","params":{}}\',\n'
        '                    b\'{"jsonrpc":"2.0","id":3,"method":"lm/provideTokenCount","params":{}}\',\n'
        '                    b\'\\xff\', b\'[\' * 100000, b\'{"jsonrpc":"2.0","id":4,"method":"nope"}\'):\n'
        "            dumps(answer_cheap(classify(raw)))"
    )
    assert not_stdlib(result["top"]) == [], result["top"]


def test_eliza_agent_does_not_import_mcp():
    result = loaded_after("import bridge.agents.eliza")
    assert "mcp" not in result["top"] and "mcp_types" not in result["top"], result["top"]
    assert "textual" not in result["top"]


def test_mcp_shim_is_standard_library_only():
    """Spawned once per agent session that wants a stdio MCP server: it must start fast."""
    result = loaded_after("import bridge.mcp_shim")
    assert not_stdlib(result["top"]) == [], result["top"]


def test_the_console_process_draws_before_the_bridge_is_imported():
    """`symposium-tui` imports the console process (`symposium_tui.console_process.run_console`)
    and the app, draws the first frame, and only then builds the bridge: neither module loads the
    core, pydantic or the ACP SDK."""
    result = loaded_after("import symposium_tui.console_process, symposium_tui.app")
    for heavy in ("pydantic", "pydantic_core", "acp", "mcp", "mcp_types"):
        assert heavy not in result["top"], f"the console's entry imported {heavy}"
    assert not [m for m in result["modules"] if m in ("bridge.core", "bridge.events")]


# Never on the console's way to its first frame, nor on the `registry` commands' (the extension
# spawns `registry resolve-agent` before every chat): the ACP and MCP SDKs, the OpenAI door's
# server stack, pydantic and the bridge's pydantic models.
NOT_AT_START = (
    "acp",
    "mcp",
    "mcp_types",
    "uvicorn",
    "starlette",
    "pydantic",
    "pydantic_core",
    "bridge.events",
    "bridge.protocol",
    "bridge.core",
    "bridge.openai",
)


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


FIRST_FRAME_PROBE = """
import json, os, sys
import symposium_tui.console_process as host

def build_hosted(**options):
    # The console calls this right after its first frame, to build the bridge.
    with open(os.environ["PROBE_OUT"], "w") as f:
        json.dump(sorted(sys.modules), f)
    os._exit(0)

host.build_hosted = build_hosted
from symposium_tui.start import main
sys.exit(main(["console"]))
"""


def _run_in_a_terminal(probe: str, tmp_path: Path) -> None:
    """`python -c probe` in a terminal (a pty) of its own, with fresh settings and runtime
    directories and `PROBE_OUT` naming where it writes; the terminal is drained until it exits."""
    import os
    import pty
    import select

    env = dict(os.environ)
    env.update(
        PROBE_OUT=str(tmp_path / "probe.json"),
        TERM="xterm-256color",
        SYMPOSIUM_CONFIG_DIR=str(tmp_path / "config"),
        SYMPOSIUM_RUNTIME_DIR=str(tmp_path / "run"),
    )
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", probe],
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(tmp_path),
    )
    os.close(slave)
    try:
        while proc.poll() is None:  # keep the terminal drained until the probe exits
            if select.select([master], [], [], 0.1)[0]:
                try:
                    os.read(master, 1 << 16)
                except OSError:
                    break
        assert proc.wait(120) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_console_reaches_its_first_frame_without_the_sdks_servers_or_models(tmp_path):
    """`symposium-tui console` in a terminal (a pty), its modules recorded at the moment it builds
    the bridge, which it does right after its first frame."""
    _run_in_a_terminal(FIRST_FRAME_PROBE, tmp_path)
    modules = json.loads((tmp_path / "probe.json").read_text())
    assert "textual" in modules and "symposium_tui.app" in modules  # the probe saw the console
    assert _loaded(modules, NOT_AT_START) == []


COLLECTOR_PROBE = """
import gc, json, os, sys
import symposium_tui.app as app
import symposium_tui.console_process as host

seen = {"before main": gc.isenabled()}
compose = app.SymposiumApp.compose

def composing(self):
    seen["while composing"] = gc.isenabled()
    yield from compose(self)

def build_hosted(**options):
    # The console calls this right after its first frame, to build the bridge.
    seen["building the bridge"] = gc.isenabled()
    seen["frozen"] = gc.get_freeze_count()
    with open(os.environ["PROBE_OUT"], "w") as f:
        json.dump(seen, f)
    os._exit(0)

app.SymposiumApp.compose = composing
host.build_hosted = build_hosted
from symposium_tui.start import main
sys.exit(main(["console"]))
"""


def test_the_console_starts_without_the_garbage_collector_and_has_it_back_after_its_first_frame(
    tmp_path,
):
    """The collector's passes over what the console builds before its first frame freed next to
    nothing and took a fifth of the start: it is off from `main` to the first frame, then back on,
    with what the start built kept out of its passes (frozen)."""
    _run_in_a_terminal(COLLECTOR_PROBE, tmp_path)
    seen = json.loads((tmp_path / "probe.json").read_text())
    assert seen["before main"] is True
    assert seen["while composing"] is False
    assert seen["building the bridge"] is True
    assert seen["frozen"] > 10_000  # the modules and widgets built for the first frame


def test_every_other_command_runs_with_the_garbage_collector_on():
    """Only an app with a first frame to draw turns the collector back on itself; any other
    command has it on (and the start's objects frozen) before it runs."""
    probe = """
import gc, sys
import symposium_tui.cli as cli

def vscodelm(args):
    print(gc.isenabled(), gc.get_freeze_count() > 0)
    return 0

cli.COMMANDS["vscodelm"] = vscodelm
from symposium_tui.start import main
sys.exit(main(["vscodelm"]))
"""
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]


def _imported_by(argv: list[str], env: dict[str, str], cwd: str) -> tuple[list[str], str]:
    """The modules a command imports (`-X importtime`), and its output."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    modules = [
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    return modules, proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["registry", "list"],
        ["registry", "resolve-agent", "claude"],
        [
            "--config-dir",
            "CONFIG",
            "registry",
            "resolve-agent",
            '{"id":"elizacp","name":"ElizACP","distribution":{"symposium":{"subcommand":"eliza"}}}',
        ],
    ],
)
def test_registry_commands_as_the_extension_spawns_them_import_no_parser_settings_or_sdk(
    tmp_path, args
):
    """The console script, as the extension runs it, with a settings file holding agents and
    rules: the answer comes from the agents table, without the argument parser, the settings
    module (and its rules), the SDKs or pydantic."""
    import os
    from pathlib import Path

    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.toml").write_text(
        '[agents.claude]\ncommand = "npx"\nargs = ["-y", "@zed-industries/claude-agent-acp"]\n\n'
        '[[rules]]\naction = "allow"\nkind = "read"\n\n'
        '[[rules]]\naction = "deny"\ncommand = "rm -rf"\n'
    )
    env = dict(os.environ, SYMPOSIUM_CONFIG_DIR=str(config))
    script = str(Path(sys.executable).parent / "symposium-tui")
    argv = [str(config) if a == "CONFIG" else a for a in args]
    modules, out = _imported_by([script, *argv], env, str(tmp_path))
    answer = json.loads(out)
    if args[-1] == "list":
        assert [a["id"] for a in answer] == ["elizacp", "claude"]
    elif args[-1] == "claude":
        assert (
            answer["command"] == "npx" and answer["args"][-1] == "@zed-industries/claude-agent-acp"
        )
    else:
        assert answer["args"][-1] == "eliza"
        assert "tomllib" not in modules  # distribution and name given: no settings to read
    assert "bridge.registry" in modules  # (the record is of the command that answered)
    assert _loaded(modules, NOT_AT_START) == []
    assert (
        _loaded(modules, ("argparse", "bridge.settings", "bridge.rules", "symposium_tui.cli")) == []
    )


def test_the_console_builds_its_first_frame_without_pydantic_or_the_rules():
    """What runs before the first frame — the console's modules, its settings read (a first start:
    no rules), the app built — loads neither pydantic (the bridge's event models come with the
    bridge, after the frame) nor the approval rules and their shell parser (with the first rule)."""
    result = loaded_after(
        "from bridge.settings import Settings\n"
        "        import symposium_tui.console_process\n"
        "        from symposium_tui.app import SymposiumApp\n"
        "        Settings.load_quietly()\n"
        "        SymposiumApp(connect=lambda: None)",
        setup="import os, tempfile; os.environ['SYMPOSIUM_CONFIG_DIR'] = tempfile.mkdtemp()",
    )
    for heavy in ("pydantic", "pydantic_core", "acp", "mcp"):
        assert heavy not in result["top"], f"the console's first frame imported {heavy}"
    early = ("bridge.events", "bridge.rules", "bridge.shell", "symposium_tui.state.console_state")
    assert [m for m in result["modules"] if m in early] == []
