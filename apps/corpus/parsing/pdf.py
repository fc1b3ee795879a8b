"""PDF via pypdf: one block per paragraph per page, pages numbered from 1.

pypdf's plain extraction rarely emits blank lines between paragraphs, so a
paragraph also ends after a short line that closes a sentence. Lines typed at a shell
prompt ("$ tar -cvJf ...") are taken out of their paragraph as a code block, lines kept:
joined into the prose they would read as one run-on sentence.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from pypdf import PasswordType, PdfReader

from .blocks import PROMPT, BlockCollector, collapse_whitespace
from .ocr import OcrOptions
from .pdf_layout import CELL_SEPARATOR, PageSegment, PdfLayout
from .pdf_structure import OutlineEntry, heading_key, outline_by_page, pdf_outline, pdf_title
from .scans import PdfScans
from .types import (
    HEAD_ROW,
    ROW,
    CorruptDocument,
    DocumentError,
    DocumentTooLarge,
    EncryptedDocument,
    Extracted,
)

# Read at call time so deployments and tests can change it.
MAX_PDF_PAGES = 2000
# A page with fewer letters than this in its text layer is taken as a scan.
MIN_TEXT_LETTERS = 3
SENTENCE_END = (".", "!", "?", ":", "…", "؟")
SHORT_LINE_SHARE = 0.6
HYPHEN_BREAK = re.compile(r"(\w)([-\u00ad])\n(\w)")
MAX_REASON_CHARS = 120
_CONTINUED = ("\\", "|", "--", ">", "&&")


# Told (pages done, pages in all) after every page, so a long scan shows its progress.
PageProgress = Callable[[int, int], None]


def parse_pdf(
    data: bytes,
    *,
    ocr: OcrOptions | None = None,
    table_pages: int = 0,
    on_page: PageProgress | None = None,
) -> Extracted:
    """The PDF's paragraphs; with `ocr`, pages without a text layer are read by Tesseract; the
    first `table_pages` pages are searched for tables, kept as rows with their header."""
    try:
        return _extract(data, ocr=ocr, table_pages=table_pages, on_page=on_page)
    except DocumentError:
        raise
    except Exception as exc:
        # pypdf raises its own errors but also ValueError, KeyError, ... on damaged files.
        raise CorruptDocument(_corrupt_message(exc)) from exc


def _extract(
    data: bytes, *, ocr: OcrOptions | None, table_pages: int, on_page: PageProgress | None
) -> Extracted:
    reader = PdfReader(io.BytesIO(data))
    _unlock(reader)
    _check_page_count(len(reader.pages))
    outline = pdf_outline(reader)
    bookmarks = outline_by_page(outline)
    collector = BlockCollector()
    scans = PdfScans(data=data, options=ocr)
    layout = PdfLayout(data=data, table_pages=table_pages)
    try:
        for number, page in enumerate(reader.pages, start=1):
            text = page.extract_text() or ""
            if not _has_text(text):
                marks = [(e.level, e.title) for e in bookmarks.get(number, [])]
                scans.read_pdf_page(number, collector, marks)
            else:
                segments = layout.segments(number, stream_text=text) or [PageSegment(text=text)]
                _add_segments(collector, segments, number, bookmarks.get(number, []))
            if on_page is not None:
                on_page(number, len(reader.pages))
    finally:
        scans.close()
        layout.close()
    title = pdf_title(reader, outline)
    return Extracted(title=title, blocks=collector.blocks, unread_pages=scans.unread)


def _has_text(text: str) -> bool:
    return sum(ch.isalpha() for ch in text) >= MIN_TEXT_LETTERS


def _add_segments(
    collector: BlockCollector,
    segments: list[PageSegment],
    number: int,
    bookmarks: list[OutlineEntry],
) -> None:
    """A page's prose and tables in reading position; a table's first row is its header.
    A bookmark goes to the prose that opens with its title, else to the top of the page."""
    blocks = [page_blocks(segment.text) for segment in segments]
    home = {entry: _home(entry, blocks) for entry in bookmarks}
    for index, segment in enumerate(segments):
        marks = [e for e in bookmarks if home[e] == index or (home[e] is None and index == 0)]
        if not segment.rows:
            _add_page(collector, blocks[index], number, marks)
            continue
        for entry in marks:
            collector.heading(entry.level, entry.title)
        for row_number, row in enumerate(segment.rows):
            kind = HEAD_ROW if row_number == 0 else ROW
            collector.add(CELL_SEPARATOR.join(row), page=number, kind=kind)


def _home(entry: OutlineEntry, blocks: list[list[tuple[str, bool]]]) -> int | None:
    """The first piece of the page with a paragraph opening with the bookmark's title."""
    for index, paragraphs in enumerate(blocks):
        if any(_opens(paragraph, entry) is not None for paragraph, _ in paragraphs):
            return index
    return None


def _add_page(
    collector: BlockCollector,
    paragraphs: list[tuple[str, bool]],
    number: int,
    bookmarks: list[OutlineEntry],
) -> None:
    """One page's paragraphs; a bookmark on the page starts its heading at the paragraph that
    opens with its title (the title itself is no block), or at the top of the page."""
    pending = [e for e in bookmarks if any(_opens(p, e) is not None for p, _ in paragraphs)]
    for entry in bookmarks:
        if entry not in pending:
            collector.heading(entry.level, entry.title)
    for paragraph, code in paragraphs:
        rest = _opens(paragraph, pending[0]) if pending else None
        if rest is not None:
            entry = pending.pop(0)
            collector.heading(entry.level, entry.title)
            paragraph = rest
        if code:
            collector.add_code(paragraph, page=number)
        else:
            collector.add(paragraph, page=number)


def _opens(paragraph: str, entry: OutlineEntry) -> str | None:
    """The paragraph after the bookmark's title when it opens with it, else None."""
    title, key = heading_key(entry.title), heading_key(paragraph)
    if not key.startswith(title) or key[len(title) : len(title) + 1].isalnum():
        return None
    words = len(entry.title.split())
    return " ".join(paragraph.split()[words:])


def _unlock(reader: PdfReader) -> None:
    # Many PDFs are "encrypted" only to set permissions and open with an empty password.
    if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
        raise EncryptedDocument(
            "The PDF is password-protected; remove the password and upload it again"
        )


def _check_page_count(pages: int) -> None:
    if pages > MAX_PDF_PAGES:
        raise DocumentTooLarge(
            f"The PDF has {pages} pages; the limit is {MAX_PDF_PAGES}. "
            "Split it and upload the parts"
        )


def split_page_text(text: str) -> list[str]:
    """Paragraphs of one page's extracted text, hyphenated line breaks re-joined."""
    joined = (_join_lines(group) for group in _line_groups(text))
    return [paragraph for paragraph in joined if paragraph]


def page_blocks(text: str) -> list[tuple[str, bool]]:
    """`split_page_text`'s paragraphs as (text, is_code), each run of prompted lines apart."""
    found: list[tuple[str, bool]] = []
    for group in _line_groups(text):
        for code, run in _prompt_runs(group):
            paragraph = "\n".join(run) if code else _join_lines(run)
            if paragraph:
                found.append((paragraph, code))
    return found


def _line_groups(text: str) -> list[list[str]]:
    lines = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    longest = max((len(line) for line in lines), default=0)
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        if not line or _ends_paragraph(line, longest):
            paragraphs.append([])
    return [group for group in paragraphs if group]


def _prompt_runs(lines: list[str]) -> list[tuple[bool, list[str]]]:
    """The lines in runs: (True, prompted lines) and (False, the others), in order."""
    runs: list[tuple[bool, list[str]]] = []
    for line in lines:
        # A command broken over lines goes on where its line ends in "\\", "|", "--" or ">".
        continued = bool(runs and runs[-1][0] and runs[-1][1][-1].endswith(_CONTINUED))
        code = bool(PROMPT.match(line)) or continued
        if runs and runs[-1][0] == code:
            runs[-1][1].append(line)
        else:
            runs.append((code, [line]))
    return runs


def _ends_paragraph(line: str, longest: int) -> bool:
    return line.endswith(SENTENCE_END) and len(line) < SHORT_LINE_SHARE * longest


def _join_lines(lines: list[str]) -> str:
    text = HYPHEN_BREAK.sub(_rejoin_hyphen, "\n".join(lines))
    return collapse_whitespace(text)


def _rejoin_hyphen(match: re.Match[str]) -> str:
    before, hyphen, after = match.groups()
    if hyphen == "\u00ad" or after.islower():
        return before + after  # "infor-\nmation" -> "information"
    return before + hyphen + after  # "COVID-\n19" keeps its hyphen


def _corrupt_message(exc: Exception) -> str:
    reason = collapse_whitespace(str(exc))[:MAX_REASON_CHARS] or type(exc).__name__
    return f"The PDF is damaged or incomplete and could not be read ({reason})"
