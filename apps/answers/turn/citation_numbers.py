"""How a stored answer's citations read, shared by the chat page and the audit: the number on
each citation chip, and the sentence a marker closes.

The chat numbers a turn's cited sources 1, 2, 3 in the order their citation events arrive,
which is the order of their first place in the answer; stored citations are numbered here
the same way, so the page rebuilt from the database and the audit show the same numbers
beside the composer's aliases (c1, c3, c4).
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.answers.models import Citation, CitationKind
from apps.corpus.text import last_sentence_start


def citation_numbers(citations: Iterable[Citation]) -> dict[str, int]:
    """Alias -> number for the cited (not attributed) citations of one turn."""
    cited = [c for c in citations if c.kind == CitationKind.CITED]
    # Stored in arrival order (one bulk insert), so the id breaks ties between markers that
    # stand at the same offset, as in "[c3][c10]".
    cited.sort(key=lambda c: (c.position is None, c.position or 0, c.pk or 0))
    return {c.alias: number for number, c in enumerate(cited, start=1)}


def split_last_sentence(segment: str) -> tuple[str, str]:
    # A marker may stand after the full stop ("... leave. [c1]"): ignore it when looking back.
    body = segment.rstrip().rstrip(".!?؟…")
    cut = last_sentence_start(body, abbreviations=False)
    return segment[:cut], segment[cut:]
