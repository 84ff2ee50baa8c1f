"""The Markdown documents render as written: every table row belongs to a table."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCUMENTS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])


def stray_table_rows(text: str) -> list[tuple[int, str]]:
    """Lines that look like a table row (`| … |`) but follow neither a table row nor a header
    line: Markdown draws them as a paragraph of pipes, away from the table they were meant for."""
    stray = []
    in_code = False
    previous = ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("|") and line.rstrip().endswith("|"):
            if not previous.startswith("|"):
                # A table starts with a header row followed by its `| --- |` delimiter row.
                following = text.splitlines()[number] if number < len(text.splitlines()) else ""
                if not following.replace(" ", "").startswith("|-") and not following.replace(
                    " ", ""
                ).startswith("|:"):
                    stray.append((number, line))
        previous = line if not in_code else ""
    return stray


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_table_row_sits_in_its_table(document):
    assert stray_table_rows(document.read_text()) == []


def test_a_row_after_a_paragraph_is_found():
    text = "| key | answer |\n| --- | --- |\n| `a` | approve |\n\nWords.\n| `v` | view |\n"
    assert stray_table_rows(text) == [(6, "| `v` | view |")]
