"""Console themes: TOML files turned into Textual `Theme`s.

The bundled files are `themes/*.toml` at the top of the source tree; the wheel ships them as
`symposium_tui/bundled_themes/` (pyproject.toml maps the folder into the package). A user's
own files are read from `<config dir>/themes/*.toml` and may override a bundled theme by name.
A theme file holds Textual's colour fields plus a `[variables]` table, which may set Textual's
variables and the console's own (`card-pending`, `card-pending-text`, `diff-added`, `diff-removed`,
`diff-hunk`; see `APP_VARIABLES`). A broken file is reported and skipped, never fatal.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.theme import Theme

if TYPE_CHECKING:
    from textual.app import App


def bundled_theme_dir() -> Path:
    """Where the bundled theme files are: inside the package in an installed wheel, else `themes/`
    beside the packages (a source tree, or an editable install of one)."""
    installed = Path(__file__).with_name("bundled_themes")
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / "themes"


BUNDLED_DIR = bundled_theme_dir()
DEFAULT_THEME = "symposium-dark"

#: The console's own theme variables and, for themes that leave them out, which of the theme's
#: colours stands in (Posting's pattern: app-specific variables with fallbacks).
APP_VARIABLES: dict[str, str] = {
    "card-pending": "warning",
    "card-pending-text": "background",  # text on a card-pending background (keys, the chat banner)
    "diff-added": "success",
    "diff-removed": "error",
    "diff-hunk": "secondary",
}

_COLOR_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
_OTHER_FIELDS = {
    "name": str,
    "dark": bool,
    "ansi": bool,
    "luminosity_spread": float,
    "text_alpha": float,
}


class ThemeFileError(ValueError):
    """A theme file that cannot be used; the message names the file and the problem."""


@dataclass
class LoadedThemes:
    themes: dict[str, Theme]
    errors: list[str]
    sources: dict[str, Path]


def parse_theme(data: dict[str, Any], where: str, *, check_colours: bool = True) -> Theme:
    """A theme from a theme file's table; ThemeFileError naming `where` when it is not one.
    `check_colours` builds its colour system to find a colour Textual cannot parse (~1 ms a
    theme): the bundled themes are checked by the test suite instead, not at every start."""
    unknown = set(data) - set(_COLOR_FIELDS) - set(_OTHER_FIELDS) - {"variables"}
    if unknown:
        raise ThemeFileError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    if not isinstance(data.get("name"), str) or not data["name"].strip():
        raise ThemeFileError(f"{where}: a theme needs a name")
    if not isinstance(data.get("primary"), str):
        raise ThemeFileError(f"{where}: a theme needs a primary colour")
    kwargs: dict[str, Any] = {}
    for key in _COLOR_FIELDS:
        if key in data:
            if not isinstance(data[key], str):
                raise ThemeFileError(f"{where}: {key} must be a colour string")
            kwargs[key] = data[key]
    for key, kind in _OTHER_FIELDS.items():
        if key in data:
            value = data[key]
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind):
                raise ThemeFileError(f"{where}: {key} must be a {kind.__name__}")
            kwargs[key] = value
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeFileError(f"{where}: [variables] must map names to strings")
    theme = Theme(variables=dict(variables), **kwargs)
    if check_colours:
        try:
            theme.to_color_system().generate()
        except Exception as exc:  # Textual's colour parser names the bad value
            raise ThemeFileError(f"{where}: {exc}") from None
    return theme


def load_theme_file(path: Path, *, check_colours: bool = True) -> Theme:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ThemeFileError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"{path}: {exc}") from None
    return parse_theme(data, str(path), check_colours=check_colours)


def user_theme_dir(config_dir: Path | None = None) -> Path:
    if config_dir is None:
        from bridge.paths import themes_dir

        return themes_dir()
    return config_dir / "themes"


def load_themes(config_dir: Path | None = None) -> LoadedThemes:
    """The bundled themes, then the user's (which win on a name clash)."""
    loaded = LoadedThemes({}, [], {})
    user_dir = user_theme_dir(config_dir)
    for directory in (BUNDLED_DIR, user_dir):
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = load_theme_file(path, check_colours=directory is not BUNDLED_DIR)
            except ThemeFileError as exc:
                loaded.errors.append(str(exc))
                continue
            loaded.themes[theme.name] = theme
            loaded.sources[theme.name] = path
    return loaded


UNCHECKED = "not checked for contrast"


def install_themes(app: App[Any], config_dir: Path, wanted: object) -> LoadedThemes:
    """Register the bundled and the user's themes with `app` and show `wanted` (a theme's name;
    the default theme when it names none of them). Returns what was loaded, with its errors."""
    loaded = load_themes(config_dir)
    for theme in loaded.themes.values():
        app.register_theme(theme)
    app.theme = (
        wanted if isinstance(wanted, str) and wanted in app.available_themes else DEFAULT_THEME
    )
    return loaded


def is_bundled(name: str, sources: dict[str, Path]) -> bool:
    """A theme shipped with the console (tests/symposium_tui/test_contrast.py checks each one's
    contrast on every screen), not overridden by a file of the user's."""
    source = sources.get(name)
    return source is not None and source.parent == BUNDLED_DIR


def ordered_themes(names: Any, sources: dict[str, Path]) -> list[tuple[str, str]]:
    """Every theme as (name, label) for a chooser: the bundled ones first, then the others
    (Textual's, the user's own files) marked as not checked for contrast."""
    ours = sorted(n for n in names if is_bundled(n, sources))
    others = sorted(n for n in names if not is_bundled(n, sources))
    return [(n, n) for n in ours] + [
        (n, f"{n} · {'your file, ' if n in sources else ''}{UNCHECKED}") for n in others
    ]


def variable_defaults(theme: Theme) -> dict[str, str]:
    """Values for the console's own variables that `theme` leaves out."""
    system = theme.to_color_system().generate()
    return {name: system[fallback] for name, fallback in APP_VARIABLES.items()}
