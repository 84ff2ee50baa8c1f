"""The built-in chat: a front door like VS Code, through the same bridge — replies stream in, the
whole conversation goes with every turn, approvals use the same cards, a reply can be stopped."""

from __future__ import annotations

import sys

from textual.widgets import Input, Select

from bridge import events as ev
from bridge.settings import AgentConfig
from tests.support.console import wait_for

SIZE = (80, 24)


async def open_chat(pilot):
    await pilot.pause()
    await pilot.press("f3")
    chat_input = pilot.app.query_one("#chat-input", Input)
    await wait_for(pilot, lambda: pilot.app.focused is chat_input, what="the chat input focused")
    return chat_input


async def say(pilot, text, *, type_it=False):
    """Send a message: typed key by key, or (quicker) put in the input, then Enter."""
    chat = pilot.app.chat
    before = len(chat.messages)
    if type_it:
        await pilot.press(*text)
    else:
        pilot.app.query_one("#chat-input", Input).value = text
    await pilot.press("enter")
    await wait_for(pilot, lambda: len(chat.messages) > before, what="the message to be sent")


def transcript(app):
    return [(m.kind, m.text) for m in app.chat.query("ChatMessage") if m.display]


async def card_for_tests_run(pilot, app):
    """The chat asks Eliza to run the tests; the card that asks for it, in focus in the queue
    (F2), once the chat shows the call waiting."""
    await open_chat(pilot)
    await say(pilot, "ask permission to run the tests")
    card = await wait_for(pilot, lambda: app.queue.pending and app.queue.pending[0])
    await wait_for(pilot, lambda: "\u23f3" in transcript(app)[-1][1], what="the pending call")
    await pilot.press("f2")
    await wait_for(pilot, lambda: app.focused is card)
    return card


async def test_talking_to_eliza_streams_her_reply_and_keeps_the_whole_conversation(
    make_app, bridge
):
    decisions = []
    bridge.bus.subscribe(
        lambda e: decisions.append(e.decision["kind"]) if isinstance(e, ev.HistoryDecided) else None
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "Hello", type_it=True)
        await wait_for(pilot, lambda: not app.chat.busy)
        assert ("agent", "How do you do. Please state your problem.") in transcript(app)
        await say(pilot, "I am doing well, thanks!")
        await wait_for(pilot, lambda: not app.chat.busy)
        assert ("agent", "Do you believe it is normal to be doing well thanks?") in transcript(app)
        assert [m.role for m in app.chat.messages] == ["user", "assistant", "user", "assistant"]
        assert decisions == ["new_session", "commit"]  # the second turn extended the first session


async def test_a_permission_from_the_chat_is_a_card_in_the_queue_and_approving_lets_eliza_go_on(
    make_app,
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "ask permission to run the tests")
        card = await wait_for(pilot, lambda: app.queue.pending and app.queue.pending[0])
        assert card.info.connection == app.chat.connection and card.info.agent == "eliza"
        banner = app.query_one("#chat-banner")
        await wait_for(pilot, lambda: banner.display)
        assert "Eliza (built in) asks permission: run the tests" in str(
            banner.render()
        ) and "F2" in str(banner.render())
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is card)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.chat.busy)
        assert transcript(app)[-1][1].endswith("Permission granted (allow_once). I ran the tests.")
        assert not banner.display


async def test_a_denied_permission_is_reported_by_the_agent(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "ask permission to delete the database")
        await wait_for(pilot, lambda: app.queue.pending)
        await pilot.press("f2", "d", "enter")
        await wait_for(pilot, lambda: not app.chat.busy)
        assert transcript(app)[-1][1].endswith(
            "Permission denied (reject_once). I did not run delete the database."
        )


async def test_escape_stops_a_running_reply_and_its_card_is_withdrawn(make_app):
    app = make_app(linger=3600)
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "ask permission to run the tests")
        card = await wait_for(pilot, lambda: app.queue.pending and app.queue.pending[0])
        assert app.chat.check_action("stop", ()) is True
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat.busy)
        assert transcript(app)[-1] == ("note", "Stopped.")
        await wait_for(pilot, lambda: card.state == "resolved")
        assert card.outcome_text.startswith("↶ Withdrawn")
        assert app.chat.check_action("stop", ()) is False  # nothing to stop: hidden


async def test_the_next_message_after_a_stopped_reply_starts_clean(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "ask permission to run the tests")
        await wait_for(pilot, lambda: app.queue.pending)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat.busy)
        await say(pilot, "Hello")
        await wait_for(pilot, lambda: not app.chat.busy)
        kind, text = transcript(app)[-1]
        assert kind == "agent" and text and "Permission" not in text


async def test_ctrl_n_starts_a_new_conversation(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "Hello")
        await wait_for(pilot, lambda: not app.chat.busy)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.chat.messages == []
        assert transcript(app) == [("note", "New conversation with Eliza (built in).")]
        await say(pilot, "Hello")
        await wait_for(pilot, lambda: not app.chat.busy)
        assert transcript(app)[-1] == ("agent", "How do you do. Please state your problem.")


async def test_a_configured_agent_is_offered_and_talked_to_over_stdio(make_app, store):
    store.upsert_agent(
        AgentConfig(
            id="eliza-proc",
            name="Eliza (process)",
            command=sys.executable,
            args=["-m", "symposium_tui", "eliza", "--deterministic"],
        )
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        assert [a.key for a in app.chat.agents] == ["eliza", "eliza-proc"]
        app.chat.choose_agent("eliza-proc")
        await pilot.pause()
        assert "Message Eliza (process)" in app.query_one("#chat-input", Input).placeholder
        await say(pilot, "Hello")
        await wait_for(pilot, lambda: not app.chat.busy, timeout=30)
        assert transcript(app)[-1] == ("agent", "How do you do. Please state your problem.")


async def test_a_settings_change_keeps_the_chats_agent_and_says_nothing(make_app, store):
    """Saving the settings (here: another agent added) gives the picker new options; the agent
    the chat talks to stays, and no "Now talking to …" is written for a choice nobody made."""
    for agent_id in ("claude", "gemini"):
        store.upsert_agent(AgentConfig(id=agent_id, command="/nonexistent/agent"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        chat_input = await open_chat(pilot)
        app.chat.choose_agent("claude")
        await pilot.pause()
        before = transcript(app)
        app.settings_changed(store.upsert_agent(AgentConfig(id="codex", command="/x")))
        await pilot.pause()  # every message the change caused has been handled
        assert [a.key for a in app.chat.agents] == ["eliza", "claude", "gemini", "codex"]
        assert app.chat.agent.key == "claude"
        assert app.query_one("#chat-agent", Select).value == "claude"
        assert "Message claude" in chat_input.placeholder
        assert transcript(app) == before


async def test_when_the_settings_drop_the_chats_agent_it_goes_back_to_eliza(make_app, store):
    store.upsert_agent(AgentConfig(id="claude", command="/nonexistent/agent"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        chat_input = await open_chat(pilot)
        app.chat.choose_agent("claude")
        await pilot.pause()
        app.settings_changed(store.remove_agent("claude"))
        await pilot.pause()
        assert app.chat.agent.key == "eliza"
        assert app.query_one("#chat-agent", Select).value == "eliza"
        assert chat_input.placeholder.startswith("Message Eliza (built in)")


async def test_an_agent_that_cannot_start_is_reported_in_the_chat(make_app, store):
    store.upsert_agent(AgentConfig(id="broken", command="/nonexistent/agent"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        app.chat.choose_agent("broken")
        await say(pilot, "Hello")
        await wait_for(pilot, lambda: not app.chat.busy, timeout=30)
        kind, text = transcript(app)[-1]
        assert kind == "note" and text.startswith("The agent failed:")
        assert app.focused is app.query_one("#chat-input")


async def test_a_message_while_the_agent_replies_is_not_sent(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        chat_input = await open_chat(pilot)
        await say(pilot, "ask permission to run the tests")
        await wait_for(pilot, lambda: app.queue.pending)
        await pilot.press(*"more", "enter")
        assert chat_input.value == "more"  # kept, not sent
        assert [m.role for m in app.chat.messages] == ["user"]


async def test_a_reason_typed_on_the_card_is_shown_in_the_reply_and_told_to_the_agent(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "ask permission to delete the database")
        await wait_for(pilot, lambda: app.queue.pending)
        await pilot.press("f2", "d", *"use the backup first", "enter")
        await wait_for(pilot, lambda: not app.chat.busy)
        reply = transcript(app)[-1][1]
        assert "The user denied `delete the database`: use the backup first" in reply
        assert reply.endswith("Permission denied (reject_once). I did not run delete the database.")
        waiting = [s.deny_notices for s in app.bridge.all_sessions()]
        assert ["The user denied `delete the database`: use the backup first"] in waiting


async def test_a_stopped_reply_leaves_no_pending_hourglass_on_screen(make_app):
    app = make_app(linger=3600)
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "ask permission to run the tests")
        await wait_for(pilot, lambda: app.queue.pending)
        await wait_for(pilot, lambda: "\u23f3" in transcript(app)[-1][1], what="the pending call")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat.busy)
        shown = [text for kind, text in transcript(app) if kind == "agent"]
        assert shown and not any("\u23f3" in text for text in shown), shown
        assert "\u23f3" in str(app.chat.messages[-1].content[0].value), "history kept as said"


async def test_page_up_and_down_scroll_the_conversation_while_typing(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        chat_input = await open_chat(pilot)
        for n in range(6):
            await say(pilot, f"Hello number {n}")
            await wait_for(pilot, lambda: not app.chat.busy)
        log = app.query_one("#chat-log")
        await wait_for(pilot, lambda: log.max_scroll_y > 0 and log.is_vertical_scroll_end)
        await pilot.press(*"half typed", "pageup")
        await wait_for(pilot, lambda: log.scroll_y < log.max_scroll_y, what="scrolled up")
        assert app.focused is chat_input and chat_input.value == "half typed"
        await pilot.press("pagedown", "pagedown", "pagedown")
        await wait_for(pilot, lambda: log.is_vertical_scroll_end, what="back at the end")


def test_agent_text_is_rendered_as_markdown():
    from rich.console import Console

    from symposium_tui.widgets.chat import render_agent_text

    console = Console(width=60, record=True, color_system=None, file=__import__("io").StringIO())
    console.print(render_agent_text("# Plan\n\n- first *step*\n- `make test`\n\n> quoted"))
    out = console.export_text()
    assert "Plan" in out and "# Plan" not in out, "a heading, not its hashes"
    assert "• first step" in out and "`" not in out and "*" not in out
    assert "make test" in out and "▌ quoted" in out


async def test_an_agents_markdown_is_drawn_in_the_themes_colours_and_follows_a_theme_change(
    make_app,
):
    """Rich's own markdown colours (a blue link, a magenta quote) are unreadable in some themes;
    a reply's link is the theme's primary text colour, in the theme shown now."""
    from rich.color import Color

    from symposium_tui.widgets.chat import ChatMessage

    def link_colour(message):
        for y in range(message.region.height):
            for segment in message.render_line(y):
                if "str.partition" in segment.text:
                    return segment.style.color
        return None

    def primary():
        return Color.parse(app.theme_variables["text-primary"][:7])

    app = make_app(theme="symposium-dark")
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        reply = ChatMessage("Claude Code", "see [str.partition](https://x.example)", kind="agent")
        await app.query_one("#chat-log").mount(reply)
        await wait_for(pilot, lambda: link_colour(reply) == primary(), what="the dark theme's")
        dark = primary()
        app.theme = "symposium-light"
        await wait_for(
            pilot,
            lambda: primary() != dark and link_colour(reply) == primary(),
            what="the light theme's",
        )


async def test_ctrl_e_picks_the_agent_from_the_chat_input(make_app):
    from textual.widgets import Select

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await pilot.press(*"half", "ctrl+e")
        select = app.query_one("#chat-agent", Select)
        await wait_for(pilot, lambda: select.expanded, what="the agent list open")


async def test_a_short_conversation_starts_at_the_top_and_a_long_one_follows_its_end(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        log = app.query_one("#chat-log")
        intro = log.children[0]

        def at_top(message) -> bool:
            # right under the agent bar (after the message's one-line top margin), not under
            # empty lines at the bottom of the log; the layout settles in later refreshes, so
            # this is waited for (a chat that keeps it lower never gets there and fails)
            return bool(message.region.height) and message.region.y == log.region.y + 1

        await wait_for(pilot, lambda: at_top(intro), what="the intro at the top of the log")
        await say(pilot, "Hello")
        await wait_for(pilot, lambda: not app.chat.busy)
        await wait_for(pilot, lambda: at_top(intro), what="the intro still at the top")
        for n in range(6):
            await say(pilot, f"Hello number {n}")
            await wait_for(pilot, lambda: not app.chat.busy)
        await wait_for(pilot, lambda: log.max_scroll_y > 0 and log.is_vertical_scroll_end)
        await pilot.press("ctrl+n")  # a new conversation is short again: at the top
        await wait_for(
            pilot,
            lambda: len(log.children) == 1 and at_top(log.children[0]),
            what="a new conversation's intro at the top",
        )


async def test_a_tool_call_is_one_line_that_changes_state(make_app):
    app = make_app(linger=3600)
    async with app.run_test(size=SIZE) as pilot:
        await card_for_tests_run(pilot, app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.chat.busy)
        reply = transcript(app)[-1][1]
        lines = [line for line in reply.split("\n") if "run the tests**" in line]
        assert len(lines) == 1, reply
        assert lines[0].startswith("\u2705 **run the tests** · allowed by a person ("), reply
        said = "".join(getattr(part, "value", "") for part in app.chat.messages[-1].content)
        assert "\u23f3 **run the tests**" in said, "the history keeps every state, as sent"


async def test_a_call_approved_by_a_rule_proposed_on_its_card_says_a_person_allowed_it(make_app):
    # `p` then Ctrl+S saves a rule and approves: the agent went on before the console's word
    # on who settled it came, and the line said nothing about it
    from symposium_tui.screens.pattern import PatternRuleScreen

    app = make_app(linger=3600)
    async with app.run_test(size=SIZE) as pilot:
        await card_for_tests_run(pilot, app)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not app.chat.busy)
        await wait_for(
            pilot,
            lambda: "✅ **run the tests** · allowed by a person (" in transcript(app)[-1][1],
            what="who allowed it",
        )


def screen_lines(app) -> list[str]:
    return [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]


async def test_a_rules_decision_says_by_rule_n_and_a_one_line_output_takes_one_line(
    make_app, store
):
    from bridge.approvals import Rule

    store.add_rule(Rule("allow", kind="read"))
    store.add_rule(Rule("allow", title="run the tests"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        app.settings_changed(store.load())  # the rules in effect, as F4 makes them
        await say(pilot, "ask permission to run the tests")
        await wait_for(pilot, lambda: not app.chat.busy)
        await wait_for(pilot, lambda: "by rule 2" in transcript(app)[-1][1])
        lines = screen_lines(app)
        start = next(i for i, line in enumerate(lines) if "✅ run the tests" in line)
        # The call, who allowed it, its one-line output, and the reply: no blank lines between.
        assert lines[start].endswith("✅ run the tests · allowed by rule 2"), lines
        assert lines[start + 1].endswith("↳ Ran run the tests"), lines
        assert lines[start + 2].endswith("Permission granted (allow_once). I ran the tests."), lines


async def test_a_denial_with_a_reason_is_one_line_under_its_call(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_chat(pilot)
        await say(pilot, "ask permission to delete the database")
        await wait_for(pilot, lambda: app.queue.pending)
        await pilot.press("f2", "d", *"use a backup first", "enter")
        await wait_for(pilot, lambda: not app.chat.busy)
        lines = screen_lines(app)
        start = next(i for i, line in enumerate(lines) if "❌ delete the database" in line)
        assert "❌ delete the database · denied by a person (" in lines[start], lines
        assert lines[start + 1].endswith(
            "↳ The user denied delete the database: use a backup first"
        ), lines
        assert lines[start + 2].endswith(
            "Permission denied (reject_once). I did not run delete the database."
        ), lines
