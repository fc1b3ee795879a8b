"""A word printed in quote marks, an option name or a path, is read with them by Tesseract and
scored low: inside a line it reads well it is kept, where a line of speckles is not. The page is
printed by Chromium as a Markdown manual prints (its backticks kept), scanned by pdftoppm and
read by the real Tesseract. Its Markdown heading is a heading, not a command typed at a root
prompt."""

from __future__ import annotations

import pytest

from apps.corpus.parsing import OcrOptions, parse_document
from apps.corpus.parsing.types import CODE, TEXT, Block
from tests.corpus import scans

OCR = OcrOptions(max_pages=2, page_timeout_s=60.0, dpi=200)
# As apt's acquire-additional-files manual writes its option list.
PAGE = """# Index targets

Each target is a stanza below the `Acquire::IndexTargets` scope. The
following options are known:

* `DefaultEnabled`: The default value is `yes` which means that apt will
  try to acquire this target from all sources.
* `KeepCompressedAs`: The default value is a space separated list of
  compression types supported by apt (see `Acquire::CompressionTypes`).
* `PDiffs`: controls if apt will try to use PDiffs for this target.
"""


@pytest.fixture(scope="module")
def blocks() -> tuple[Block, ...]:
    scan = scans.printed_text_scan(PAGE)
    return parse_document(filename="acquire.pdf", data=scan, ocr=OCR).blocks


@pytest.fixture(scope="module")
def text(blocks: tuple[Block, ...]) -> str:
    return " ".join(block.text for block in blocks)


@pytest.mark.parametrize("word", ["DefaultEnabled", "KeepCompressedAs", "PDiffs", "yes"])
def test_a_quoted_option_name_in_a_well_read_line_is_kept(text: str, word: str) -> None:
    # Read as "‘DefaultEnabled’:" and scored below the noise floor, once dropped whole.
    assert word in text


def test_the_sentences_around_the_quoted_words_read_whole(text: str) -> None:
    assert "The default value is" in text
    assert "apt will try to acquire this target from all sources" in text


def test_a_printed_markdown_heading_is_not_a_root_command(blocks: tuple[Block, ...]) -> None:
    # "# Index targets" opens like a command typed at a root prompt ("# apt-get update").
    assert not [block.text for block in blocks if block.kind == CODE]
    assert {block.heading for block in blocks if block.kind == TEXT} == {"Index targets"}


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("# Index targets", False),
        ("# The Configuration Stanza", False),
        ("# apt-get dist-upgrade", True),
        ("# Edit /etc/fstab", True),
        # A configuration's comment is no heading: it stays with its configuration.
        ("# The following lines are desirable for IPv6 capable hosts", True),
    ],
)
def test_a_root_prompt_is_told_from_a_printed_heading(line: str, command: bool) -> None:
    from apps.corpus.parsing.blocks import PROMPT

    assert bool(PROMPT.match(line)) is command
