"""Words as Tesseract reads them (text, confidence, box, line), and a right-to-left line put
back into reading order.

Tesseract gives each word's box on the page. A Persian line is laid out right to left, but a
run of Latin words or numbers inside it (`make serve`, `Word (DOCX)`) is laid out left to
right, as the Unicode bidirectional algorithm places it; reading order follows the boxes from
the right and turns back inside each such run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import pytesseract
from PIL import Image

from .blocks import collapse_whitespace

# Tesseract drops a whole text line it judges to be noise, and a Persian line (its dots and
# short joined strokes are many small blobs) can look like noise to it: on the guide's Persian
# pages and PersianQA passages printed by Chromium whole lines went missing. With the row
# rejection off they are read (benchmarks/ocr.py; English pages read the same either way).
TESSERACT_OPTIONS = "-c textord_noise_rejrows=0"
# Invisible direction marks Tesseract sometimes writes after Persian digits: no reader wants them.
_DIRECTION_MARKS = re.compile("[\u200e\u200f]")
_LATIN = re.compile("[A-Za-z]")
_ASCII_DIGIT = re.compile("[0-9]")
# Punctuation a left-to-right run carries on its left edge inside a right-to-left line is the
# mark that follows it in reading order (`PDF،` is drawn as `،PDF`).
_LEADING_MARKS = re.compile("^[.,;:!?\u060c\u061b\u061f\u2018\u2019'`]+")
_LATIN_MARKS = str.maketrans({",": "\u060c", ";": "\u061b", "?": "\u061f", "\u2018": "\u060c"})


class TesseractTimeout(Exception):
    pass


@dataclass(frozen=True)
class OcrWord:
    text: str
    confidence: float  # 0..100, Tesseract's own
    left: int
    top: int
    width: int
    height: int
    line: tuple[int, int, int]  # (block, paragraph, line) as Tesseract numbered them
    latin: bool = False  # read again by the English model inside a right-to-left page

    @property
    def right(self) -> int:
        return self.left + self.width

    @property
    def bottom(self) -> int:
        return self.top + self.height

    def overlap(self, other: OcrWord) -> int:
        """How many pixel columns the two boxes share."""
        return max(0, min(self.right, other.right) - max(self.left, other.left))


def tesseract_words(
    image: Image.Image,
    *,
    model: str,
    layout: int,
    timeout: float,
    origin: tuple[int, int] = (0, 0),
    line: tuple[int, int, int] | None = None,
) -> list[OcrWord]:
    """Every word Tesseract reads in `image`, boxes shifted by `origin` (a crop's corner on
    the page) and, where `line` is given, all placed on that line."""
    try:
        data = pytesseract.image_to_data(
            image,
            lang=model,
            config=f"--psm {layout} {TESSERACT_OPTIONS}",
            output_type=pytesseract.Output.DICT,
            timeout=max(timeout, 0.001),
        )
    except RuntimeError as exc:  # pytesseract's timeout
        raise TesseractTimeout from exc
    return words_from_data(data, origin=origin, line=line)


def words_from_data(
    data: dict[str, list[object]],
    *,
    origin: tuple[int, int] = (0, 0),
    line: tuple[int, int, int] | None = None,
) -> list[OcrWord]:
    words = []
    for i, raw in enumerate(data["text"]):
        text = _DIRECTION_MARKS.sub("", str(raw)).strip()
        if not text:
            continue
        number = tuple(int(str(data[key][i])) for key in ("block_num", "par_num", "line_num"))
        words.append(
            OcrWord(
                text=text,
                confidence=float(str(data["conf"][i])),
                left=int(str(data["left"][i])) + origin[0],
                top=int(str(data["top"][i])) + origin[1],
                width=int(str(data["width"][i])),
                height=int(str(data["height"][i])),
                line=line or (number[0], number[1], number[2]),
            )
        )
    return words


def has_latin(text: str) -> bool:
    return _LATIN.search(text) is not None


def has_ascii_digit(text: str) -> bool:
    return _ASCII_DIGIT.search(text) is not None


def has_persian_letter(text: str) -> bool:
    return any(ch.isalpha() and not ch.isascii() for ch in text)


def rtl_reading_order(words: list[OcrWord]) -> list[OcrWord]:
    """The words of one right-to-left line in reading order.

    From the right edge leftwards, except that a run of left-to-right words (Latin words and
    the numbers that follow them) is read from its left end: the bidirectional algorithm's
    order for a right-to-left paragraph. Numbers on their own keep the right-to-left order of
    the line, and so do numbers before the run's first Latin word, which the algorithm does
    not join to it.
    """
    visual = sorted(words, key=lambda word: word.left)
    ordered: list[OcrWord] = []
    end = len(visual)
    while end > 0:
        start = end
        while start > 0 and _left_to_right(visual[start - 1]):
            start -= 1
        if start == end:
            ordered.append(visual[end - 1])
            end -= 1
            continue
        run = visual[start:end]
        first_latin = next((i for i, word in enumerate(run) if has_latin(word.text)), len(run))
        ordered.extend(_marks_to_end(run[first_latin:]))
        ordered.extend(reversed(run[:first_latin]))
        end = start
    return ordered


def _left_to_right(word: OcrWord) -> bool:
    if word.latin or has_latin(word.text):
        return True
    return has_ascii_digit(word.text) and not has_persian_letter(word.text)


def _marks_to_end(run: list[OcrWord]) -> list[OcrWord]:
    """A run read by the English model, with the marks on its left edge moved to its end, in
    their Persian forms."""
    if not run or not run[0].latin:
        return run
    marks = _LEADING_MARKS.match(run[0].text)
    if marks is None or marks[0] == run[0].text:
        return run
    first = replace(run[0], text=run[0].text[len(marks[0]) :])
    last = first if len(run) == 1 else run[-1]
    moved = replace(last, text=last.text + marks[0].translate(_LATIN_MARKS))
    return [moved] if len(run) == 1 else [first, *run[1:-1], moved]


def latin_marks(text: str) -> str:
    """Trailing , ; ? after an English reading inside Persian text, in their Persian forms."""
    stripped = text.rstrip(",;?")
    return stripped + text[len(stripped) :].translate(_LATIN_MARKS) if stripped else text


def line_text(words: list[OcrWord]) -> str:
    return collapse_whitespace(" ".join(word.text for word in words))
