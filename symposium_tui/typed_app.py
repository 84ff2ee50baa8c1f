"""`console_app()`: a screen's or widget's typed handle on the running `SymposiumApp`.

Textual's `getters.app(SymposiumApp)` needs the app class when the screen's module is imported,
and `symposium_tui.app` imports the screens (when it opens them): an import cycle. This getter is
typed as the console's app for the checker but checks only for a Textual `App` at run time, so a
screen imports the app module for its annotations alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import getters
from textual.app import App

if TYPE_CHECKING:
    from symposium_tui.app import SymposiumApp

    _AppGetter = getters.app[SymposiumApp]
else:
    _AppGetter = getters.app

__all__ = ["console_app"]


class console_app(_AppGetter):
    """`app = console_app()` in a class body, as `app = getters.app(SymposiumApp)` would be."""

    def __init__(self) -> None:
        super().__init__(App)  # type: ignore[arg-type]  # the run-time check is for the base class
