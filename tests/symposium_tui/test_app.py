"""Everything reachable without a mouse at 80×24: tabs, help, the command palette, settings
(written through the settings layer and applied live), themes, NO_COLOR."""

from __future__ import annotations

import re
from typing import Any

from textual.command import CommandPalette
from textual.widgets import DataTable, Input, Static

from bridge.approvals import Rule
from bridge.settings import AgentConfig
from symposium_tui.screens.confirm import Confirm, ConfirmBypass
from tests.support.console import run_call, shown_text, wait_for

SIZE = (80, 24)


async def started(pilot):
    await pilot.pause()
    await pilot.pause()


async def test_every_tab_is_reachable_from_the_keyboard_at_80x24(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        tabs = app.query_one("#tabs")
        for key, tab in (("2", "sessions"), ("3", "toolcalls"), ("1", "approvals"), ("4", "chat")):
            if app.focused is app.query_one("#chat-input"):
                await pilot.press("f2")
            await pilot.press(key)
            assert tabs.active == tab, key
            assert app.focused is not None and tab in [
                a.id for a in app.focused.ancestors_with_self
            ]
        await pilot.press("f2")
        assert tabs.active == "approvals"
        await pilot.press("f3")
        assert tabs.active == "chat" and app.focused is app.query_one("#chat-input")


async def test_f1_shows_every_key_and_closes_with_escape(make_app):
    from symposium_tui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        text = shown_text(app.screen.query("Static"))
        for expected in (
            "Approve once",
            "Deny;",
            "Bypass the agent",
            "The agent's own “always allow”",
            "Approve every pending card of this card's session",
            "Jump to the oldest pending approval",
            "Stop reply",
            "New chat",
            "Command palette",
            "Bypass on/off for the agent",
            "Add a rule",
            "arming delay",
            "Sessions (2)",
            "Replay an event log file",
            "Tool calls (3)",
            "Close the details or the filter bar",
        ):
            assert expected in text, expected
        # at 80 columns a long description wraps under itself, not under the keys
        import io

        from rich.console import Console

        for static in app.screen.query("Static"):
            console = Console(width=static.content_region.width, file=io.StringIO(), record=True)
            console.print(static.content)
            lines = console.export_text().splitlines()
            for n, line in enumerate(lines):
                if line.startswith("d ") and "Deny;" in line:
                    column = line.index("Deny;")
                    assert lines[n + 1][:column].strip() == "", lines[n : n + 2]
                    assert lines[n + 1][column:].strip(), lines[n : n + 2]
                    break
            else:
                continue
            break
        else:
            raise AssertionError("no wrapped Deny row in the help")
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_the_command_palette_lists_the_apps_actions_and_runs_them(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for expected in (
            "Approvals: go to the queue",
            "Approvals: approve once",
            "Approvals: deny",
            "Approvals: bypass the agent",
            "Approvals: approve every pending card of this session",
            "Approvals: bypass this session",
            "Sessions: show",
            "Tool calls: show",
            "Chat: go to the chat",
            "Chat: new chat",
            "Chat: stop the reply",
            "Chat: talk to Eliza (built in)",
            "Settings",
            "Help",
            "Theme: choose…",
            "Theme: symposium-light",
            "Quit",
        ):
            assert expected in titles, expected
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"tool calls: show")
        await wait_for(
            pilot,
            lambda: (
                app.screen.query("CommandList Option")
                or app.screen.query_one("CommandList").option_count
            ),
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "toolcalls")
        # a command is found by the words the footer gives its key ("New chat")
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"new chat")
        await wait_for(
            pilot,
            lambda: any(
                "Chat: new chat" in str(o.prompt)
                for o in app.screen.query_one("CommandList")._options
            ),
            what="the palette finds the footer's words",
        )


async def test_palette_answers_act_on_the_current_card(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call())
        await wait_for(pilot, lambda: app.queue.pending)
        app.action_show_tab("sessions")
        app.answer_current("approve")
        assert (await task).outcome == "allow_once"


async def test_bypass_this_session_allows_its_later_requests_without_saving(
    make_app, asker, bridge, store
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        first = asker.ask(run_call("one"), session="s4")
        await wait_for(pilot, lambda: app.queue.pending)
        app.bypass_current_session()  # asks first, and says what it covers
        await wait_for(
            pilot, lambda: isinstance(app.screen, Confirm) and app.screen.query("#confirm-text")
        )
        text = " ".join(str(app.screen.query_one("#confirm-text").render()).split())
        assert "Bypass session s4 of claude-code?" in text
        assert "this session only" in text and "Not saved" in text
        assert "Deny and ask rules still apply" in text
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, Confirm))
        assert not first.done() and not app.bridge.approvals.policy.session_bypass
        app.bypass_current_session()
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        assert (await first).outcome == "allow_once"
        await wait_for(pilot, lambda: "⚠ bypass on: session s4" in app.sub_title)
        later = await asker.ask(run_call("two"), session="s4")
        assert (later.resolver, later.rule) == ("policy", "session bypass")
        other = asker.ask(run_call("three"), session="s5")
        await wait_for(pilot, lambda: app.queue.pending)
        assert not other.done()
        assert "claude-code" not in store.load().agents


async def test_a_theme_chosen_in_the_palette_applies_at_once_and_is_remembered(make_app, store):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert app.theme == "symposium-dark"
        await pilot.press("ctrl+p", *"theme: symposium-light")
        await wait_for(pilot, lambda: app.screen.query_one("CommandList").option_count)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == "symposium-light")
    assert store.load().preferences["theme"] == "symposium-light"
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        assert again.theme == "symposium-light"


async def test_the_theme_picker_previews_live_and_escape_restores(make_app, store):
    from symposium_tui.screens.themes import ThemePicker

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        app.search_themes()
        await wait_for(pilot, lambda: isinstance(app.screen, ThemePicker))
        await pilot.press("down")
        previewed = app.theme
        assert previewed != "symposium-dark"
        await pilot.press("escape")
        assert app.theme == "symposium-dark"
        app.search_themes()
        await wait_for(pilot, lambda: isinstance(app.screen, ThemePicker))
        await pilot.press("down", "enter")
        assert app.theme == previewed
    assert store.load().preferences["theme"] == previewed


async def test_user_theme_files_are_picked_up_and_broken_ones_reported(make_app, config_dir):
    themes = config_dir / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.toml").write_text(
        'name = "mine"\nprimary = "#d75f00"\nbackground = "#000000"\n'
        '[variables]\ndiff-added = "#00ff00"\n'
    )
    (themes / "broken.toml").write_text('name = "broken"\nprimary = "not a colour"\n')
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert "mine" in app.available_themes
        assert "Theme: mine" in [c.title for c in app.get_system_commands(app.screen)]
        assert any("broken.toml" in e for e in app.theme_errors)
        app.set_theme("mine")
        await pilot.pause()
        assert app.theme_variables["diff-added"].upper() == "#00FF00"
        assert app.theme_variables[
            "card-pending"
        ]  # a variable the file left out: the theme's warning


async def test_settings_toggle_an_agents_bypass_in_the_file_and_in_the_live_policy(
    make_app, store, asker
):
    store.upsert_agent(AgentConfig(id="claude-code", command="npx", args=["claude-code-acp"]))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f4")
        table = app.screen.query_one("#agents-table", DataTable)
        await wait_for(pilot, lambda: app.focused is table)
        await pilot.press("down", "b")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmBypass))
        await pilot.press("y")
        await wait_for(pilot, lambda: store.load().agents["claude-code"].bypass is True)
        assert "claude-code" in app.bridge.approvals.policy.bypass_agents
        assert "on" in str(table.get_row("claude-code")[1])
        resolution = await asker.ask(run_call(), agent="claude-code")
        assert resolution.resolver == "policy"
        await pilot.press("b")
        assert store.load().agents["claude-code"].bypass is False
        assert "claude-code" not in app.bridge.approvals.policy.bypass_agents


async def test_settings_add_an_agent_and_the_chat_offers_it(make_app, store):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f4", "n")
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "agent-id")
        for field, value in (
            ("agent-id", "gemini"),
            ("agent-name", "Gemini CLI"),
            ("agent-command", "gemini"),
            ("agent-args", "--experimental-acp"),
        ):
            app.screen.query_one(f"#{field}", Input).value = value
        await pilot.press("enter")
        await wait_for(pilot, lambda: "gemini" in store.load().agents)
        saved = store.load().agents["gemini"]
        assert (saved.name, saved.command, saved.args) == (
            "Gemini CLI",
            "gemini",
            ["--experimental-acp"],
        )
        assert [a.key for a in app.chat.agents] == ["eliza", "gemini"]


async def test_settings_add_and_remove_a_rule_which_applies_live(make_app, store, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f4", "right_square_bracket")
        table = app.screen.query_one("#rules-table", DataTable)
        await wait_for(pilot, lambda: app.focused is table)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "rule-action")
        app.screen.query_one("#rule-kind").value = "read"
        app.screen.query_one("#rule-title", Input).value = "Read *"
        app.screen.query_one("#rule-title", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: store.load().rules)
        assert store.load().rules == [Rule(action="allow", kind="read", title="Read *")]
        resolution = await asker.ask({"toolCallId": "r", "title": "Read README.md", "kind": "read"})
        assert (resolution.resolver, resolution.outcome) == ("policy", "allow_once")
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("x", "y")  # removing asks first
        await wait_for(pilot, lambda: not store.load().rules)
        assert app.bridge.approvals.policy.rules == []


async def test_a_deny_rule_shadows_a_bypass_on_screen_and_in_the_policy(make_app, store, asker):
    store.upsert_agent(AgentConfig(id="claude-code", command="npx", bypass=True))
    store.add_rule(Rule("deny", agent="claude-*", title="push *", reason="prod is frozen"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f4", "r")  # the file was written after the bridge read it: reload
        table = app.screen.query_one("#agents-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        assert str(table.get_row("claude-code")[1]) == "on, but rule 1 still denies"
        hint = str(app.screen.query_one("#rules .settings-hint", Static).render())
        assert "deny > ask > an agent's bypass > allow" in hint
        denied = await asker.ask(run_call("push to prod"), agent="claude-code")
        assert (denied.resolver, denied.outcome, denied.reason) == (
            "policy",
            "reject_once",
            "prod is frozen",
        )
        allowed = await asker.ask(run_call("pull"), agent="claude-code")
        assert (allowed.outcome, allowed.rule) == ("allow_once", "agent bypass")


async def test_a_rule_whose_example_fails_is_not_applied_and_the_last_good_rules_stay(
    make_app, store, asker
):
    store.add_rule(Rule("deny", command="rm"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.focused, DataTable))
        await pilot.press("r")  # the good file, applied
        assert [r.describe() for r in app.bridge.approvals.policy.rules] == ["deny command=rm"]
        with store.path.open("a") as f:
            f.write('\n[[rules]]\naction = "allow"\ncommand = "ls"\nmatch = ["rm x"]\n')
        await pilot.press("r")
        assert app.settings_error and "line 8: rules[2]" in app.settings_error
        assert "does not match its example 'rm x'" in app.settings_error
        assert [r.describe() for r in app.bridge.approvals.policy.rules] == ["deny command=rm"]
        denied = await asker.ask(run_call("rm -rf build"))
        assert (denied.outcome, denied.rule) == ("reject_once", "rule 1 (line 4): deny command=rm")


async def test_a_broken_settings_file_is_shown_and_never_written(make_app, store):
    store.path.parent.mkdir(parents=True, exist_ok=True)
    broken = b"[agents.claude]\ncommand = \n"
    store.path.write_bytes(broken)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert app.settings_error and "line 2" in app.settings_error
        await pilot.press("f4")
        banner = app.screen.query_one("#settings-error")
        assert banner.display and "never" not in str(banner.render())
        assert "line 2" in str(banner.render())
        await pilot.press("b")  # toggle eliza's bypass: refused
        app.set_theme("symposium-light")  # remembered? refused, the file stays as it is
        await pilot.pause()
        assert store.path.read_bytes() == broken
        store.path.write_text('[agents.claude]\ncommand = "claude"\n')
        await pilot.press("r")
        assert app.settings_error is None and not banner.display
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmBypass))
        await pilot.press("y")
        await wait_for(pilot, lambda: store.load().agents["eliza"].bypass is True)


async def test_no_color_is_honoured(make_app, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert app.no_color
        svg = app.export_screenshot()
    colours = set(re.findall(r"(?:fill|color):\s*#([0-9a-fA-F]{6})", svg)) - {
        "c5c8c6"
    }  # the SVG's own default text
    assert len(colours) > 2
    greys = {c for c in colours if c[0:2] == c[2:4] == c[4:6]}
    assert colours == greys, f"coloured output under NO_COLOR: {sorted(colours - greys)[:5]}"


async def test_started_without_a_bridge_the_console_draws_first_and_connects_right_after(hosted):
    from symposium_tui.app import SymposiumApp

    connected = []

    async def connect():
        connected.append(True)
        return hosted, None

    app = SymposiumApp(connect=connect, arm_delay=0, linger=0, deterministic_eliza=True)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        assert app.sub_title == "no pending approvals"
        await wait_for(
            pilot, lambda: app.handle is not None, what="the console attached to the bridge"
        )
        assert connected == [True] and app.chat_pane() is not None
        assert not app.query(".starting")
        await pilot.press("f3")
        app.query_one("#chat-input", Input).value = "Hello"
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.chat.messages) == 2)
        assert app.chat.messages[-1].role == "assistant"


async def test_a_bridge_that_cannot_start_ends_the_console_with_the_reason():
    from symposium_tui.app import SymposiumApp

    async def connect():
        raise RuntimeError("another Symposium console is already running")

    app = SymposiumApp(connect=connect)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.return_code == 1 or not app.is_running)
    assert app.return_code == 1


async def test_the_agents_table_keeps_bypass_in_view_at_80_columns_with_a_long_command(
    make_app, store
):
    long_args = ["--config", "/home/you/a/very/long/path/to/the/agent/configuration.json", "-v"]
    store.upsert_agent(AgentConfig(id="claude-code", command="npx", args=long_args, bypass=True))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f4")
        table = app.screen.query_one("#agents-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2 and app.focused is table)
        labels = [str(column.label) for column in table.ordered_columns]
        widths = [column.get_render_width(table) for column in table.ordered_columns]
        bypass_ends = sum(widths[: labels.index("Bypass") + 1])
        assert bypass_ends <= table.scrollable_content_region.width, (labels, widths)
        assert str(table.get_row("claude-code")[labels.index("Bypass")]) == "on"


async def test_a_card_arriving_while_settings_is_open_shows_a_notice_and_f2_then_escape_returns(
    make_app, asker
):
    from symposium_tui.screens.settings import SettingsScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("f4", "right_square_bracket")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, SettingsScreen)
                and app.screen.query_one("#settings-tabs").active == "rules"
            ),
        )
        asker.ask(run_call("make deploy"))
        await wait_for(
            pilot,
            lambda: any("asks permission: make deploy" in n.message for n in app._notifications),
            what="a notice on the settings screen",
        )
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.queue.current_card() is app.focused)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen), what="settings back")
        assert app.screen.query_one("#settings-tabs").active == "rules", "the same section"


async def test_f_keys_go_somewhere_and_never_close_and_escape_goes_back_to_where_f4_came_from(
    make_app, asker
):
    """F4 after a visit to the queue that came back to Settings keeps Settings open (it used to
    close it); Esc then returns to the tab and the widget F4 was pressed in, not the queue."""
    from symposium_tui.screens.help import HelpScreen
    from symposium_tui.screens.settings import SettingsScreen

    def settings_on(section: str) -> bool:
        return (
            isinstance(app.screen, SettingsScreen)
            and app.screen.query_one("#settings-tabs").active == section
        )

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        chat_input = app.query_one("#chat-input")
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.focused is chat_input)
        await pilot.press("f4")
        await wait_for(pilot, lambda: settings_on("agents"))
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: settings_on("rules"))
        task = asker.ask(run_call("make deploy"))
        await wait_for(pilot, lambda: app.queue.pending)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.queue.current_card() is app.focused)
        await pilot.press("a")  # the last card answered: back to Settings, by itself
        await task
        await wait_for(pilot, lambda: settings_on("rules"), what="settings back")
        rules = app.screen.query_one("#rules-table")
        await wait_for(pilot, lambda: app.focused is rules, what="keys go to the rules shown")
        await pilot.press("f4")  # Settings is where F4 goes: it stays
        await pilot.press("f1")  # help on top of Settings…
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("f1")  # …F1 again: still the help
        await pilot.press("f4")  # F4 from the help: Settings, as it was
        await wait_for(pilot, lambda: settings_on("rules"), what="F4 from the help")
        assert [type(s) for s in app.screen_stack][1:] == [SettingsScreen]
        await pilot.press("escape")  # back to where F4 came from: the chat, typing
        await wait_for(pilot, lambda: len(app.screen_stack) == 1)
        await wait_for(pilot, lambda: app.focused is chat_input, what="the chat input again")
        assert app.query_one("#tabs").active == "chat"


async def test_a_card_arriving_in_the_queue_itself_needs_no_notice(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        asker.ask(run_call())
        await wait_for(pilot, lambda: app.queue.pending)
        assert not any("asks permission" in n.message for n in app._notifications)


async def test_settings_shows_a_bypass_given_on_a_card_and_an_edit_made_by_another_process(
    make_app, store, asker, config_dir
):
    from bridge.settings import SettingsStore

    store.upsert_agent(AgentConfig(id="claude-code", command="npx", args=["claude-code-acp"]))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        task = asker.ask(run_call(), agent="claude-code")
        await wait_for(pilot, lambda: app.queue.pending)
        await pilot.press("f2", "b")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmBypass))
        await pilot.press("y")
        await task
        assert store.load().agents["claude-code"].bypass is True
        await pilot.press("f4")
        table = app.screen.query_one("#agents-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        assert str(table.get_row("claude-code")[1]) == "on", "the card's bypass, no reload"
        # Someone else (an editor, another console) changes the file while Settings is open.
        SettingsStore(config_dir / "settings.toml").set_agent_bypass("claude-code", False)
        await wait_for(
            pilot,
            lambda: str(table.get_row("claude-code")[1]) == "off",
            what="the file's change on screen",
        )
        assert "claude-code" not in app.bridge.approvals.policy.bypass_agents


async def test_the_theme_list_marks_the_theme_in_use(make_app):
    from textual.widgets import OptionList

    from symposium_tui.screens.themes import ThemePicker

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        app.search_themes()
        await wait_for(
            pilot, lambda: isinstance(app.screen, ThemePicker) and app.screen.query("#themes")
        )
        themes = app.screen.query_one("#themes", OptionList)
        marked = [
            themes.get_option_at_index(i).id
            for i in range(themes.option_count)
            if "current" in str(themes.get_option_at_index(i).prompt)
        ]
        assert marked == [app.theme] == ["symposium-dark"]


def _console_whose_bridge_waits(hosted: Any) -> tuple[Any, Any]:
    """A console started without its bridge, and the event that lets the bridge come (it is
    still loading until then)."""
    import asyncio

    from symposium_tui.app import SymposiumApp

    ready = asyncio.Event()

    async def connect():
        await ready.wait()
        return hosted, None

    app = SymposiumApp(connect=connect, arm_delay=0, linger=0, deterministic_eliza=True)
    app.animation_level = "none"
    return app, ready


async def test_keys_typed_while_the_bridge_starts_are_kept_for_it(hosted):
    """A person who presses F3 and types before the bridge is there (seconds, on a loaded
    machine) loses nothing: the placeholder says the keys are kept, and the chat gets them."""
    app, ready = _console_whose_bridge_waits(hosted)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3", *"ask permission to run the tests", "enter")
        note = app.query_one("#chat .starting", Static)
        await wait_for(pilot, lambda: "Kept: ask permission to run the tests" in str(note.render()))
        assert app.chat_pane() is None
        ready.set()
        card = await wait_for(pilot, lambda: app.queue.pending and app.queue.pending[0])
        assert card.info.title == "run the tests"
        assert [m.role for m in app.chat.messages] == ["user"]
        assert app.chat.messages[0].content[0].value == "ask permission to run the tests"


async def test_f3_pressed_as_the_first_focus_lands_keeps_the_chat_and_what_is_typed(hosted):
    """On a loaded machine the console's first focus (the queue, given after the first frame) can
    land after the person's F3: the chat stays shown and keeps what they type for the bridge,
    rather than the approvals tab coming back and taking the keys."""
    app, ready = _console_whose_bridge_waits(hosted)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.focused is app.queue, what="the first focus")
        app.screen.set_focus(None)
        app.queue.focus()  # the first focus, still on its way ...
        app.action_chat()  # ... as F3 is handled
        await pilot.press(*"hello")
        note = app.query_one("#chat .starting", Static)
        await wait_for(pilot, lambda: "Kept: hello" in str(note.render()), what="the kept keys")
        await pilot.pause()
        assert app._active_tab() == "chat"
        assert app.focused is None  # nothing out of sight takes the keys
        ready.set()
        await wait_for(pilot, lambda: app.chat_pane() is not None and app.chat.messages == [])
        await wait_for(
            pilot,
            lambda: app.query_one("#chat-input", Input).value == "hello",
            what="the kept keys in the chat's input",
        )
        assert app._active_tab() == "chat"
