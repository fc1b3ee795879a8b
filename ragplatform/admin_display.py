"""Display pieces shared by the apps' admin pages."""

from __future__ import annotations

from django.utils.html import format_html
from django.utils.safestring import SafeString

NEUTRAL_COLOUR = "#6b7280"


def pill(text: str, *, colour: str, title: str) -> SafeString:
    """A coloured rounded label (a document's status, a confidence band) with a hover title."""
    return format_html(
        '<span title="{}" style="background:{};color:#fff;padding:2px 8px;'
        'border-radius:9px;font-size:0.85em;white-space:nowrap">{}</span>',
        title,
        colour,
        text,
    )
