"""The turn's vocabularies are rules of the database, taken from their enums."""

from __future__ import annotations

from enum import StrEnum

import pytest
from django.db import IntegrityError, transaction

from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import Turn, TurnAction
from apps.answers.routing.types import Intent, Strategy, Tier
from apps.corpus.text import Language
from tests.factories import TurnFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("intent", "smalltalk"),
        ("action", "shrug"),
        ("intent", "Search"),
        ("action", "Answer"),
        ("tier", "T4"),
        ("tier", "t1"),
        ("strategy", "hyde"),
        ("confidence_band", "amber"),
        ("confidence_band", "Green"),
        ("language", "de"),
    ],
)
def test_values_outside_the_vocabulary_are_refused(field: str, value: str) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        TurnFactory.create(**{field: value})


@pytest.mark.parametrize("action", [*TurnAction, ""])
def test_every_action_and_blank_are_stored(action: str) -> None:
    turn = TurnFactory.create(action=action)
    assert Turn.objects.get(pk=turn.pk).action == action


@pytest.mark.parametrize("intent", [*Intent, ""])
def test_every_intent_and_blank_are_stored(intent: str) -> None:
    turn = TurnFactory.create(intent=intent)
    assert Turn.objects.get(pk=turn.pk).intent == intent


@pytest.mark.parametrize(
    ("field", "vocabulary"),
    [
        ("tier", Tier),
        ("strategy", Strategy),
        ("confidence_band", ConfidenceBand),
        ("language", Language),
    ],
)
def test_every_value_and_blank_are_stored(field: str, vocabulary: type[StrEnum]) -> None:
    # Blank is what a turn holds until its stage sets the column (a search has no band).
    for value in [*vocabulary, ""]:
        turn = TurnFactory.create(**{field: value})
        assert getattr(Turn.objects.get(pk=turn.pk), field) == value


def test_choices_are_the_enums_values() -> None:
    assert [value for value, _ in Turn._meta.get_field("action").choices or []] == list(TurnAction)
    assert [value for value, _ in Turn._meta.get_field("intent").choices or []] == list(Intent)


def test_an_action_compares_equal_to_its_plain_string() -> None:
    assert TurnAction.CLARIFY == "clarify" and str(TurnAction.CHAT) == "chat"
