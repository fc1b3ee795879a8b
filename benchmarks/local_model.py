"""Run a benchmark or a management command with a real local chat model configured.

Starts the model server the test suite uses (`tests/llm_server.py`: SmolLM2-135M-Instruct,
GGUF, on xllamacpp with 2 threads), points the platform at it through its ordinary settings
(OPENAI_BASE_URL, RAG_CHAT_MODEL, RAG_COMPOSER=openai, or extractive with --composer) and
runs the given command in this process, then stops the server:

    python benchmarks/local_model.py manage.py evaluate_conversations --dataset ... --limit 40
    python benchmarks/local_model.py benchmarks/answer_shape.py --collection Guide

A small model on a shared CPU is slow, so two limits are raised for the measurement only: the
follow-up rewrite gets --rewrite-timeout seconds (default 30, not the 4-second default), and
the first token --first-token seconds (default 120, not 15: a full context takes that long
to read on two busy cores). Otherwise every call would time out into the offline fallback
and the figures would not be the model's.

With --report it runs `evaluate_answers` on two sets (--questions of each, half answerable and
half not) and prints what the issue of a configured model asks for: how many answers the model
wrote and how many a fallback wrote (and why), the time to the first text (p50/p95), gold
cited, false refusals and honest refusals, the model's figures apart from the fallbacks':

    python benchmarks/refusals_build.py --out /tmp/guide-refusals
    RAG_CONTEXT_BUDGET_TOKENS=1000 python benchmarks/local_model.py --report \
        --set guide=/tmp/guide-refusals --set persianqa=DATASETS/persianqa
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rewrite-timeout", type=float, default=30.0, help="at most 60")
    parser.add_argument("--first-token", type=float, default=120.0)
    parser.add_argument("--chat-timeout", type=float, default=300.0)
    parser.add_argument(
        "--composer",
        default="openai",
        choices=["openai", "extractive"],
        help="extractive: the model only rewrites follow-ups (and suggests follow-ups)",
    )
    parser.add_argument("--report", action="store_true", help="evaluate_answers on each --set")
    parser.add_argument("--set", action="append", default=[], help="NAME=DATASET (with --report)")
    parser.add_argument("--questions", type=int, default=20, help="questions of each set")
    parser.add_argument("script", nargs="?", help="manage.py or a benchmark script")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if not args.report and not args.script:
        parser.error("give a script to run, or --report")
    sys.path.insert(0, str(REPO))
    from tests.llm_server import local_llm_server, missing_requirements

    reason = missing_requirements()
    if reason:
        print(f"cannot start the local model: {reason}", file=sys.stderr)
        return 2
    with local_llm_server(start_timeout_s=120.0) as server:
        os.environ.update(
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="local",
            RAG_CHAT_MODEL=server.model,
            RAG_COMPOSER=args.composer,
            RAG_REWRITE_TIMEOUT_S=str(args.rewrite_timeout),
            RAG_CHAT_TIMEOUT_S=str(args.chat_timeout),
            RAG_CHAT_FIRST_TOKEN_TIMEOUT_S=str(args.first_token),
        )
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
        print(f"model {server.model} at {server.base_url}", file=sys.stderr)
        if args.report:
            return _report(dict(item.split("=", 1) for item in args.set), args.questions)
        sys.argv = [str(REPO / args.script), *args.arguments]
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as exit_:
            return int(exit_.code or 0)
    return 0


def _report(sets: dict[str, str], questions: int) -> int:
    import django

    django.setup()
    from django.core.management import call_command

    print(f"| {questions} questions | {' | '.join(COLUMNS)} |")
    print(f"|---|{'---|' * len(COLUMNS)}")
    for name, dataset in sets.items():
        with tempfile.TemporaryDirectory() as folder:
            target = Path(folder) / "answers.json"
            arguments = ("--dataset", dataset, "--limit", str(questions), "--balanced")
            call_command("evaluate_answers", *arguments, "--json", str(target))
            summary = json.loads(target.read_text())
        for composer, cells in _rows(summary):
            print(f"| {name}: {composer} | {' | '.join(cells)} |")
    return 0


COLUMNS = (
    "answers",
    "fallback reasons",
    "first text p50 / p95",
    "gold cited",
    "false refusals",
    "honest refusals",
)


def _rows(summary: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """One row per composer that answered: the model's figures apart from the fallback's."""
    reasons = ", ".join(f"{r} x{n}" for r, n in summary["fallback_reasons"].items()) or "none"
    rows = []
    for composer, part in summary["by_composer"].items():
        fallback = composer != summary["configured_composer"]
        first = (
            f"{part['first_text_ms_p50'] / 1000:.1f} s / {part['first_text_ms_p95'] / 1000:.1f} s"
        )
        answers = part["answerable"] + part["unanswerable"]
        cells = [
            str(answers),
            reasons if fallback else "",
            first,
            _count(part["gold_passage_cited"], part["answerable"]),
            _count(part["false_refusal_rate"], part["answerable"]),
            _count(part["refusal_rate_unanswerable"], part["unanswerable"]),
        ]
        rows.append((f"{composer} (fallback)" if fallback else composer, cells))
    failed = summary["composer_errors"]
    if failed:
        rows.append(("failed (left out)", [str(failed), "", "", "", "", ""]))
    return rows


def _count(share: float, total: int) -> str:
    return f"{round(share * total)} of {total}"


if __name__ == "__main__":
    sys.exit(main())
