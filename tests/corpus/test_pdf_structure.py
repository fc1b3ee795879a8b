"""A PDF's title and headings come from the PDF itself: metadata, outline, largest text."""

from __future__ import annotations

import io

import pytest

from apps.corpus.parsing import parse_document
from apps.corpus.parsing.pdf_structure import clean_title
from tests.corpus import files

LEAVE = "Employees may take twenty-six days of annual leave a year."
TRAVEL = "Travel costs are repaid within ten working days of the claim."


def test_title_and_headings_come_from_the_outline_when_metadata_has_none() -> None:
    data = files.outline_pdf([("Annual Leave", LEAVE), ("Travel Expenses", TRAVEL)])
    parsed = parse_document(filename="policy-v3-final.pdf", data=data)
    assert parsed.title == "Annual Leave"
    by_text = {block.text: block for block in parsed.blocks}
    assert by_text[LEAVE].heading == "Annual Leave"
    assert by_text[TRAVEL].heading == "Travel Expenses"
    # A heading the outline names is the section's name, not a paragraph of its own.
    assert "Annual Leave" not in by_text


def test_metadata_title_wins_over_the_outline() -> None:
    data = files.outline_pdf([("Annual Leave", LEAVE)], metadata_title="Staff Handbook 2026")
    assert parse_document(filename="x.pdf", data=data).title == "Staff Handbook 2026"


def test_binary_metadata_title_is_refused_for_the_outline() -> None:
    dump = "00000020 00 05 64 69 72 65 63 74 00 00 00 16"
    data = files.outline_pdf([("Shared MIME-info Database", LEAVE)], metadata_title=dump)
    assert parse_document(filename="x.pdf", data=data).title == "Shared MIME-info Database"


def test_title_is_the_first_pages_largest_text_without_metadata_or_outline() -> None:
    data = files.title_page_pdf("Remote Work Policy", TRAVEL)
    assert parse_document(filename="scan0042.pdf", data=data).title == "Remote Work Policy"


def test_a_page_of_one_size_gives_no_title_and_the_file_name_stands() -> None:
    data = files.lines_pdf([LEAVE, TRAVEL])
    assert parse_document(filename="leave-rules.pdf", data=data).title == "leave-rules"


@pytest.mark.parametrize(
    "raw",
    ["", "untitled", "Microsoft Word", "00 05 64 69 72 65", "\x00\x01abc", "C:\\1\\2\\3\\4.5"],
)
def test_titles_that_are_not_titles_are_refused(raw: str) -> None:
    assert clean_title(raw) is None


def test_a_real_title_is_kept_whitespace_collapsed() -> None:
    assert clean_title("  Shared   MIME-info\nDatabase ") == "Shared MIME-info Database"


CHAPTER = f"""<!doctype html><html><head><meta charset="utf-8"></head>
<body style="font-size:16px">
<h1>Chapter 4. Leave and travel</h1>
<p>Contents: 4.1. Annual leave 4.1.1. Carrying leave over 4.2. Travel</p>
<h2>4.1. Annual leave</h2>
<p>{LEAVE} Leave is booked with your manager.</p>
<h3>4.1.1. Carrying leave over</h3>
<p>Five unused days may be carried over into the next year.</p>
<h2>4.2. Travel</h2>
<p>{TRAVEL}</p>
</body></html>"""


def test_without_an_outline_headings_come_from_the_sizes_they_are_printed_in() -> None:
    from pypdf import PdfReader

    from tests.corpus.scans import chromium_pdf

    data = chromium_pdf(CHAPTER)
    assert not PdfReader(io.BytesIO(data)).outline  # Chromium prints no bookmarks by default
    blocks = parse_document(filename="handbook.pdf", data=data).blocks

    def heading_of(words: str) -> str | None:
        return next(block.heading for block in blocks if words in block.text)

    # The contents line names every section before its heading: it stays under the chapter.
    assert heading_of("Contents:") == "Chapter 4. Leave and travel"
    assert heading_of("twenty-six days") == "Chapter 4. Leave and travel > 4.1. Annual leave"
    assert heading_of("Five unused days") == (
        "Chapter 4. Leave and travel > 4.1. Annual leave > 4.1.1. Carrying leave over"
    )
    assert heading_of("Travel costs") == "Chapter 4. Leave and travel > 4.2. Travel"
    assert not [block for block in blocks if block.text == "4.1. Annual leave"]
