"""The page scripts hold no words and no addresses: every string a person reads and every URL
comes from the template (translated there or by `chat_strings()`, reversed with `{% url %}`).

A small JavaScript tokenizer finds the string literals (and the text of template literals),
leaving out comments and regular expressions; a literal that reads as English prose or is a
site path fails the test with its file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*ROOT.glob("apps/*/static/**/*.js"), *ROOT.glob("ragplatform/static/**/*.js")])
# Two words of three letters or more in a row ("No matching documents."), or one capitalised
# word alone ("Stopped.", "Source"): prose. Key names a script compares with are not.
PROSE = re.compile(r"(?:^|\s)[A-Za-z][a-z']{2,}[.,;:!?…]?\s+[A-Za-z][a-z']{2,}(?:[.,;:!?…\s]|$)")
WORD = re.compile(r"^\s*[A-Z][a-z]+[.…!?]?\s*$")
KEYS = {"Escape", "Enter"}
SITE_PATH = re.compile(r"^/[A-Za-z]")  # "/turns/..."; an import ("../x.js") starts with a dot
REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}
REGEX_AFTER_WORDS = {"return", "typeof", "case", "in", "of", "new", "delete", "void", "throw"}


def _skip_regex(source: str, i: int) -> int:
    """From the opening slash of a regular expression to just after its flags."""
    i += 1
    in_class = False
    while source[i] != "/" or in_class:
        if source[i] == "\\":
            i += 1
        elif source[i] == "[":
            in_class = True
        elif source[i] == "]":
            in_class = False
        i += 1
    i += 1
    while i < len(source) and source[i].isalpha():
        i += 1
    return i


def _string_end(source: str, i: int, quote: str) -> int:
    i += 1
    while source[i] != quote:
        i += 2 if source[i] == "\\" else 1
    return i


def _template_parts(source: str, i: int) -> tuple[list[tuple[int, str]], int]:
    """The literals of a template literal starting at `i` (its text, and the strings inside
    its ${...}), and where it ends."""
    parts: list[tuple[int, str]] = []
    i += 1
    start = i
    while source[i] != "`":
        if source[i] == "\\":
            i += 2
            continue
        if source.startswith("${", i):
            parts.append((start, source[start:i]))
            depth, i = 1, i + 2
            inner = i
            while depth:
                depth += {"{": 1, "}": -1}.get(source[i], 0)
                i += 1
            parts += [(inner + at, text) for at, text in literals(source[inner : i - 1])]
            start = i
            continue
        i += 1
    parts.append((start, source[start:i]))
    return parts, i + 1


def literals(source: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of every string literal and template-literal text part in `source`."""
    i, previous = 0, ""
    while i < len(source):
        c = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i)
            i = len(source) if i < 0 else i
        elif source.startswith("/*", i):
            i = source.index("*/", i) + 2
        elif c in "'\"":
            end = _string_end(source, i, c)
            yield i, source[i + 1 : end]
            i, previous = end + 1, "x"
        elif c == "`":
            parts, i = _template_parts(source, i)
            yield from parts
            previous = "x"
        elif c == "/" and (previous in REGEX_BEFORE or previous in REGEX_AFTER_WORDS):
            i, previous = _skip_regex(source, i), "x"
        elif c.isspace():
            i += 1
        else:
            word = re.match(r"[\w$]+", source[i:])
            previous = word.group(0) if word else c
            i += len(word.group(0)) if word else 1


def findings(source: str) -> list[str]:
    found = []
    for offset, text in literals(source):
        line = source.count("\n", 0, offset) + 1
        if PROSE.search(text) or (WORD.match(text) and text.strip() not in KEYS):
            found.append(f"line {line}: words {text!r}")
        elif SITE_PATH.match(text):
            found.append(f"line {line}: address {text!r}")
    return found


def test_the_scanner_finds_what_it_looks_for() -> None:
    # What the scripts held before their words and addresses moved to the template.
    old = """
      if (!results.length) notice(view, "No matching documents."); // a comment "Not this"
      node.title = `${chip.title || 'Source'}${page}`;
      notice(view, stopped ? "Stopped." : data.message, !stopped);
      const re = /^\\/(?!\\/)/, quote = /[<>"']/g;
      return Number.isInteger(id) ? `/documents/${id}/read/` : null;
      fetch(`/turns/${encodeURIComponent(turn)}/feedback/`, { method: "POST" });
    """
    assert [f.split(":", 1)[1] for f in findings(old)] == [
        " words 'No matching documents.'",
        " words 'Source'",
        " words 'Stopped.'",
        " address '/documents/'",
        " address '/read/'",
        " address '/turns/'",
        " address '/feedback/'",
    ]
    code = """el("li"); q(".answer-actions button"); q("p, li, h3, tr"); k === "Escape";"""
    assert findings(code) == []


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_script_holds_no_words_and_no_addresses(script: Path) -> None:
    assert findings(script.read_text(encoding="utf-8")) == []


def test_every_page_script_is_a_module_that_the_templates_load_as_one() -> None:
    templates = "\n".join(p.read_text() for p in (ROOT / "templates").rglob("*.html"))
    loaded = re.findall(r"<script\b[^>]*\bsrc=\"\{% static '([^']+)' %\}\"[^>]*>", templates)
    tags = re.findall(r"<script\b[^>]*\bsrc=\"\{% static '[^']+' %\}\"[^>]*>", templates)
    assert loaded and all('type="module"' in tag for tag in tags)
    # Every script a template loads, and the helpers they import, are here.
    shipped = {str(p).split("/static/", 1)[1] for p in SCRIPTS}
    assert set(loaded) <= shipped and "ragplatform/helpers.js" in shipped
