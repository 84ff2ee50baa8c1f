"""The built-in chat: talk to Eliza or a configured agent through the bridge's own core.

It is a front door like any other: every turn sends the *whole* conversation (as VS Code does)
on a connection of its own, so history decisions, sessions, tool calls and approvals show up in
the rest of the console exactly as they would for an editor.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Label, Select, Static

if TYPE_CHECKING:
    from bridge.core import Bridge, ConnectionCore
    from bridge.settings import AgentConfig

from symposium_tui.widgets.chat.text import ToolLines, render_agent_text


@dataclass(frozen=True)
class AgentChoice:
    key: str  # "eliza", or the agent's id in the settings
    label: str
    spec: Any  # the agent as a front door sends it: {"eliza": {}} or {"id", "name", "command", "args", "env"}


def eliza_choice(*, deterministic: bool = False) -> AgentChoice:
    return AgentChoice(
        "eliza", "Eliza (built in)", {"eliza": {"deterministic": True} if deterministic else {}}
    )


def agent_choice(config: AgentConfig) -> AgentChoice:
    """A runnable settings agent as the chat's agent."""
    return AgentChoice(config.id, config.name, config.spawn_spec())


class ChatMessage(Static):
    def __init__(self, who: str, text: str = "", *, kind: str) -> None:
        super().__init__(classes=f"chat-message -{kind}")
        self.who = who
        self.text = text
        self.kind = kind
        self.colours: dict[str, str] | None = None  # the theme's (an agent's markdown)
        if kind == "agent":
            try:
                self.colours = dict(self.app.theme_variables)
            except RuntimeError:  # made outside a running app: no colours until mounted
                pass
        self.update(self._content())

    def on_mount(self) -> None:
        if self.kind == "agent":  # drawn in the theme's colours: again when the theme changes
            self.app.theme_changed_signal.subscribe(self, self._recolour)
            if self.colours is None:
                self._recolour()

    def _recolour(self, _theme: Any = None) -> None:
        self.colours = dict(self.app.theme_variables)
        self.update(self._content())

    def set_text(self, text: str) -> None:
        self.text = text
        self.update(self._content())

    def _content(self) -> Any:
        if self.kind == "note":
            return Text(self.text, style="italic")
        head = Text(f"{self.who}\n", style="bold")
        if self.kind == "agent":
            from rich.console import Group

            return Group(Text(self.who, style="bold"), render_agent_text(self.text, self.colours))
        return head + Text(self.text)


class ChatLog(VerticalScroll):
    """The conversation. It starts at the top; once it is longer than it can show, it follows its
    end (anchored: also when the banner takes a line from it) until the person scrolls back.
    (Anchored while shorter, Textual would draw it at the bottom under empty lines.)"""

    def on_resize(self) -> None:
        overflows = self.max_scroll_y > 0
        if overflows != self.is_anchored:
            self.anchor(overflows)


class ChatPane(Vertical):
    """Agent picker, conversation, pending-approval notice and the message input."""

    BINDINGS = [
        Binding("escape", "stop", "Stop reply"),
        Binding("ctrl+n", "new_conversation", "New chat"),
        # Priority: the input would take Ctrl+E as "end of line" (End does that too).
        Binding(
            "ctrl+e",
            "pick_agent",
            "Agent",
            show=False,
            priority=True,
            tooltip="Choose the agent to talk to",
        ),
        # The input has no use for these: the conversation scrolls while you type.
        Binding("pageup", "scroll_log(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_log(1)", "Scroll down", show=False),
    ]

    agent: var[AgentChoice] = var(eliza_choice, init=False)
    """The agent the next turn goes to; the picker and the input's placeholder follow it."""

    request_id: var[str | None] = var(None, init=False, bindings=True)
    """The turn the agent is answering; the state line and Esc ("Stop reply") follow it."""

    class TurnFinished(Message):
        def __init__(self, request_id: str, outcome: str, text: str) -> None:
            super().__init__()
            self.request_id = request_id
            self.outcome = outcome  # "complete", "cancelled", "error"
            self.text = text

    def __init__(self, bridge: Bridge, agents: list[AgentChoice], *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.bridge = bridge
        self.agents = list(agents)
        self.set_reactive(ChatPane.agent, self.agents[0])  # composed with it
        self.messages: list[Any] = []
        self.core: ConnectionCore | None = None
        self._ids = itertools.count(1)
        self._turn_lines: tuple[ToolLines, ChatMessage] | None = None  # the running turn's reply

    @property
    def busy(self) -> bool:
        return self.request_id is not None

    @property
    def connection(self) -> str | None:
        return self.core.name if self.core is not None else None

    def compose(self) -> ComposeResult:
        with Horizontal(id="chat-bar"):
            yield Label("Agent", id="chat-agent-label")
            yield Select(
                [(a.label, a.key) for a in self.agents],
                value=self.agent.key,
                allow_blank=False,
                id="chat-agent",
                compact=True,
            )
            yield Static("", id="chat-state")
        with ChatLog(id="chat-log"):
            yield ChatMessage(
                "",
                "Talk to an agent here, through the same bridge an editor uses. "
                "Try “ask permission to run the tests”.",
                kind="note",
            )
        yield Static("", id="chat-banner")
        yield Input(placeholder=self._placeholder(), id="chat-input")

    def _placeholder(self) -> str:
        return f"Message {self.agent.label} · Enter sends"

    def set_agents(self, agents: list[AgentChoice]) -> None:
        """The configured agents changed (settings screen). The chat keeps its agent while it is
        still configured, else goes back to the first (the built-in Eliza)."""
        self.agents = list(agents)
        select = self.query_one("#chat-agent", Select)
        keep = self.agent.key in {a.key for a in agents}
        # New options reset the picker's value: not a person's choice, so no Changed (which
        # would switch the agent to the first option and back, endlessly).
        with select.prevent(Select.Changed):
            select.set_options([(a.label, a.key) for a in self.agents])
            if keep:
                select.value = self.agent.key
        if not keep:
            self.agent = self.agents[0]

    def watch_agent(self, agent: AgentChoice) -> None:
        select = self.query_one("#chat-agent", Select)
        if select.value != agent.key:
            with select.prevent(Select.Changed):
                select.value = agent.key
        self.query_one("#chat-input", Input).placeholder = self._placeholder()

    def focus_input(self) -> None:
        self.query_one("#chat-input", Input).focus()

    # --- keys ----------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.busy
        return True

    def action_stop(self) -> None:
        if self.core is not None and self.request_id is not None:
            self.core.cancel(self.request_id, "Request cancelled: stopped in the console")

    def action_new_conversation(self) -> None:
        """A fresh conversation on a fresh connection: the old one's sessions end with it (a new
        chat whose first message repeats the old one's must not land in the old session)."""
        self.action_stop()
        if self.core is not None:
            old, self.core = self.core, None
            self.run_worker(old.close(), group="chat-close")
        self.messages = []
        log = self.query_one("#chat-log", VerticalScroll)
        log.remove_children()
        log.mount(ChatMessage("", f"New conversation with {self.agent.label}.", kind="note"))
        self.focus_input()

    def action_scroll_log(self, pages: int) -> None:
        """PageUp/PageDown from anywhere in the chat (the input keeps the focus). Back at the end,
        the log follows new text again."""
        log = self.query_one("#chat-log", VerticalScroll)
        if pages < 0:
            log.scroll_page_up(animate=False)
        else:
            log.scroll_page_down(animate=False)

    def action_pick_agent(self) -> None:
        select = self.query_one("#chat-agent", Select)
        select.focus()
        select.action_show_overlay()

    @on(Select.Changed, "#chat-agent")
    def _agent_changed(self, event: Select.Changed) -> None:
        choice = next((a for a in self.agents if a.key == event.value), None)
        if choice is None or choice == self.agent:
            return
        self.choose_agent(choice.key)

    def choose_agent(self, key: str) -> None:
        choice = next((a for a in self.agents if a.key == key), None)
        if choice is None or choice == self.agent:
            return
        self.agent = choice
        note = f"Now talking to {choice.label}."
        if self.messages:
            note += " It receives the conversation so far."
        self._log(ChatMessage("", note, kind="note"))

    # --- turns ---------------------------------------------------------------------------------------

    @on(Input.Submitted, "#chat-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        if self.busy:
            self.notify("The agent is still replying; Esc stops it.", severity="warning")
            return
        event.input.value = ""
        self.send(text)

    def send(self, text: str) -> str:
        from bridge.protocol import Message as WireMessage

        if self.core is None:
            self.core = self.bridge.open_connection("chat")
        request_id = f"chat-{next(self._ids)}"
        self.request_id = request_id  # the state line says so; Esc stops it
        self.messages.append(
            WireMessage.model_validate(
                {"role": "user", "content": [{"type": "text", "value": text}]}
            )
        )
        self._log(ChatMessage("you", text, kind="user"))
        reply = ChatMessage(self.agent.label, "", kind="agent")
        self._log(reply)
        self.run_worker(
            self._turn(request_id, self.agent, list(self.messages), reply),
            group="chat",
            exit_on_error=False,
        )
        return request_id

    async def _turn(
        self, request_id: str, agent: AgentChoice, messages: list[Any], reply: ChatMessage
    ) -> None:
        from bridge.protocol import Message as WireMessage
        from bridge.sessions import RequestCancelled, ResponseStream, SessionFailed

        parts: list[dict[str, Any]] = []
        text: list[str] = []
        shown = ToolLines()
        self._turn_lines = (shown, reply)

        def write_part(part: dict[str, Any]) -> None:
            parts.append(part)
            if part.get("type") == "text":
                text.append(part.get("value") or "")
            else:
                text.append(f"\n[tool call {part.get('toolName')}]\n")
            shown.add(text[-1])
            if reply.is_attached:  # the console may be closing while the agent finishes
                reply.set_text(shown.text)
                self._scroll_end()

        outcome, error = "complete", None
        assert self.core is not None  # opened by `send` before the turn starts
        try:
            request = self.core.make_request(request_id, agent.spec, messages, [])
            stream = ResponseStream(request_id, write_part)
            await self.core.chat(request, stream)
        except RequestCancelled:
            outcome = "cancelled"
        except SessionFailed as exc:
            outcome, error = "error", str(exc)
        except ValueError as exc:  # a configured agent the bridge cannot use
            outcome, error = "error", str(exc)
        except Exception as exc:  # noqa: BLE001 - shown, never fatal to the console
            outcome, error = "error", f"{type(exc).__name__}: {exc}"
        if parts:
            # The history must hold exactly what the agent said, as an editor would send it back.
            self.messages.append(
                WireMessage.model_validate({"role": "assistant", "content": parts})
            )
        if outcome != "complete" and "\u23f3" in reply.text and reply.is_attached:
            # A tool call the stopped turn left pending is not waiting any more (on screen only:
            # the history keeps exactly what the agent said).
            reply.set_text(reply.text.replace("\u23f3", "\u23f9"))
        if outcome == "cancelled":
            self._log(ChatMessage("", "Stopped.", kind="note"))
        elif error is not None:
            self._log(ChatMessage("", f"The agent failed: {error}", kind="note"))
        if not parts:
            reply.display = False
        if self.request_id == request_id:
            self.request_id = None
        self.post_message(self.TurnFinished(request_id, outcome, "".join(text)))

    def _log(self, message: ChatMessage) -> None:
        for log in self.query("#chat-log").results(VerticalScroll):
            log.mount(message)
            self._scroll_end()

    def _scroll_end(self) -> None:
        for log in self.query("#chat-log").results(VerticalScroll):
            log.call_after_refresh(log.scroll_end, animate=False)

    def watch_request_id(self, request_id: str | None) -> None:
        for state in self.query("#chat-state").results(Static):
            state.update("replying… Esc stops" if request_id is not None else "")

    # --- approvals -------------------------------------------------------------------------------------

    def approval_resolved(self, event: Any) -> None:
        """An approval of this chat's connection was settled: its tool call says by whom (a rule,
        a bypass, a person), so a rule's decision never reads like a person's."""
        if self.core is None or event.connection != self.core.name or self._turn_lines is None:
            return
        from symposium_tui.state.formatting import decided_by

        verb = "allowed" if event.outcome.startswith("allow") else "denied"
        shown, reply = self._turn_lines
        if shown.decided(f"{verb} {decided_by(event.resolver, event.rule, event.by)}"):
            if reply.is_attached:
                reply.set_text(shown.text)

    def show_pending(self, cards: list[Any]) -> None:
        """Cards waiting for an answer that came from this chat: a notice (the cards stay in the queue)."""
        banner = self.query_one("#chat-banner", Static)
        mine = [c for c in cards if self.core is not None and c.connection == self.core.name]
        banner.display = bool(mine)
        if mine:
            first = mine[0]
            more = f" (+{len(mine) - 1} more)" if len(mine) > 1 else ""
            banner.update(
                Text.assemble(
                    ("⚠ ", "bold"),
                    (first.agent_display, "bold"),
                    " asks permission: ",
                    (first.title, "bold"),
                    more,
                    " · F2 to answer",
                )
            )

    async def close(self, grace: float = 2.0) -> None:
        """Close the chat's connection without cutting an agent off mid-turn: a reply in progress
        is given `grace` seconds to end by itself (when the console quits, its pending approvals
        are denied, which ends the turn), then stopped, and the agent given as long to wind down."""
        if self.core is None:
            return
        await self._wait(self._turns_drained, grace)
        if not self._turns_drained():
            self.action_stop()
            await self._wait(self._turns_drained, grace)
        core, self.core = self.core, None
        await core.close()

    def _turns_drained(self) -> bool:
        sessions = self.core.sessions if self.core is not None else {}
        return all(s.turn is None or s.turn.done.is_set() for s in sessions.values())

    @staticmethod
    async def _wait(condition: Any, timeout: float) -> None:
        for _ in range(max(1, int(timeout / 0.02))):
            if condition():
                return
            await asyncio.sleep(0.02)
