"""Latin words inside Persian lines, read again by the English model.

The Persian model reads a Latin word (`Django`, `make serve`, a URL) as Arabic-script letters
or digits, with low confidence or with Latin letters and digits it would not find in Persian
text. Each run of such doubtful words on a line is cropped and read as one line by the
English model; an English word replaces the Persian reading under it when its confidence
beats what the Persian reading is worth (less when the Persian reading is itself foreign, much
more when it is Persian letters). Reading the whole page twice and swapping words (tried
before) kept the English model's misreadings of Persian words; reading only the doubtful runs,
as one line each, reads the Latin words whole and leaves sure Persian words alone.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from PIL import Image

from .ocr_words import (
    OcrWord,
    TesseractTimeout,
    has_ascii_digit,
    has_latin,
    has_persian_letter,
    latin_marks,
    tesseract_words,
)

# A Persian word scored this or more, or a number or mark scored at least DOUBTFUL, is taken
# as read; only runs of the others are read again (most Persian pages have few of them).
SURE_PERSIAN = 30.0
DOUBTFUL = 60.0
# What the English reading must score to replace the Persian one, by what that one is:
ON_FOREIGN = 20.0  # Latin letters already, or noise the Persian model scored under NOISE
ON_SYMBOLS = 60.0  # digits and marks
ON_WEAK_PERSIAN = 80.0  # Persian letters scored under SURE_PERSIAN, by 4+ Latin letters
NOISE = 15.0
MIN_LATIN_LETTERS_ON_PERSIAN = 4
# An English reading needs two letters or digits (a lone "L" is a stroke of a Persian word).
MIN_ENGLISH_CHARACTERS = 2
# The English word must lie mostly over the words it replaces.
MIN_COVER = 0.5
ENGLISH_LAYOUT = 7  # one text line


def latin_restored(image: Image.Image, words: list[OcrWord], *, deadline: float) -> list[OcrWord]:
    """`words` of a Persian page with the doubtful runs read again by the English model; past
    `deadline` (time.monotonic()) the rest is left as the Persian model read it."""
    lines: dict[tuple[int, int, int], list[OcrWord]] = {}
    for word in words:
        lines.setdefault(word.line, []).append(word)
    restored: list[OcrWord] = []
    for line in lines.values():
        try:
            restored.extend(_line_restored(image, line, deadline=deadline))
        except TesseractTimeout:
            restored.extend(line)
    return restored


def _line_restored(image: Image.Image, line: list[OcrWord], *, deadline: float) -> list[OcrWord]:
    replaced: set[int] = set()
    english: list[OcrWord] = []
    for run in _doubtful_runs(line):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TesseractTimeout
        for word in _english_reading(image, run, line, timeout=remaining):
            under = [persian for persian in run if persian.overlap(word) > 0]
            if _accepted(word, under):
                replaced.update(id(persian) for persian in under)
                english.append(word)
    return [word for word in line if id(word) not in replaced] + english


def _doubtful_runs(line: list[OcrWord]) -> Iterable[list[OcrWord]]:
    run: list[OcrWord] = []
    for word in sorted(line, key=lambda w: -w.left):
        if _doubtful(word):
            run.append(word)
        elif run:
            yield run
            run = []
    if run:
        yield run


def _doubtful(word: OcrWord) -> bool:
    if has_latin(word.text):
        return True
    if has_persian_letter(word.text) and not has_ascii_digit(word.text):
        return word.confidence < SURE_PERSIAN
    return word.confidence < DOUBTFUL or has_ascii_digit(word.text)


def _english_reading(
    image: Image.Image, run: list[OcrWord], line: list[OcrWord], *, timeout: float
) -> list[OcrWord]:
    # The whole line's height and a margin: accents and descenders are kept. Across, the crop
    # reaches toward the words beside the run: the Persian model's boxes can stop short of a
    # Latin word's first letter ("make" was read "nake" from a crop a margin wide). It stays a
    # margin short of them, where it can: a neighbour's stroke in the crop is read as a mark.
    top, bottom = min(w.top for w in line), max(w.bottom for w in line)
    margin = (bottom - top) // 4
    left, right = min(w.left for w in run), max(w.right for w in run)
    others = [w for w in line if all(w is not mine for mine in run)]
    before = max((w.right for w in others if w.right <= left), default=left - 3 * margin)
    after = min((w.left for w in others if w.left >= right), default=right + 3 * margin)
    box = (
        max(0, min(left - margin, before + margin)),
        max(0, top - margin),
        min(image.width, max(right + margin, after - margin)),
        min(image.height, bottom + margin),
    )
    read = tesseract_words(
        image.crop(box),
        model="eng",
        layout=ENGLISH_LAYOUT,
        timeout=timeout,
        origin=(box[0], box[1]),
        line=line[0].line,
    )
    return [_latin(word) for word in read]


def _latin(word: OcrWord) -> OcrWord:
    return OcrWord(
        text=latin_marks(word.text),
        confidence=word.confidence,
        left=word.left,
        top=word.top,
        width=word.width,
        height=word.height,
        line=word.line,
        latin=True,
    )


def _accepted(english: OcrWord, under: list[OcrWord]) -> bool:
    characters = sum(ch.isascii() and ch.isalnum() for ch in english.text)
    if characters < MIN_ENGLISH_CHARACTERS or has_persian_letter(english.text) or not under:
        return False
    if sum(persian.overlap(english) for persian in under) < MIN_COVER * english.width:
        return False
    return all(english.confidence >= _needed(persian, english) for persian in under)


def _needed(persian: OcrWord, english: OcrWord) -> float:
    """What the English reading must score to replace this Persian reading."""
    if has_latin(persian.text):
        return ON_FOREIGN
    if has_persian_letter(persian.text) and not has_ascii_digit(persian.text):
        letters = sum(ch.isascii() and ch.isalpha() for ch in english.text)
        weak = persian.confidence < SURE_PERSIAN and letters >= MIN_LATIN_LETTERS_ON_PERSIAN
        return ON_WEAK_PERSIAN if weak else float("inf")
    return ON_FOREIGN if persian.confidence < NOISE else ON_SYMBOLS
