from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.answers.evaluation.beir import evaluation_collection_load
from apps.answers.evaluation.conversations import conversations_evaluate, conversations_load
from apps.answers.providers.registry import providers_default
from apps.corpus.search.legs import SearchFilters


class Command(BaseCommand):
    help = (
        "Score conversation-aware retrieval on a multi-turn set: gold passage in the top 5, "
        "nDCG@10 and gold passage cited, for follow-up and standalone turns apart."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, type=Path, help="a BEIR-layout corpus")
        parser.add_argument(
            "--conversations", required=True, type=Path, help="JSONL, one conversation a line"
        )
        parser.add_argument(
            "--no-rewrite", action="store_true", help="search each turn's own words only"
        )
        parser.add_argument(
            "--rules-rewrite",
            action="store_true",
            help="rewrite follow-ups by the offline rules even with a chat model configured",
        )
        parser.add_argument("--limit", type=int, default=None, help="first N conversations")
        parser.add_argument("--workers", type=int, default=0)
        parser.add_argument("--json", type=Path, default=None, help="write the figures here")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            conversations = conversations_load(options["conversations"])
            collection, pending = evaluation_collection_load(
                dataset=options["dataset"], workers=options["workers"]
            )
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if pending:
            self.stderr.write(f"warning: {pending} documents are not ready (see the admin)")
        providers = providers_default()
        scores = conversations_evaluate(
            conversations=conversations[: options["limit"]],
            providers=providers,
            filters=SearchFilters(collection_ids=(collection.pk,)),
            budget=settings.RAG_CONTEXT_BUDGET_TOKENS,
            rewrite=not options["no_rewrite"],
            rules_only=options["rules_rewrite"],
        )
        summary = scores.summary(
            dataset=options["dataset"].name,
            conversations=len(conversations[: options["limit"]]),
            rewrite=_rewrite_label(options, chat=providers.chat is not None),
            composer=providers.composer.name,
        )
        self.stdout.write(json.dumps(summary, indent=2))
        if options["json"]:
            options["json"].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def _rewrite_label(options: dict[str, Any], *, chat: bool) -> str:
    if options["no_rewrite"]:
        return "off"
    return "chat" if chat and not options["rules_rewrite"] else "rules"
