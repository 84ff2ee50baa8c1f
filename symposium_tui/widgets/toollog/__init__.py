"""The tool-call log (tab 3): every tool call the bridge saw, one line each, filterable and
searchable.

- `pane.py` — `ToolLogPane`: the status line, the filter bar and the details panel around the log.
- `view.py` — `ToolLogView`: the log, drawn line by line from the state's tool-call store.
- `filter.py` — `ToolFilter`: which calls are shown (no widgets).
- `details.py` — the text of one call in full.
"""

from symposium_tui.widgets.toollog.details import describe_entry
from symposium_tui.widgets.toollog.filter import ToolFilter, search_pattern
from symposium_tui.widgets.toollog.pane import ToolLogPane
from symposium_tui.widgets.toollog.view import ToolLogView

__all__ = ["ToolFilter", "ToolLogPane", "ToolLogView", "describe_entry", "search_pattern"]
