"""The bundled themes: the four the console promises, loadable, and readable when a terminal
without truecolor (most SSH sessions) shows them in its 256-colour palette."""

from __future__ import annotations

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem
from textual.color import Color

from symposium_tui.themes import (
    BUNDLED_DIR,
    ThemeFileError,
    load_theme_file,
    load_themes,
    parse_theme,
    variable_defaults,
)

BUNDLED = load_themes().themes

# (foreground, background, minimum WCAG contrast): text must be comfortably readable (4.5),
# borders and accents must stand out (3).
PAIRS = [
    ("foreground", "background", 4.5),
    ("foreground", "surface", 4.5),
    ("foreground", "panel", 4.5),
    ("diff-added", "surface", 4.5),
    ("diff-removed", "surface", 4.5),
    ("diff-hunk", "surface", 4.5),
    ("footer-key-foreground", "footer-background", 4.5),
    ("error", "background", 4.5),
    ("success", "background", 4.5),
    ("primary", "background", 4.5),
    ("card-pending", "background", 3.0),
    ("warning", "background", 3.0),
]


def in_256_colours(value: str, under: str) -> tuple[int, int, int]:
    colour = Color.parse(value)
    if colour.a < 1:
        colour = Color.parse(under) + colour
    rich = RichColor.parse(colour.hex[:7]).downgrade(ColorSystem.EIGHT_BIT).get_truecolor()
    return rich.red, rich.green, rich.blue


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    def luminance(rgb: tuple[int, int, int]) -> float:
        def channel(v: int) -> float:
            c = v / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = rgb
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)

    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def test_the_console_ships_dark_light_high_contrast_and_terminal_palette_themes():
    assert {
        "symposium-dark",
        "symposium-light",
        "symposium-high-contrast",
        "symposium-terminal",
    } <= set(BUNDLED)
    assert BUNDLED["symposium-dark"].dark and not BUNDLED["symposium-light"].dark
    terminal = BUNDLED["symposium-terminal"]
    assert terminal.ansi and terminal.background == "ansi_default"  # the terminal's own palette
    assert load_themes().errors == []


def test_every_bundled_theme_builds_its_colour_system():
    """The console skips this check for its own themes at start-up: it is made here."""
    checked = {
        load_theme_file(path, check_colours=True).name for path in BUNDLED_DIR.glob("*.toml")
    }
    assert checked == set(BUNDLED)


@pytest.mark.parametrize("name", sorted(n for n, t in BUNDLED.items() if not t.ansi))
def test_text_stays_readable_in_256_colours(name):
    theme = BUNDLED[name]
    variables = {
        **variable_defaults(theme),
        **theme.to_color_system().generate(),
        **theme.variables,
    }
    background = variables["background"]
    poor = []
    for fg, bg, minimum in PAIRS:
        under = in_256_colours(variables[bg], background)
        ratio = contrast(in_256_colours(variables[fg], variables[bg]), under)
        if ratio < minimum:
            poor.append(f"{fg} on {bg}: {ratio:.1f} < {minimum}")
    assert not poor, poor


def test_the_terminal_theme_uses_only_ansi_colours():
    theme = BUNDLED["symposium-terminal"]
    values = [
        getattr(theme, f)
        for f in (
            "primary",
            "secondary",
            "accent",
            "foreground",
            "background",
            "success",
            "warning",
            "error",
        )
    ] + list(theme.variables.values())
    assert all(
        v.startswith("ansi_") for v in values if v and not v.startswith(("reverse", "bold", "none"))
    ), values


def test_a_theme_file_with_a_bad_colour_or_field_is_refused_with_its_name():
    with pytest.raises(ThemeFileError, match=r"x\.toml"):
        parse_theme({"name": "x", "primary": "no such colour"}, "x.toml")
    with pytest.raises(ThemeFileError, match="unknown field"):
        parse_theme({"name": "x", "primary": "#ffffff", "primry": "#000000"}, "x.toml")
    with pytest.raises(ThemeFileError, match="needs a name"):
        parse_theme({"primary": "#ffffff"}, "x.toml")


@pytest.mark.parametrize("name", sorted(BUNDLED))
async def test_every_bundled_theme_styles_the_whole_console(make_app, name):
    app = make_app(theme=name)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == name
        for key in ("f4", "escape", "f1", "escape", "f3"):
            await pilot.press(key)
        assert app.query_one("#tabs").active == "chat"


async def test_the_choosers_list_the_bundled_themes_first_and_mark_the_others(make_app, config_dir):
    from textual.widgets import OptionList, Select

    from symposium_tui.screens.settings import SettingsScreen
    from symposium_tui.screens.themes import ThemePicker
    from tests.support.console import wait_for

    ours = [
        "symposium-dark",
        "symposium-high-contrast",
        "symposium-light",
        "symposium-terminal",
    ]
    (config_dir / "themes").mkdir(parents=True)
    (config_dir / "themes" / "mine.toml").write_text(
        'name = "mine"\ndark = true\nprimary = "#88aaff"\n'
    )
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.chat_pane() is not None)
        app.search_themes()
        await wait_for(
            pilot, lambda: isinstance(app.screen, ThemePicker) and app.screen.query("#themes")
        )
        options = app.screen.query_one("#themes", OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [p.removesuffix("  ✓ current") for p in prompts[:4]] == ours
        assert "mine · your file, not checked for contrast" in prompts
        rest = prompts[4:]
        assert len(rest) > 10 and all("not checked for contrast" in p for p in rest), rest
        assert "textual-dark · not checked for contrast" in rest
        await pilot.press("escape")

        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        select = app.screen.query_one("#pref-theme", Select)
        labels = [str(prompt) for prompt, _ in select._options if _ is not Select.NULL]
        assert labels[:4] == ours and labels[4:] == rest
