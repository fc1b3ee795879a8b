"""The router's labelled set and evaluation runs in the admin: editable rows, read-only runs."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from apps.answers.models import LabelledQuery
from tests.factories import ROUTER_INTENTS, RouterEvaluationFactory

pytestmark = pytest.mark.django_db


def test_labelled_queries_filter_search_and_validate(admin_client: Client) -> None:
    LabelledQuery.objects.create(
        text="How many days of leave?",
        intent="factual_question",
        tier="T1",
        language="en",
        split="train",
    )
    LabelledQuery.objects.create(
        text="مرخصی چند روز است؟", intent="factual_question", tier="T1", language="fa", split="test"
    )
    LabelledQuery.objects.create(
        text="Find the VPN guide", intent="search", tier="T1", language="en", split="test"
    )
    url = reverse("admin:answers_labelledquery_changelist")

    listing = admin_client.get(url)
    persian = admin_client.get(url, {"language": "fa"})
    searched = admin_client.get(url, {"q": "VPN", "split__exact": "test"})
    bad = admin_client.post(
        reverse("admin:answers_labelledquery_add"),
        {"text": "Hello", "intent": "greeting", "tier": "T0", "language": "en", "split": "train"},
    )
    good = admin_client.post(
        reverse("admin:answers_labelledquery_add"),
        {
            "text": "Hello",
            "intent": "conversational",
            "tier": "T0",
            "language": "en",
            "split": "train",
        },
    )

    for param in (b"?intent=search", b"?tier=T1", b"?language=fa", b"?split__exact=unseen"):
        assert param in listing.content
    assert persian.content.count(b'class="field-short_text"') == 1
    assert searched.content.count(b'class="field-short_text"') == 1
    assert bad.status_code == 200 and b"greeting is not one of the available choices" in bad.content
    assert good.status_code == 302
    assert LabelledQuery.objects.filter(text="Hello", intent="conversational").exists()


def test_router_evaluation_is_read_only_and_shows_the_confusion_matrix(
    admin_client: Client,
) -> None:
    evaluation = RouterEvaluationFactory.create()

    listing = admin_client.get(reverse("admin:answers_routerevaluation_changelist"))
    page = admin_client.get(reverse("admin:answers_routerevaluation_change", args=[evaluation.pk]))

    assert b"0.871" in listing.content and b"0.842" in listing.content
    body = page.content.decode()
    assert '<table class="confusion">' in body
    head = body.split('<table class="confusion">')[1].split("</thead>")[0]
    assert [label in head for label in ROUTER_INTENTS] == [True] * 5
    procedural_row = body.split("<tr><th>procedural</th>")[1].split("</tr>")[0]
    assert [cell.split(">")[-1] for cell in procedural_row.split("</td>")[:-1]] == [
        "4",
        "0",
        "0",
        "20",
        "0",
    ]
    assert "<th>comparison</th><td" in body and "0.850" in body  # the per-intent table
    assert admin_client.get(reverse("admin:answers_routerevaluation_add")).status_code == 403
    delete = reverse("admin:answers_routerevaluation_delete", args=[evaluation.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
