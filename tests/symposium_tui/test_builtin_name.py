"""One name for the built-in agent wherever it is shown: the chat's, in `registry list`,
`config`, and Eliza's own agentInfo."""

from __future__ import annotations

import json

from tests.support.cli import cli


def test_the_built_in_agent_has_the_chats_name_in_registry_list_and_config(tmp_path):
    from bridge.agents.eliza import AGENT_TITLE
    from symposium_tui.widgets.chat import eliza_choice

    name = eliza_choice().label
    assert name == AGENT_TITLE
    listed = cli("registry", "list")
    assert listed.returncode == 0, listed.stderr
    assert [a["name"] for a in json.loads(listed.stdout) if a["id"] == "elizacp"] == [name]
    config = cli(
        "--config-dir", str(tmp_path / "c"), "--runtime-dir", str(tmp_path / "r"), "config"
    )
    assert config.returncode == 0, config.stderr
    assert name in config.stdout
