"""Approval stats: per pattern, asked / approved / denied / in a row / median answer time, and the
rule a long run of approvals suggests. `r` opens the suggested rule for editing and saves it —
nothing is ever applied without that."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from symposium_tui.typed_app import console_app


class ApprovalStatsScreen(Screen[None]):
    app = console_app()

    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("r", "make_rule", "Make a rule…"),
    ]

    def compose(self) -> ComposeResult:
        yield Header(icon="§")
        stats = self.app.fatigue
        yield Static(
            f"How often you were asked, per pattern. After {stats.threshold} approvals in a row a "
            "rule is suggested; r shows it for editing (nothing is applied on its own).",
            classes="settings-hint",
        )
        table: DataTable[Any] = DataTable(cursor_type="row", id="stats-table", zebra_stripes=True)
        table.add_columns("Pattern", "Asked", "Approved", "Denied", "In a row", "Median", "Rule?")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_rows()
        self.query_one("#stats-table").focus()

    def refresh_rows(self) -> None:
        table = self.query_one("#stats-table", DataTable)
        table.clear()
        stats = self.app.fatigue
        for row in stats.rows():
            median = row.median_seconds
            suggest = row.rule is not None and row.in_a_row >= stats.threshold
            table.add_row(
                row.key,
                str(row.asked),
                str(row.approved),
                str(row.denied),
                str(row.in_a_row),
                "–" if median is None else f"{median:.1f} s",
                "suggested (r)" if suggest else "",
                key=row.key,
            )

    def action_make_rule(self) -> None:
        table = self.query_one("#stats-table", DataTable)
        if not table.row_count:
            return
        key = str(table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value)
        row = self.app.fatigue.patterns.get(key)
        if row is None or row.rule is None:
            self.app.notify("Nothing to propose for this pattern.")
            return
        self.app.propose_rule(row.rule, row.key)

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_make_rule()

    def action_close(self) -> None:
        self.dismiss()
