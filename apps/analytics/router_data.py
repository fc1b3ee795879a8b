"""The router's labelled set in the database (analysts add rows in the admin) and back."""

from __future__ import annotations

import json
from pathlib import Path

from apps.analytics.models import LabelledQuery
from apps.answers.routing.evaluation import load_examples


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
