"""The add-agent form (F4, Agents, n): every field labelled, nothing saved that cannot run (no
command, an id with spaces, an id already taken), each refusal said under its field, and every key
kept however fast the keys come (a paste, tmux send-keys)."""

from __future__ import annotations

from textual import events
from textual.keys import _character_to_key
from textual.widgets import DataTable, Input, Label

from bridge.settings import AgentConfig
from symposium_tui.screens.settings import AgentForm, SettingsScreen
from tests.support.console import wait_for

SIZE = (80, 24)


async def new_agent_form(pilot, app) -> AgentForm:
    await wait_for(pilot, lambda: app.chat_pane() is not None)
    await pilot.press("f4")
    await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
    table = app.screen.query_one("#agents-table", DataTable)
    await wait_for(pilot, lambda: app.focused is table)
    await pilot.press("n")
    await wait_for(pilot, lambda: isinstance(app.screen, AgentForm))
    form = app.screen
    assert isinstance(form, AgentForm)
    await wait_for(pilot, lambda: app.focused is form.query_one("#agent-id"))
    return form


def burst(app, text: str) -> None:
    """Every key of `text` posted at once, as a terminal delivers a paste or tmux send-keys:
    none waits for the one before it to be handled."""
    for char in text:
        key = {"\t": "tab", "\r": "enter"}.get(char) or _character_to_key(char)
        app.post_message(events.Key(key, char))


def error_at(form: AgentForm, field: str) -> str:
    error = form.query_one(f"#agent-{field}-error")
    return str(error.render()) if error.display else ""


async def test_keys_typed_fast_with_tabs_each_land_in_their_field(make_app, store):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await new_agent_form(pilot, app)
        burst(app, "eliza2\tSecond Eliza\tpython3\t-m bridge.agents.eliza\r")
        await wait_for(pilot, lambda: "eliza2" in store.load().agents)
        assert store.load().agents["eliza2"] == AgentConfig(
            id="eliza2",
            name="Second Eliza",
            command="python3",
            args=["-m", "bridge.agents.eliza"],
        )


async def test_every_field_has_a_label_that_stays_when_it_has_text(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        form = await new_agent_form(pilot, app)
        for field in ("id", "name", "command", "args", "description"):
            form.query_one(f"#agent-{field}", Input).value = "x"
        await pilot.pause()
        labels = [str(label.render()) for label in form.query(".form-label").results(Label)]
        assert labels == ["Id", "Name", "Command", "Args", "About"]
        for label in form.query(".form-label"):
            assert label.region.width > 0 and label.region.y < SIZE[1]  # on screen at 80×24


async def test_the_form_refuses_what_cannot_run_and_says_why_at_the_field(make_app, store):
    store.upsert_agent(AgentConfig(id="claude", name="Claude", command="npx"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        form = await new_agent_form(pilot, app)
        ident = form.query_one("#agent-id", Input)
        command = form.query_one("#agent-command", Input)

        ident.value = "eliza2Second Eliza"  # what a lost Tab made of two fields
        await pilot.press("enter")
        await wait_for(pilot, lambda: "no spaces" in error_at(form, "id"))
        assert "needs the program" in error_at(form, "command")  # and it has no command either
        assert app.focused is ident  # the first field to fix

        ident.value = "claude"
        command.value = "python3"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "already" in error_at(form, "id"))
        assert error_at(form, "command") == ""

        ident.value = "eliza"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "built-in Eliza" in error_at(form, "id"))

        ident.value = "second-eliza"
        command.value = ""
        await pilot.press("enter")
        await wait_for(pilot, lambda: error_at(form, "command") != "")
        assert error_at(form, "id") == ""
        assert isinstance(app.screen, AgentForm)
        assert set(store.load().agents) == {"claude"}  # nothing saved, nothing overwritten

        command.value = "python3"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "second-eliza" in store.load().agents)
        assert store.load().agents["claude"].command == "npx"


async def test_an_entry_that_only_carries_settings_is_edited_without_a_command(make_app, store):
    store.set_agent_bypass("zed-claude", True)  # what `b` on a card writes: no command
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        table = app.screen.query_one("#agents-table", DataTable)
        await wait_for(pilot, lambda: app.focused is table and table.row_count == 2)
        table.move_cursor(row=1)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, AgentForm))
        app.screen.query_one("#agent-name", Input).value = "Claude in Zed"
        await pilot.press("enter")
        await wait_for(pilot, lambda: store.load().agents["zed-claude"].name == "Claude in Zed")
        assert store.load().agents["zed-claude"].command is None


def footer_text(app) -> str:
    return " ".join(str(w.render()) for w in app.screen.query("FooterKey, FooterLabel"))


async def test_f_keys_over_a_form_say_so_and_ask_before_leaving_it(make_app, store):
    from symposium_tui.screens.confirm import Confirm
    from symposium_tui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        form = await new_agent_form(pilot, app)
        form.query_one("#agent-id", Input).value = "half-typed"
        await wait_for(pilot, lambda: "f2 Queue…" in footer_text(app))
        assert "f1 Help" in footer_text(app) and "f4 Settings…" in footer_text(app)

        await pilot.press("f1")  # help opens over the form, which is still there after it
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is form)

        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        assert "not saved" in str(app.screen.query_one("#confirm-text").render())
        await pilot.press("n")  # stay: the form as it was
        await wait_for(pilot, lambda: app.screen is form)
        assert form.query_one("#agent-id", Input).value == "half-typed"

        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("y")  # leave it: the key does what it says, nothing is saved
        await wait_for(pilot, lambda: len(app.screen_stack) == 1)
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "chat")
        assert store.load().agents == {}


async def test_ticking_bypass_in_the_form_asks_first_and_no_saves_nothing(make_app, store):
    """Turning bypass on from the agent form is as deliberate as from a card: the same question
    (what it covers) before anything is saved; `n` keeps the form open and the file unchanged."""
    from textual.widgets import Checkbox

    from symposium_tui.screens.confirm import ConfirmBypass

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        form = await new_agent_form(pilot, app)
        form.query_one("#agent-id", Input).value = "risky"
        form.query_one("#agent-command", Input).value = "python3"
        form.query_one("#agent-bypass", Checkbox).value = True
        form._save()
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmBypass))
        question = app.screen.question
        assert (
            "Turn bypass on for risky?" in question and "Deny and ask rules still apply" in question
        )
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is form)
        assert "risky" not in store.load().agents
        form._save()
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmBypass))
        await pilot.press("y")
        await wait_for(pilot, lambda: "risky" in store.load().agents)
        assert store.load().agents["risky"].bypass is True
