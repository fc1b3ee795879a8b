from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from apps.analytics.models import LabelledQuery, RouterEvaluation
from apps.analytics.router_data import labelled_queries_export, labelled_queries_import
from apps.answers.routing.evaluation import LABELLED_PATH

pytestmark = pytest.mark.django_db


def test_evaluate_router_prints_writes_json_and_stores_a_row(tmp_path: Path) -> None:
    out = StringIO()
    target = tmp_path / "router.json"
    call_command("evaluate_router", "--split", "test", "--json", str(target), stdout=out)

    report = json.loads(target.read_text())
    assert {"accuracy", "macro_f1", "labels", "confusion", "latency_ms_p50"} <= set(report)
    assert len(report["confusion"]) == len(report["labels"]) == 5
    row = RouterEvaluation.objects.get()
    assert row.accuracy == report["accuracy"] and row.classifier == "trained"
    assert "confusion" in out.getvalue()


def test_train_router_is_reproducible(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    call_command("train_router", "--artefact", str(first), stdout=StringIO())
    call_command("train_router", "--artefact", str(second), stdout=StringIO())
    assert first.read_bytes() == second.read_bytes()


def test_labelled_rows_round_trip_through_the_database(tmp_path: Path) -> None:
    created = labelled_queries_import(path=LABELLED_PATH)
    assert created == LabelledQuery.objects.count() > 400
    assert labelled_queries_import(path=LABELLED_PATH) == 0  # idempotent
    LabelledQuery.objects.create(
        text="where is the parking policy", intent="search", tier="T1", language="en", split="train"
    )
    exported = tmp_path / "export.jsonl"
    assert labelled_queries_export(path=exported) == created + 1
    assert "parking policy" in exported.read_text()
