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
        "bridge.fastpath",
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
    # Only the CLI itself from this project, nothing from the bridge.
    assert [m for m in result["modules"] if m.split(".")[0] in ("bridge", "symposium_tui")] == [
        "symposium_tui",
        "symposium_tui.cli",
    ]


def test_cli_parser_builds_with_the_standard_library_only():
    result = loaded_after(
        "import symposium_tui.cli as c\n        c.build_parser().parse_args(['vscodelm', '--log', 'debug'])"
    )
    assert not_stdlib(result["top"]) == []


@pytest.mark.parametrize(
    "module", ["bridge.fastpath", "bridge.jsonrpc", "bridge.registry", "bridge.paths"]
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
        "from bridge.fastpath import answer_cheap\n"
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
    """`symposium-tui` imports the console process (`symposium_tui.host.run_console`) and the app,
    draws the first frame, and only then builds the bridge: neither module loads the core,
    pydantic or the ACP SDK."""
    result = loaded_after("import symposium_tui.host, symposium_tui.app")
    for heavy in ("pydantic", "pydantic_core", "acp", "mcp", "mcp_types"):
        assert heavy not in result["top"], f"the console's entry imported {heavy}"
    assert not [m for m in result["modules"] if m in ("bridge.core", "bridge.events")]


def test_the_console_builds_its_first_frame_without_pydantic_or_the_rules():
    """What runs before the first frame — the console's modules, its settings read (a first start:
    no rules), the app built — loads neither pydantic (the bridge's event models come with the
    bridge, after the frame) nor the approval rules and their shell parser (with the first rule)."""
    result = loaded_after(
        "from bridge.settings import Settings\n"
        "        import symposium_tui.host\n"
        "        from symposium_tui.app import SymposiumApp\n"
        "        Settings.load_quietly()\n"
        "        SymposiumApp(connect=lambda: None)",
        setup="import os, tempfile; os.environ['SYMPOSIUM_CONFIG_DIR'] = tempfile.mkdtemp()",
    )
    for heavy in ("pydantic", "pydantic_core", "acp", "mcp"):
        assert heavy not in result["top"], f"the console's first frame imported {heavy}"
    early = ("bridge.events", "bridge.rules", "bridge.shell", "symposium_tui.state.console_state")
    assert [m for m in result["modules"] if m in early] == []
