"""Every screen, in every bundled theme, stays readable in truecolor, 256 colours and 16 colours:
each character cell's foreground against its background is measured (WCAG contrast ratio) —
at least 4.5:1 for normal text and 3:1 for muted text.

How a cell is measured:

- The screens are the demo's (the scenario the README's screenshots show) and every screen a
  person reaches from there: the queue and its dialogs, the chat, sessions, the tool-call log,
  settings and their forms, help, the keys panel, the command palette, the theme list, the quit
  dialog and notices (`SCREENS`). Each is rendered once per theme by the real app through
  Textual's compositor (modal screens over their background).
- What a terminal shows at 256 and 16 colours is that render downgraded the way Rich downgrades
  it when it writes to such a terminal; the 16 colours (and the terminal theme's "default"
  colours, light grey on black) are drawn with xterm's default palette.
- Muted text is a grey part way from the background to the theme's foreground (what the themes'
  `$text-muted` and `$text-disabled` are), judged on the truecolor render: it needs 3:1 at every
  depth. Everything else needs 4.5:1.
- SGR dim is not relied on: terminals draw it differently (most at about half intensity, kitty
  at 40%, some not at all), so the console's own styles never use it (the terminal theme's muted
  text is bright black). Textual still draws a few things dim in that theme (the keys panel's
  explanations): those count as muted text, measured at 40% intensity, the faintest of the
  common renderings.
- Box-drawing and block characters (borders, scrollbars) are not text and are left out; so is
  the screen under a modal dialog, which Textual fades on purpose (it is not there to be read).

`python -m tests.symposium_tui.test_contrast` prints every failing pair for every screen, theme and
depth at once (`--where` adds the widget under each failing cell).
"""

from __future__ import annotations

import asyncio
import io
import multiprocessing
import os
from collections.abc import AsyncIterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from rich.color import Color, ColorSystem
from rich.console import Console
from rich.style import Style
from rich.terminal_theme import TerminalTheme

from symposium_tui import demo
from symposium_tui.themes import load_themes

THEMES = sorted(name for name in load_themes().themes if name.startswith("symposium-"))
SYSTEMS = (ColorSystem.TRUECOLOR, ColorSystem.EIGHT_BIT, ColorSystem.STANDARD)
DEPTHS = {
    ColorSystem.TRUECOLOR: "truecolor",
    ColorSystem.EIGHT_BIT: "256",
    ColorSystem.STANDARD: "16",
}
NORMAL, MUTED = 4.5, 3.0
DIM = 0.4  # the intensity SGR dim text is measured at

#: An agent's reply with every kind of markdown the chat renders (Rich's own colours for each).
MARKDOWN = """## Fixed
1. `parse()` splits at the **first** `=`, *once*
- see [str.partition](https://docs.python.org/3/library/stdtypes.html)

> values may contain `=`

```python
key, _, value = line.partition("=")  # 3 parts
```
| before | after |
|---|---|
| split | partition |"""

#: Every screen the tour shows, in its order.
SCREENS = (
    "approvals",
    "tooltip",
    "card-detail",
    "card-pattern",
    "deny-reason",
    "approval-stats",
    "chat",
    "chat-agents",
    "chat-markdown",
    "sessions",
    "sessions-all",
    "sessions-open",
    "toolcalls",
    "toolcalls-details",
    "toolcalls-filter",
    "settings",
    "settings-agent-form",
    "settings-agent-edit",
    "settings-remove-agent",
    "settings-rules",
    "settings-rule-form",
    "settings-rule-edit",
    "settings-preferences",
    "settings-broken-file",
    "help",
    "keys",
    "palette",
    "themes",
    "confirm-quit",
    "notices",
    "approvals-answered",
    "approvals-arming",
    "card-detail-arming",
)

# xterm's default palette: what "the 16 colours" and "the terminal's default colours" look like.
XTERM = TerminalTheme(
    (0, 0, 0),
    (229, 229, 229),
    [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
    ],
    [
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ],
)

RGB = tuple[int, int, int]


def luminance(rgb: RGB) -> float:
    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: RGB, b: RGB) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@cache
def rgb(color: Color | None, system: ColorSystem, *, foreground: bool) -> RGB:
    """What a terminal of this colour depth shows for `color` (xterm's palette)."""
    color = color or Color.default()
    triplet = color.downgrade(system).get_truecolor(XTERM, foreground=foreground)
    return (triplet.red, triplet.green, triplet.blue)


def is_text(char: str) -> bool:
    return bool(char.strip()) and not 0x2500 <= ord(char) <= 0x259F


@dataclass(frozen=True)
class Cell:
    x: int
    y: int
    char: str
    words: str  # the run of text the cell is part of, to find it on screen
    fg: Color | None
    bg: Color | None
    dim: bool
    style: str
    where: str  # the widget under the cell (filled only when asked for)


@dataclass
class Render:
    """One screen in one theme: its text cells, and the theme's foreground (for muted text)."""

    screen: str
    theme: str
    foreground: RGB | None
    cells: list[Cell]


def capture(app: Any, *, where: bool = False) -> list[Cell]:
    """The text cells of the screen as drawn (a modal screen's faded background left out)."""
    console = Console(
        width=app.size.width,
        height=app.size.height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    background = app._background_screens
    console.print(app.screen._compositor.render_update(full=True, screen_stack=background))
    screen = app.screen
    found: list[Cell] = []
    x = y = 0
    for segment in console._record_buffer:
        if segment.control:
            continue
        style = segment.style or Style()
        for char in segment.text:
            if char == "\n":
                x, y = 0, y + 1
                continue
            if is_text(char):
                widget = None
                if background or where:
                    try:
                        widget, _ = screen.get_widget_at(x, y)
                    except Exception:  # outside every widget
                        widget = screen
                if not (background and widget is screen):
                    fg, bg = style.color, style.bgcolor
                    if style.reverse:
                        fg, bg = bg, fg
                    found.append(
                        Cell(
                            x,
                            y,
                            char,
                            segment.text.strip(),
                            fg,
                            bg,
                            bool(style.dim),
                            str(style),
                            _describe(widget) if where and widget is not None else "",
                        )
                    )
            x += 1
    return found


def _describe(widget: Any) -> str:
    names = []
    node = widget
    while node is not None and len(names) < 4:
        label = type(node).__name__
        if node.id:
            label += f"#{node.id}"
        if node.classes:
            label += "." + ".".join(sorted(node.classes))
        names.append(label)
        node = node.parent
    return " < ".join(names)


def is_muted(fg: RGB, bg: RGB, theme_fg: RGB | None) -> bool:
    """A grey part way from the background to the theme's foreground: muted text."""
    if theme_fg is None:
        return False
    spans = [t - b for t, b in zip(theme_fg, bg)]
    if max(abs(s) for s in spans) < 32:
        return False
    shares = [(f - b) / s for f, b, s in zip(fg, bg, spans) if abs(s) >= 32]
    return all(0.15 <= share <= 0.95 for share in shares) and max(shares) - min(shares) < 0.12


def _blend(fg: RGB, bg: RGB, share: float) -> RGB:
    return tuple(round(b + (f - b) * share) for f, b in zip(fg, bg))  # type: ignore[return-value]


def problems(render: Render, system: ColorSystem) -> list[str]:
    """Each hard-to-read colour pair of `render` at this depth, once (its first cell)."""
    found: dict[tuple[str, str, bool], str] = {}
    for cell in render.cells:
        key = (str(cell.fg), str(cell.bg), cell.dim)
        if key in found:
            continue
        true_fg = rgb(cell.fg, ColorSystem.TRUECOLOR, foreground=True)
        true_bg = rgb(cell.bg, ColorSystem.TRUECOLOR, foreground=False)
        muted = cell.dim or is_muted(true_fg, true_bg, render.foreground)  # what was meant
        need = MUTED if muted else NORMAL
        fg = rgb(cell.fg, system, foreground=True)
        bg = rgb(cell.bg, system, foreground=False)
        if cell.dim:
            fg = _blend(fg, bg, DIM)
        ratio = contrast(fg, bg)
        if ratio < need:
            found[key] = (
                f"{render.screen} {render.theme} {DEPTHS[system]}: {cell.words[:40]!r} at "
                f"{cell.x},{cell.y}: {'muted ' if muted else ''}{ratio:.2f}:1 < {need}:1 "
                f"({cell.style} = #{_hex(fg)} on #{_hex(bg)})"
                + (f" in {cell.where}" if cell.where else "")
            )
    return list(found.values())


def _hex(rgb: RGB) -> str:
    return "".join(f"{c:02x}" for c in rgb)


def theme_foreground(app: Any, name: str) -> RGB | None:
    from textual.color import Color as TColor

    theme = app.get_theme(name)
    if theme is None or not theme.foreground or theme.foreground.startswith("ansi"):
        return None
    fg = TColor.parse(theme.foreground)
    return (fg.r, fg.g, fg.b)


async def tour(pilot: Any) -> AsyncIterator[str]:
    """Every screen, one after the other (yielding each one's name once it is shown)."""
    from textual.command import CommandList, CommandPalette
    from textual.widgets import Footer, Select, TabbedContent
    from textual.widgets._help_panel import HelpPanel
    from textual.widgets._toast import Toast
    from textual.widgets._tooltip import Tooltip

    from bridge.approvals import ApprovalContext
    from symposium_tui.screens.confirm import Confirm, ConfirmQuit
    from symposium_tui.screens.detail import ApprovalDetailScreen
    from symposium_tui.screens.fatigue import ApprovalStatsScreen
    from symposium_tui.screens.help import HelpScreen
    from symposium_tui.screens.pattern import PatternRuleScreen
    from symposium_tui.screens.settings import AgentForm, RuleForm, SettingsScreen
    from symposium_tui.screens.themes import ThemePicker
    from symposium_tui.widgets.chat import ChatMessage
    from symposium_tui.widgets.sessions import SessionsPane
    from symposium_tui.widgets.toollog import ToolLogPane
    from tests.support.waiting import until

    app = pilot.app

    async def shown(what: str, condition: Any) -> None:
        await until(condition, what=what)
        for _ in range(2):  # what the state change brings is laid out and painted
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    def on(screen_type: type) -> Any:
        return lambda: isinstance(app.screen, screen_type)

    def tab(name: str) -> Any:
        return lambda: len(app.screen_stack) == 1 and app._active_tab() == name

    def section(name: str) -> Any:
        return lambda: (
            isinstance(app.screen, SettingsScreen)
            and app.screen.query_one("#settings-tabs", TabbedContent).active == name
        )

    await pilot.press("f2")
    await shown("the queue", lambda: tab("approvals")() and app.queue.current_card() is not None)
    yield "approvals"
    card = app.queue.current_card()
    await pilot.hover(Footer, offset=(24, 0))  # "b Bypass"
    await shown("a key's tooltip", lambda: app.screen.query_one(Tooltip).display)
    yield "tooltip"
    app.screen.query_one(Tooltip).display = False
    await pilot.press("v")
    await shown("the card in full", on(ApprovalDetailScreen))
    yield "card-detail"
    await pilot.press("escape", "p")
    await shown("the rule to edit", on(PatternRuleScreen))
    yield "card-pattern"
    await pilot.press("escape")
    await shown("the queue again", tab("approvals"))
    await card.action_deny()
    await pilot.press(*"Add a test first")
    await shown("a reason", lambda: "Add a test first" in str(card.query_one(".card-reason").value))
    yield "deny-reason"
    card.cancel_reason()
    app.action_approval_stats()
    await shown("the approval stats", on(ApprovalStatsScreen))
    yield "approval-stats"
    await pilot.press("escape", "f3")
    await shown("the chat", tab("chat"))
    yield "chat"
    await pilot.press("ctrl+e")
    await shown("the agent list", lambda: app.chat.query_one("#chat-agent", Select).expanded)
    yield "chat-agents"
    await pilot.press("escape")
    reply = ChatMessage("Claude Code", MARKDOWN, kind="agent")
    app.chat._log(reply)
    await shown("an agent's reply in markdown", lambda: reply.region.height > 10)
    yield "chat-markdown"
    app.action_show_tab("sessions")
    sessions = app.query_one(SessionsPane)
    await shown("the sessions", tab("sessions"))
    yield "sessions"
    await pilot.press("a")
    await shown("every session", lambda: sessions.all_sessions)
    yield "sessions-all"
    await pilot.press("a", "o")
    await shown("the open bar", lambda: sessions.query_one("#sessions-open").has_class("-open"))
    yield "sessions-open"
    await pilot.press("escape")
    app.action_show_tab("toolcalls")
    toollog = app.query_one(ToolLogPane)
    await shown("the tool calls", tab("toolcalls"))
    yield "toolcalls"
    await pilot.press("enter")
    await shown(
        "a call's details", lambda: toollog.query_one("#toollog-details").has_class("-open")
    )
    yield "toolcalls-details"
    await pilot.press("escape", "f")
    await shown("the filter bar", lambda: toollog.query_one("#toollog-filters").has_class("-open"))
    yield "toolcalls-filter"
    await pilot.press("escape", "escape", "f4")
    await shown("the settings", section("agents"))
    yield "settings"
    await pilot.press("n")
    await shown("the agent form", on(AgentForm))
    yield "settings-agent-form"
    await pilot.press("escape", "down", "e")
    await shown("the agent form, editing", lambda: on(AgentForm)() and app.screen.agent)
    yield "settings-agent-edit"
    await pilot.press("escape", "x")
    await shown("the question before removing", on(Confirm))
    yield "settings-remove-agent"
    await pilot.press("n", "right_square_bracket")
    await shown("the rules", section("rules"))
    yield "settings-rules"
    await pilot.press("n")
    await shown("the rule form", on(RuleForm))
    yield "settings-rule-form"
    await pilot.press("escape", "e")
    await shown("the rule form, editing", on(RuleForm))
    yield "settings-rule-edit"
    await pilot.press("escape", "right_square_bracket")
    await shown("the preferences", section("preferences"))
    yield "settings-preferences"
    settings_file = app.settings_store.path
    saved = settings_file.read_text(encoding="utf-8")
    settings_file.write_text("[agents.broken\n", encoding="utf-8")
    await pilot.press("r")
    await shown("the settings error", lambda: app.screen.query_one("#settings-error").display)
    yield "settings-broken-file"
    settings_file.write_text(saved, encoding="utf-8")
    await pilot.press("r")
    await until(lambda: not app.screen.query_one("#settings-error").display)
    app.clear_notifications()
    await pilot.press("escape", "f1")
    await shown("the help", on(HelpScreen))
    yield "help"
    await pilot.press("escape")
    app.action_show_help_panel()
    await shown("the keys panel", lambda: bool(app.screen.query(HelpPanel)))
    yield "keys"
    app.action_hide_help_panel()
    await pilot.press("ctrl+p", *"approv")
    await shown(
        "the palette's matches",
        lambda: (
            isinstance(app.screen, CommandPalette)
            and app.screen.query_one(CommandList).option_count > 1
        ),
    )
    yield "palette"
    await pilot.press("escape")
    await until(lambda: len(app.screen_stack) == 1)
    app.search_themes()
    await shown("the theme list", on(ThemePicker))
    yield "themes"
    await pilot.press("escape", "ctrl+q")
    await shown("the quit dialog", on(ConfirmQuit))
    yield "confirm-quit"
    await pilot.press("n")
    app.clear_notifications()  # one notice of each kind, as the console words them
    app.notify("Settings reloaded.")
    app.notify("Claude Code asks permission: Edit src/parser.py · F2 to answer", severity="warning")
    app.notify("Cannot open trace.jsonl: No such file or directory", severity="error")
    await shown("three notices", lambda: len(app.screen.query(Toast)) == 3)
    yield "notices"
    app.clear_notifications()
    await pilot.press("f2", "d", *"no", "enter")
    await until(lambda: app.queue.current_card() is not card, what="the first card answered")
    await pilot.press("a")
    await until(lambda: not app.queue.pending, what="every card answered")
    app.action_show_tab("approvals")  # answering the last card went back to where F2 came from
    await shown("the answered cards", tab("approvals"))
    yield "approvals-answered"
    # A card that has just arrived, whose keys wait to arm (the demo arms its cards at once).
    broker = app.bridge.approvals
    app.queue.arm_delay = 3600
    run = {"toolCallId": "toolu_03", "title": "Run the tests", "kind": "execute"}
    options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
    context = ApprovalContext("vscodelm-9", "s1", "claude-code", run, options)
    asked = asyncio.ensure_future(broker.request(context))
    await shown(
        "a card not armed yet",
        lambda: (new := app.queue.current_card()) is not None and new.has_class("-unarmed"),
    )
    yield "approvals-arming"
    await pilot.press("v")
    await shown("the card in full, not armed yet", on(ApprovalDetailScreen))
    yield "card-detail-arming"
    await pilot.press("escape")
    for approval_id in list(broker.pending):
        broker.withdraw(approval_id, "the tour is over")
    await asked


async def render_all(config_dir: Path, theme: str, *, where: bool = False) -> list[Render]:
    """Every screen of the tour, with the console in `theme`."""
    app = demo.build_demo_app(str(config_dir), theme=theme)
    app.animation_level = "none"
    foreground = theme_foreground(app, theme)
    renders: list[Render] = []
    async with app.run_test(size=demo.SIZE, notifications=True, tooltips=True) as pilot:
        try:
            await demo.play(pilot)
            async for screen in tour(pilot):
                demo._freeze(app)
                assert app.theme == theme
                renders.append(Render(screen, theme, foreground, capture(app, where=where)))
        finally:
            await demo.shutdown(app)
    return renders


def render_theme(theme: str, directory: str, where: bool = False) -> list[Render]:
    """The tour in `theme`, with its own settings and runtime directories (what each worker
    process runs)."""
    os.environ["SYMPOSIUM_CONFIG_DIR"] = str(Path(directory, "config"))
    os.environ["SYMPOSIUM_RUNTIME_DIR"] = str(Path(directory, "run"))
    return asyncio.run(render_all(Path(directory, "config"), theme, where=where))


def render_every_theme(directory: Path, where: bool = False) -> list[Render]:
    """The tour in every theme, one app per theme, two at a time in worker processes (a tour is
    a few seconds of work for one core; the rest of the test is arithmetic)."""
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter, not a fork of pytest
    with ProcessPoolExecutor(max_workers=2, mp_context=spawn) as pool:
        runs = [pool.submit(render_theme, t, str(directory / t), where) for t in THEMES]
        return [render for run in runs for render in run.result()]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Render]:
    """Every screen in every theme, rendered once for the whole module (each test checks one
    screen, theme and depth)."""
    renders = render_every_theme(tmp_path_factory.mktemp("contrast"))
    return {(r.screen, r.theme): r for r in renders}


def test_the_tour_shows_every_screen_in_every_theme(rendered):
    assert sorted(rendered) == sorted((s, t) for s in SCREENS for t in THEMES)
    assert all(r.cells for r in rendered.values())


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: DEPTHS[s])
@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("screen", SCREENS)
def test_every_cell_is_readable(rendered, screen, theme, system):
    found = problems(rendered[(screen, theme)], system)
    assert not found, f"{len(found)} hard-to-read colour pair(s):\n" + "\n".join(found)


def test_muted_text_is_dimmer_than_normal_text_in_every_theme():
    """In the dark theme muted text used to come out brighter than normal text."""
    from textual.color import Color as TColor

    for name, theme in load_themes().themes.items():
        if not name.startswith("symposium-") or theme.foreground.startswith("ansi"):
            continue
        variables = theme.variables
        background = TColor.parse(theme.background)
        foreground = TColor.parse(theme.foreground)
        muted = background + TColor.parse(variables.get("text-muted", "#000000"))
        as_rgb = lambda c: (c.r, c.g, c.b)  # noqa: E731
        normal_ratio = contrast(as_rgb(foreground), as_rgb(background))
        muted_ratio = contrast(as_rgb(muted), as_rgb(background))
        if name == "symposium-high-contrast":
            assert muted_ratio >= NORMAL, "high contrast: muted text is as readable as any"
        else:
            assert MUTED <= muted_ratio < normal_ratio, name


def main() -> int:
    """Every failing pair of every screen, theme and depth (`--where`: the widget under each)."""
    import importlib
    import sys
    import tempfile

    this = importlib.import_module("tests.symposium_tui.test_contrast")  # not __main__: workers
    with tempfile.TemporaryDirectory() as directory:  # import it by this name
        renders = this.render_every_theme(Path(directory), where="--where" in sys.argv)
    report = [line for r in renders for system in SYSTEMS for line in this.problems(r, system)]
    print("\n".join(report) or "every cell readable")
    print(f"{len(report)} hard-to-read colour pairs", file=sys.stderr)
    return 1 if report else 0


if __name__ == "__main__":
    raise SystemExit(main())
