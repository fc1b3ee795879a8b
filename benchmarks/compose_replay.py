"""Replays the extractive composer on the requests of a real-documents run: the developers'
loop for sentence choice, refusals and answer shapes.

`evaluate_documents` takes a quarter of an hour and more for 217 questions, most of it routing,
retrieval and storing the turn, none of which a change to the composer touches. `record` asks
every question of a questions file through the real turn path once (as `evaluate_documents`
does: a new conversation each, the router choosing the route) and keeps the request the
composer was given (the question or its rewrite, the intent, the context window with its
chunks, the bridges of a multi-hop answer). `replay` composes each kept request again with the
composer of the checkout it runs from and scores its text the way `evaluate_documents` scores a
stored answer (`answer_string_found`; an unanswerable question is right when refused), so a
change is measured in a minute or two on the very contexts the product retrieved. A question
the turn path did not compose (a clarifying question, a failed turn) is left out of both.

    python benchmarks/compose_replay.py record --docs .data/real-docs \
        --questions benchmarks/data/real_docs/questions.jsonl --out /tmp/requests.pickle
    python benchmarks/compose_replay.py replay --requests /tmp/requests.pickle [--changed]

The figure is the composer's alone: what the turn path adds after composing (the attribution
of unmarked sentences, the follow-ups, the confidence badge) is not replayed, and a question is
right here exactly when its composed text would make the stored answer right.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pickle
import sys
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import django
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
django.setup()

from apps.answers.composing.candidates import Vector  # noqa: E402
from apps.answers.composing.extractive import ExtractiveComposer  # noqa: E402
from apps.answers.composing.types import (  # noqa: E402
    ComposeRequest,
    ComposerEvent,
    Refusal,
    TextDelta,
)
from apps.answers.evaluation.answer_metrics import answer_string_found  # noqa: E402
from apps.answers.evaluation.document_questions import (  # noqa: E402
    DocumentQuestion,
    document_questions_load,
)
from apps.answers.evaluation.documents import (  # noqa: E402
    documents_evaluate,
    evaluation_documents_load,
    evaluation_files,
)
from apps.answers.providers.registry import providers_default, providers_override  # noqa: E402
from apps.answers.streaming import extract_citations  # noqa: E402
from apps.corpus.search.embedders import Embedder  # noqa: E402


@dataclass(frozen=True)
class Kept:
    """One question and the request its turn composed (None: the turn composed nothing)."""

    question: DocumentQuestion
    request: ComposeRequest | None
    route: str
    stored_correct: bool  # what evaluate_documents scored the stored answer


class _Recording:
    """The configured composer, keeping each request it is given."""

    def __init__(self, inner: ExtractiveComposer) -> None:
        self.name = inner.name
        self._inner = inner
        self.requests: list[ComposeRequest] = []

    def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        self.requests.append(request)
        return self._inner.compose(request)


def record(args: argparse.Namespace) -> None:
    files = evaluation_files(args.docs)
    questions = document_questions_load(args.questions, files={p.name for p in files})
    loaded = evaluation_documents_load(
        files=files,
        collection_name=args.collection or f"evaluation: {args.docs.resolve().name}",
        timeout_s=3600.0,
    )
    providers = providers_default()
    if not isinstance(providers.composer, ExtractiveComposer):
        raise SystemExit("compose_replay.py replays the extractive composer: unset RAG_CHAT_MODEL")
    recording = _Recording(providers.composer)
    kept: list[Kept] = []

    def progress(done: int, rec: object) -> None:
        # One compose call per composed turn: this question's request is the newest one when
        # the count of requests grew with it.
        composed = len(recording.requests) > sum(k.request is not None for k in kept)
        kept.append(
            Kept(
                question=questions[done - 1],
                request=recording.requests[-1] if composed else None,
                route=getattr(rec, "route", ""),
                stored_correct=bool(getattr(rec, "correct", False)),
            )
        )
        print(f"  [{done}/{len(questions)}] {questions[done - 1].question_id}", file=sys.stderr)

    with providers_override(replace(providers, composer=recording)):
        documents_evaluate(
            questions=questions, collection_name=loaded.collection.name, progress=progress
        )
    args.out.write_bytes(pickle.dumps(kept))
    composed = sum(k.request is not None for k in kept)
    print(f"{len(kept)} questions, {composed} composed, kept in {args.out}")


async def _composed(composer: ExtractiveComposer, request: ComposeRequest) -> tuple[str, bool]:
    text, refused = [], False
    async for event in composer.compose(request):
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, Refusal):
            refused = True
    return extract_citations("".join(text))[0], refused


def _right(question: DocumentQuestion, text: str, refused: bool) -> bool:
    if not question.answerable:
        return refused
    return not refused and answer_string_found(text, question.answers)


class _RememberingEmbedder:
    """The configured embedder, each text embedded once across replays (`--vectors FILE`).
    Exact: the bundled model gives a text the same vector alone or in any batch."""

    def __init__(self, inner: Embedder, path: Path | None) -> None:
        self.model_id, self.dimensions = inner.model_id, inner.dimensions
        self._inner, self._path = inner, path
        self._known: dict[tuple[str, str], Vector] = {}
        if path is not None and path.exists():
            self._known = pickle.loads(path.read_bytes())  # noqa: S301 (this script's own file)

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        missing = [t for t in dict.fromkeys(texts) if ("passage", t) not in self._known]
        if missing:
            for text, vector in zip(missing, self._inner.embed_passages(missing), strict=True):
                self._known["passage", text] = vector
        if not texts:
            return self._inner.embed_passages([])
        return np.stack([self._known["passage", t] for t in texts])

    def embed_query(self, text: str) -> Vector:
        if ("query", text) not in self._known:
            self._known["query", text] = self._inner.embed_query(text)
        return self._known["query", text]

    def save(self) -> None:
        if self._path is not None:
            self._path.write_bytes(pickle.dumps(self._known))


def replay(args: argparse.Namespace) -> None:
    # A file `record` wrote on this machine, never one from elsewhere.
    kept: list[Kept] = pickle.loads(args.requests.read_bytes())  # noqa: S301
    embedder = _RememberingEmbedder(providers_default().embedder, args.vectors)
    composer = ExtractiveComposer(embedder)
    by_kind: dict[str, list[bool]] = defaultdict(list)
    moved: Counter[str] = Counter()
    for item in kept:
        if item.request is None:
            continue
        text, refused = asyncio.run(_composed(composer, item.request))
        right = _right(item.question, text, refused)
        by_kind[item.question.kind].append(right)
        by_kind["all"].append(right)
        was = item.stored_correct
        if right != was:
            moved["gained" if right else "lost"] += 1
        if (args.changed and right != was) or (args.wrong and not right):
            _show(item, text, refused, right)
    embedder.save()
    for kind in sorted(by_kind, key=lambda k: (k != "all", k)):
        values = by_kind[kind]
        print(f"{kind:14} {sum(values):4d} / {len(values):4d}  {sum(values) / len(values):.3f}")
    print(f"against the stored answers: {moved['gained']} gained, {moved['lost']} lost")


def _show(item: Kept, text: str, refused: bool, right: bool) -> None:
    q = item.question
    verdict = "RIGHT" if right else "wrong"
    print(f"--- {q.question_id} [{q.kind}] {verdict}{' (refused)' if refused else ''}")
    print(f"Q: {q.question}\nwant: {q.answers}  quote: {q.quote}")
    print(f"A: {' '.join(text.split())[:600]}\n")


def _arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="ask every question once and keep the composer's requests")
    rec.add_argument("--docs", required=True, type=Path)
    rec.add_argument("--questions", required=True, type=Path)
    rec.add_argument("--collection", default=None)
    rec.add_argument("--out", required=True, type=Path)
    rep = sub.add_parser("replay", help="compose the kept requests again and score them")
    rep.add_argument("--requests", required=True, type=Path)
    rep.add_argument("--changed", action="store_true", help="print questions whose verdict moved")
    rep.add_argument("--wrong", action="store_true", help="print every wrong answer")
    rep.add_argument("--vectors", type=Path, default=None, help="remember vectors in this file")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    record(args) if args.command == "record" else replay(args)


if __name__ == "__main__":
    main()
