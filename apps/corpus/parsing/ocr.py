"""Optical character recognition with Tesseract (pytesseract), one page image at a time.

The language is chosen per page: Tesseract's script detection (OSD) picks the Persian or the
English model; where it cannot tell (too little text), both models read the page and the one
more confident wins. On a Persian page the Latin words the Persian model misreads are read
again by the English model (ocr_latin), and each line is put in reading order from the words'
boxes (ocr_words), a Latin run inside it left to right. All the reading of one page shares
its time limit. OCR is slow, so only the task workers call this: a request parses with
`ocr=None` and never reaches it.
"""

from __future__ import annotations

import io
import re
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import median

import pytesseract
from PIL import Image

from .blocks import collapse_whitespace
from .ocr_latin import latin_restored
from .ocr_marks import line_mended
from .ocr_words import OcrWord, TesseractTimeout, line_text, rtl_reading_order, tesseract_words
from .printed_headings import PrintedHeading, printed_headings

# OSD's script names for the two models installed (tesseract-ocr-eng, tesseract-ocr-fas).
MODEL_BY_SCRIPT = {"Latin": "eng", "Arabic": "fas"}
MODELS = ("eng", "fas")
# Page segmentation modes tried per model. Tesseract's full layout analysis (3) splits short
# right-aligned Persian lines into false columns (words dropped and doubled); one uniform block
# (6) reads them whole but drops larger headings, so both run and the more confident wins.
LAYOUTS = {"eng": (3,), "fas": (3, 6)}
# Words Tesseract itself scores below this are noise (speckles read as letters). The Persian
# model scores real words lower (joined letters, diacritics): at 30 it dropped whole words from
# clean Chromium renders, at 15 it keeps them (benchmarks/ocr.py: Persian CER 4.4% -> 2.9%).
MIN_WORD_CONFIDENCE = {"eng": 30.0, "fas": 15.0}
# A word scored below that inside a line whose median word scores at least this is text Tesseract
# found hard, not a speckle: an option name or a path printed in quote marks ("‘DefaultEnabled’:"
# scores 18 in a line whose median is 96). Speckles make lines of their own that score low
# throughout; 39 of 1,522 words of three scanned pages of an apt manual were dropped as noise.
MIN_LINE_CONFIDENCE = 50.0
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
# The Persian model reads the Arabic comma, semicolon and question mark as their Latin shapes;
# after a Persian letter only the Arabic ones are right.
PERSIAN_PUNCTUATION = str.maketrans({",": "\u060c", ";": "\u061b", "?": "\u061f"})
_AFTER_PERSIAN_LETTER = re.compile(r"(?<=[\u0600-\u06ff])[,;?]")
# A page whose words average below this reads as no text at all (a photo, a blank scan).
MIN_PAGE_CONFIDENCE = 40.0
# Fewer letters than this and a page holds no text worth indexing.
MIN_PAGE_LETTERS = 3
PDFTOPPM = "pdftoppm"
_SCRIPT = re.compile(r"Script:\s*(\w+)")


@dataclass(frozen=True)
class OcrOptions:
    """What the deployment allows (RAG_OCR_* settings), read once per document."""

    max_pages: int = 200
    page_timeout_s: float = 60.0
    dpi: int = 200


@dataclass(frozen=True)
class OcrPage:
    # As a text layer gives it: a line a line in reading order, a blank line after each of
    # Tesseract's blocks, so the PDF path's joiner (paragraphs.py) cuts both alike.
    text: str
    confidence: float  # mean word confidence, 0..100
    model: str  # "eng" or "fas"
    # The heading lines of `text` (each a block of its own there), with their levels.
    headings: tuple[tuple[str, PrintedHeading], ...] = ()


class PageUnreadable(Exception):
    """This page could not be read; `str(exc)` says why, for the document's record."""


def ocr_image(image: Image.Image, *, options: OcrOptions) -> OcrPage:
    """The page's lines in reading order, or PageUnreadable (timeout, no text)."""
    image = _prepared(image)
    deadline = time.monotonic() + options.page_timeout_s
    model = _script_model(image, timeout=options.page_timeout_s)
    candidates = [model] if model else list(MODELS)
    readings = [
        (m, _read(image, model=m, layout=layout, deadline=deadline, limit=options.page_timeout_s))
        for m in candidates
        for layout in LAYOUTS[m]
    ]
    model, words = max(readings, key=lambda reading: _confidence(reading[1], model=reading[0]))
    if model == "fas":
        words = latin_restored(image, words, deadline=deadline)
    best = _page_from_words(words, model=model)
    letters = sum(ch.isalpha() for ch in best.text)
    if letters < MIN_PAGE_LETTERS or best.confidence < MIN_PAGE_CONFIDENCE:
        raise PageUnreadable("no text was found on the page")
    return best


def pdf_page_image(path: Path, *, number: int, options: OcrOptions) -> Image.Image:
    """Page `number` (from 1) of the PDF at `path`, rendered by poppler's pdftoppm."""
    command = [PDFTOPPM, "-r", str(options.dpi), "-f", str(number), "-l", str(number)]
    try:
        done = subprocess.run(  # noqa: S603 - fixed program and arguments
            [*command, "-gray", "-png", "-singlefile", str(path)],
            capture_output=True,
            timeout=options.page_timeout_s,
            check=True,
        )
    except subprocess.TimeoutExpired as exc:
        raise PageUnreadable(f"rendering took longer than {options.page_timeout_s:g} s") from exc
    except (subprocess.CalledProcessError, OSError) as exc:
        raise PageUnreadable("the page could not be rendered") from exc
    return _png(done.stdout)


def _png(data: bytes) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (OSError, ValueError) as exc:
        raise PageUnreadable("the page could not be rendered") from exc
    return image


def _prepared(image: Image.Image) -> Image.Image:
    # Tesseract reads grey levels; palette, alpha and CMYK images confuse its binarisation.
    return image if image.mode in ("L", "RGB") else image.convert("RGB")


def _script_model(image: Image.Image, *, timeout: float) -> str | None:
    try:
        report = pytesseract.image_to_osd(image, config="--psm 0", timeout=timeout)
    except pytesseract.TesseractError:
        return None  # Too few characters to tell the script: both models read it.
    except RuntimeError as exc:  # pytesseract's timeout
        raise PageUnreadable(f"reading took longer than {timeout:g} s") from exc
    match = _SCRIPT.search(str(report))
    return MODEL_BY_SCRIPT.get(match[1]) if match else None


def _read(
    image: Image.Image, *, model: str, layout: int, deadline: float, limit: float
) -> list[OcrWord]:
    try:
        return tesseract_words(
            image, model=model, layout=layout, timeout=deadline - time.monotonic()
        )
    except TesseractTimeout as exc:
        raise PageUnreadable(f"reading took longer than {limit:g} s") from exc
    except pytesseract.TesseractError as exc:
        raise PageUnreadable(f"Tesseract failed ({collapse_whitespace(str(exc))[:80]})") from exc


def _confident(words: list[OcrWord], *, model: str) -> list[OcrWord]:
    """The words Tesseract scores above the noise floor; an English reading has been judged."""
    return [w for w in words if w.latin or w.confidence >= MIN_WORD_CONFIDENCE[model]]


def _kept(words: list[OcrWord], *, model: str) -> list[OcrWord]:
    """The confident words, and those it scored lower that hold a letter or a digit and stand
    in a line it reads well."""
    scores: dict[tuple[int, int, int], list[float]] = {}
    for word in words:
        scores.setdefault(word.line, []).append(word.confidence)
    well_read = {line for line, found in scores.items() if median(found) >= MIN_LINE_CONFIDENCE}
    floor = MIN_WORD_CONFIDENCE[model]
    return [
        w
        for w in words
        if w.latin
        or w.confidence >= floor
        or (w.line in well_read and _LETTER_OR_DIGIT.search(w.text) is not None)
    ]


def _confidence(words: list[OcrWord], *, model: str) -> float:
    confident = _confident(words, model=model)
    return sum(w.confidence for w in confident) / len(confident) if confident else 0.0


def _page_from_words(words: list[OcrWord], *, model: str) -> OcrPage:
    """Words grouped into lines and blocks by Tesseract's own layout numbers.

    A block is set apart by white space on the page; Tesseract's paragraphs inside it follow
    indentation and cut a printed paragraph mid-sentence, so the joiner decides, as it does
    for a text layer that marks no paragraphs. A heading line (printed_headings) is a block of its
    own, so no joiner runs it into the paragraph it heads.
    """
    kept = _kept(words, model=model)
    lines: dict[tuple[int, int, int], list[OcrWord]] = {}
    for word in kept:
        text = word.text if word.latin or model != "fas" else _persian_punctuation(word.text)
        lines.setdefault(word.line, []).append(replace(word, text=text))
    texts = {
        number: line_mended(line_text(rtl_reading_order(line) if model == "fas" else line))
        for number, line in lines.items()
    }
    headings = printed_headings(lines, texts)
    blocks: list[list[str]] = []
    block_number: int | None = None
    for number, text in texts.items():  # Tesseract's reading order of blocks and lines
        if number in headings:
            blocks.append([text])
            block_number = None
            continue
        if number[0] != block_number:
            blocks.append([])
            block_number = number[0]
        blocks[-1].append(text)
    return OcrPage(
        text="\n\n".join("\n".join(block) for block in blocks),
        confidence=round(_confidence(kept, model=model), 1),
        model=model,
        headings=tuple((texts[number], mark) for number, mark in headings.items()),
    )


def _persian_punctuation(word: str) -> str:
    return _AFTER_PERSIAN_LETTER.sub(lambda mark: mark[0].translate(PERSIAN_PUNCTUATION), word)
