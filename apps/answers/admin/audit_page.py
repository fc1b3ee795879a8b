"""The turn audit page: everything one turn did, gathered into the template's context.

It runs from the router's classification to the chunk behind each [cN]. The turn admin's
change view renders it (admin.py); the pure formatting it uses (answer markup, timeline,
stage tables) lives in `audit.py`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils.text import Truncator

from apps.answers.admin.audit import (
    answer_html,
    answer_pieces,
    cited_sentences,
    leg_value,
    rewritten_query,
    scaled_stages,
    short_json,
    snippet_marked,
    stage_timings,
    timeline_bars,
)
from apps.answers.admin.display import band_badge
from apps.answers.models import Citation, CitationKind, Conversation, Turn, TurnFeedback
from apps.answers.turn.citation_numbers import citation_numbers
from apps.corpus.models import Chunk, Collection

MAX_EVENTS = 500
CANDIDATES_SHOWN = 10  # the rest of the retrieved chunks sit behind "show all"
HISTORY_TURNS = 20  # the category history shows this turn and the ones just before it


@dataclass(frozen=True)
class CandidateRow:
    rank: int | None
    chunk_id: int
    chunk_url: str
    chunk_label: str
    document: str
    document_url: str
    alias: str  # its alias in the context window, "" if it did not make it in
    cited: str  # cited | attributed | ""
    legs: tuple[str, ...]  # dense, keyword, fused, rerank: "rank · score"
    variant: str


@dataclass(frozen=True)
class TurnAuditPage:
    """One turn's audit context; its links point into the admin site called `site_name`."""

    site_name: str

    def context(self, turn: Turn) -> dict[str, Any]:
        citations = _citations(turn)
        titles = {c.alias: f"{c.title} p. {c.page}" if c.page else c.title for c in citations}
        marks = [(c.position, c.alias) for c in citations if c.position is not None]
        pieces = answer_pieces(turn.answer, marks)
        sentences = cited_sentences(pieces)
        numbers = citation_numbers(citations)
        trace, timings = turn.retrieval_trace or {}, turn.timings_ms or {}
        retrieval_timings = trace.get("timings_ms") or timings.get("retrieval") or {}
        candidates = self._candidate_rows(turn, citations)
        return {
            "answer_html": answer_html(pieces, titles, numbers),
            "citation_rows": [
                self._citation_row(c, sentences.get(c.alias, ""), numbers.get(c.alias))
                for c in citations
            ],
            "candidate_rows": candidates[:CANDIDATES_SHOWN],
            "candidate_rest": candidates[CANDIDATES_SHOWN:],
            "candidate_count": len(candidates),
            "rewrite": rewritten_query(trace),
            "variants": [v for v in trace.get("variants") or [] if isinstance(v, Mapping)],
            "classification_json": json.dumps(turn.classification, indent=2, ensure_ascii=False),
            "confidence_inputs_json": json.dumps(turn.confidence_inputs, indent=2)
            if turn.confidence_inputs
            else "",
            "categories": _categories(turn.conversation),
            "category_history": category_history(turn),
            "feedback": _feedback(turn),
            "readable_collections": _readable_names(turn),
            "conversation_url": self._url("answers_conversation_change", turn.conversation_id),
            "timeline": timeline_bars(timings),
            "stage_tables": [
                ("Turn stages", scaled_stages(stage_timings(timings, skip=("spans", "retrieval")))),
                ("Retrieval stages", scaled_stages(stage_timings(retrieval_timings))),
            ],
            "models_used": sorted((turn.models_used or {}).items()),
            "context_stats": {k: v for k, v in (turn.context or {}).items() if k != "aliases"},
            "events": [
                (e.seq, e.type, e.created_at, short_json(e.data))
                for e in turn.events.order_by("seq").only(
                    "turn", "seq", "type", "data", "created_at"
                )[:MAX_EVENTS]
            ],
            "max_events": MAX_EVENTS,
            "band_badge": band_badge(turn.confidence, turn.confidence_band),
        }

    def _url(self, name: str, *args: object) -> str:
        return reverse(f"{self.site_name}:{name}", args=args)

    def _citation_row(
        self, citation: Citation, sentence: str, number: int | None
    ) -> dict[str, Any]:
        chunk, document_id = citation.chunk, citation.document_id
        return {
            "citation": citation,
            "number": number,  # the number the asker saw on its chip (cited ones only)
            "snippet": snippet_marked(Truncator(citation.snippet).chars(400), sentence),
            "document_url": self._url("corpus_document_change", document_id) if document_id else "",
            "file_url": reverse("document-source", args=[document_id]) if document_id else "",
            "chunk_url": self._url("corpus_chunk_change", chunk.pk) if chunk else "",
            "chunk_label": f"chunk #{chunk.index}" if chunk else "",
        }

    def _candidate_rows(self, turn: Turn, citations: Sequence[Citation]) -> list[CandidateRow]:
        trace = turn.retrieval_trace or {}
        candidates = [c for c in trace.get("candidates") or [] if isinstance(c, Mapping)]
        in_context = {
            int(cid): alias for alias, cid in ((turn.context or {}).get("aliases") or {}).items()
        }
        cited: dict[int, str] = {}
        for c in sorted(citations, key=lambda c: c.kind != CitationKind.CITED):
            if c.chunk_id is not None:
                cited.setdefault(c.chunk_id, c.kind)
        listed = [int(c["chunk_id"]) for c in candidates if "chunk_id" in c]
        # A cited chunk missing from the stored candidates still gets a row, without ranks.
        extra = [cid for cid in itertools.chain(in_context, cited) if cid not in set(listed)]
        chunks = _chunks(listed + extra)
        rows = [
            self._candidate_row(rank, dict(c), chunks, in_context, cited)
            for rank, c in enumerate(candidates, start=1)
            if "chunk_id" in c
        ]
        rows += [
            self._candidate_row(None, {"chunk_id": cid}, chunks, in_context, cited)
            for cid in dict.fromkeys(extra)
        ]
        return rows

    def _candidate_row(
        self,
        rank: int | None,
        candidate: Mapping[str, Any],
        chunks: Mapping[int, Chunk],
        in_context: Mapping[int, str],
        cited: Mapping[int, str],
    ) -> CandidateRow:
        chunk_id = int(candidate["chunk_id"])
        chunk = chunks.get(chunk_id)
        return CandidateRow(
            rank=rank,
            chunk_id=chunk_id,
            chunk_url=self._url("corpus_chunk_change", chunk_id) if chunk else "",
            chunk_label=f"#{chunk.index}" if chunk else f"{chunk_id} (no longer stored)",
            document=str(chunk.document) if chunk else "",
            document_url=self._url("corpus_document_change", chunk.document_id) if chunk else "",
            alias=in_context.get(chunk_id, ""),
            cited=cited.get(chunk_id, ""),
            legs=tuple(
                leg_value(candidate, leg) for leg in ("dense", "keyword", "fused", "rerank")
            ),
            variant=str(candidate.get("variant", "")),
        )


def turn_for_audit(object_id: str) -> Turn | None:
    try:
        pk = int(object_id)
    except ValueError:
        return None
    return (
        Turn.objects.select_related(
            "conversation", "conversation__user", "feedback", "feedback__user"
        )
        .filter(pk=pk)
        .first()
    )


def _alias_order(alias: str) -> tuple[int, str]:
    digits = alias.lstrip("cC")
    return (int(digits) if digits.isdigit() else 1_000_000, alias)


def _citations(turn: Turn) -> list[Citation]:
    rows = (
        Citation.objects.filter(turn=turn)
        .select_related("document", "chunk")
        # Only what the audit shows of the joined rows: never a chunk's vector or full text.
        .only(
            *(f.name for f in Citation._meta.concrete_fields),
            "document__title",
            "document__filename",
            "chunk__index",
            "chunk__page",
        )
    )
    return sorted(rows, key=lambda c: (c.kind != CitationKind.CITED, _alias_order(c.alias)))


def _chunks(chunk_ids: Sequence[int]) -> dict[int, Chunk]:
    if not chunk_ids:
        return {}
    rows = (
        Chunk.objects.filter(pk__in=chunk_ids)
        .select_related("document")
        .only("index", "page", "document__title", "document__filename")
    )
    return {chunk.pk: chunk for chunk in rows}


def _categories(conversation: Conversation) -> list[tuple[str, float]]:
    # Analytics owns categories and imports answers, never the reverse (see docs/architecture.md),
    # so go through the relation.
    links = conversation.category_links.select_related("category").order_by("-score")
    return [(link.category.name, link.score) for link in links]


def category_history(turn: Turn) -> list[tuple[int, int, list[tuple[str, float]]]]:
    """(turn pk, index, [(category, score)]) for this turn and the earlier ones of its
    conversation: what the post-turn step decided at each (analytics' rows, via the relation)."""
    rows = (
        Turn.objects.filter(
            conversation_id=turn.conversation_id,
            index__lte=turn.index,
            index__gt=turn.index - HISTORY_TURNS,
        )
        .order_by("index", "-category_decisions__score")
        .values_list(
            "pk", "index", "category_decisions__category__name", "category_decisions__score"
        )
    )
    history: dict[int, tuple[int, list[tuple[str, float]]]] = {}
    for pk, index, name, score in rows:
        decided = history.setdefault(pk, (index, []))[1]
        if name is not None:
            decided.append((name, score))
    return [(pk, index, decided) for pk, (index, decided) in history.items()]


def _feedback(turn: Turn) -> TurnFeedback | None:
    feedback: TurnFeedback | None = getattr(turn, "feedback", None)  # joined by turn_for_audit
    return feedback


def _readable_names(turn: Turn) -> list[str] | None:
    """The collections the turn could read, by name (None: every collection); one deleted
    since is shown by its id."""
    ids = turn.readable_collections
    if ids is None:
        return None
    names = dict(Collection.objects.filter(pk__in=ids).values_list("pk", "name"))
    return [names.get(i, f"#{i} (deleted)") for i in ids]
