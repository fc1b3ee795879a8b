from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.answers.evaluation.retrieval import retrieval_evaluate
from apps.answers.management.commands._evaluation_dataset import evaluation_dataset_open
from apps.answers.providers.configured import keyword_pruning_configured, reranker_configured
from apps.answers.retrieval.fusion import FUSION_METHODS
from apps.answers.retrieval.pipeline import KEYWORD_SCORINGS, MODES, RetrievalConfig, Retriever
from apps.answers.retrieval.rerank import NoReranker, Reranker
from apps.answers.routing.types import Strategy
from apps.corpus.search.embedders import default_embedder
from apps.corpus.search.legs import SearchFilters

# Every strategy but "none", which answers without retrieving.
RETRIEVING_STRATEGIES = [s.value for s in Strategy if s is not Strategy.NONE]


class Command(BaseCommand):
    help = "Load a BEIR-layout dataset through ingestion, run its queries, print nDCG@10, recall@100, MRR@10 and latency."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, type=Path)
        parser.add_argument("--split", default="test")
        parser.add_argument("--mode", choices=MODES, default="hybrid")
        parser.add_argument("--rerank", choices=["none", "remote"], default="none")
        parser.add_argument("--keyword-scoring", choices=KEYWORD_SCORINGS, default="bm25")
        parser.add_argument(
            "--keyword-budget",
            type=int,
            default=None,
            help="postings read in full per keyword search (default RAG_KEYWORD_POSTINGS_BUDGET; 0: exact BM25)",
        )
        parser.add_argument("--fusion", choices=FUSION_METHODS, default=settings.RAG_FUSION)
        parser.add_argument("--dense-share", type=float, default=settings.RAG_FUSION_DENSE_SHARE)
        parser.add_argument("--rrf-k", type=int, default=20)
        parser.add_argument("--dense-weight", type=float, default=1.0)
        parser.add_argument("--keyword-weight", type=float, default=1.0)
        parser.add_argument("--strategy", choices=RETRIEVING_STRATEGIES, default=Strategy.SIMPLE)
        parser.add_argument("--limit", type=int, default=None, help="first N queries only")
        parser.add_argument(
            "--workers", type=int, default=2, help="task worker processes for loading"
        )
        parser.add_argument("--json", type=Path, default=None, help="write the figures here")

    def handle(self, *args: Any, **options: Any) -> None:
        dataset: Path = options["dataset"]
        # Both before the load: a refusal should not wait for it.
        reranker = _reranker(options["rerank"])
        config = _config(options)
        collection, queries = evaluation_dataset_open(
            self, dataset=dataset, split=options["split"], workers=options["workers"]
        )
        queries = [q for q in queries if q.relevant][: options["limit"]]
        retriever = Retriever(embedder=default_embedder(), config=config, reranker=reranker)
        scores = retrieval_evaluate(
            retriever=retriever,
            queries=queries,
            filters=SearchFilters(collection_ids=(collection.pk,)),
            strategy=Strategy(options["strategy"]),
        )
        summary = scores.summary(
            dataset=dataset.name,
            split=options["split"],
            mode=options["mode"],
            keyword_scoring=options["keyword_scoring"],
            keyword_budget=_budget_shown(config),
            fusion=options["fusion"],
            dense_share=options["dense_share"],
            rrf_k=options["rrf_k"],
            rerank=options["rerank"],
        )
        self.stdout.write(json.dumps(summary, indent=2))
        if options["json"]:
            options["json"].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def _config(options: dict[str, Any]) -> RetrievalConfig:
    try:
        return RetrievalConfig(
            mode=options["mode"],
            keyword_scoring=options["keyword_scoring"],
            keyword_pruning=keyword_pruning_configured(options["keyword_budget"]),
            fusion=options["fusion"],
            dense_share=options["dense_share"],
            rrf_k=options["rrf_k"],
            dense_weight=options["dense_weight"],
            keyword_weight=options["keyword_weight"],
            dense_k=200,
            keyword_k=200,
            final_k=200,
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


def _budget_shown(config: RetrievalConfig) -> int | str:
    pruning = config.keyword_pruning
    return "exact" if pruning is None else pruning.postings_budget


def _reranker(mode: str) -> Reranker:
    reranker = reranker_configured(mode)
    if mode != "none" and isinstance(reranker, NoReranker):
        raise CommandError(f"--rerank {mode} needs RAG_RERANK_BASE_URL")
    return reranker
