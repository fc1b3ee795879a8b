import math

import pytest

from apps.answers.routing.types import (
    INTENT_DESCRIPTIONS,
    STRATEGY_DEFINITIONS,
    STRATEGY_FOR_TIER,
    TIER_DEFINITIONS,
    Classification,
    Intent,
    Strategy,
    Tier,
)


def _classification(**overrides: object) -> Classification:
    fields: dict[str, object] = {
        "intent": Intent.COMPARISON,
        "confidence": 0.8,
        "tier": Tier.T2,
        "strategy": Strategy.MODERATE,
        "decomposed_steps": ("What is X?", "What is Y?"),
        "language": "en",
        "reasoning": "two sides",
        "classifier": "trained",
    }
    fields.update(overrides)
    return Classification(**fields)  # type: ignore[arg-type]


def test_every_tier_has_a_strategy_and_a_definition():
    assert STRATEGY_FOR_TIER == {
        Tier.T0: Strategy.NONE,
        Tier.T1: Strategy.SIMPLE,
        Tier.T2: Strategy.MODERATE,
        Tier.T3: Strategy.COMPLEX,
    }
    assert set(TIER_DEFINITIONS) == set(Tier)
    assert set(STRATEGY_DEFINITIONS) == set(Strategy)
    assert set(INTENT_DESCRIPTIONS) == set(Intent)


def test_enum_values_are_the_wire_values():
    assert [str(i) for i in Intent] == [
        "factual_question",
        "search",
        "comparison",
        "procedural",
        "conversational",
    ]
    assert Tier("T3") is Tier.T3
    assert Strategy("none") is Strategy.NONE


def test_as_dict_is_json_ready():
    assert _classification().as_dict() == {
        "intent": "comparison",
        "confidence": 0.8,
        "tier": "T2",
        "strategy": "moderate",
        "decomposed_steps": ["What is X?", "What is Y?"],
        "language": "en",
        "reasoning": "two sides",
        "classifier": "trained",
    }


@pytest.mark.parametrize(
    "overrides",
    [
        {"confidence": 1.2},
        {"confidence": -0.1},
        {"confidence": math.nan},
        {"language": "de"},
        {"classifier": "magic"},
        {"decomposed_steps": ["a list"]},
    ],
)
def test_invalid_classifications_are_rejected(overrides):
    with pytest.raises((ValueError, TypeError)):
        _classification(**overrides)
