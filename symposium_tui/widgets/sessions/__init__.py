"""The sessions and history inspector (tab 2): the pane and its views, one module each.

- `pane.py` — `SessionsPane`: lays the views out, follows the selection, scrubs, switches source.
- `session_table.py` — every session of every connection, updated row by row.
- `decision_table.py` — the timeline of history decisions (one session's, or all of them).
- `detail.py` — the selected decision, its evidence and the history as it was then.
- `history.py` — the text of a history and of a cancel's two sides (no widgets).
- `file_bar.py` — the bar that opens a wire trace or event log and replays it.
"""

from symposium_tui.widgets.sessions.history import render_evidence_side, render_history
from symposium_tui.widgets.sessions.pane import SessionsPane

__all__ = ["SessionsPane", "render_evidence_side", "render_history"]
