"""The router's labelled set in the database and its evaluation and training runs.

Analysts add labelled rows in the admin; `train_router --include-db` trains on them too.
Every evaluation run is stored for the analytics dashboard. The `evaluate_router` and
`train_router` commands only parse their options and call these.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from django.conf import settings

from apps.answers.models import LabelledQuery, RouterEvaluation
from apps.answers.providers.configured import chat_model_configured, json_chat_adapter
from apps.answers.routing.evaluation import (
    LABELLED_PATH,
    UNSEEN_PATH,
    RouterEvaluationResult,
    load_examples,
    router_evaluate,
)
from apps.answers.routing.llm import LLMClassifier
from apps.answers.routing.trained import DEFAULT_ARTEFACT_PATH, TrainedClassifier
from apps.answers.routing.training import TrainingReport, train_router
from apps.answers.routing.types import QueryClassifier

CLASSIFIERS = ("trained", "llm")


class RouterConfigurationError(ValueError):
    """The asked-for classifier or data set cannot be used as configured."""


def labelled_queries_import(*, path: Path) -> int:
    """Upsert the file's rows (by text and split); returns how many were new."""
    created = 0
    for example in load_examples(path):
        _, was_created = LabelledQuery.objects.update_or_create(
            text=example.text,
            split=example.split,
            defaults={
                "intent": str(example.intent),
                "tier": str(example.tier),
                "language": example.language,
                "context": example.context,
            },
        )
        created += was_created
    return created


def labelled_queries_export(*, path: Path) -> int:
    """Write every row in the file format, in a stable order (same rows -> same bytes)."""
    rows = LabelledQuery.objects.order_by("split", "text")
    lines = []
    for row in rows:
        record = {
            "text": row.text,
            "intent": row.intent,
            "tier": row.tier,
            "language": row.language,
            "split": row.split,
        }
        if row.context:
            record["context"] = row.context
        lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def router_dataset_default(*, split: str) -> Path:
    """The shipped file that holds `split`: the unseen queries have a file of their own."""
    return UNSEEN_PATH if split == "unseen" else LABELLED_PATH


def router_classifier_build(
    *, name: str, artefact: Path = DEFAULT_ARTEFACT_PATH
) -> QueryClassifier:
    if name == "trained":
        return TrainedClassifier.from_artefact(artefact)
    if name != "llm":
        raise RouterConfigurationError(f"unknown classifier {name!r}")
    chat = chat_model_configured()
    if chat is None:
        raise RouterConfigurationError("--classifier llm needs OPENAI_BASE_URL and RAG_CHAT_MODEL")
    # Measured as configured: the same limit a turn gives it (raise RAG_ROUTER_TIMEOUT_S
    # for the run to score a slow model without its timeouts).
    return LLMClassifier(
        json_chat_adapter(chat),
        timeout_s=settings.RAG_ROUTER_TIMEOUT_S,
        max_tokens=settings.RAG_ROUTER_MAX_TOKENS,
    )


def router_evaluation_run(
    *, classifier: QueryClassifier, dataset: Path, split: str, use_context: bool = True
) -> RouterEvaluationResult:
    """Score `classifier` on the `split` rows of `dataset` ("all": every row) and store the run."""
    examples = load_examples(dataset, split=None if split == "all" else split)
    if not examples:
        raise RouterConfigurationError(f"No examples with split {split!r} in {dataset}")
    result = asyncio.run(
        router_evaluate(
            classifier=classifier,
            examples=examples,
            use_context=use_context,
            # A little over the classifier's own limit, so its timeout is what fires.
            timeout_s=settings.RAG_ROUTER_TIMEOUT_S + 1.0,
        )
    )
    RouterEvaluation.objects.create(
        classifier=classifier.name,
        dataset=str(dataset),
        split=split,
        examples=len(examples),
        accuracy=result.accuracy,
        macro_f1=result.macro_f1,
        latency_ms_p50=result.latency_ms_p50,
        latency_ms_p95=result.latency_ms_p95,
        report=result.as_json(),
    )
    return result


def router_train(
    *, dataset: Path, artefact: Path, seed: int = 0, include_db: bool = False
) -> TrainingReport:
    """Train on `dataset`; with `include_db`, on its rows merged with the admin's rows."""
    if not include_db:
        return train_router(dataset_path=dataset, artefact_path=artefact, seed=seed)
    with tempfile.TemporaryDirectory() as folder:
        labelled_queries_import(path=dataset)
        merged = Path(folder) / "labelled.jsonl"
        labelled_queries_export(path=merged)
        return train_router(dataset_path=merged, artefact_path=artefact, seed=seed)
