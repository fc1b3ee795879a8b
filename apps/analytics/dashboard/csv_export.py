"""The dashboard as CSV: every figure the page shows, one per line, for a spreadsheet.

Long format (section, item, slot, measure, value) so every panel fits one sheet and a pivot
table rebuilds any chart.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from django.http import HttpResponse

from apps.analytics.dashboard.question_lists import LowConfidence, QuestionCount
from apps.analytics.dashboard.selectors import Board, Figures

HEADER = ("section", "item", "from", "to", "measure", "value")
FIGURES = (
    "turns",
    "refused",
    "mean_confidence",
    "p50_ms",
    "p95_ms",
    "feedback_up",
    "feedback_down",
)
# A spreadsheet runs a cell starting with these as a formula; questions are user input.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

Row = tuple[Any, ...]


def board_csv(
    board: Board, refused: Sequence[QuestionCount], least: Sequence[LowConfidence]
) -> HttpResponse:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    writer.writerows(_safe(row) for row in _rows(board, refused, least))
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    p = board.period
    response["Content-Disposition"] = f'attachment; filename="dashboard-{p.first}-{p.last}.csv"'
    return response


def _rows(
    board: Board, refused: Sequence[QuestionCount], least: Sequence[LowConfidence]
) -> Iterable[Row]:
    p = board.period
    before = p.previous()
    yield from _figures("period", "all", p.first, p.last, board.total)
    yield from _figures("previous period", "all", before.first, before.last, board.previous)
    for slot, figures in zip(board.slots, board.series, strict=True):
        yield from _figures("over time", slot.label, slot.first, slot.last, figures)
    for section, lines in (("intent", board.intents), ("category", board.categories)):
        for line in lines:
            for slot, count in zip(board.slots, line.counts, strict=True):
                yield (section, line.label, slot.first, slot.last, "turns", count)
            for measure, value in line.extra.items():
                yield (section, line.label, p.first, p.last, measure, value)
    for composer, turns, fallbacks in board.composers:
        yield ("composer", composer, p.first, p.last, "turns", turns)
        yield ("composer", composer, p.first, p.last, "fallbacks", fallbacks)
    for doc in board.documents_top:
        yield ("most cited document", doc.title, p.first, p.last, "turns", doc.turns)
    for doc in board.documents_never:
        yield ("never cited document", doc.title, p.first, p.last, "turns", 0)
    for question in refused:
        yield ("most refused question", question.question, p.first, p.last, "turns", question.turns)
    for low in least:
        yield (
            "least confident answer",
            low.question,
            p.first,
            p.last,
            "confidence",
            low.confidence,
        )


def _figures(section: str, item: str, first: Any, last: Any, figures: Figures) -> Iterable[Row]:
    for measure in FIGURES:
        value = getattr(figures, measure)
        yield (section, item, first, last, measure, "" if value is None else round(value, 4))


def _safe(row: Row) -> Row:
    return tuple("'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v for v in row)
