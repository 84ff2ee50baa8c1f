"""The approval queue, driven with keys as a person would: every answer, the arming delay, focus,
the alerts, approve-all, and cards that leave because someone else settled them."""

from __future__ import annotations

import asyncio
import re

from textual.widgets import Input, Static, TabbedContent, Tabs

from bridge.approvals import Rule
from symposium_tui.widgets.approvals import ApprovalCard
from tests.support.console import (
    ONCE_OPTIONS,
    drawn_card,
    edit_call,
    run_call,
    shown_text,
    tab_laid_out,
    underline_under_active_tab,
    wait_for,
)

SIZE = (80, 24)


async def pending_card(pilot, n=1):
    await wait_for(pilot, lambda: len(pilot.app.queue.pending) >= n, what=f"{n} pending card(s)")
    await pilot.pause()
    return pilot.app.queue.pending[n - 1]


async def test_a_card_shows_who_asks_what_with_the_input_the_diff_and_the_offered_options(
    make_app, asker
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        asker.ask(
            edit_call("src/calc.py"), agent="claude-code", session="s7", connection="vscodelm-3"
        )
        card = await pending_card(pilot)
        assert "claude-code" in str(card.border_title) and "s7" in str(card.border_title)
        assert "vscodelm-3" in str(card.border_title)
        text = " ".join(str(s.render()) for s in card.query("Static"))
        assert "Edit src/calc.py" in text and "[edit]" in text
        assert (
            "file_path: src/calc.py" in text and "old_string: |" in text
        )  # the input, pretty-printed
        assert "-    return a - b" in text and "+    return a + b" in text  # the diff
        assert "@@ -1,2 +1,2 @@" in text
        for label in (
            "Approve once",
            "Deny…",
            "Bypass: allow all claude-code asks (saved)",
            "Always allow: every later request of this session (agent keeps it)",
            "Always reject: every later request of this session (agent keeps it)",
            "Approve session's pending",
        ):
            assert label in text


async def test_a_approves_once_and_the_card_says_so_then_leaves(make_app, asker):
    app = make_app(linger=0.05)
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call())
        card = await pending_card(pilot)
        assert app.focused is card
        await pilot.press("a")
        resolution = await task
        assert (resolution.outcome, resolution.resolver, resolution.answer) == (
            "allow_once",
            "console",
            "approve",
        )
        assert "Approved once" in card.outcome_text
        await wait_for(pilot, lambda: not card.is_attached, what="the card to leave")
        assert app.queue.query_one("#queue-empty").display


async def test_d_then_a_reason_and_enter_denies_with_that_reason(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call("rm -rf build"))
        card = await pending_card(pilot)
        await pilot.press("d")
        reason = card.query_one("#deny-reason", Input)
        assert app.focused is reason
        await pilot.press(*"use make clean", "enter")
        resolution = await task
        assert (resolution.outcome, resolution.reason) == ("reject_once", "use make clean")
        assert "Denied: use make clean" in card.outcome_text


async def test_d_then_escape_goes_back_to_the_card_and_enter_denies_without_a_reason(
    make_app, asker
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call())
        card = await pending_card(pilot)
        await pilot.press("d", *"not", "escape")
        await wait_for(pilot, lambda: card.state == "pending" and not card.query(".card-reason"))
        assert not task.done(), "Esc answered nothing"
        assert card.has_focus, "the card, not the reason input, has the keys again"
        footer = " ".join(
            b.binding.description for b in app.active_bindings.values() if b.binding.show
        )
        assert "Back to the card" not in footer and "Approve" in footer
        await pilot.press("d", "enter")
        resolution = await task
        assert (resolution.outcome, resolution.reason) == ("reject_once", None)


def type_at_once(app, keys: list[tuple[str, str | None]]) -> None:
    """Keys as the terminal driver hands them over from one read: all queued before any is
    handled (`pilot.press` lets the app settle after each key)."""
    from textual import events

    for key, char in keys:
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


async def test_keys_typed_together_with_d_are_the_reasons_and_enter_denies(make_app, asker):
    """A terminal hands over keys typed quickly in one read: "d", then the reason and Enter
    arrive before the reason field has mounted and taken focus. They are the reason's — the Enter
    used to be lost (the card, still focused, ignored it) and the field could end up without
    focus, so every key after it went nowhere."""
    app = make_app(arm_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        first = asker.ask(run_call("one"), session="s1")
        card = await pending_card(pilot)
        await wait_for(pilot, lambda: app.focused is card)
        type_at_once(app, [("d", "d"), ("enter", "\r")])
        await wait_for(pilot, first.done, what="the first card denied")
        resolution = first.result()
        assert (resolution.outcome, resolution.reason) == ("reject_once", None)

        second = asker.ask(run_call("two", call_id="call-3"), session="s2")
        card = await wait_for(pilot, lambda: app.queue.pending and app.queue.pending[0])
        await wait_for(pilot, lambda: app.focused is card)
        typed = [("d", "d"), *((c if c != " " else "space", c) for c in "not now")]
        type_at_once(app, [*typed, ("backspace", None), ("enter", "\r")])
        await wait_for(pilot, second.done, what="the second card denied")
        resolution = second.result()
        assert (resolution.outcome, resolution.reason) == ("reject_once", "not no")


async def test_b_bypasses_the_agent_saves_it_and_its_next_request_needs_no_card(
    make_app, asker, store
):
    from symposium_tui.screens.confirm import ConfirmBypass

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.settings_changed(store.add_rule(Rule("ask", command="deploy")))  # asks even bypass
        first = asker.ask(run_call(), agent="claude-code")
        card = await pending_card(pilot)
        assert "bypass" not in app.sub_title and not card.border_subtitle
        # `b` alone turns nothing on: it asks, and says what bypass covers
        await pilot.press("b")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ConfirmBypass) and app.screen.query("#confirm-text"),
        )
        text = str(app.screen.query_one("#confirm-text").render())
        for said in (
            "Turn bypass on for claude-code?",
            "Every later request of claude-code is approved without a card",
            "this agent only",
            "Saved in the settings file",
            "until you turn it off",
            "Deny and ask rules still apply to it: rule 1",
            "This request is approved now.",
        ):
            assert said in " ".join(text.split()), said
        await pilot.press("n")  # keep asking: nothing changed
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmBypass))
        assert card.state == "pending" and not first.done()
        assert "claude-code" not in store.load().agents
        assert "claude-code" not in app.bridge.approvals.policy.bypass_agents
        # the key right after `a` on the card (`b` pressed twice by a slip) does not confirm
        await pilot.press("b", "b", "a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmBypass))
        assert card.state == "pending" and not first.done()
        await pilot.press("y")
        assert (await first).outcome == "allow_once"
        assert "claude-code is always allowed" in card.outcome_text
        assert store.load().agents["claude-code"].bypass is True
        second = await asker.ask(run_call("again"), agent="claude-code")
        assert (second.resolver, second.outcome) == ("policy", "allow_once")
        assert not app.queue.pending
        # while it is on, the header says so, and so does every card of that agent
        await wait_for(pilot, lambda: "⚠ bypass on: claude-code" in app.sub_title)
        asker.ask(run_call("deploy", call_id="call-9"), agent="claude-code")
        asked = await pending_card(pilot)
        assert "⚠ bypass on for claude-code" in str(asked.border_subtitle)
        other = asker.ask(run_call("deploy", call_id="call-10"), agent="gemini")
        await wait_for(pilot, lambda: len(app.queue.pending) == 2)
        assert not app.queue.pending[1].border_subtitle  # another agent's card
        # turned off (Settings, or the file): the header and the card follow
        app.settings_changed(store.set_agent_bypass("claude-code", False))
        await wait_for(pilot, lambda: "bypass" not in app.sub_title)
        assert not asked.border_subtitle
        other.cancel()


async def test_the_agents_own_always_options_are_A_and_R(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        allow = asker.ask(run_call("one"), session="s1")
        card = await pending_card(pilot)
        legend = " ".join(str(card.query_one(".card-keys").render()).split())
        assert "A Always allow: every later request of this session (agent keeps it)" in legend
        await pilot.press("A")
        assert (await allow).outcome == "allow_always"
        reject = asker.ask(run_call("two"), session="s2")
        # the next card takes focus a refresh after it mounts; a key before that reaches the queue
        await wait_for(
            pilot,
            lambda: (
                app.queue.pending
                and app.queue.pending[0].info.session_id == "s2"
                and app.focused is app.queue.pending[0]
            ),
        )
        await pilot.press("R")
        assert (await reject).outcome == "reject_always"


async def test_keys_the_agent_did_not_offer_are_hidden_and_do_nothing(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call(), options=ONCE_OPTIONS)
        card = await pending_card(pilot)
        shown = {
            b.binding.key
            for b in app.screen.active_bindings.values()
            if b.binding.show and b.enabled
        }
        assert {"a", "d", "b"} <= shown
        assert card.check_action("answer", ("allow_always",)) is False  # False: hidden
        assert card.check_action("answer", ("reject_always",)) is False
        legend = str(card.query_one(".card-keys").render())
        assert "agent keeps it" not in legend
        await pilot.press("A", "R")
        assert not task.done() and card.state == "pending"


async def test_on_a_narrow_card_a_long_choice_wraps_under_its_label_not_its_key(make_app, asker):
    app = make_app()
    async with app.run_test(size=(44, 30)) as pilot:
        asker.ask(run_call("one"), session="s1")
        card = await pending_card(pilot)
        lines = str(card.query_one(".card-keys").render()).splitlines()
        assert any("agent keeps it" in line for line in lines)
        for line in lines:  # a key and its label, or the rest of the label under the label
            assert re.match(r" \S+  \S| {4}\S", line), lines
        assert sum(1 for line in lines if line.startswith("    ")) >= 2, lines


async def test_a_card_ignores_keys_until_it_is_armed(make_app, asker):
    app = make_app(arm_delay=3600)
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call())
        card = await pending_card(pilot)
        assert not card.armed and "arming" in str(card.query_one(".card-keys").render())
        assert card.check_action("answer", ("approve",)) is None  # shown, dimmed
        await pilot.press("a", "d", "b")
        assert not task.done() and card.state == "pending"
        card.arm_delay = 0.05
        card.rearm()
        await wait_for(pilot, lambda: card.armed, what="the card to arm")
        await pilot.press("a")
        assert (await task).outcome == "allow_once"


async def test_focus_moving_to_the_next_card_by_itself_rearms_it(make_app, asker):
    app = make_app(arm_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        first = asker.ask(run_call("one"), session="s1")
        second = asker.ask(run_call("two"), session="s2")
        await pending_card(pilot, 2)
        app.queue.arm_delay = 3600
        for card in app.queue.pending:
            card.arm_delay = 3600
        await pilot.press("a")  # answers the first; focus moves to the second, which re-arms
        assert (await first).outcome == "allow_once"
        await wait_for(
            pilot,
            lambda: isinstance(app.focused, ApprovalCard) and app.focused.info.session_id == "s2",
        )
        await pilot.press("a")  # a double press meant for the first card
        assert not second.done()


async def test_a_card_that_lost_focus_to_nothing_gets_it_back_when_the_queue_is_shown(
    make_app, asker
):
    """Textual blurs a widget a Hide event reaches, and when the card is not in the focus chain
    just then, focus goes nowhere: F2 from Settings as a card arrived could leave the queue shown
    with nothing focused, so the next key answered nothing."""
    from textual.widgets import TabPane

    app = make_app(arm_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call())
        card = await pending_card(pilot)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is card)
        pane = app.query_one("#approvals", TabPane)
        pane.display = False  # the card leaves the focus chain and is hidden: focus goes nowhere
        await wait_for(pilot, lambda: app.focused is None, what="focus gone")
        pane.display = True
        await wait_for(pilot, lambda: app.focused is card, what="the card focused again")
        await pilot.press("a")
        assert (await task).outcome == "allow_once"


async def test_a_card_says_why_the_rules_asked_a_person(make_app, asker, store):
    """What the rules could not settle says so on its card and in its full view (v): the ask rule
    that caught it, or the deny rule that might match a command it cannot read in full."""
    from symposium_tui.screens.detail import ApprovalDetailScreen

    app = make_app(arm_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        store.add_rule(Rule("ask", command="deploy"))
        app.settings_changed(store.add_rule(Rule("deny", command="git push")))
        asker.ask(run_call("deploy --prod"), session="s1")
        card = await drawn_card(pilot)
        why = shown_text(card.query(".card-why"))
        assert why.startswith("asked by rule 1") and "ask command=deploy" in why, why
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalDetailScreen))
        assert "asked by rule 1" in shown_text(app.screen.query(Static))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalDetailScreen))
        await pilot.press("d", "enter")  # deny it: the next card comes first
        asker.ask(run_call('"$TOOL" push', call_id="call-3"), session="s2")
        await wait_for(pilot, lambda: [c.info.session_id for c in app.queue.pending] == ["s2"])
        card = await drawn_card(pilot)
        why = shown_text(card.query(".card-why"))
        assert why.startswith("asked because rule 2") and "might match" in why, why
        # A call no rule speaks of is an ordinary question: no line.
        asker.ask(run_call("make test", call_id="call-4"), session="s3")
        await wait_for(pilot, lambda: len(app.queue.pending) == 2)
        plain = app.queue.pending[1]
        await wait_for(pilot, lambda: plain.is_mounted)
        assert not plain.query(".card-why")


async def test_a_new_card_never_takes_focus_from_the_chat_input(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        chat_input = app.query_one("#chat-input", Input)
        await wait_for(pilot, lambda: app.focused is chat_input)
        task = asker.ask(run_call())
        await pending_card(pilot)
        await pilot.press("a", "b", "d")
        assert app.focused is chat_input
        assert chat_input.value == "abd"
        assert not task.done()


async def test_a_new_card_rings_the_bell_flashes_the_title_and_counts_in_the_tab_and_header(
    make_app, asker
):
    app = make_app()
    titles = app.alerts.titles  # every title the console gave the terminal, in order
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        asker.ask(run_call("deploy"), agent="claude-code", session="s1")
        await pending_card(pilot)
        asker.ask(run_call("migrate"), agent="claude-code", session="s2")
        await pending_card(pilot, 2)
        assert app.bells == 2
        # The title flashes what is asked (the steady title alone would not do), then settles.
        assert "⚠ claude-code asks: deploy" in titles
        assert "⚠ claude-code asks: migrate" in titles
        tab = app.query_one("#tabs").get_tab("approvals")
        assert str(tab.label) == "Approvals (2)"
        assert app.sub_title == "2 pending approvals"
        await wait_for(
            pilot,
            lambda: app.terminal_title == "(2) Symposium — approval pending",
            what="steady title",
        )
        banner = app.query_one("#chat-banner")
        assert not banner.display  # the chat's own requests only


async def test_the_tab_underline_spans_the_shown_tab_as_the_approvals_count_comes_and_goes(
    make_app, asker, bridge
):
    """A count that comes or goes ("Approvals (1)" → "Approvals") changes the tab's width and moves
    the tabs after it: once the tab bar is laid out with the new label, its underline spans the
    shown tab (Approvals or one after it), also when the count changed under the settings screen."""
    app = make_app()
    asked = 0
    async with app.run_test(size=SIZE) as pilot:
        tabbed = app.query_one("#tabs", TabbedContent)
        approvals = tabbed.get_tab("approvals")
        tab_bar = tabbed.query_one(Tabs)

        async def change_count(count: int) -> None:
            nonlocal asked
            while len(bridge.approvals.pending) < count:
                asked += 1
                before = len(bridge.approvals.pending)
                asker.ask(run_call(f"step {asked}", f"call-{asked}"), session=f"s{asked}")
                await wait_for(pilot, lambda n=before: len(bridge.approvals.pending) > n)
            while len(bridge.approvals.pending) > count:
                bridge.approvals.withdraw(next(iter(bridge.approvals.pending)), "cancelled")
            await wait_for(pilot, lambda: len(app.queue.pending) == count, what=f"{count} card(s)")

        async def underline_follows(count: int) -> None:
            label = f"Approvals ({count})" if count else "Approvals"
            await wait_for(
                pilot,
                lambda: approvals.label.plain == label and tab_laid_out(approvals),
                what=f"the tab laid out as {label!r}",
            )
            await wait_for(
                pilot,
                lambda: underline_under_active_tab(tab_bar),
                what=f"the underline under the {tabbed.active} tab after {label!r}",
            )

        for shown in ("approvals", "chat"):
            app.action_show_tab(shown)
            for count in (1, 0, 2, 1, 0, 1, 0):
                await change_count(count)
                await underline_follows(count)
        # Under the settings screen the console's screen is not laid out: the tab gets its width
        # (and the underline its place) when the person comes back.
        for shown, count in (("approvals", 1), ("approvals", 0), ("chat", 2), ("chat", 0)):
            app.action_show_tab(shown)
            await pilot.press("f4")
            await wait_for(pilot, lambda: len(app.screen_stack) == 2, what="the settings screen")
            await change_count(count)
            sections = app.screen.query_one("#settings-tabs", TabbedContent)
            for _ in range(3):  # the person goes through the settings meanwhile
                section = sections.active
                await pilot.press("right_square_bracket")
                await wait_for(
                    pilot, lambda s=sections, was=section: s.active != was, what="the next section"
                )
            await pilot.press("escape")
            await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="back to the console")
            await underline_follows(count)


async def test_giving_a_tab_its_own_label_again_puts_a_wrong_underline_right(make_app):
    """What the console leans on to put the underline right after a relabel: Textual moves the
    underline when a tab is relabelled, also to the label it has. If Textual stops doing so, this
    fails (and the underline could stay under an old label)."""
    from textual.widgets._tabs import Underline

    from symposium_tui.app import realign_tab_underline

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        tabbed = app.query_one("#tabs", TabbedContent)
        tab_bar = tabbed.query_one(Tabs)
        underline = tab_bar.query_one(Underline)
        await wait_for(pilot, lambda: underline_under_active_tab(tab_bar), what="the underline")
        underline.highlight_start, underline.highlight_end = 20, 30
        await pilot.pause()
        assert not underline_under_active_tab(tab_bar)  # nothing else puts it right
        realign_tab_underline(tabbed.get_tab("approvals"))
        await wait_for(
            pilot, lambda: underline_under_active_tab(tab_bar), what="the underline put right"
        )


async def test_s_approves_every_pending_card_of_that_session_only(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        a1 = asker.ask(run_call("one"), session="s1")
        a2 = asker.ask(run_call("two"), session="s1")
        other = asker.ask(run_call("three"), session="s2")
        await pending_card(pilot, 3)
        await pilot.press("s")
        assert (await a1).outcome == "allow_once" and (await a2).outcome == "allow_once"
        assert not other.done()
        assert [c.info.session_id for c in app.queue.pending] == ["s2"]


async def test_a_withdrawn_card_says_so_and_leaves_the_queue(make_app, asker, bridge):
    app = make_app(linger=3600)
    async with app.run_test(size=SIZE) as pilot:
        asker.ask(run_call())
        card = await pending_card(pilot)
        bridge.approvals.withdraw(card.info.approval_id, "the turn was cancelled")
        await wait_for(pilot, lambda: card.state == "resolved")
        assert card.outcome_text == "↶ Withdrawn: the turn was cancelled"
        assert app.queue.pending == []
        await wait_for(
            pilot, lambda: str(app.query_one("#tabs").get_tab("approvals").label) == "Approvals"
        )
        card_id = card.info.approval_id
        app.queue.linger = 0
        app.queue._drop(card)
        await pilot.pause()
        assert app.queue.card(card_id) is None


async def test_a_card_answered_by_another_console_says_so(make_app, asker, bridge):
    app = make_app(linger=3600)
    async with app.run_test(size=SIZE) as pilot:
        other = bridge.approvals.attach("laptop")
        asker.ask(run_call())
        card = await pending_card(pilot)
        other.answer(card.info.approval_id, "deny")
        await wait_for(pilot, lambda: card.state == "resolved")
        assert card.outcome_text.startswith("Answered by laptop: reject_once")
        await pilot.press("a")  # too late: nothing happens, nothing breaks
        other.detach()


async def test_f2_jumps_from_the_chat_to_the_queue_and_answering_the_last_card_goes_back(
    make_app, asker
):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        chat_input = app.query_one("#chat-input", Input)
        await pilot.press(*"half-typed")
        task = asker.ask(run_call())
        card = await pending_card(pilot)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is card)
        assert app.query_one("#tabs").active == "approvals"
        await pilot.press("a")
        await task
        await wait_for(pilot, lambda: app.focused is chat_input, what="focus back in the chat")
        assert app.query_one("#tabs").active == "chat" and chat_input.value == "half-typed"


async def test_escape_in_the_queue_goes_back_to_where_f2_came_from(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.action_show_tab("toolcalls")
        await pilot.pause()
        asker.ask(run_call())
        card = await pending_card(pilot)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is card)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "toolcalls")
        assert card.state == "pending"


async def test_up_and_down_move_between_cards(make_app, asker):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        asker.ask(run_call("one"), session="s1")
        asker.ask(run_call("two"), session="s2")
        first = await pending_card(pilot)
        second = await pending_card(pilot, 2)
        assert app.focused is first
        await pilot.press("down")
        assert (
            app.focused is second
            and second.has_class("-current")
            and not first.has_class("-current")
        )
        await pilot.press("up")
        assert app.focused is first


async def test_v_shows_the_whole_request_and_its_keys_still_answer(make_app, asker):
    long_input = {"command": "\n".join(f"echo {n}" for n in range(40))}
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(
            {"toolCallId": "t", "title": "long script", "kind": "execute", "rawInput": long_input}
        )
        card = await pending_card(pilot)
        assert "more lines (v views all)" in str(card.query_one(".card-input").render())
        await pilot.press("v")
        from symposium_tui.screens.detail import ApprovalDetailScreen

        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalDetailScreen))
        shown = " ".join(str(s.render()) for s in app.screen.query("Static"))
        assert "echo 39" in shown
        await pilot.press("a")
        assert (await task).outcome == "allow_once"


async def test_d_in_the_full_view_and_deny_from_the_palette_open_the_reason_on_the_card(
    make_app, asker
):
    from symposium_tui.screens.detail import ApprovalDetailScreen

    app = make_app(arm_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        first = asker.ask(run_call("one"), session="s1")
        await pending_card(pilot)
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalDetailScreen))
        await pilot.press("d")
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "deny-reason")
        await pilot.press(*"no", "enter")
        assert ((await first).outcome, (await first).reason) == ("reject_once", "no")

        second = asker.ask(run_call("two", call_id="call-3"), session="s2")
        await wait_for(pilot, lambda: app.queue.pending)
        app.action_show_tab("sessions")
        app.answer_current("deny")  # the palette's "Approvals: deny"
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "deny-reason")
        await pilot.pause()  # the tab switches' own messages settled (a person types after them)
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "deny-reason")
        await pilot.press(*"later", "enter")
        assert ((await second).outcome, (await second).reason) == ("reject_once", "later")


async def test_a_card_taking_a_reason_that_loses_focus_gets_it_back_in_its_field(make_app, asker):
    """The palette's deny may open the field while the queue is still hidden (the field cannot
    take focus there); the queue gives focus back to the card once shown, and the card hands it
    on to the field it has open."""
    app = make_app(arm_delay=0.0)
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call("one"))
        await pending_card(pilot)
        await pilot.press("d")
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "deny-reason")
        app.set_focus(None)  # lost to nothing: the queue gives it back to the card
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "deny-reason")
        await pilot.press(*"ok", "enter")
        assert ((await task).outcome, (await task).reason) == ("reject_once", "ok")


async def test_the_full_view_of_an_arming_card_shows_its_keys_usable_once_it_is_armed(
    make_app, asker
):
    from textual.widgets._footer import FooterKey

    from symposium_tui.screens.detail import ApprovalDetailScreen

    app = make_app(arm_delay=3600)
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call())
        card = await pending_card(pilot)
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalDetailScreen))

        def approve_key_enabled() -> bool | None:
            keys = [k for k in app.screen.query(FooterKey) if k.key == "a"]
            return not keys[0].has_class("-disabled") if keys else None

        await wait_for(pilot, lambda: approve_key_enabled() is False, what="a dimmed Approve")
        card.arm_delay = 0.05
        card.rearm()
        await wait_for(pilot, lambda: card.armed, what="the card to arm")
        await wait_for(pilot, lambda: approve_key_enabled() is True, what="Approve usable")
        await pilot.press("a")
        assert (await task).outcome == "allow_once"


async def test_quitting_with_cards_pending_asks_first_then_denies_them_as_closed(make_app, asker):
    from symposium_tui.screens.confirm import ConfirmQuit

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        task = asker.ask(run_call())
        await pending_card(pilot)
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmQuit), what="the question")
        text = str(app.screen.query_one("#confirm-text").render())
        assert "1 approval is waiting" in text and "denies it" in text
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmQuit))
        assert app.is_running and not task.done(), "staying answers nothing"
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmQuit))
        await pilot.press("y")
        resolution = await task
    assert (resolution.outcome, resolution.resolver) == ("reject_once", "default")
    assert resolution.reason == "the console was closed"


async def test_approvals_pending_before_the_console_started_get_cards(make_app, asker, bridge):
    holder = bridge.approvals.attach("earlier")  # someone holds it, so it waits
    task = asker.ask(run_call())
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        card = await pending_card(pilot)
        await pilot.press("a")
        assert (await task).outcome == "allow_once"
        assert card.state == "resolved"
    holder.detach()


async def test_an_editors_agent_asking_permission_waits_for_the_card_and_goes_on_when_approved(
    make_app, bridge
):
    """The editor's side, as VS Code's relay drives it: a chat on a connection of its own."""
    import asyncio

    from bridge.protocol import Message
    from bridge.sessions import ResponseStream

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        editor = bridge.open_connection("vscodelm")
        parts = []
        request = editor.make_request(
            "r1",
            {"eliza": {"deterministic": True}},
            [
                Message.model_validate(
                    {
                        "role": "user",
                        "content": [{"type": "text", "value": "ask permission to format the code"}],
                    }
                )
            ],
            [],
        )
        stream = ResponseStream("r1", parts.append)
        turn = asyncio.ensure_future(editor.chat(request, stream))
        card = await pending_card(pilot)
        assert card.info.connection == editor.name and card.info.title == "format the code"
        assert not turn.done()
        await pilot.press("a")
        await asyncio.wait_for(turn, 10)
        assert "".join(p["value"] for p in parts).endswith(
            "Permission granted (allow_once). I ran format the code."
        )


async def test_p_proposes_a_rule_for_the_pattern_edits_it_saves_it_and_approves(
    make_app, asker, store
):
    from textual.widgets import TextArea

    from symposium_tui.screens.pattern import PatternRuleScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        task = asker.ask(run_call("git status -s"))
        card = await pending_card(pilot)
        legend = str(card.query_one(".card-keys").render())
        # the scope is on the card before the key is pressed
        assert "Rule: always allow commands starting `git status` by claude-code" in legend
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))
        editor = app.screen.query_one("#pattern-rule", TextArea)
        assert 'command = "git status"' in editor.text
        assert '{agent = "claude-code", kind = "execute", command = "git status -s"}' in editor.text
        editor.text = editor.text.replace('command = "git status"', 'command = "git diff"')
        await pilot.press("ctrl+s")  # its own example fails: shown, nothing saved
        error = app.screen.query_one("#pattern-error")
        await wait_for(pilot, lambda: "does not match its example" in str(error.render()))
        assert store.load().rules == [] and not task.done()
        editor.text = editor.text.replace('command = "git diff"', 'command = "git"')
        await pilot.press("ctrl+s")
        resolution = await task
        assert (resolution.outcome, resolution.answer) == ("allow_once", "approve")
        assert resolution.reason.startswith("saved rule 1: "), resolution.reason  # audited
        (rule,) = store.load().rules
        assert (rule.action, rule.agent, rule.command) == ("allow", "claude-code", ("git",))
        assert rule.match == [
            {"agent": "claude-code", "kind": "execute", "command": "git status -s"}
        ]
        again = await asker.ask(run_call("git log --oneline", call_id="call-3"))
        assert (again.resolver, again.outcome) == ("policy", "allow_once")


async def test_ctrl_s_typed_right_behind_an_edit_saves_the_rule_as_the_editor_shows_it(
    make_app, asker, store
):
    """Ctrl+S is a key the screen takes before any widget: typed in one read right behind an edit
    (type-ahead over a slow link), it used to save the text as it was before the edit reached
    the editor — a rule other than the one on screen, and the card approved by it."""
    from textual.widgets import TextArea

    from symposium_tui.screens.pattern import PatternRuleScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        task = asker.ask(run_call("git status -s"))
        await pending_card(pilot)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))
        editor = app.screen.query_one("#pattern-rule", TextArea)
        editor.move_cursor(editor.document.end)
        typed = [("enter", "\r"), *((c if c != " " else "space", c) for c in "bogus = 1")]
        type_at_once(app, [*typed, ("ctrl+s", None)])
        error = app.screen.query_one("#pattern-error")
        await wait_for(pilot, lambda: "bogus" in str(error.render()), what="the field refused")
        assert editor.text.rstrip().endswith("bogus = 1")
        assert store.load().rules == [] and not task.done()
        task.cancel()


async def test_p_on_a_destructive_command_proposes_it_exactly_and_warns_when_edited_broad(
    make_app, asker, store
):
    from textual.widgets import TextArea

    from symposium_tui.screens.pattern import PatternRuleScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        task = asker.ask(run_call("rm -rf build"))
        card = await pending_card(pilot)
        legend = str(card.query_one(".card-keys").render())
        assert "Rule: always allow exactly `rm -rf build` by claude-code" in legend
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))
        editor = app.screen.query_one("#pattern-rule", TextArea)
        assert 'command = "rm -rf build $"' in editor.text
        note = app.screen.query_one("#pattern-breadth")
        assert "Narrow: it allows exactly this command" in str(note.render())
        editor.text = editor.text.replace('command = "rm -rf build $"', 'command = "rm"')
        await wait_for(pilot, lambda: "⚠ Broad: `rm` with any arguments" in str(note.render()))
        editor.text = editor.text.replace('command = "rm"', 'command = "rm -rf build $"')
        await wait_for(pilot, lambda: "Narrow" in str(note.render()))
        await pilot.press("ctrl+s")
        assert (await task).outcome == "allow_once"
        (rule,) = store.load().rules
        assert rule.command == ("rm -rf build $",)
        # one more argument is not what was allowed: a card asks
        asker.ask(run_call("rm -rf build /", call_id="call-3"))
        await wait_for(pilot, lambda: len(app.queue.pending) == 1)
        assert app.queue.pending[0].info.title == "rm -rf build /"


async def test_a_proposed_rule_says_when_it_cannot_stop_the_next_card_for_the_same_request(
    make_app, asker, store, tmp_path
):
    """A card a deny or ask rule sent to a person (here: a search of a folder that holds a denied
    one) comes back however many allow rules are saved: the proposal says so; a plain card's
    does not."""
    from symposium_tui.screens.pattern import PatternRuleScreen

    (tmp_path / "proj" / "secret").mkdir(parents=True)

    def search(call_id: str) -> dict:
        path = str(tmp_path / "proj")
        raw = {"pattern": "key", "path": path}
        return {"toolCallId": call_id, "title": f"Grep {path}", "kind": "search", "rawInput": raw}

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.settings_changed(store.add_rule(Rule("deny", path=str(tmp_path / "proj" / "secret"))))
        task = asker.ask(search("call-2"))
        await drawn_card(pilot)  # (a card joins the queue a moment before its keys work)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))
        note = shown_text(app.screen.query("#pattern-still-asked"))
        assert "does not stop the next card" in note and "rule 1 (line " in note, note
        await pilot.press("ctrl+s")  # saved anyway, as the person chose: it approves this one
        assert (await asyncio.wait_for(task, 30)).outcome == "allow_once"
        assert [r.action for r in store.load().rules] == ["deny", "allow"]
        again = asker.ask(search("call-3"))
        await drawn_card(pilot, call_id="call-3")  # asked again, as it said
        await pilot.press("d", "enter")
        assert (await asyncio.wait_for(again, 30)).outcome == "reject_once"
        plain = asker.ask(run_call("make test", call_id="call-4"))
        await drawn_card(pilot, call_id="call-4")
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))
        assert not app.screen.query("#pattern-still-asked")
        await pilot.press("escape")
        plain.cancel()


async def test_escape_on_the_proposed_rule_saves_nothing_and_the_card_stays(make_app, asker, store):
    from symposium_tui.screens.pattern import PatternRuleScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        task = asker.ask(edit_call("/tmp/project/src/calc.py"))
        card = await pending_card(pilot)
        assert "edit inside /tmp/project/src" in str(card.query_one(".card-keys").render())
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PatternRuleScreen))
        assert store.load().rules == [] and not task.done() and card.state == "pending"


async def test_approval_fatigue_is_counted_per_pattern_and_a_run_suggests_a_rule_never_applied(
    make_app, asker, store
):
    from textual.widgets import DataTable

    from symposium_tui.screens.fatigue import ApprovalStatsScreen
    from symposium_tui.screens.pattern import PatternRuleScreen

    app = make_app(linger=0.0)
    async with app.run_test(size=(120, 30)) as pilot:
        denied = asker.ask(run_call("git status", call_id="c0"))
        card = await pending_card(pilot)
        await pilot.press("d", "enter")  # denied: no run yet
        await denied
        for i, command in enumerate(
            ["git status -s", "git status", "git status -b", "git status", "git status ."], 1
        ):
            task = asker.ask(run_call(command, call_id=f"c{i}"))
            await wait_for(pilot, lambda: any(c.state == "pending" for c in app.queue.pending))
            card = next(c for c in app.queue.pending if c.state == "pending")
            card.focus()
            await pilot.press("a")
            assert (await task).outcome == "allow_once"
            suggested = [n for n in app._notifications if n.title == "Rule suggested"]
            assert bool(suggested) == (i == 5), i
        stats = app.fatigue.patterns["commands starting `git status` by claude-code"]
        assert (stats.asked, stats.approved, stats.denied, stats.in_a_row) == (6, 5, 1, 5)
        assert len(stats.seconds) == 6 and stats.median_seconds is not None
        assert store.load().rules == [], "a suggestion is never applied on its own"
        app.action_approval_stats()
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ApprovalStatsScreen)
                and bool(app.screen.query("#stats-table"))
                and app.screen.query_one("#stats-table", DataTable).row_count == 1
            ),
        )
        table = app.screen.query_one("#stats-table", DataTable)
        row = table.get_row("commands starting `git status` by claude-code")
        assert row[1:5] == ["6", "5", "1", "5"] and row[6] == "suggested (r)"
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: store.load().rules != [])
        (rule,) = store.load().rules
        assert rule.command == ("git status",) and rule.agent == "claude-code"


def test_a_denial_ends_a_run_of_approvals() -> None:
    from symposium_tui.state.fatigue import FatigueStats

    stats = FatigueStats(threshold=2)
    call = run_call("ls -la")
    events = [
        ("approve", None),
        ("approve", "suggest"),
        ("deny", None),
        ("approve", None),
        ("approve", "suggest"),
    ]
    for i, (answer, expect) in enumerate(events):
        stats.requested(str(i), "a", call, ts=10.0 * i)
        outcome = "allow_once" if answer == "approve" else "reject_once"
        worth = stats.resolved(str(i), outcome, "console", ts=10.0 * i + 1.5)
        assert (worth is not None) == (expect == "suggest"), i
    stats.requested("p", "a", call, ts=0.0)
    assert stats.resolved("p", "allow_once", "policy", ts=1.0) is None  # not a person: not counted
    (row,) = stats.rows()
    assert (row.key, row.asked, row.approved, row.denied, row.in_a_row) == (
        "commands starting `ls` by a",
        6,
        4,
        1,
        2,
    )
    assert row.median_seconds == 1.5


async def test_the_three_ways_not_to_be_asked_again_are_told_apart_on_the_card_footer_and_f1(
    make_app, asker
):
    """b (bypass the agent, saved), A (the agent's own always, kept by the agent) and p (a rule
    for requests like this one) each say what they keep, where a newcomer looks."""
    from symposium_tui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        asker.ask(run_call("git status -s"))
        card = await pending_card(pilot)
        legend = str(card.query_one(".card-keys").render())
        for said in (
            "b  Bypass: allow all claude-code asks (saved)",
            "A  Always allow: every later request of this session (agent keeps it)",
            "p  Rule: always allow commands starting `git status` by claude-code…",
        ):
            assert said in legend, legend

        def footer() -> str:
            return " ".join(str(k.render()) for k in app.screen.query("FooterKey"))

        keys = ("b Bypass", "A Agent's always", "p Rule…", "f2 Queue")
        # the footer follows the focus on the card once the screen has refreshed its bindings
        await wait_for(pilot, lambda: all(said in footer() for said in keys), what="the footer")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = shown_text(app.screen.query("Static"))
        for said in (
            "every later request of this agent too",
            "every later request of this session it covers",
            "A rule for requests like this one",
            "Three ways not to be asked again",
        ):
            assert said in text, said


async def test_the_palettes_rule_command_opens_the_cards_proposal_with_its_own_footer(
    make_app, asker
):
    from symposium_tui.screens.pattern import PatternRuleScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        asker.ask(run_call("git status -s"))
        await pending_card(pilot)
        (command,) = [
            c
            for c in app.get_system_commands(app.screen)
            if c.title == "Approvals: rule for requests like this one"
        ]
        command.callback()
        await wait_for(pilot, lambda: isinstance(app.screen, PatternRuleScreen))

        def footer() -> str:
            return " ".join(str(k.render()) for k in app.screen.query("FooterKey"))

        await wait_for(pilot, lambda: "esc Cancel" in footer(), what="the screen's own footer")
        assert "Save and approve" in footer(), footer()
        assert "Approve" not in footer().replace("Save and approve", ""), footer()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PatternRuleScreen))


async def test_f2_the_moment_a_card_is_added_focuses_it(make_app):
    """F2 can come in the same moment a card is added, before its mount has finished: the card
    still ends up focused (focus given to a widget with no screen yet is dropped by Textual)."""
    from symposium_tui.widgets.approvals import ApprovalInfo

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")  # the queue out of sight: it must not take the focus by itself
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "chat")
        info = ApprovalInfo("a1", "c1", "s1", "eliza", run_call("make deploy"), ONCE_OPTIONS)
        card = app.queue.add(info)
        assert card is not None and not card.is_mounted  # the same tick: its mount is under way
        app.action_queue()
        await wait_for(pilot, lambda: app.focused is card, what="the new card focused")


async def test_two_cards_arriving_in_one_refresh_leave_the_oldest_focused(make_app):
    """Both cards ask for focus before either has it: the oldest (the current one) must end up
    focused, or keys meant for it answer the newer request."""
    from symposium_tui.widgets.approvals import ApprovalInfo

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "approvals")
        older = app.queue.add(
            ApprovalInfo("a1", "c1", "s1", "eliza", run_call("one"), ONCE_OPTIONS)
        )
        newer = app.queue.add(
            ApprovalInfo("a2", "c1", "s2", "eliza", run_call("two"), ONCE_OPTIONS)
        )
        await wait_for(pilot, lambda: app.focused in (older, newer), what="a card focused")
        await pilot.pause()
        assert app.focused is older and app.queue.current is older


async def test_what_the_agent_runs_under_its_own_always_allow_is_audited_like_any_decision(
    make_app, tmp_path
):
    """`A` on Eliza's card: Eliza keeps "always allow" for the session and asks no more. The
    next command it runs, unasked, still gets a decision line in the audit log (decided by the
    agent's kept answer, naming the approval that granted it) and its outcome line."""
    import json

    from bridge.audit import AuditLog, verify

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        audit = AuditLog(tmp_path / "audit.jsonl")
        app.bridge.approvals.audit = audit
        await pilot.press("f3", *"ask permission to run the tests", "enter")
        card = await wait_for(pilot, lambda: app.queue.pending and app.queue.pending[0])
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is card)
        await pilot.press("A")
        await wait_for(pilot, lambda: "I ran the tests" in shown_text(app.query("Static")))
        await pilot.press("f3", *"ask permission to deploy", "enter")
        await wait_for(
            pilot, lambda: "I ran deploy" in shown_text(app.query("Static")), what="unasked"
        )
        assert not app.queue.pending
        entries = [json.loads(line) for line in audit.path.read_text().splitlines()]
        audit.close()
    granted, granted_outcome, kept, kept_outcome = entries
    assert (granted["title"], granted["outcome"], granted["decider"]["kind"]) == (
        "run the tests",
        "allow_always",
        "person",
    )
    assert (kept["type"], kept["title"], kept["outcome"]) == ("decision", "deploy", "allow_always")
    assert kept["decider"]["kind"] == "agent_kept"
    assert granted["approval_id"] in kept["rule"]
    assert kept["session_id"] == granted["session_id"] and kept["agent"] == "eliza"
    assert kept["request"]["rawInput"] == {"command": "deploy"}
    assert (kept_outcome["type"], kept_outcome["approval_id"], kept_outcome["status"]) == (
        "tool_outcome",
        kept["approval_id"],
        "completed",
    )
    assert granted_outcome["approval_id"] == granted["approval_id"]
    assert verify(tmp_path / "audit.jsonl").ok


async def test_the_console_records_its_own_bridges_audit_head_and_warns_when_it_was_rewritten(
    make_app, hosted, tmp_path
):
    import json

    from bridge.approvals import host_name
    from bridge.audit import AuditLog, entry_hash
    from symposium_tui import audit_heads

    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    for n in range(3):
        log.append({"type": "decision", "ts": 1000.0 + n, "title": f"call {n}"})
    hosted.bridge.approvals.audit = log
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: audit_heads.seen(host_name()), what="the head recorded")
    assert not app.audit_warnings
    (recorded,) = audit_heads.seen(host_name())
    assert recorded["seq"] == 3 and recorded["log"] == str(path)

    entries = [json.loads(line) for line in path.read_text().splitlines()]
    entries[0]["title"] = "rewritten"
    prev, out = "", []
    for entry in entries:
        entry = {k: v for k, v in entry.items() if k != "hash"}
        entry["prev"] = prev
        entry["hash"] = prev = entry_hash(entry)
        out.append(json.dumps(entry) + "\n")
    path.write_text("".join(out))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.audit_warnings, what="the warning")
        (warning,) = app.audit_warnings
        assert "no longer extends the head this console recorded" in warning
        await wait_for(
            pilot,
            lambda: any(
                n.title == "Audit log" and n.severity == "error" for n in app._notifications
            ),
            what="the warning shown",
        )
        # At 80x24 it covers half of a card for minutes: Esc hides it, no mouse needed.
        await pilot.press("escape")
        await wait_for(pilot, lambda: not len(app._notifications), what="the warning hidden")
        assert app.audit_warnings == [warning]  # still kept
    log.close()


async def test_a_card_settled_before_its_mount_ran_leaves_without_an_error(make_app):
    """A request withdrawn (or answered elsewhere) in the tick its card arrived: the card is
    removed before it mounted — Textual then skips composing its parts — and its mount must not
    look for them. The app keeps running and the queue is empty again."""
    from types import SimpleNamespace

    from symposium_tui.widgets.approvals import ApprovalInfo

    app = make_app()  # linger 0: a settled card leaves at once
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "approvals")
        info = ApprovalInfo("a1", "c1", "s1", "eliza", run_call("make deploy"), ONCE_OPTIONS)
        card = app.queue.add(info)
        assert card is not None and not card.is_mounted  # the same tick: its mount is under way
        withdrawn = SimpleNamespace(
            approval_id="a1", outcome="cancelled", resolver="default", reason=None
        )
        app.queue.resolve(withdrawn)
        await wait_for(pilot, lambda: not app.queue.query(ApprovalCard), what="the card gone")
        await wait_for(pilot, lambda: app.query_one("#queue-empty").display)
        assert not app.queue.pending and app._exception is None


async def test_a_card_the_guard_asks_on_bypass_says_so_and_proposes_no_rule(make_app, asker, store):
    """Claude Code on bypass writes its own settings: the guard asks (bypass included). Its card
    says what asks anyway, and offers no "rule for requests like this" — no allow rule would stop
    the next card; the person's own answer still settles it. A card a rule asks keeps its key."""
    from textual.widgets import Static

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.settings_changed(store.set_agent_bypass("claude-code", True))
        await wait_for(pilot, lambda: "⚠ bypass on: claude-code" in app.sub_title)
        task = asker.ask(run_call("echo x > ~/.claude/settings.json"), agent="claude-code")
        card = await drawn_card(pilot)
        await wait_for(
            pilot, lambda: "governs the agents is asked anyway" in (card.border_subtitle or "")
        )
        assert (card.info.why_asked() or "").startswith("asked because it names ")
        legend = shown_text(card.query(".card-keys").results(Static))
        assert "Approve once" in legend and "Rule:" not in legend
        await pilot.press("p")  # nothing to propose: no rule screen
        app.propose_current()  # the palette's: says why
        await wait_for(
            pilot,
            lambda: any("no rule can allow it" in n.message for n in app._notifications),
        )
        assert app.screen is app.screen_stack[0]
        await pilot.press("a")
        assert (await task).outcome == "allow_once"
        store.add_rule(Rule("ask", command="deploy"))
        app.settings_changed(store.load())
        asker.ask(run_call("deploy", call_id="call-9"), agent="claude-code")
        ruled = await drawn_card(pilot)
        await wait_for(pilot, lambda: "a rule asks anyway" in (ruled.border_subtitle or ""))
        assert "Rule:" in shown_text(ruled.query(".card-keys").results(Static))
