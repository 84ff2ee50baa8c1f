"""Every screen, in every bundled theme, stays readable in truecolor, 256 colours and 16 colours:
each character cell's foreground against its background is measured (WCAG contrast ratio) —
at least 4.5:1 for normal text and 3:1 for muted text (a grey between the background and the
theme's foreground, as Textual's `$text-muted` renders).

The screens are the demo's (the same scenario the README's screenshots show), rendered by the
real app through Textual's compositor; what a terminal shows at 256 and 16 colours is the same
render downgraded the way Rich downgrades it, the 16 colours drawn with xterm's default palette.
Box-drawing and block characters (borders, scrollbars) are not text and are left out.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import Any

from rich.color import Color, ColorSystem
from rich.console import Console
from rich.style import Style
from rich.terminal_theme import TerminalTheme

from symposium_tui import demo
from symposium_tui.themes import load_themes

THEMES = sorted(name for name in load_themes().themes if name.startswith("symposium-"))
SYSTEMS = (ColorSystem.TRUECOLOR, ColorSystem.EIGHT_BIT, ColorSystem.STANDARD)
NORMAL, MUTED = 4.5, 3.0

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


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def rgb(color: Color | None, system: ColorSystem, *, foreground: bool) -> tuple[int, int, int]:
    color = color or Color.default()
    triplet = color.downgrade(system).get_truecolor(XTERM, foreground=foreground)
    return (triplet.red, triplet.green, triplet.blue)


def is_text(char: str) -> bool:
    return bool(char.strip()) and not 0x2500 <= ord(char) <= 0x259F


def cells(app: Any) -> Iterator[tuple[int, int, str, Style]]:
    """Every character cell of the screen as drawn (modal screens over their background)."""
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
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    x = y = 0
    for segment in console._record_buffer:
        if segment.control:
            continue
        for char in segment.text:
            if char == "\n":
                x, y = 0, y + 1
                continue
            yield x, y, char, segment.style or Style()
            x += 1


def is_muted(fg: tuple[int, int, int], bg: tuple[int, int, int], theme_fg: Any) -> bool:
    """A grey part way from the background to the theme's foreground: muted text."""
    if theme_fg is None:
        return False
    target = (theme_fg.r, theme_fg.g, theme_fg.b)
    spans = [t - b for t, b in zip(target, bg)]
    if max(abs(s) for s in spans) < 32:
        return False
    shares = [(f - b) / s for f, b, s in zip(fg, bg, spans) if abs(s) >= 32]
    return all(0.15 <= share <= 0.95 for share in shares) and max(shares) - min(shares) < 0.12


def problems(app: Any, where: str, systems: tuple[ColorSystem, ...] = SYSTEMS) -> list[str]:
    theme = app.get_theme(app.theme)
    theme_fg = None
    if theme is not None and theme.foreground and not theme.foreground.startswith("ansi"):
        from textual.color import Color as TColor

        theme_fg = TColor.parse(theme.foreground)
    found: dict[tuple[str, str, str], str] = {}
    for x, y, char, style in cells(app):
        if not is_text(char):
            continue
        fg_color, bg_color = style.color, style.bgcolor
        if style.reverse:
            fg_color, bg_color = bg_color, fg_color
        true_fg = rgb(fg_color, ColorSystem.TRUECOLOR, foreground=True)
        true_bg = rgb(bg_color, ColorSystem.TRUECOLOR, foreground=False)
        muted = is_muted(true_fg, true_bg, theme_fg)  # what the theme meant, at any depth
        need = MUTED if muted else NORMAL
        for system in systems:
            ratio = contrast(
                rgb(fg_color, system, foreground=True), rgb(bg_color, system, foreground=False)
            )
            if ratio < need:
                key = (system.name, str(fg_color), str(bg_color))
                found.setdefault(
                    key,
                    f"{where} {app.theme} {system.name}: {char!r} at {x},{y} "
                    f"{'muted ' if muted else ''}{ratio:.2f}:1 < {need}:1 ({style})",
                )
    return list(found.values())


async def tour(pilot: Any) -> Iterator[str]:
    """The demo's screens, one after the other (yielding each one's name once it is shown)."""
    app = pilot.app

    async def shown() -> None:
        demo._freeze(app)
        for _ in range(3):
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    await pilot.press("f2")
    await shown()
    yield "approvals"
    card = app.queue.current_card()
    card.action_deny()
    await pilot.pause()
    await pilot.press(*"Add a test first")
    await shown()
    yield "deny-reason"
    card.cancel_reason()
    await pilot.press("f3")
    await shown()
    yield "chat"
    app.action_show_tab("sessions")
    await shown()
    yield "sessions"
    app.action_show_tab("toolcalls")
    await shown()
    yield "toolcalls"
    await pilot.press("f4")
    await shown()
    yield "settings"
    await pilot.press("right_square_bracket")
    await shown()
    yield "settings-rules"
    await pilot.press("right_square_bracket")
    await shown()
    yield "settings-preferences"
    await pilot.press("escape", "f1")
    await shown()
    yield "help"
    await pilot.press("escape", "ctrl+p", *"approv")
    await shown()
    yield "palette"
    await pilot.press("escape")


async def measure(
    tmp_path: Any, screens: set[str], themes: list[str], systems: tuple[ColorSystem, ...]
) -> tuple[list[str], list[str]]:
    """The contrast problems of the demo's `screens` in `themes` at `systems` colour depths."""
    os.environ["SYMPOSIUM_CONFIG_DIR"] = str(tmp_path)
    app = demo.build_demo_app(str(tmp_path))
    app.animation_level = "none"
    found: list[str] = []
    seen: list[str] = []
    async with app.run_test(size=demo.SIZE) as pilot:
        try:
            await demo.play(pilot)
            async for where in tour(pilot):
                if where not in screens:
                    continue
                seen.append(where)
                for theme in themes:
                    app.theme = theme
                    for _ in range(3):  # a theme switch repaints on the next turns of the loop
                        await pilot.pause()
                    found.extend(problems(app, where, systems))
        finally:
            await demo.shutdown(app)
    return seen, found


async def test_the_history_inspector_and_the_tool_call_log_are_readable_in_every_theme(
    tmp_path, monkeypatch
):
    """The inspector's "why" text and the log's time and duration columns were white on
    near-white in the light theme ($text-muted worked out against a default dark background)."""
    monkeypatch.setenv("SYMPOSIUM_CONFIG_DIR", str(tmp_path))
    themes = [t for t in THEMES if t != "symposium-terminal"]
    seen, found = await measure(
        tmp_path, {"sessions", "toolcalls"}, themes, (ColorSystem.TRUECOLOR,)
    )
    assert seen == ["sessions", "toolcalls"] and len(themes) == 3
    assert not found, f"{len(found)} hard-to-read colour pairs:\n" + "\n".join(found)


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


if (
    __name__ == "__main__"
):  # every screen, theme and depth: `python -m tests.symposium_tui.test_contrast`
    import asyncio
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        every = {"approvals", "deny-reason", "chat", "sessions", "toolcalls", "settings"}
        every |= {"settings-rules", "settings-preferences", "help", "palette"}
        _, report = asyncio.run(measure(directory, every, THEMES, SYSTEMS))
    print("\n".join(report) or "every cell readable")
    print(f"{len(report)} hard-to-read colour pairs", file=sys.stderr)
