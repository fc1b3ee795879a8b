"""The table `evaluate_documents` prints: one row for every question, then one per kind, file
format and language; shares in percent, "-" where no question counts towards one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.answers.evaluation.documents import DocumentsLoaded

COLUMNS = (
    # (heading, figure, how it is shown)
    ("n", "questions", "count"),
    ("correct", "correct", "share"),
    ("gold cited", "gold_file_cited", "share"),
    ("false ref.", "false_refusals", "share"),
    ("honest ref.", "honest_refusals", "share"),
    ("well sup.", "well_supported", "count"),
    ("w.s. prec.", "well_supported_precision", "share"),
    ("ECE", "calibration_error", "number"),
    ("bare list", "bare_result_lists", "count"),
    ("failed", "failed", "count"),
    ("p50 ms", "latency_ms_p50", "count"),
)
LABEL_WIDTH = 24


def summary_table(summary: Mapping[str, Any]) -> list[str]:
    lines = [_row("", [heading for heading, _, _ in COLUMNS])]
    lines.append(_figures_row("all questions", summary["overall"]))
    for cut in ("kind", "format", "language"):
        lines.append("")
        for name, figures in summary[f"by_{cut}"].items():
            lines.append(_figures_row(f"{cut} {name}", figures))
    return lines


def documents_lines(loaded: DocumentsLoaded) -> list[str]:
    lines = [
        f"documents: {len(loaded.files)} files in {loaded.collection.name!r} "
        f"({loaded.processed} processed, {loaded.unchanged} unchanged, "
        f"{len(loaded.failed)} failed) in {loaded.seconds:.1f} s"
    ]
    lines += [f"  failed: {name}: {why}" for name, why in loaded.failed]
    lines += [f"  not ready yet: {name}" for name in loaded.pending]
    lines += [f"  in the collection but not in the folder: {name}" for name in loaded.stale]
    return lines


def _figures_row(label: str, figures: Mapping[str, Any]) -> str:
    return _row(label, [_shown(figures[key], how) for _, key, how in COLUMNS])


def _row(label: str, cells: list[str]) -> str:
    widths = [max(len(heading), 6) for heading, _, _ in COLUMNS]
    return f"{label[:LABEL_WIDTH]:<{LABEL_WIDTH}}" + "".join(
        f" {cell:>{width}}" for cell, width in zip(cells, widths, strict=True)
    )


def _shown(value: Any, how: str) -> str:
    if value is None:
        return "-"
    if how == "share":
        return f"{100 * value:.1f}%"
    if how == "number":
        return f"{value:.3f}"
    return f"{value:.0f}" if isinstance(value, float) else str(value)
