"""Tables that fit their width: the widest columns give way first, and a cell cut short ends in
an ellipsis (a DataTable left to itself grows wider than the screen, and its columns past the
edge vanish; with fixed widths it cuts a cell without a mark)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

__all__ = ["available_width", "clip", "fit_widths", "natural_widths", "set_columns"]


def cell_width(value: Any) -> int:
    text = value if isinstance(value, Text) else Text(str(value))
    return max((line.cell_len for line in text.split()), default=0)


def natural_widths(labels: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[int]:
    """Each column as wide as its label and its widest cell."""
    widths = [len(label) for label in labels]
    for row in rows:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], cell_width(value))
    return widths


def fit_widths(natural: Sequence[int], available: int, floors: Sequence[int]) -> list[int]:
    """Widths that fit in `available` cells: the column with the most to give gives one cell at a
    time; none goes below its floor (the table scrolls sideways only if the floors do not fit)."""
    widths = list(natural)
    excess = sum(widths) - available
    while excess > 0:
        i = max(range(len(widths)), key=lambda k: widths[k] - floors[k])
        if widths[i] <= floors[i]:
            break
        widths[i] -= 1
        excess -= 1
    return widths


def available_width(table: DataTable[Any], columns: int) -> int | None:
    """The cells' room in `table` (its padding and a vertical scrollbar set aside), or None before
    it is laid out."""
    width = table.size.width
    if width <= 0:
        return None
    return width - table.styles.scrollbar_size_vertical - 2 * table.cell_padding * columns


def clip(value: Any, width: int) -> Any:
    """`value` in at most `width` cells: cut with an ellipsis when it is longer."""
    if cell_width(value) <= width:
        return value
    text = value.copy() if isinstance(value, Text) else Text(str(value))
    text.truncate(width, overflow="ellipsis")
    return text


def set_columns(
    table: DataTable[Any],
    columns: Sequence[tuple[str, str]],
    rows: Sequence[tuple[str, Sequence[Any]]],
    floors: Sequence[int],
) -> list[int]:
    """Fill `table` afresh with `rows` (key, cells) under `columns` (label, key) that fit its width,
    every cut cell ending in an ellipsis. Returns the widths used."""
    labels = [label for label, _ in columns]
    natural = natural_widths(labels, (cells for _, cells in rows))
    room = available_width(table, len(columns))
    widths = natural if room is None else fit_widths(natural, room, floors)
    table.clear(columns=True)
    for (label, key), width in zip(columns, widths):
        table.add_column(clip(label, width), key=key, width=width)
    for key, cells in rows:
        table.add_row(*(clip(c, w) for c, w in zip(cells, widths)), key=key)
    return widths
