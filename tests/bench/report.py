"""How a benchmark hands its figures to the table (`python -m tests.bench`): one `row()` call per
figure, after its own human-readable lines. A row is printed as one line,
`BENCH-ROW {json}`, which the runner collects; run alone, a benchmark's output just carries it.

A row names the figure, its baseline (measured in the same run), the target, the result (the
median), whether the target is met, and the range the result moved over — across the
baseline/subject pairs where the benchmark interleaves them (`pairs()`), or across its repeats.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from typing import Any

PREFIX = "BENCH-ROW "

__all__ = ["PREFIX", "pairs", "ratio_row", "row", "spread"]


def row(
    figure: str,
    *,
    baseline: str,
    target: str,
    result: float,
    unit: str,
    met: bool,
    low: float | None = None,
    high: float | None = None,
    samples: int | None = None,
    note: str = "",
) -> dict[str, Any]:
    """Print (and return) one figure of the table."""
    data = {
        "figure": figure,
        "baseline": baseline,
        "target": target,
        "result": round(result, 4),
        "unit": unit,
        "met": bool(met),
        "low": None if low is None else round(low, 4),
        "high": None if high is None else round(high, 4),
        "samples": samples,
        "note": note,
    }
    print(PREFIX + json.dumps(data, ensure_ascii=False), flush=True)
    return data


def pairs(
    subject: Sequence[float], baseline: Sequence[float], *, higher_is_better: bool = False
) -> tuple[float, float, float, int]:
    """The median ratio subject/baseline over interleaved pairs (the i-th of each, measured side by
    side), with its lowest and highest pair ratio and the number of pairs; `higher_is_better`
    sorts nothing, it only documents the reading."""
    n = min(len(subject), len(baseline))
    ratios = [subject[i] / baseline[i] for i in range(n) if baseline[i]]
    if not ratios:
        return float("nan"), float("nan"), float("nan"), 0
    return statistics.median(ratios), min(ratios), max(ratios), len(ratios)


def spread(values: Sequence[float]) -> tuple[float, float, float, int]:
    """Median, lowest and highest of `values`, and how many."""
    if not values:
        return float("nan"), float("nan"), float("nan"), 0
    return statistics.median(values), min(values), max(values), len(values)


def ratio_row(
    figure: str,
    *,
    baseline: str,
    ratio: float,
    target: float,
    subject: Sequence[float],
    against: Sequence[float],
    at_least: bool = False,
    note: str = "",
) -> dict[str, Any]:
    """Print (and return) a ratio figure: `ratio` against `target` — at most it, or with
    `at_least` at least it — with its range over the interleaved pairs of `subject` and `against`
    (`pairs()`)."""
    _, low, high, n = pairs(subject, against)
    return row(
        figure,
        baseline=baseline,
        target=f"{'>=' if at_least else '<='} {target:g}x",
        result=ratio,
        unit="x",
        met=ratio >= target if at_least else ratio <= target,
        low=low,
        high=high,
        samples=n,
        note=note,
    )


# The documented deny rule (docs/approval-rules.md) as a person's settings hold it: its examples are
# checked whenever the settings are read, one of them (`cd x && rm -rf build`) by the full shell
# parser. The benchmarks that measure a start-up with a person's rules begin their settings with it.
DOCUMENTED_DENY_RULE = """
[[rules]]
action = "deny"
command = ["git push --force", "git push -f", "rm -rf"]
reason = "history is shared; open a PR instead"
match = ["git push --force origin main", "cd x && rm -rf build"]
not_match = ["git push origin feature"]
"""
