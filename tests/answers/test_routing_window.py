import pytest

from apps.answers.routing.types import HistoryMessage
from apps.answers.routing.window import conversation_window


def _messages(n: int) -> list[HistoryMessage]:
    return [
        HistoryMessage(role="user" if i % 2 == 0 else "assistant", text=f"m{i}") for i in range(n)
    ]


def test_keeps_the_last_six_in_order():
    window = conversation_window(_messages(10))
    assert [m.text for m in window] == ["m4", "m5", "m6", "m7", "m8", "m9"]
    assert [m.role for m in window] == ["user", "assistant"] * 3


def test_short_history_is_kept_whole():
    assert conversation_window(_messages(2)) == tuple(_messages(2))
    assert conversation_window([]) == ()


def test_each_message_is_cut_to_max_chars():
    long = HistoryMessage(role="assistant", text="x" * 5000)
    (window,) = conversation_window([long])
    assert window.text == "x" * 600
    assert window.role == "assistant"


def test_size_and_max_chars_are_configurable():
    window = conversation_window(_messages(5), size=2, max_chars=1)
    assert [m.text for m in window] == ["m", "m"]
    assert conversation_window(_messages(5), size=0) == ()


def test_negative_bounds_are_rejected():
    with pytest.raises(ValueError):
        conversation_window(_messages(3), size=-1)
