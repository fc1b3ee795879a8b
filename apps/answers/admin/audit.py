"""Pure pieces of the turn audit page and its CSV export (no admin classes here).

Kept apart from admin.py so the audit logic can be read and tested on its own.
"""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.aggregates import StringAgg
from django.db.models import F, FloatField, Func, JSONField, OuterRef, QuerySet, Subquery, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.http import StreamingHttpResponse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.answers.models import Turn
from apps.answers.turn.citation_numbers import split_last_sentence
from apps.answers.turn.timings import stage_timings, timing_number
from apps.corpus.text import sentence_spans, words

# --- CSV export ------------------------------------------------------------------------------

CSV_COLUMNS: dict[str, str] = {
    "id": "pk",
    "created_at": "created_at",
    "conversation": "conversation_id",
    "conversation_title": "conversation__title",
    "question": "question",
    "answer": "answer",
    "intent": "intent",
    "tier": "tier",
    "action": "action",
    "router_confidence": "router_confidence",
    "confidence": "confidence",
    "band": "confidence_band",
    "refused": "refused",
    "refusal_reason": "refusal_reason",
    "composer": "composer",
    "citations": "citation_count",
    "status": "status",
    "error_code": "error_code",
    "total_ms": "total_ms",
    "slowest_stage": "timings_ms",  # the stage's name and time, worked out per row
    "categories": "category_names",
    "feedback": "feedback__rating",
    "feedback_reason": "feedback__reason",
    "feedback_comment": "feedback__comment",
    "client": "client",
    "client_agent": "client_agent",
}
_TIMINGS = list(CSV_COLUMNS).index("slowest_stage")
# A spreadsheet runs a cell starting with these as a formula; questions are user input.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class _Echo:
    def write(self, value: str) -> str:
        return value


def total_ms() -> Cast:
    """The turn's total time in ms (None while streaming), for columns, filters and sorting."""
    return Cast(KT("timings_ms__total_ms"), FloatField())


def stages_ms() -> Func:
    """The turn's timings without the speculation spans (the bulk of them), for a list row."""
    return Func(
        F("timings_ms"), Value("spans"), function="", arg_joiner=" - ", output_field=JSONField()
    )


def slowest_stage(timings: Mapping[str, Any]) -> tuple[str, float] | None:
    """The stage that took longest (nested retrieval stages included), or None."""
    stages = [
        (stage, ms)
        for stage, ms in stage_timings(timings, skip=("spans", "total_ms"))
        if not stage.endswith("total_ms")
    ]
    return max(stages, key=lambda s: s[1]) if stages else None


def _slowest_cell(timings: object) -> str:
    stage = slowest_stage(timings) if isinstance(timings, Mapping) else None
    return f"{stage[0]} {stage[1]:.1f} ms" if stage else ""


def _csv_row(row: Sequence[object]) -> list[object]:
    cells = list(row)
    cells[_TIMINGS] = _slowest_cell(cells[_TIMINGS])
    return [_csv_cell(v) for v in cells]


def _csv_cell(value: object) -> object:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value.isoformat() if hasattr(value, "isoformat") else value


def turns_csv(queryset: QuerySet[Turn]) -> StreamingHttpResponse:
    """Stream rows as they are read (a server-side cursor), so an export never sits in memory."""
    writer = csv.writer(_Echo())
    # The categories decided at each turn (analytics' rows, reached through the relation).
    names = StringAgg(
        "category_decisions__category__name", delimiter="; ", order_by="-category_decisions__score"
    )
    category_names = (
        Turn.objects.filter(pk=OuterRef("pk")).order_by().values("pk").annotate(n=names).values("n")
    )
    if "total_ms" not in queryset.query.annotations:
        queryset = queryset.annotate(total_ms=total_ms())
    rows = (
        queryset.annotate(category_names=Subquery(category_names))
        .values_list(*CSV_COLUMNS.values())
        .iterator(chunk_size=500)
    )
    lines = itertools.chain(
        [writer.writerow(CSV_COLUMNS)],
        (writer.writerow(_csv_row(row)) for row in rows),
    )
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = f'attachment; filename="turns-{stamp}.csv"'
    return response


# --- The audit page's pieces (pure) ----------------------------------------------------------


@dataclass(frozen=True)
class AnswerPiece:
    text: str
    cited: bool = False  # the sentence just before one or more markers
    aliases: tuple[str, ...] = ()


def answer_pieces(answer: str, marks: Iterable[tuple[int, str]]) -> list[AnswerPiece]:
    """Cut the stored answer (markers stripped) back at the offsets where its markers stood."""
    at: dict[int, list[str]] = {}
    for position, alias in marks:
        at.setdefault(min(max(position, 0), len(answer)), []).append(alias)
    pieces: list[AnswerPiece] = []
    start = 0
    for position in sorted(at):
        lead, sentence = split_last_sentence(answer[start:position])
        if lead:
            pieces.append(AnswerPiece(lead))
        pieces.append(AnswerPiece(sentence, cited=True, aliases=tuple(at[position])))
        start = position
    if start < len(answer):
        pieces.append(AnswerPiece(answer[start:]))
    return pieces


def answer_html(
    pieces: Sequence[AnswerPiece],
    titles: Mapping[str, str],
    numbers: Mapping[str, int] | None = None,
) -> SafeString:
    """The answer with its cited sentences marked; a chip shows the number the asker saw
    (the alias where there is none), its title the alias and source."""
    numbers = numbers or {}

    def render(piece: AnswerPiece) -> SafeString:
        if not piece.cited:
            return format_html("{}", piece.text)
        chips = format_html_join(
            "",
            '<a class="chip" href="#citation-{}" title="{} {}">[{}]</a>',
            ((a, a, titles.get(a, ""), numbers.get(a, a)) for a in piece.aliases),
        )
        return format_html('<mark class="cited">{}</mark>{}', piece.text, chips)

    return format_html_join("", "{}", ((render(p),) for p in pieces))


@dataclass(frozen=True)
class TimelineBar:
    stage: str
    start_ms: float
    end_ms: float
    left_pct: float
    width_pct: float


def timeline_bars(timings: Mapping[str, Any]) -> list[TimelineBar]:
    """Spans (stage -> [start, end] ms from the turn start) as bars on one scale."""
    spans: list[tuple[str, float, float]] = []
    for stage, span in (timings.get("spans") or {}).items():
        if isinstance(span, list | tuple) and len(span) == 2:
            start, end = timing_number(span[0]), timing_number(span[1])
            if start is not None and end is not None and end >= start:
                spans.append((str(stage), start, end))
    total = timing_number(timings.get("total_ms"))
    if total is not None:
        spans.append(("total", 0.0, total))
    scale = max((end for _, _, end in spans), default=0.0)
    if scale <= 0:
        return []
    return [
        TimelineBar(
            stage,
            start,
            end,
            left_pct=round(start / scale * 100, 2),
            width_pct=max(round((end - start) / scale * 100, 2), 0.5),
        )
        for stage, start, end in sorted(spans, key=lambda s: (s[0] == "total", s[1]))
    ]


def scaled_stages(stages: Sequence[tuple[str, float]]) -> list[tuple[str, float, float]]:
    longest = max((ms for _, ms in stages), default=0.0) or 1.0
    return [(stage, ms, ms / longest * 100) for stage, ms in stages]


def leg_value(candidate: Mapping[str, Any], leg: str) -> str:
    rank, score = candidate.get(f"{leg}_rank"), timing_number(candidate.get(f"{leg}_score"))
    if rank is None:
        return "–"
    return f"{rank} · {score:.3f}" if score is not None else str(rank)


def short_json(data: object, limit: int = 160) -> str:
    return Truncator(json.dumps(data, ensure_ascii=False, default=str)).chars(limit)


def cited_sentences(pieces: Sequence[AnswerPiece]) -> dict[str, str]:
    """The answer sentence each alias was cited for (the first, if cited more than once)."""
    found: dict[str, str] = {}
    for piece in pieces:
        for alias in piece.aliases:
            found.setdefault(alias, piece.text.strip())
    return found


def snippet_marked(snippet: str, sentence: str) -> SafeString:
    """The chunk's text with the sentence that best supports `sentence` in a <mark>.

    Best is the most words shared (case-folded); nothing is marked when no word is shared, so
    a reader never sees a highlight that explains nothing.
    """
    wanted = {w.casefold() for w in words(sentence)}
    spans = sentence_spans(snippet)
    overlap = [len(wanted & {w.casefold() for w in words(snippet[a:b])}) for a, b in spans]
    if not wanted or not overlap or max(overlap) == 0:
        return format_html("{}", snippet)
    start, end = spans[overlap.index(max(overlap))]
    return format_html(
        '{}<mark class="cited">{}</mark>{}', snippet[:start], snippet[start:end], snippet[end:]
    )


def rewritten_query(trace: Mapping[str, Any]) -> str:
    """The standalone query a follow-up was rewritten into, or "" when it was not."""
    for variant in trace.get("variants") or []:
        if isinstance(variant, Mapping) and variant.get("kind") == "rewrite":
            return str(variant.get("text") or "")
    return ""
