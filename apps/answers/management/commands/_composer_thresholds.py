"""The offline composer's refusal thresholds set from the command line, for the evaluate commands
(the leading underscore keeps Django from listing it)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from apps.answers.composing.extractive import ExtractiveComposer
from apps.answers.providers.registry import Providers


def calibration_arguments(parser: CommandParser) -> None:
    """--signals and the thresholds: what an evaluate command needs for calibration_fit.py."""
    parser.add_argument(
        "--signals",
        type=Path,
        default=None,
        help="write every question's signals to this JSON-lines file "
        "(for benchmarks/calibration_fit.py)",
    )
    parser.add_argument(
        "--min-evidence",
        type=float,
        default=None,
        help="the offline composer's evidence threshold instead of its default "
        "(0 with --signals: every answer is kept, any threshold can be replayed)",
    )
    parser.add_argument(
        "--min-answerability",
        type=float,
        default=None,
        help="the offline composer's answerability threshold instead of its default "
        "(0 with --min-evidence 0 and --signals: every answer is kept)",
    )


def providers_with_thresholds(
    providers: Providers, *, min_evidence: float | None, min_answerability: float | None
) -> Providers:
    """The providers with an offline composer held to these thresholds (None: the setting)."""
    if min_evidence is None and min_answerability is None:
        return providers
    if not isinstance(providers.composer, ExtractiveComposer):
        raise CommandError(
            "--min-evidence and --min-answerability set the offline composer's thresholds: "
            "unset the chat model"
        )
    try:
        composer = ExtractiveComposer(
            providers.embedder, min_evidence=min_evidence, min_answerability=min_answerability
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    return dataclasses.replace(providers, composer=composer)
