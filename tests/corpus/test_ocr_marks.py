"""The marks around printed code as Tesseract reads them, mended (parsing/ocr_marks.py): a
scope's `::`, a closing backtick read as `*`, an opening one read as `~`. The page is printed
by Chromium as a Markdown manual prints (its backticks kept), scanned by pdftoppm and read by
the real Tesseract."""

from __future__ import annotations

import pytest

from apps.corpus.parsing import OcrOptions, parse_document
from apps.corpus.parsing.ocr_marks import line_mended
from tests.corpus import scans

OCR = OcrOptions(max_pages=2, page_timeout_s=60.0, dpi=200)
# As apt's acquire manual and sudo's troubleshooting page write their names.
PAGE = """# Hooks

You can however install an `APT::Update::Post-Invoke{-Success,}` hook script
and use them to copy (modified) files to a different location. They can be
registered by adding them to the list: `AptCli::Hooks::<name>` where `<name>`
is the name of the hook.

Commands run via `sudo -i` are executed by the shell in non-interactive mode.
The option `Dir::State::status` names the file and `/bin/ls` is allowed.
"""


@pytest.fixture(scope="module")
def text() -> str:
    scan = scans.printed_text_scan(PAGE)
    blocks = parse_document(filename="hooks.pdf", data=scan, ocr=OCR).blocks
    return " ".join(block.text for block in blocks)


@pytest.mark.parametrize(
    "name", ["APT::Update::Post-Invoke", "AptCli::Hooks::", "Dir::State::status"]
)
def test_a_scope_is_read_whole(text: str, name: str) -> None:
    # Read as "APT::Update: :Post-Invoke" before.
    assert name in text


@pytest.mark.parametrize("quoted", ["‘sudo -i’", "‘Dir::State::status’", "‘/bin/ls’"])
def test_a_closing_backtick_is_no_star(text: str, quoted: str) -> None:
    # Read as "‘sudo -i*" and "*/bin/ls*" before: "-i*" is no option, "ls*" a glob.
    assert quoted in text


@pytest.mark.parametrize(
    ("line", "mended"),
    [
        ("run via ‘sudo -i* are", "run via ‘sudo -i’ are"),
        ("both */bin/ls* as user", "both ‘/bin/ls’ as user"),
        ("in ~$APT_HOOK_SOCKET’ and", "in ‘$APT_HOOK_SOCKET’ and"),
        ("the list: ‘AptCli: :Hooks::<name>* where", "the list: ‘AptCli::Hooks::<name>’ where"),
        ("see /etc/nsswitch. conf for", "see /etc/nsswitch.conf for"),
        # Left as read: globs, crontab fields, a home folder, a sentence after a path.
        ("SendEnv LANG LC_*", "SendEnv LANG LC_*"),
        ("0 */2 * * * job", "0 */2 * * * job"),
        ("files *.conf and *.inc", "files *.conf and *.inc"),
        ("edit ‘~/.ssh/config’ now", "edit ‘~/.ssh/config’ now"),
        ("in /etc/hosts. Then run", "in /etc/hosts. Then run"),
        ("Note: : that", "Note: : that"),
    ],
)
def test_a_line_is_mended_where_a_mark_was_misread(line: str, mended: str) -> None:
    assert line_mended(line) == mended
