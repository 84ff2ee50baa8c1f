"""Every key F1 lists does something where F1 says it works: one app, each listed key pressed on
its screen or pane, each with an effect a person would see (a screen, a tab, the focus, a
cursor, a bar)."""

from __future__ import annotations

from textual.binding import Binding
from textual.command import CommandPalette
from textual.widgets import DataTable

from symposium_tui.screens.confirm import Confirm, ConfirmQuit
from symposium_tui.screens.help import HelpScreen
from symposium_tui.screens.settings import SettingsScreen
from tests.support.console import run_call, wait_for
from tests.support.panes import Conversation, text_message

SIZE = (80, 24)
WALKED = ("Anywhere", "Sessions (2)", "Tool calls (3)", "In the chat")


def listed_keys(app) -> dict[str, set[str]]:
    """What the help screen lists, group by group, as the keys Textual sees."""
    out: dict[str, set[str]] = {}
    for title, bindings, extra in app.help_groups():
        keys = out.setdefault(title, set())
        for binding in bindings:
            if isinstance(binding, Binding) and binding.description:
                keys.update(k.strip() for k in binding.key.split(","))
        keys.update(k for k, _ in extra)
    return out


async def test_every_key_the_help_lists_does_something_where_the_help_says(make_app, bridge, asker):
    app = make_app()
    walked: dict[str, set[str]] = {title: set() for title in WALKED}
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        tabs = app.query_one("#tabs")

        async def press(group: str, key: str) -> None:
            walked[group].add(key)
            await pilot.press(key)

        def focused_in(selector: str) -> bool:
            node = app.query_one(selector)
            return app.focused is not None and node in app.focused.ancestors_with_self

        # --- Anywhere ---------------------------------------------------------------------------
        for key, tab in (("2", "sessions"), ("1", "approvals"), ("3", "toolcalls"), ("4", "chat")):
            if focused_in("#chat-input"):  # the number keys are "not while typing"
                await pilot.press("f2")
                await wait_for(pilot, lambda: tabs.active == "approvals")
            await press("Anywhere", key)
            await wait_for(pilot, lambda tab=tab: tabs.active == tab, what=key)
        await pilot.press("f2")  # out of the chat input: ? types there
        await wait_for(pilot, lambda: not focused_in("#chat-input"))
        for key in ("f1", "question_mark"):
            await press("Anywhere", key)
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what=key)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await press("Anywhere", "ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))
        before = app.focused
        await press("Anywhere", "tab")
        await wait_for(pilot, lambda: app.focused is not before, what="tab")
        await press("Anywhere", "shift+tab")
        await wait_for(pilot, lambda: app.focused is before, what="shift+tab")
        await press("Anywhere", "f4")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        await press("Anywhere", "f3")
        await wait_for(pilot, lambda: tabs.active == "chat" and focused_in("#chat-input"))
        await pilot.press("escape")  # the chat's: stop a reply (none); the input keeps focus
        await pilot.press("shift+tab")
        await press("Anywhere", "2")
        await wait_for(pilot, lambda: tabs.active == "sessions")
        asker.ask(run_call("first request", "c1"))
        await wait_for(pilot, lambda: app.queue.pending)
        await press("Anywhere", "f2")
        await wait_for(pilot, lambda: tabs.active == "approvals")
        await press("Anywhere", "escape")  # back to where F2 came from
        await wait_for(pilot, lambda: tabs.active == "sessions")
        await press("Anywhere", "ctrl+q")  # a card is pending: asks first
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmQuit))
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmQuit))

        # --- Sessions ---------------------------------------------------------------------------
        conv = Conversation(bridge, "vscodelm")  # a new session, a commit, a cancel
        u1 = text_message("user", "hello")
        r1 = conv.reply(await conv.send([u1]))
        u2 = text_message("user", "I feel tired")
        await conv.send([u1, r1, u2])
        await conv.send([u1, text_message("assistant", "edited"), u2])
        decisions = app.query_one("#decisions-table", DataTable)
        await wait_for(pilot, lambda: decisions.row_count >= 2, what="two decisions")
        end = decisions.row_count - 1
        await wait_for(pilot, lambda: decisions.cursor_row == end)
        await press("Sessions (2)", "left_square_bracket")
        await wait_for(pilot, lambda: decisions.cursor_row == end - 1, what="[")
        await press("Sessions (2)", "right_square_bracket")
        await wait_for(pilot, lambda: decisions.cursor_row == end, what="]")
        sessions = app.query_one("SessionsPane")
        await press("Sessions (2)", "a")
        await wait_for(pilot, lambda: sessions.all_sessions, what="a")
        await pilot.press("a")
        await wait_for(pilot, lambda: not sessions.all_sessions)
        await press("Sessions (2)", "o")
        await wait_for(pilot, lambda: focused_in("#sessions-open-path"), what="o")
        await press("Sessions (2)", "escape")
        await wait_for(
            pilot, lambda: not app.query_one("#sessions-open").has_class("-open"), what="escape"
        )
        # c goes back to the live bridge from a replayed file (opening one: test_sessions_pane.py)
        from symposium_tui.state import ConsoleState

        live = sessions.state
        sessions.show_state(ConsoleState(None, name="replayed"))
        await pilot.pause()
        await press("Sessions (2)", "c")
        await wait_for(pilot, lambda: sessions.state is live, what="c")

        # --- Tool calls -------------------------------------------------------------------------
        asker.ask(run_call("second request", "c2"))
        asker.ask(run_call("third request", "c3"))
        await pilot.press("3")
        await wait_for(pilot, lambda: tabs.active == "toolcalls")
        view = app.query_one("ToolLogView")
        await wait_for(pilot, lambda: len(view.index) >= 3, what="three tool calls")
        if not view.has_focus:
            view.focus()
        await press("Tool calls (3)", "end")
        last = len(view.index) - 1
        await wait_for(pilot, lambda: view.cursor == last, what="end")
        for key, expected in (
            ("up", last - 1),
            ("down", last),
            ("k", last - 1),
            ("j", last),
            ("home", 0),
            ("G", last),
            ("g", 0),
            ("pagedown", last),
            ("pageup", 0),
        ):
            await press("Tool calls (3)", key)
            await wait_for(pilot, lambda e=expected: view.cursor == e, what=key)
        details = app.query_one("#toollog-details")
        await press("Tool calls (3)", "enter")
        await wait_for(pilot, lambda: details.has_class("-open"), what="enter")
        await press("Tool calls (3)", "escape")
        await wait_for(pilot, lambda: not details.has_class("-open"), what="escape")
        bar = app.query_one("#toollog-filters")
        for key in ("f", "slash"):
            await press("Tool calls (3)", key)
            await wait_for(pilot, lambda: focused_in("#filter-search"), what=key)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not bar.has_class("-open"))
            view.focus()
        await pilot.press("slash", *"third")
        await wait_for(pilot, lambda: view.filter.active)
        view.focus()
        await press("Tool calls (3)", "x")
        await wait_for(pilot, lambda: not view.filter.active and not bar.has_class("-open"))

        # --- In the chat ------------------------------------------------------------------------
        for approval_id in list(bridge.approvals.pending):
            bridge.approvals.withdraw(approval_id, "next part of the walk")
        await pilot.press("f3")
        chat = app.chat
        await wait_for(pilot, lambda: focused_in("#chat-input"))
        await press("In the chat", "ctrl+e")
        await wait_for(pilot, lambda: app.query_one("#chat-agent").expanded, what="ctrl+e")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.query_one("#chat-agent").expanded)
        chat.focus_input()
        await pilot.press(*"ask permission to run the tests")
        await press("In the chat", "enter")
        await wait_for(pilot, lambda: app.queue.pending, what="enter sends")
        await press("In the chat", "escape")  # stops the reply: its card goes away
        await wait_for(pilot, lambda: not app.queue.pending, what="escape")
        log = app.query_one("#chat-log")
        for n in range(12):
            await pilot.press(*f"line {n}", "enter")
        await wait_for(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y)
        await press("In the chat", "pageup")
        await wait_for(pilot, lambda: log.scroll_y < log.max_scroll_y, what="pageup")
        await press("In the chat", "pagedown")
        await wait_for(pilot, lambda: log.scroll_y == log.max_scroll_y, what="pagedown")
        await press("In the chat", "ctrl+n")
        await wait_for(pilot, lambda: not chat.messages, what="ctrl+n")

    listed = listed_keys(app)
    # every section of the help is walked, here or in the two tests below
    assert set(listed) == {*WALKED, "On an approval card", "Settings (F4)"}
    for title in WALKED:
        assert listed[title] <= walked[title], (title, listed[title] - walked[title])


async def test_every_card_key_the_help_lists_answers_or_moves_on_the_card(make_app, asker, store):
    from symposium_tui.screens.detail import ApprovalDetailScreen
    from symposium_tui.screens.pattern import PatternRuleScreen
    from symposium_tui.widgets.approvals import ApprovalCard

    group = "On an approval card"
    app = make_app()
    walked: set[str] = set()
    async with app.run_test(size=SIZE) as pilot:

        async def press(key: str) -> None:
            walked.add(key)
            await pilot.press(key)

        def card() -> ApprovalCard | None:
            return app.focused if isinstance(app.focused, ApprovalCard) else None

        async def first_card():
            await wait_for(pilot, lambda: app.queue.pending)
            await wait_for(  # focus again until the card is mounted and takes it
                pilot, lambda: app.queue.focus_first() and card() is app.queue.pending[0]
            )
            return app.queue.pending[0]

        tasks = [asker.ask(run_call(f"request {n}", f"c{n}"), session=f"s{n}") for n in range(3)]
        await wait_for(pilot, lambda: len(app.queue.pending) == 3)
        cards = list(app.queue.pending)
        await pilot.press("f2")
        await first_card()
        for key, expected in (("down", 1), ("up", 0), ("j", 1), ("k", 0), ("end", 2), ("home", 0)):
            await press(key)
            await wait_for(pilot, lambda e=expected: card() is cards[e], what=key)
        for key, screen in (("v", ApprovalDetailScreen), ("p", PatternRuleScreen)):
            await press(key)
            await wait_for(pilot, lambda s=screen: isinstance(app.screen, s), what=key)
            await pilot.press("escape")
            await wait_for(pilot, lambda s=screen: not isinstance(app.screen, s))
        await first_card()
        await press("d")
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "deny-reason")
        await press("escape")  # back to the card: nothing answered
        await wait_for(pilot, lambda: card() is cards[0], what="escape")
        assert not tasks[0].done()
        await pilot.press("d")
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "deny-reason")
        await press("enter")
        assert (await tasks[0]).outcome.startswith("reject")
        for key, outcome, task in (("a", "allow_once", tasks[1]), ("A", "allow_always", tasks[2])):
            await first_card()
            await press(key)
            assert (await task).outcome == outcome, key
        task = asker.ask(run_call("never", "c9"), session="s9")
        await first_card()
        await press("R")
        assert (await task).outcome == "reject_always"
        same = [asker.ask(run_call(f"same {n}", f"d{n}"), session="s10") for n in range(2)]
        await wait_for(pilot, lambda: len(app.queue.pending) == 2)
        await first_card()
        await press("s")
        assert [(await t).outcome for t in same] == ["allow_once", "allow_once"]
        task = asker.ask(run_call("last", "c10"), session="s11")
        await first_card()
        await press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="b's confirmation")
        await pilot.press("y")
        assert (await task).outcome == "allow_once"
        assert store.load().agents["claude-code"].bypass is True

    listed = listed_keys(app)[group]
    assert listed <= walked, listed - walked


async def test_every_settings_key_the_help_lists_changes_the_settings_or_opens_a_form(
    make_app, store
):
    from bridge.approvals import Rule
    from bridge.settings import AgentConfig
    from symposium_tui.screens.settings import AgentForm, RuleForm

    for agent in ("claude-code", "gemini", "codex"):
        store.upsert_agent(AgentConfig(id=agent, command="npx"))
    for title in ("one *", "two *", "three *"):
        store.add_rule(Rule("allow", title=title))
    group = "Settings (F4)"
    app = make_app()
    walked: set[str] = set()
    async with app.run_test(size=SIZE) as pilot:

        async def press(key: str) -> None:
            walked.add(key)
            await pilot.press(key)

        def settings() -> bool:
            return isinstance(app.screen, SettingsScreen)

        await wait_for(pilot, lambda: app.chat_pane() is not None)
        await pilot.press("f4")
        await wait_for(pilot, settings)
        await press("escape")
        await wait_for(pilot, lambda: not settings(), what="escape")
        await pilot.press("f4")
        await wait_for(pilot, settings)
        screen = app.screen
        await press("r")
        await wait_for(
            pilot, lambda: any(n.message == "Settings reloaded." for n in app._notifications)
        )
        agents = screen.query_one("#agents-table", DataTable)
        await wait_for(pilot, lambda: app.focused is agents and agents.row_count >= 4)

        async def on_row(table: DataTable, key: str) -> None:
            table.move_cursor(row=table.get_row_index(key))
            await wait_for(pilot, lambda: table.cursor_row == table.get_row_index(key))

        await on_row(agents, "claude-code")
        await press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what="b's confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: store.load().agents["claude-code"].bypass, what="b")
        await press("space")
        await wait_for(pilot, lambda: not store.load().agents["claude-code"].bypass, what="space")
        for key in ("e", "n"):
            await press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, AgentForm), what=key)
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
            agents.focus()
        for key, agent in (("x", "gemini"), ("delete", "codex")):
            await on_row(agents, agent)
            await press(key)  # asks first
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what=key)
            await pilot.press("y")
            await wait_for(pilot, lambda a=agent: a not in store.load().agents, what=key)
        tabs = screen.query_one("#settings-tabs")
        await press("right_square_bracket")
        await wait_for(pilot, lambda: tabs.active == "rules", what="]")
        rules = screen.query_one("#rules-table", DataTable)
        rules.focus()
        await wait_for(pilot, lambda: app.focused is rules and rules.row_count == 3)
        await press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, RuleForm), what="n")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        rules.focus()
        await press("e")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, RuleForm) and app.screen.rule is not None,
            what="e",
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        rules.focus()
        await wait_for(pilot, lambda: rules.cursor_row == 0)

        def titles() -> list[str | None]:
            return [rule.title for rule in store.load().rules]

        moved, original = ["two *", "one *", "three *"], ["one *", "two *", "three *"]
        for key, expected in (("J", moved), ("K", original), ("shift+down", moved)):
            await press(key)
            await wait_for(pilot, lambda e=expected: titles() == e, what=key)
        await press("shift+up")
        await wait_for(pilot, lambda: titles() == original, what="shift+up")
        for key, left in (("x", 2), ("delete", 1)):
            await press(key)  # asks first
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), what=key)
            await pilot.press("y")
            await wait_for(pilot, lambda n=left: len(store.load().rules) == n, what=key)
        await press("left_square_bracket")
        await wait_for(pilot, lambda: tabs.active == "agents", what="[")

    listed = listed_keys(app)[group]
    assert listed <= walked, listed - walked
