"""Server-rendered SVG charts for the dashboard: stacked bars and lines, no JavaScript.

Each bar segment is a link (to the turns behind it) with a <title> tooltip; the same figures
are always shown as a table beside the chart, so a chart is never the only way to read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 720, 170
LEFT, BOTTOM, TOP = 44, 22, 8
PALETTE = (
    "#2563eb", "#f97316", "#16a34a", "#9333ea", "#dc2626",
    "#0891b2", "#ca8a04", "#db2777", "#4b5563", "#65a30d",
)  # fmt: skip


@dataclass(frozen=True)
class Segment:
    value: float
    colour: str
    href: str  # "" when the reader may not open the turns
    tooltip: str


@dataclass(frozen=True)
class Series:
    name: str
    colour: str
    values: Sequence[float | None]  # None: nothing to plot for that slot


def colour_at(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def bars_svg(
    stacks: Sequence[Sequence[Segment]], labels: Sequence[str], *, title: str
) -> SafeString:
    """One stacked bar per slot; every segment a link to its turns."""
    top = max((sum(s.value for s in stack) for stack in stacks), default=0) or 1
    slot = (WIDTH - LEFT) / max(len(stacks), 1)
    parts: list[str] = [_axis(top, title), _labels(labels, slot)]
    for n, stack in enumerate(stacks):
        base = 0.0
        for segment in stack:
            if segment.value:
                parts.append(_bar(LEFT + n * slot, slot, base, segment, top))
                base += segment.value
    return _svg(title, parts)


def lines_svg(
    series: Sequence[Series], labels: Sequence[str], *, title: str, unit: str
) -> SafeString:
    values = [v for s in series for v in s.values if v is not None]
    top = max(values, default=0) or 1
    slot = (WIDTH - LEFT) / max(len(labels), 1)
    parts: list[str] = [_axis(top, title, unit), _labels(labels, slot)]
    for line in series:
        points = [
            (LEFT + (n + 0.5) * slot, _y(v, top))
            for n, v in enumerate(line.values)
            if v is not None
        ]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        parts.append(
            format_html(
                '<polyline fill="none" stroke="{}" stroke-width="2" points="{}"><title>{}</title>'
                "</polyline>",
                line.colour,
                path,
                line.name,
            )
        )
        colour = escape(line.colour)
        parts += [f'<circle cx="{_n(x)}" cy="{_n(y)}" r="2.5" fill="{colour}"/>' for x, y in points]
    return _svg(title, parts)


def _n(value: float) -> str:
    return f"{value:.1f}"


def _y(value: float, top: float) -> float:
    return TOP + (HEIGHT - BOTTOM - TOP) * (1 - value / top)


def _bar(x: float, slot: float, base: float, segment: Segment, top: float) -> str:
    """One segment's markup; every text in it escaped here (a month of charts draws hundreds of
    segments, and `format_html` per segment was a tenth of the page's time)."""
    y_top, y_base = _y(base + segment.value, top), _y(base, top)
    rect = (
        f'<rect x="{_n(x + slot * 0.12)}" y="{_n(y_top)}" width="{_n(max(slot * 0.76, 1))}" '
        f'height="{_n(max(y_base - y_top, 0.5))}" fill="{escape(segment.colour)}">'
        f"<title>{escape(segment.tooltip)}</title></rect>"
    )
    return f'<a href="{escape(segment.href)}">{rect}</a>' if segment.href else rect


def _axis(top: float, title: str, unit: str = "") -> SafeString:
    ticks = [top * f for f in (0, 0.5, 1)]
    return format_html_join(
        "",
        '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#e5e7eb"/>'
        '<text x="{}" y="{}" font-size="10" text-anchor="end" fill="#6b7280">{}</text>',
        ((LEFT, WIDTH, _n(_y(t, top)), _n(_y(t, top)), LEFT - 4, _n(_y(t, top) + 3), _tick(t, unit))
         for t in ticks),
    )  # fmt: skip


def _tick(value: float, unit: str) -> str:
    shown = f"{value:.2f}" if value < 10 and value != int(value) else f"{value:,.0f}"
    return f"{shown}{unit}"


def _labels(labels: Sequence[str], slot: float) -> SafeString:
    every = max(1, len(labels) // 8)  # at most about eight labels, so they never overlap
    return format_html_join(
        "",
        '<text x="{}" y="{}" font-size="10" text-anchor="middle" fill="#6b7280">{}</text>',
        ((_n(LEFT + (n + 0.5) * slot), HEIGHT - 6, label)
         for n, label in enumerate(labels) if n % every == 0),
    )  # fmt: skip


def _svg(title: str, parts: Sequence[str]) -> SafeString:
    body = mark_safe("".join(parts))  # noqa: S308 - every part was built escaped
    return format_html(
        '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}" '
        'preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg">{}</svg>',
        WIDTH,
        HEIGHT,
        title,
        body,
    )
