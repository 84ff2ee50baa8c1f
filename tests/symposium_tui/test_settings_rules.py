"""The Rules tab of the settings screen: a rule is edited, moved up and down and removed (after a
question) from the keyboard; each change is written to settings.toml through the settings layer
and decides the next request at once; a broken file is reported and left as it is."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static

from bridge.approvals import Rule
from symposium_tui.screens.confirm import Confirm
from symposium_tui.screens.settings import RuleForm, SettingsScreen
from tests.support.console import run_call, wait_for

SIZE = (80, 24)
BY_KIND = Rule("deny", kind="execute", reason="nothing runs here")
BY_COMMAND = Rule("deny", command="rm", reason="use trash instead")


def notified(app, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)


async def rules_tab(pilot, app) -> DataTable:
    await wait_for(pilot, lambda: app.chat_pane() is not None)
    await pilot.press("f4")
    await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
    await pilot.press("right_square_bracket")
    table = app.screen.query_one("#rules-table", DataTable)
    await wait_for(
        pilot, lambda: app.focused is table and table.row_count == len(app.settings.rules)
    )
    return table


async def test_moving_a_rule_up_changes_which_rule_decides_and_the_files_order(
    make_app, store, asker
):
    store.add_rule(BY_KIND)
    store.add_rule(BY_COMMAND)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await rules_tab(pilot, app)
        # Both deny `rm -rf build`: the first in the list decides, and its reason is told.
        denied = await asker.ask(run_call("rm -rf build"))
        assert (denied.outcome, denied.reason) == ("reject_once", "nothing runs here")
        assert denied.rule is not None and denied.rule.startswith("rule 1 ")

        def footer() -> str:
            return " ".join(str(w.render()) for w in app.screen.query("FooterKey, FooterLabel"))

        await wait_for(pilot, lambda: "e Edit" in footer() and "K J Move" in footer(), what="keys")

        table.move_cursor(row=1)
        await wait_for(pilot, lambda: table.cursor_row == 1)
        await pilot.press("K")
        await wait_for(pilot, lambda: store.load().rules == [BY_COMMAND, BY_KIND])
        text = store.path.read_text()
        assert text.index('command = "rm"') < text.index('kind = "execute"')
        await wait_for(pilot, lambda: table.cursor_row == 0)  # the cursor stays on the moved rule
        denied = await asker.ask(run_call("rm -rf build"))
        assert denied.reason == "use trash instead"
        assert denied.rule is not None and denied.rule.endswith("deny command=rm")

        await pilot.press("J")  # and back down
        await wait_for(pilot, lambda: store.load().rules == [BY_KIND, BY_COMMAND])
        denied = await asker.ask(run_call("rm -rf build"))
        assert denied.reason == "nothing runs here"


async def test_a_rule_is_edited_in_its_form_and_removed_after_a_question(make_app, store, asker):
    store.add_rule(Rule("deny", command=("rm", "shred"), reason="no deleting", match=["rm x"]))
    store.add_rule(Rule("allow", kind="read"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await rules_tab(pilot, app)
        await pilot.press("enter")  # Enter edits the selected rule, as e does
        await wait_for(pilot, lambda: isinstance(app.screen, RuleForm))
        form = app.screen
        assert form.query_one("#rule-command", Input).value == "rm; shred"
        assert form.query_one("#rule-reason", Input).value == "no deleting"
        assert "eliza = Eliza (built in)" in str(form.query_one("#rule-agent-ids").render())
        form.query_one("#rule-command", Input).value = "rm; shred; git clean"
        form.query_one("#rule-reason", Input).value = "ask me first"
        form.query_one("#rule-reason", Input).focus()
        await pilot.press("enter")
        edited = Rule(
            "deny", command=("rm", "shred", "git clean"), reason="ask me first", match=["rm x"]
        )
        await wait_for(pilot, lambda: store.load().rules[0] == edited)
        denied = await asker.ask(run_call("git clean -fdx"))
        assert (denied.outcome, denied.reason) == ("reject_once", "ask me first")

        # An edit its own examples would fail is not saved: the form says why and stays.
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleForm))
        app.screen.query_one("#rule-command", Input).value = "shred"
        app.screen.query_one("#rule-command", Input).focus()
        await pilot.press("enter")
        error = app.screen.query_one("#rule-error", Static)
        await wait_for(pilot, lambda: "does not match its example 'rm x'" in str(error.render()))
        assert isinstance(app.screen, RuleForm) and store.load().rules[0] == edited
        assert not notified(app, "does not match")  # in the form, not a toast over its buttons
        button = app.screen.query_one("#save")
        assert error.region.bottom <= button.region.y and error.region.height >= 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))

        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("n")  # keep it
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        assert len(store.load().rules) == 2
        await pilot.press("delete")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")
        await wait_for(pilot, lambda: store.load().rules == [Rule("allow", kind="read")])
        await wait_for(pilot, lambda: table.row_count == 1)
        assert app.bridge.approvals.policy.rules == [Rule("allow", kind="read")]


async def test_a_rule_that_cannot_be_used_is_refused_in_the_form_at_the_field_to_change(
    make_app, store
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await rules_tab(pilot, app)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleForm))
        form = app.screen
        form.query_one("#rule-title-regex", Input).value = "git ("  # not a regular expression
        form.query_one("#rule-reason", Input).focus()
        await pilot.press("enter")
        error = form.query_one("#rule-error", Static)
        await wait_for(pilot, lambda: "title_regex" in str(error.render()))
        assert str(error.render()).startswith("Not saved: ")
        assert form.query_one("#rule-title-regex", Input).has_focus
        assert store.load().rules == [] and isinstance(app.screen, RuleForm)


async def test_a_broken_settings_file_is_reported_and_not_touched_by_a_move(make_app, store):
    store.add_rule(BY_KIND)
    store.add_rule(BY_COMMAND)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await rules_tab(pilot, app)
        broken = store.path.read_bytes() + b"\n[[rules]\n"
        store.path.write_bytes(broken)
        await pilot.press("J")
        await wait_for(pilot, lambda: notified(app, "settings.toml line"))
        assert store.path.read_bytes() == broken
        assert app.bridge.approvals.policy.rules == [BY_KIND, BY_COMMAND]


async def test_with_the_file_broken_no_rule_form_opens_to_lose_what_is_typed_into_it(
    make_app, store
):
    # it used to open, take a new rule, and throw it away on Enter ("the file is broken")
    store.add_rule(BY_KIND)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await rules_tab(pilot, app)
        good = store.path.read_bytes()
        broken = good + b'\n[[rules]]\naction = "deny\n'
        store.path.write_bytes(broken)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.settings_error is not None)
        for key in ("n", "enter"):  # a new rule, the selected one edited
            await pilot.press(key)
            await wait_for(pilot, lambda: notified(app, "The settings file is broken"))
            app.clear_notifications()
            assert not isinstance(app.screen, RuleForm), key
        assert store.path.read_bytes() == broken
        store.path.write_bytes(good)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.settings_error is None)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleForm))


async def test_a_new_rule_is_selected_once_added(make_app, store):
    store.add_rule(BY_KIND)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        table = await rules_tab(pilot, app)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleForm))
        app.screen.query_one("#rule-command", Input).value = "rm"
        app.screen.query_one("#rule-command", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: table.row_count == 2)
        await wait_for(pilot, lambda: table.cursor_row == 1, what="the new rule selected")
        await pilot.press("K")  # so the next key acts on it
        await wait_for(pilot, lambda: store.load().rules[0] == Rule("allow", command="rm"))


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_cut_cell_ends_in_an_ellipsis_and_every_column_stays_on_screen(make_app, store):
    store.add_rule(
        Rule("deny", command=("rm -rf", "rm -fr", "rm", "shred -u", "git clean -fdx"), reason="no")
    )
    store.add_rule(Rule("allow", kind="read", path="/home/someone/projects/a-long-directory/src"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await rules_tab(pilot, app)
        await wait_for(pilot, lambda: "rm -rf" in screen_text(app))
        lines = screen_text(app).splitlines()
        header = next(line for line in lines if "Action" in line and "Kind" in line)
        assert "Command / URL" in header, header
        deny = next(line for line in lines if " deny " in line and "rm -rf" in line)
        assert "rm -rf or rm -fr" in deny and deny.rstrip().endswith("…"), deny
        allow = next(line for line in lines if " allow " in line and " read " in line)
        assert "/home/someone/" in allow and "…" in allow, allow


async def test_an_empty_rules_tab_says_how_to_add_the_first_rule(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await rules_tab(pilot, app)
        await wait_for(pilot, lambda: "No rules yet" in screen_text(app))
        assert "Press n to add the first rule" in " ".join(screen_text(app).split())
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleForm))
