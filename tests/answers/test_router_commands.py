from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.answers.models import LabelledQuery, RouterEvaluation
from apps.answers.routing.evaluation import LABELLED_PATH, UNSEEN_PATH, load_examples
from apps.answers.routing.services import labelled_queries_export, labelled_queries_import

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


def test_evaluate_router_scores_the_unseen_set_from_its_own_file() -> None:
    out = StringIO()
    call_command("evaluate_router", "--split", "unseen", stdout=out)

    row = RouterEvaluation.objects.get()
    assert row.dataset == str(UNSEEN_PATH) and row.split == "unseen"
    assert row.examples == len(load_examples(UNSEEN_PATH, split="unseen"))


def test_evaluate_router_without_context_scores_follow_ups_alone() -> None:
    call_command("evaluate_router", "--split", "test", stdout=StringIO())
    call_command("evaluate_router", "--split", "test", "--no-context", stdout=StringIO())

    with_context, alone = RouterEvaluation.objects.order_by("created_at")
    assert with_context.examples == alone.examples
    assert with_context.report != alone.report  # follow-up fragments lose their history


def test_evaluate_router_refuses_a_split_the_file_does_not_have() -> None:
    with pytest.raises(CommandError, match="No examples with split 'unseen'"):
        call_command("evaluate_router", "--dataset", str(LABELLED_PATH), "--split", "unseen")
    assert not RouterEvaluation.objects.exists()


def test_train_router_include_db_trains_on_the_admin_rows_too(tmp_path: Path) -> None:
    plain, merged = tmp_path / "plain.json", tmp_path / "merged.json"
    call_command("train_router", "--artefact", str(plain), stdout=StringIO())
    LabelledQuery.objects.create(
        text="where is the parking policy", intent="search", tier="T1", language="en", split="train"
    )
    call_command("train_router", "--include-db", "--artefact", str(merged), stdout=StringIO())

    assert LabelledQuery.objects.count() > 400  # the file's rows were imported as well
    assert plain.read_bytes() != merged.read_bytes()
