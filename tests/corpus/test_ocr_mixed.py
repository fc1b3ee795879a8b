"""Persian pages with Latin words in them (product names, commands, file types), read by the
real Tesseract from pages Chromium printed and pdftoppm scanned; and the reading order of a
right-to-left line from Tesseract's word boxes."""

from __future__ import annotations

import pytest

from apps.corpus.parsing import OcrOptions, parse_document
from apps.corpus.parsing.ocr_words import OcrWord, line_text, rtl_reading_order
from apps.corpus.text import normalise_text
from tests.corpus import scans

OCR = OcrOptions(max_pages=10, page_timeout_s=60.0, dpi=200)
ZWNJ = "\u200c"
# Sentences of the kind the guide's Persian pages hold: the Persian model alone read
# "(Django)" as "(0عطهز)" and "make serve" as "6۳۷76 2166".
DJANGO = "این پلتفرم با جنگو (Django) ساخته شده است و سه بخش اصلی دارد."
MAKE = "برای اجرای سرور دستور make serve را در پوشهٔ پروژه بزنید."
# A paragraph long enough to wrap over several printed lines: Tesseract's noise-row rejection
# dropped whole lines of such paragraphs.
LONG = (
    f"پلتفرم پاسخ{ZWNJ}گویی به پرسش{ZWNJ}ها بر اساس اسناد خود سازمان پاسخ می{ZWNJ}دهد. "
    f"شما اسنادی مانند فایل{ZWNJ}های متنی ساده و صفحه{ZWNJ}های وب را بارگذاری می{ZWNJ}کنید. "
    f"پلتفرم هر سند را به قطعه{ZWNJ}های کوتاهی تقسیم می{ZWNJ}کند، آن{ZWNJ}ها را نمایه{ZWNJ}سازی "
    f"می{ZWNJ}کند و از آن{ZWNJ}ها برای پاسخ دادن استفاده می{ZWNJ}کند. پاسخ هم{ZWNJ}زمان با "
    f"نوشته شدن نمایش داده می{ZWNJ}شود و هر جمله{ZWNJ}ای که از یک سند آمده است، یک ارجاع "
    f"درون{ZWNJ}متنی دارد که به همان بخش دقیق سند اشاره می{ZWNJ}کند."
)


def _scanned_text(*paragraphs: str, width: str = "auto") -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    html = (
        '<!doctype html><html lang="fa" dir="rtl"><head><meta charset="utf-8"></head>'
        f"<body style='font-size:16px;width:{width}'>{body}</body></html>"
    )
    data = scans.scanned(scans.chromium_pdf(html))
    parsed = parse_document(filename="راهنما.pdf", data=data, ocr=OCR)
    return normalise_text(" ".join(block.text for block in parsed.blocks))


@pytest.fixture(scope="module")
def mixed_text() -> str:
    return _scanned_text(DJANGO, MAKE)


def test_latin_words_in_a_persian_line_are_read_in_latin_letters(mixed_text: str) -> None:
    assert "(Django)" in mixed_text
    assert "make serve" in mixed_text


def test_a_latin_run_is_put_in_reading_order_between_its_persian_neighbours(
    mixed_text: str,
) -> None:
    # Right to left on the page, but the run itself left to right: "make" before "serve".
    assert mixed_text.index("جنگو") < mixed_text.index("Django") < mixed_text.index("ساخته")
    assert normalise_text("دستور make serve را") in mixed_text


def test_the_persian_words_around_the_latin_ones_are_kept(mixed_text: str) -> None:
    assert normalise_text("این پلتفرم با جنگو") in mixed_text
    assert normalise_text("ساخته شده است و سه بخش اصلی دارد.") in mixed_text
    assert normalise_text("را در پوشهٔ پروژه بزنید.") in mixed_text


def test_every_line_of_a_long_persian_paragraph_is_read() -> None:
    text = _scanned_text(LONG, width="420px")  # narrow: the paragraph wraps over many lines
    words = normalise_text(LONG).split()
    missing = [word for word in words if word not in text.split()]
    # A misread word or two is OCR; a dropped line loses six or more in a row.
    assert len(missing) <= 3, missing


def _word(text: str, left: int, *, latin: bool = False) -> OcrWord:
    return OcrWord(text, 90.0, left, 10, 50, 20, line=(1, 1, 1), latin=latin)


def test_a_right_to_left_line_reads_from_the_right_and_a_latin_run_from_its_left() -> None:
    # On the page, left to right: را serve make فایل‌های این
    visual = [
        _word("را", 100),
        _word("serve", 260, latin=True),
        _word("make", 200, latin=True),
        _word("دستور", 400),
        _word("این", 500),
    ]
    assert line_text(rtl_reading_order(visual)) == "این دستور make serve را"


def test_numbers_alone_keep_the_order_of_the_right_to_left_line() -> None:
    visual = [_word("تا", 100), _word("2020", 200), _word("از", 300), _word("2014", 400)]
    # Each number is its own run: the line still reads from the right.
    assert line_text(rtl_reading_order(visual)) == "2014 از 2020 تا"


def test_a_mark_drawn_on_the_left_of_a_latin_run_is_put_after_it_in_persian_form() -> None:
    # "فایل PDF، را" is drawn with the Persian comma on the run's left, and the English model
    # reads it as a Latin comma: "را ,PDF فایل".
    visual = [_word("را", 100), _word(",PDF", 200, latin=True), _word("فایل", 300)]
    assert line_text(rtl_reading_order(visual)) == "فایل PDF\u060c را"
