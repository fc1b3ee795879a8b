"""OCR of scanned pages and images with the real Tesseract, on pages made by real tools."""

from __future__ import annotations

import pytest
from PIL import Image

from apps.corpus.parsing import (
    CorruptDocument,
    EmptyDocument,
    OcrOptions,
    parse_document,
)
from apps.corpus.text import normalise_text
from tests.corpus import files, scans

LEAVE = "Employees may take twenty-six days of annual leave a year."
TRAVEL = "Travel costs are repaid within ten working days of the claim."
OCR = OcrOptions(max_pages=10, page_timeout_s=60.0, dpi=200)


@pytest.fixture(scope="module")
def english_scan() -> bytes:
    original = files.outline_pdf([("Annual Leave", LEAVE), ("Travel Expenses", TRAVEL)])
    return scans.scanned(original)


@pytest.fixture(scope="module")
def persian_scan() -> bytes:
    return scans.scanned(scans.chromium_pdf(scans.persian_html()))


def _text(parsed_blocks: object) -> str:
    return normalise_text(" ".join(b.text for b in parsed_blocks))  # type: ignore[attr-defined]


def test_a_scanned_pdf_is_read_page_by_page_with_its_confidence(english_scan: bytes) -> None:
    parsed = parse_document(filename="scan.pdf", data=english_scan, ocr=OCR)
    text = _text(parsed.blocks)
    assert LEAVE in text and TRAVEL in text
    assert {b.page for b in parsed.blocks} == {1, 2}
    assert all(b.ocr_confidence is not None and b.ocr_confidence > 80 for b in parsed.blocks)
    assert parsed.unread_pages == ()


def test_a_persian_page_printed_by_chromium_and_scanned_reads_in_reading_order(
    persian_scan: bytes,
) -> None:
    parsed = parse_document(filename="مرخصی.pdf", data=persian_scan, ocr=OCR)
    text = _text(parsed.blocks)
    # Logical order: the sentence's first word comes first, ZWNJ kept ("می‌توانند").
    assert normalise_text("کارمندان می\u200cتوانند سالانه بیست و شش روز مرخصی") in text
    assert text.index("کارمندان") < text.index("مدیر")


def test_a_photo_like_jpeg_of_text_is_read() -> None:
    page = scans.rendered_pages(files.title_page_pdf("Remote Work Policy", LEAVE))[0]
    parsed = parse_document(filename="photo.jpg", data=scans.photo_jpeg(page), ocr=OCR)
    assert "twenty-six days" in _text(parsed.blocks)


def test_a_multi_page_tiff_is_one_document_of_pages(english_scan: bytes) -> None:
    pages = scans.rendered_pages(files.outline_pdf([("Leave", LEAVE), ("Travel", TRAVEL)]))
    parsed = parse_document(filename="fax.tiff", data=scans.tiff_bytes(pages), ocr=OCR)
    assert parsed.blocks[0].page == 1 and parsed.blocks[-1].page == 2


def test_an_image_with_no_text_fails_saying_so() -> None:
    blank = scans.png_bytes(Image.new("L", (800, 600), color=250))
    with pytest.raises(EmptyDocument, match="No text could be read in the image"):
        parse_document(filename="blank.png", data=blank, ocr=OCR)


def test_a_corrupt_tiff_is_refused_as_damaged() -> None:
    whole = scans.tiff_bytes([Image.new("L", (400, 400), color=255)])
    with pytest.raises(CorruptDocument, match="damaged"):
        parse_document(filename="broken.tif", data=whole[: len(whole) // 3])


def test_a_file_named_png_that_is_not_one_is_refused_by_its_bytes() -> None:
    with pytest.raises(CorruptDocument, match="not a PNG image"):
        parse_document(filename="x.png", data=files.pdf_bytes([["Some text."]]), ocr=OCR)


def test_pages_past_the_ocr_limit_are_recorded_and_the_rest_kept(english_scan: bytes) -> None:
    limited = OcrOptions(max_pages=1, page_timeout_s=60.0, dpi=200)
    parsed = parse_document(filename="scan.pdf", data=english_scan, ocr=limited)
    assert LEAVE in _text(parsed.blocks) and TRAVEL not in _text(parsed.blocks)
    assert [(p.page, p.reason) for p in parsed.unread_pages] == [
        (2, "over the limit of 1 OCR pages per document")
    ]


def test_a_page_over_its_time_limit_is_recorded_not_waited_for(english_scan: bytes) -> None:
    hurried = OcrOptions(max_pages=10, page_timeout_s=0.001, dpi=200)
    with pytest.raises(EmptyDocument, match=r"page 1: .*took longer than"):
        parse_document(filename="scan.pdf", data=english_scan, ocr=hurried)


def test_without_ocr_an_image_has_no_text() -> None:
    with pytest.raises(EmptyDocument, match="OCR is turned off"):
        parse_document(filename="a.png", data=files.image_bytes("PNG"))


def test_persian_punctuation_is_read_as_persian_not_latin() -> None:
    # The Persian model reads «،» and «؟» as "," and "?"; after a Persian letter they are put back.
    sentence = "هزینه‌های سفر، هتل، غذا و بلیت قطار پرداخت می‌شود؟"
    html = (
        '<!doctype html><html lang="fa" dir="rtl"><head><meta charset="utf-8"></head>'
        f"<body style='font-size:18px'><p>{sentence}</p></body></html>"
    )
    parsed = parse_document(
        filename="نشانه.pdf", data=scans.scanned(scans.chromium_pdf(html)), ocr=OCR
    )
    text = _text(parsed.blocks)
    assert "سفر، هتل، غذا" in text and "می\u200cشود؟" in text
    assert "," not in text and "?" not in text
