"""The settings file edited by hand while the console runs: its rules are in force from the next
request, whatever screen is shown; a file that stops reading fails closed."""

from __future__ import annotations

from bridge.settings import AgentConfig
from tests.support.console import run_call, wait_for

SIZE = (80, 24)

DENY_BY_HAND = """
[[rules]]
action = "deny"
command = ["make yy"]
reason = "yy by hand"
"""


def append(store, text: str) -> None:
    """What a person's editor does to the file (the console is not told)."""
    store.path.parent.mkdir(parents=True, exist_ok=True)
    with open(store.path, "a", encoding="utf-8") as f:
        f.write(text)


async def decided(pilot, task):
    """The resolution of a request, once the broker settled it (a card left pending fails)."""
    await wait_for(pilot, task.done, what="the request to be decided without a person")
    return task.result()


def notified(app, text: str) -> bool:
    return any(text in str(n.message) or text in str(n.title) for n in app._notifications)


async def test_a_deny_rule_written_by_hand_stops_the_next_request_of_an_agent_on_bypass(
    make_app, store, asker
):
    store.upsert_agent(AgentConfig(id="codex", command="codex", bypass=True))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge is not None)
        first = await decided(pilot, asker.ask(run_call("make yy"), agent="codex"))
        assert (first.outcome, first.rule) == ("allow_once", "agent bypass")
        append(store, DENY_BY_HAND)  # F4 never opened: the console's screens are not involved
        second = await decided(
            pilot, asker.ask(run_call("make yy", call_id="call-3"), agent="codex")
        )
        assert (second.resolver, second.outcome, second.reason) == (
            "policy",
            "reject_once",
            "yy by hand",
        )
        assert app.settings is not None and len(app.settings.rules) == 1  # the screens follow


async def test_a_file_that_stops_reading_keeps_its_denies_and_asks_what_it_allowed(
    make_app, store, asker
):
    append(store, DENY_BY_HAND + '\n[[rules]]\naction = "allow"\ncommand = ["git status"]\n')
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge is not None)
        allowed = await decided(pilot, asker.ask(run_call("git status")))
        assert (allowed.resolver, allowed.outcome) == ("policy", "allow_once")
        good = store.path.read_text()
        append(store, "[[rules\n")  # a half-typed edit
        denied = await decided(pilot, asker.ask(run_call("make yy", call_id="call-3")))
        assert (denied.outcome, denied.reason) == ("reject_once", "yy by hand")
        asked = asker.ask(run_call("git status", call_id="call-4"))
        await wait_for(pilot, lambda: len(app.bridge.approvals.pending) == 1, what="a card")
        assert not asked.done()  # no rule allows it until the file reads again: a person decides
        await wait_for(pilot, lambda: notified(app, "The settings file no longer reads"))
        assert app.settings_error and "settings.toml" in app.settings_error

        store.path.write_text(good)  # fixed
        again = await decided(pilot, asker.ask(run_call("git status", call_id="call-5")))
        assert (again.resolver, again.outcome) == ("policy", "allow_once")
        assert app.settings_error is None
