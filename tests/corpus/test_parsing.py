"""Tests for apps.corpus.parsing: every format, every refusal, and type detection.

Fixture files are built in code by tests/corpus/files.py.
"""

from __future__ import annotations

import codecs

import pytest

from apps.corpus import parsing
from apps.corpus.parsing import (
    MIME_TYPE_BY_SUFFIX,
    SUPPORTED_MIME_TYPES,
    SUPPORTED_SUFFIXES,
    Block,
    CorruptDocument,
    DocumentError,
    DocumentTooLarge,
    EmptyDocument,
    EncryptedDocument,
    ParsedDocument,
    UnsupportedFileType,
    detect_mime_type,
    parse_document,
)
from apps.corpus.parsing import pdf as pdf_module
from apps.corpus.parsing.blocks import BlockCollector, collapse_whitespace
from apps.corpus.parsing.detect import looks_binary
from apps.corpus.parsing.paragraphs import split_page_text
from apps.corpus.parsing.types import PPTX, XLSX
from tests.corpus import files
from tests.corpus.office_files import pptx_bytes, xlsx_bytes

DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def texts(document: ParsedDocument) -> list[str]:
    return [block.text for block in document.blocks]


def headings(document: ParsedDocument) -> list[str | None]:
    return [block.heading for block in document.blocks]


# --- detect_mime_type ------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "data", "expected"),
    [
        ("report.pdf", files.pdf_bytes([["Hello."]]), "application/pdf"),
        ("REPORT.PDF", files.pdf_bytes([["Hello."]]), "application/pdf"),
        ("handbook.docx", files.handbook_docx(), DOCX_MIME),
        ("page.html", b"<p>Hi</p>", "text/html"),
        ("page.htm", b"<p>Hi</p>", "text/html"),
        ("notes.md", b"# Hi", "text/markdown"),
        ("notes.markdown", b"# Hi", "text/markdown"),
        ("notes.txt", b"Hi", "text/plain"),
        ("notes.text", b"Hi", "text/plain"),
        ("C:\\Users\\ana\\My notes.v2.TXT", b"Hi", "text/plain"),
    ],
)
def test_detect_mime_type_by_extension(filename: str, data: bytes, expected: str) -> None:
    assert detect_mime_type(filename=filename, data=data) == expected


def test_every_detected_type_is_supported() -> None:
    expected = {"application/pdf", DOCX_MIME, "text/html", "text/markdown", "text/plain"}
    images = {"image/png", "image/jpeg", "image/tiff"}
    office = {PPTX, XLSX, "text/csv", "message/rfc822", "application/mbox"}
    assert expected | images | office == SUPPORTED_MIME_TYPES


def _sample(suffix: str) -> bytes:
    if suffix == ".pdf":
        return files.pdf_bytes([["Some text."]])
    if suffix == ".docx":
        return files.handbook_docx()
    if suffix == ".pptx":
        return pptx_bytes([("Title", "Body", "Notes")])
    if suffix == ".xlsx":
        return xlsx_bytes({"Sheet": [["a", "b"]]})
    if suffix in files.IMAGE_FORMATS:
        return files.image_bytes(files.IMAGE_FORMATS[suffix])
    return b"Some text."


@pytest.mark.parametrize("suffix", sorted(SUPPORTED_SUFFIXES))
def test_every_supported_suffix_is_detected_as_its_type(suffix: str) -> None:
    detected = detect_mime_type(filename=f"file{suffix}", data=_sample(suffix))
    assert detected == MIME_TYPE_BY_SUFFIX[suffix] and detected in SUPPORTED_MIME_TYPES


@pytest.mark.parametrize("filename", ["setup.exe", "archive.zip", "photo.HEIC", "old.doc"])
def test_unknown_extension_is_refused_naming_it_and_the_supported_ones(filename: str) -> None:
    with pytest.raises(UnsupportedFileType) as caught:
        detect_mime_type(filename=filename, data=b"MZ\x90\x00 anything")
    message = str(caught.value)
    assert "." + filename.rsplit(".", 1)[1].lower() in message
    for extension in (".pdf", ".docx", ".html", ".md", ".txt"):
        assert extension in message


def test_missing_extension_is_refused() -> None:
    with pytest.raises(UnsupportedFileType, match="no file extension"):
        detect_mime_type(filename="README", data=b"hello")


def test_unsupported_type_is_refused_before_looking_at_the_bytes() -> None:
    with pytest.raises(UnsupportedFileType):
        parse_document(filename="empty.exe", data=b"")


def test_pdf_extension_on_text_is_corrupt() -> None:
    with pytest.raises(CorruptDocument, match="not a PDF"):
        detect_mime_type(filename="fake.pdf", data=b"Just some text pretending to be a PDF.")


def test_pdf_header_after_leading_junk_is_accepted() -> None:
    data = b"\r\n" + files.pdf_bytes([["Hello."]])
    assert detect_mime_type(filename="x.pdf", data=data) == "application/pdf"


def test_docx_that_is_not_a_zip_is_corrupt() -> None:
    with pytest.raises(CorruptDocument, match="not a Word document"):
        detect_mime_type(filename="fake.docx", data=b"plain text, not a zip archive")


def test_zip_without_word_document_is_corrupt() -> None:
    data = files.zip_bytes({"readme.txt": b"hello", "[Content_Types].xml": b"<Types/>"})
    with pytest.raises(CorruptDocument, match=r"word/document\.xml"):
        detect_mime_type(filename="fake.docx", data=data)


def test_legacy_doc_named_docx_gets_a_specific_message() -> None:
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64
    with pytest.raises(CorruptDocument, match=r"Word 97-2003"):
        detect_mime_type(filename="old.docx", data=data)


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n  "])
@pytest.mark.parametrize("filename", ["a.pdf", "a.docx", "a.html", "a.md", "a.txt"])
def test_empty_or_whitespace_file_is_empty(filename: str, data: bytes) -> None:
    with pytest.raises(EmptyDocument, match="The file is empty"):
        parse_document(filename=filename, data=data)


def test_binary_data_named_txt_is_refused() -> None:
    data = bytes(range(256)) * 8
    with pytest.raises(CorruptDocument, match="looks like binary data"):
        parse_document(filename="data.txt", data=data)


def test_png_named_markdown_is_refused() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"
    with pytest.raises(CorruptDocument, match="binary"):
        detect_mime_type(filename="image.md", data=png)


def test_looks_binary_threshold() -> None:
    assert not looks_binary(b"line one\tcol\r\nline two\f\n")
    assert not looks_binary(b"\x1b[31mred\x1b[0m log line with colour codes and text" * 4)
    assert looks_binary(b"\x01\x02\x03\x04abc")
    assert looks_binary(b"text with a single NUL \x00 byte")


# --- plain text ------------------------------------------------------------


def test_text_paragraphs_split_on_blank_lines_and_whitespace_collapses() -> None:
    data = b"First   paragraph\nstill first.\r\n\r\n  \nSecond\tparagraph.\n\n\n\nThird."
    document = parse_document(filename="notes/meeting notes.txt", data=data)
    assert document == ParsedDocument(
        title="meeting notes",
        mime_type="text/plain",
        blocks=(
            Block(text="First paragraph still first.", page=None, heading=None),
            Block(text="Second paragraph.", page=None, heading=None),
            Block(text="Third.", page=None, heading=None),
        ),
    )


def test_text_utf8_bom_is_stripped() -> None:
    document = parse_document(filename="a.txt", data=codecs.BOM_UTF8 + "Café".encode())
    assert texts(document) == ["Café"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_text_utf16_with_bom_is_decoded(encoding: str) -> None:
    text = "Hello\n\nسلام"
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(encoding, b"")
    document = parse_document(filename="a.txt", data=bom + text.encode(encoding))
    assert texts(document) == ["Hello", "سلام"]


def test_text_utf16_without_bom_is_not_guessed() -> None:
    with pytest.raises(CorruptDocument):
        parse_document(filename="a.txt", data="Hello there".encode("utf-16-le"))


def test_latin1_text_is_refused_with_byte_and_position() -> None:
    data = "Déjà vu".encode("latin-1")
    with pytest.raises(CorruptDocument) as caught:
        parse_document(filename="a.txt", data=data)
    message = str(caught.value)
    assert "not valid UTF-8" in message
    assert "0xe9 at position 1" in message
    assert "save it as UTF-8" in message


def test_invalid_byte_position_counts_the_bom() -> None:
    with pytest.raises(CorruptDocument, match="0xff at position 5"):
        parse_document(filename="a.md", data=codecs.BOM_UTF8 + b"ab\xffcd")


def test_bom_only_file_is_empty() -> None:
    with pytest.raises(EmptyDocument, match="The file is empty"):
        parse_document(filename="a.txt", data=codecs.BOM_UTF8 + b"  \n")


def test_persian_text_round_trips_with_zwnj() -> None:
    data = f"{files.PERSIAN_SENTENCE}\n\n{files.PERSIAN_HEADING}".encode()
    document = parse_document(filename="مرخصی.txt", data=data)
    assert texts(document) == [files.PERSIAN_SENTENCE, files.PERSIAN_HEADING]
    assert files.ZWNJ in document.blocks[0].text
    assert document.title == "مرخصی"


def test_unicode_is_not_normalised_here() -> None:
    decomposed = "Cafe\u0301 and \u064a\u0643"  # combining accent, Arabic yeh and kaf
    document = parse_document(filename="a.txt", data=decomposed.encode())
    assert texts(document) == [decomposed]


# --- Markdown --------------------------------------------------------------


@pytest.fixture(scope="module")
def markdown_document() -> ParsedDocument:
    return parse_document(filename="handbook.md", data=files.HANDBOOK_MARKDOWN.encode())


def test_markdown_title_from_setext_h1_not_front_matter(markdown_document: ParsedDocument) -> None:
    assert markdown_document.title == "Handbook"
    assert markdown_document.mime_type == "text/markdown"
    assert not any("front matter" in text for text in texts(markdown_document))


def test_markdown_inline_markup_is_stripped(markdown_document: ParsedDocument) -> None:
    assert markdown_document.blocks[0] == Block(
        text="Welcome aboard, read the setup and see the logo. "
        "This line continues the paragraph with inline code.",
        page=None,
        heading="Handbook",
    )


def test_markdown_blocks_and_heading_paths(markdown_document: ParsedDocument) -> None:
    assert list(zip(texts(markdown_document), headings(markdown_document), strict=True))[1:] == [
        ("First step", "Handbook > Setup"),
        ("Nested step", "Handbook > Setup"),
        ("Second step", "Handbook > Setup"),
        ("pip   install ragplatform", "Handbook > Setup > Install"),
        ("Tool | Version", "Handbook > Setup > Install"),
        ("Python | 3.11", "Handbook > Setup > Install"),
        ("Quoted advice.", "Handbook > Reference"),
        ("Raw HTML note.", "Handbook > Reference"),
    ]


def test_markdown_atx_heading_path_resets_on_shallower_heading() -> None:
    source = "# Guide\n\n## A\n\n### A1\n\ntext a1\n\n## B\n\ntext b\n\n# Other\n\ntext o\n"
    document = parse_document(filename="g.md", data=source.encode())
    assert headings(document) == ["Guide > A > A1", "Guide > B", "Other"]
    assert document.title == "Guide"


def test_markdown_without_h1_uses_filename_stem() -> None:
    document = parse_document(filename="release-notes.md", data=b"## Changes\n\nFixed a bug.\n")
    assert document.title == "release-notes"
    assert headings(document) == ["Changes"]


def test_markdown_front_matter_does_not_become_a_heading() -> None:
    source = b"---\ntitle: Draft\nowner: ops\n---\nBody text.\n"
    document = parse_document(filename="a.md", data=source)
    assert document.blocks == (Block(text="Body text.", page=None, heading=None),)
    assert document.title == "a"


def test_markdown_horizontal_rule_at_top_is_not_front_matter() -> None:
    document = parse_document(filename="a.md", data=b"---\n\nKeep me.\n")
    assert texts(document) == ["Keep me."]


def test_markdown_persian_round_trip() -> None:
    source = f"# {files.PERSIAN_HEADING}\n\n{files.PERSIAN_SENTENCE}\n"
    document = parse_document(filename="fa.md", data=source.encode())
    assert document.title == files.PERSIAN_HEADING
    assert document.blocks == (
        Block(text=files.PERSIAN_SENTENCE, page=None, heading=files.PERSIAN_HEADING),
    )


def test_markdown_with_only_front_matter_is_empty() -> None:
    with pytest.raises(EmptyDocument):
        parse_document(filename="a.md", data=b"---\ntitle: x\n---\n")


# --- HTML ------------------------------------------------------------------


@pytest.fixture(scope="module")
def html_document() -> ParsedDocument:
    return parse_document(filename="handbook.html", data=files.HANDBOOK_HTML.encode())


def test_html_title_from_title_element(html_document: ParsedDocument) -> None:
    assert html_document.title == "Staff Handbook"
    assert html_document.mime_type == "text/html"


def test_html_drops_boilerplate_elements(html_document: ParsedDocument) -> None:
    joined = " ".join(texts(html_document))
    hidden = ("Home", "tracking", "color", "Enable JavaScript", "Hidden template", "Copyright")
    for text in hidden:
        assert text not in joined


def test_html_blocks_and_heading_paths(html_document: ParsedDocument) -> None:
    assert list(zip(texts(html_document), headings(html_document), strict=True)) == [
        ("Welcome aboard, read the setup.", "Handbook"),
        ("Loose text in a div.", "Handbook > Setup"),
        ("A paragraph over two lines.", "Handbook > Setup"),
        ("First step", "Handbook > Setup > Install"),
        ("Nested step", "Handbook > Setup > Install"),
        ("Second step", "Handbook > Setup > Install"),
        ("pip   install\n    ragplatform", "Handbook > Setup > Install"),
        ("Tool | Version", "Handbook > Reference"),
        ("Python | 3.11", "Handbook > Reference"),
        ("Quoted advice.", "Handbook > Reference"),
        ("Term", "Handbook > Reference"),
        ("Definition.", "Handbook > Reference"),
    ]


def test_html_title_falls_back_to_first_h1_then_stem() -> None:
    with_h1 = parse_document(filename="p.html", data=b"<h2>Intro</h2><h1>Main</h1><p>x</p>")
    assert with_h1.title == "Main"
    bare = parse_document(filename="plain-page.htm", data=b"<title> </title><p>x</p>")
    assert bare.title == "plain-page"


def test_html_with_only_scripts_is_empty() -> None:
    with pytest.raises(EmptyDocument, match="no readable text"):
        parse_document(filename="a.html", data=b"<script>alert(1)</script><nav>Menu</nav>")


def test_html_persian_round_trip() -> None:
    html = f'<html dir="rtl"><h1>{files.PERSIAN_HEADING}</h1><p>{files.PERSIAN_SENTENCE}</p>'
    document = parse_document(filename="fa.html", data=html.encode())
    assert document.title == files.PERSIAN_HEADING
    assert document.blocks == (
        Block(text=files.PERSIAN_SENTENCE, page=None, heading=files.PERSIAN_HEADING),
    )


def test_html_non_utf8_is_refused() -> None:
    with pytest.raises(CorruptDocument, match="not valid UTF-8"):
        parse_document(filename="a.html", data="<p>Déjà</p>".encode("cp1252"))


# --- PDF -------------------------------------------------------------------


def test_pdf_multi_page_numbers_and_metadata_title() -> None:
    data = files.pdf_bytes(
        [[files.LONG_PARAGRAPH], ["Second page text."], ["Third page text."]],
        title="Onboarding Guide",
    )
    document = parse_document(filename="guide.pdf", data=data)
    assert document.title == "Onboarding Guide"
    assert document.mime_type == "application/pdf"
    assert document.blocks == (
        Block(text=files.LONG_PARAGRAPH, page=1, heading=None),
        Block(text="Second page text.", page=2, heading=None),
        Block(text="Third page text.", page=3, heading=None),
    )


def test_pdf_placeholder_title_falls_back_to_stem() -> None:
    document = parse_document(filename="scan 42.pdf", data=files.pdf_bytes([["Hi there."]]))
    assert document.title == "scan 42"


def test_pdf_hyphenated_line_breaks_are_joined() -> None:
    data = files.lines_pdf(["The infor-", "mation about COVID-", "19 is here."])
    document = parse_document(filename="a.pdf", data=data)
    assert texts(document) == ["The information about COVID-19 is here."]


def test_pdf_short_sentence_end_line_ends_a_paragraph() -> None:
    data = files.lines_pdf(
        [
            "This is a long line of a paragraph that keeps going across the page",
            "and ends here.",
            "A second paragraph starts on this line and also runs quite long",
            "before it stops.",
        ]
    )
    document = parse_document(filename="a.pdf", data=data)
    assert texts(document) == [
        "This is a long line of a paragraph that keeps going across the page and ends here.",
        "A second paragraph starts on this line and also runs quite long before it stops.",
    ]


def test_split_page_text_on_blank_lines_and_hyphens() -> None:
    page = "Alpha  one\ntwo infor-\nmation\n\n \nBeta soft\u00ad\nhyphen\r\n\r\nGamma"
    assert split_page_text(page) == ["Alpha one two information", "Beta softhyphen", "Gamma"]
    assert split_page_text("") == []


def test_encrypted_pdf_is_refused() -> None:
    with pytest.raises(EncryptedDocument) as caught:
        parse_document(filename="locked.pdf", data=files.encrypted_pdf(user_password="secret"))
    assert str(caught.value) == (
        "The PDF is password-protected; remove the password and upload it again"
    )


def test_pdf_encrypted_with_empty_user_password_opens() -> None:
    document = parse_document(filename="perms.pdf", data=files.encrypted_pdf(user_password=""))
    assert texts(document) == ["Secret plans."]


def test_truncated_pdf_is_corrupt() -> None:
    with pytest.raises(CorruptDocument, match="damaged or incomplete"):
        parse_document(filename="cut.pdf", data=files.truncated_pdf())


def test_pdf_with_garbage_after_header_is_corrupt() -> None:
    with pytest.raises(CorruptDocument):
        parse_document(filename="bad.pdf", data=b"%PDF-1.7\n" + b"\x00garbage" * 50)


def test_pdf_without_text_is_empty_with_scan_hint() -> None:
    # Without OCR (a request, or RAG_OCR off) a scan has no text; the page says why.
    with pytest.raises(EmptyDocument) as caught:
        parse_document(filename="scan.pdf", data=files.image_only_pdf())
    assert str(caught.value) == (
        "No text could be extracted from this PDF; it may be a scanned image "
        "(page 1: the page has no text layer and OCR is turned off)"
    )


def test_pdf_page_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    data = files.pdf_bytes([["One."], ["Two."], ["Three."]])
    monkeypatch.setattr(pdf_module, "MAX_PDF_PAGES", 2)
    with pytest.raises(DocumentTooLarge, match="3 pages; the limit is 2"):
        parse_document(filename="big.pdf", data=data)
    monkeypatch.setattr(pdf_module, "MAX_PDF_PAGES", 3)
    assert len(parse_document(filename="big.pdf", data=data).blocks) == 3


# --- DOCX ------------------------------------------------------------------


@pytest.fixture(scope="module")
def docx_document() -> ParsedDocument:
    return parse_document(filename="handbook.docx", data=files.handbook_docx())


def test_docx_title_from_title_paragraph(docx_document: ParsedDocument) -> None:
    assert docx_document.title == "Employee Handbook"
    assert docx_document.mime_type == DOCX_MIME


def test_docx_headings_build_path_and_are_not_blocks(docx_document: ParsedDocument) -> None:
    assert list(zip(texts(docx_document), headings(docx_document), strict=True)) == [
        ("Welcome to the company.", "Employee Handbook"),
        ("Read this first.", "Employee Handbook > Setup"),
        ("Run the installer.", "Employee Handbook > Setup > Install"),
        ("Tool | Version | Owner", "Employee Handbook > Setup > Install"),
        ("Python | 3.11 | IT", "Employee Handbook > Setup > Install"),
        ("Email the help desk.", "Employee Handbook > Support"),
    ]
    assert all(block.page is None for block in docx_document.blocks)


def test_docx_merged_cells_appear_once() -> None:
    document = parse_document(filename="table.docx", data=files.merged_cells_docx())
    assert texts(document) == ["Region | Total", "North | South | 12"]


@pytest.mark.parametrize(
    ("core_title", "heading", "expected"),
    [
        ("Policy 2025", "Overview", "Policy 2025"),
        (None, "Overview", "Overview"),
        (None, None, "policy-draft"),
    ],
)
def test_docx_title_fallbacks(core_title: str | None, heading: str | None, expected: str) -> None:
    data = files.titled_docx(core_title=core_title, heading=heading)
    assert parse_document(filename="policy-draft.docx", data=data).title == expected


def test_docx_without_text_is_empty() -> None:
    with pytest.raises(EmptyDocument, match="no text"):
        parse_document(filename="blank.docx", data=files.empty_docx())


def test_truncated_docx_is_corrupt() -> None:
    data = files.handbook_docx()
    with pytest.raises(CorruptDocument):
        parse_document(filename="cut.docx", data=data[: len(data) // 2])


def test_docx_with_broken_xml_is_corrupt() -> None:
    data = files.zip_bytes({"word/document.xml": b"<w:document><unclosed>"})
    with pytest.raises(CorruptDocument, match="damaged"):
        parse_document(filename="broken.docx", data=data)


def test_docx_persian_round_trip() -> None:
    document = parse_document(filename="fa.docx", data=files.persian_docx())
    assert document.title == files.PERSIAN_HEADING
    assert document.blocks == (
        Block(text=files.PERSIAN_SENTENCE, page=None, heading=files.PERSIAN_HEADING),
    )
    assert files.ZWNJ in document.blocks[0].text


# --- shared pieces ---------------------------------------------------------


def test_collapse_whitespace_keeps_zero_width_joiners() -> None:
    assert collapse_whitespace(f"  a\u00a0\tb\n می{files.ZWNJ}خواهم ") == f"a b می{files.ZWNJ}خواهم"


def test_block_collector_skips_empty_text_and_blank_headings() -> None:
    collector = BlockCollector()
    collector.heading(1, "  ")
    collector.add(" \n ")
    collector.heading(2, "Deep")
    collector.add("x")
    assert collector.blocks == (Block(text="x", page=None, heading="Deep"),)


def test_every_error_is_a_document_error_with_a_sentence() -> None:
    cases = [
        ("a.exe", b"MZ"),
        ("a.txt", b""),
        ("a.pdf", b"not a pdf"),
        ("a.pdf", files.encrypted_pdf(user_password="pw")),
        ("a.txt", b"\xff\xfeA"),
    ]
    for filename, data in cases:
        with pytest.raises(DocumentError) as caught:
            parse_document(filename=filename, data=data)
        assert str(caught.value)[0].isupper()


def test_package_exports_the_interface() -> None:
    assert set(parsing.__all__) >= {
        "Block",
        "ParsedDocument",
        "DocumentError",
        "UnsupportedFileType",
        "EmptyDocument",
        "CorruptDocument",
        "EncryptedDocument",
        "SUPPORTED_MIME_TYPES",
        "detect_mime_type",
        "parse_document",
    }
