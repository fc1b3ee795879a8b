"""reply_json_object: the one reader of JSON out of a model reply (router, follow-ups, post-turn)."""

from __future__ import annotations

from typing import Any

import pytest

from apps.answers.providers.chat import reply_json_object


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}```', {"a": 1}),
        ('Sure! Here it is:\n```json\n{"a": {"b": 2}}\n```\nAnything else?', {"a": {"b": 2}}),
        ('Sure! Here it is:\n{"a": 1}\nHope that helps {not json}', {"a": 1}),
        ('{"a": 1} {"b": 2}', {"a": 1}),
        ('{"a": "close } and open { and \\" quote"} tail', {"a": 'close } and open { and " quote'}),
        ('{broken} then {"a": 1}', {"a": 1}),
        ('```json\n{oops} {"a": 1}\n```', {"a": 1}),
    ],
)
def test_the_first_whole_object_is_read(text: str, expected: dict[str, Any]) -> None:
    assert reply_json_object(text) == expected


@pytest.mark.parametrize(
    "text",
    ['prefix {"a": [1, 2', '{"intent": "search", "tier": ', "no json here", "", "[1, 2, 3]"],
)
def test_a_reply_without_a_whole_object_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        reply_json_object(text)
