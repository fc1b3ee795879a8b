"""What a search result shows of a document (issue #30, item 7): a readable title, and table
rows as rows."""

from __future__ import annotations

import pytest

from apps.answers.turn.search_results import table_rows_as_rows
from apps.corpus.text.readable import readable_title


@pytest.mark.parametrize(
    "title",
    [
        "FEFF00540072006100760065006C",
        "<FEFF0054007200610076>",
        "þÿ\x00T\x00r\x00a\x00v",
        "\ufffd\ufffd\ufffd",
        "%%%% 1234 ####",
        "",
    ],
)
def test_an_unreadable_title_falls_back_to_the_file_name(title: str) -> None:
    assert readable_title(title, filename="travel.pdf") == "travel.pdf"


@pytest.mark.parametrize("title", ["Travel policy 2026", "سیاست سفر", "VPN: WireGuard (v2)"])
def test_a_readable_title_stays(title: str) -> None:
    assert readable_title(title, filename="travel.pdf") == title


def test_table_rows_read_as_rows_and_prose_runs_on() -> None:
    text = "The allowances are\nin this table.\n| Trip | Allowance |\n|---|:--:|\n| <mark>Foreign</mark> trip | 60 |"
    assert table_rows_as_rows(text) == (
        "The allowances are in this table.\nTrip · Allowance\n<mark>Foreign</mark> trip · 60"
    )
    assert table_rows_as_rows("no table | here") == "no table | here"
