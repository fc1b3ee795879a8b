"""Answers' own admin display pieces: the confidence band badge and score format.

The generic building blocks (read-only admin, estimated-count paginator, per-page counts)
are in `ragplatform.admin_base`, where every app may import them.
"""

from __future__ import annotations

from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.answers.composing.confidence import ConfidenceBand
from ragplatform.admin_display import NEUTRAL_COLOUR, pill

BAND_COLOURS: dict[str, str] = {
    ConfidenceBand.GREEN: "#15803d",
    ConfidenceBand.YELLOW: "#b45309",
    ConfidenceBand.RED: "#b91c1c",
}


def band_badge(value: float | None, band: str) -> SafeString:
    if value is None:
        return format_html('<span class="quiet">{}</span>', "–")
    return pill(
        format_score(value),
        colour=BAND_COLOURS.get(band, NEUTRAL_COLOUR),
        title=f"{band or 'no'} band",
    )


def format_score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
