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
    from bridge.agents.eliza import AGENT_VERSION

    (listed_eliza,) = [a for a in json.loads(listed.stdout) if a["id"] == "elizacp"]
    assert (listed_eliza["name"], listed_eliza["version"]) == (name, AGENT_VERSION)
    config = cli(
        "--config-dir", str(tmp_path / "c"), "--runtime-dir", str(tmp_path / "r"), "config"
    )
    assert config.returncode == 0, config.stderr
    assert f"eliza ({name}): runs inside symposium-tui" in config.stdout
    # once the console saved its bypass, it is still the built-in agent, not one without a command
    (tmp_path / "c").mkdir(exist_ok=True)
    (tmp_path / "c" / "settings.toml").write_text("[agents.eliza]\nbypass = true\n")
    config = cli(
        "--config-dir", str(tmp_path / "c"), "--runtime-dir", str(tmp_path / "r"), "config"
    )
    assert f"eliza ({name}): runs inside symposium-tui  [bypass]" in config.stdout
    assert "no command" not in config.stdout


async def test_cards_and_session_rows_show_the_agents_name_and_keep_its_id_as_the_key(
    make_app, store, asker
):
    from textual.widgets import DataTable

    from bridge.agents.eliza import AGENT_VERSION
    from bridge.settings import AgentConfig
    from tests.support.console import drawn_card, run_call, wait_for

    store.upsert_agent(AgentConfig(id="claude-code", name="Claude Code", command="npx"))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        await pilot.press("f3", *"ask permission to run the tests", "enter")
        card = await drawn_card(pilot)
        assert card.info.agent == "eliza"  # the id: what rules and bypass match
        # its name as a person knows it, then the version its `initialize` gave
        assert str(card.border_title).startswith(f"Eliza (built in) {AGENT_VERSION} · ")
        assert "allow all Eliza (built in) asks" in str(card.query_one(".card-keys").render())
        # the approval stats name the pattern as the card does
        assert "exactly `run the tests` by Eliza (built in)" in app.fatigue.patterns
        banner = app.query_one("#chat-banner")
        await wait_for(pilot, lambda: banner.display)
        assert "Eliza (built in) asks permission" in str(banner.render())

        other = asker.ask(run_call("deploy"), agent="claude-code")
        await wait_for(pilot, lambda: len(app.queue.pending) == 2)
        await wait_for(  # its border is drawn once it is mounted
            pilot, lambda: str(app.queue.pending[1].border_title).startswith("Claude Code · ")
        )

        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is card)
        await pilot.press("b")  # bypass is saved under the id, once confirmed
        await wait_for(pilot, lambda: len(app.screen_stack) > 1)
        await pilot.press("y")
        await wait_for(pilot, lambda: "eliza" in store.load().agents)
        assert store.load().agents["eliza"].bypass
        assert "Eliza (built in) is always allowed" in card.outcome_text
        await pilot.press("f4")  # its bypass-only entry in the settings keeps the name
        agents = await wait_for(pilot, lambda: app.screen.query("#agents-table").first())
        await wait_for(pilot, lambda: agents.row_count and str(agents.get_row("eliza")[1]) == "on")
        assert str(agents.get_row("eliza")[2]) == "Eliza (built in)"
        await pilot.press("escape")
        app.bridge.approvals.withdraw(app.queue.pending[0].info.approval_id, "test over")
        await other

        await pilot.press("2")
        table = app.query_one("#sessions-table", DataTable)
        await wait_for(pilot, lambda: table.row_count >= 1)
        agents = {str(table.get_row_at(n)[1]) for n in range(table.row_count)}
        assert "Eliza (built in)" in agents and "eliza" not in agents


async def test_a_card_names_the_agent_by_its_own_name_and_version(make_app, asker):
    """An ACP agent known by its `agentInfo` (not the `node` that runs it): the card says which
    agent asks, with the version it gave, and the bypass offered is for that agent alone."""
    from tests.support.console import drawn_card, run_call, wait_for

    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        asker.ask(run_call("deploy"), agent="@zed-industries/codex-acp", agent_version="0.16.0")
        card = await drawn_card(pilot)
        assert str(card.border_title).startswith("@zed-industries/codex-acp 0.16.0 · ")
        keys = str(card.query_one(".card-keys").render())
        assert "allow all @zed-industries/codex-acp asks" in keys
