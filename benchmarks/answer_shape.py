"""Are the offline answers readable? Counts the shapes a reader trips over, over docs/guide.

Runs each question of `answer_shape_questions.json` (lists, steps, tables, comparisons,
Persian) through the real turn (`turn_open(user_id=None, ...)` + `turn_events`, as
`manage.py ask` does) with the configured offline providers, recording the composer's raw
text (with its [cN] markers) and its context window, and counts answers with
  - flattened list: one answer line holds two or more items of a list or rows of a table
    of the guide (read from the markdown itself, not from the chunks);
  - pasted row: a "|" outside a table the composer built (its header "| | What ...");
  - off-topic sentence: a cited sentence whose chunk heading and own words share no content
    term with the question, or that quotes a question, or that is a heading;
  - broken comparison: for a comparison, no table, a side without its row, or a row holding
    a sentence that names neither that side nor sits in a section named for it;
  - odd follow-up: a suggested follow-up question that does not read as a person's question
    (`odd_followup` says why: a bare noun, an adjective or a unit alone, a statement pasted
    after "What is", a heading quoted into a template, asking twice, the wrong language or
    script, no question mark).
Target: 0 of each. Prints a table, then a JSON summary.

    python benchmarks/answer_shape.py [--collection Guide] [--guide docs/guide] [--show]

The guide must be ingested first: `python manage.py ingest docs/guide --collection Guide --wait`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = Path(__file__).with_name("answer_shape_questions.json")
COUNTS = ("flattened_list", "pasted_row", "off_topic", "broken_comparison", "odd_followup")
_MARKER = re.compile(r"\s*\[(c\d+)\]")
_QUOTED_QUESTION = re.compile(r"[?؟]\s*[\"'”’»)]")
TABLE_HEAD = re.compile(r"^\|\s*\|")


@dataclass
class Recorded:
    pieces: list[str] = field(default_factory=list)
    headings: dict[str, str] = field(default_factory=dict)  # alias -> chunk heading
    route: str = ""  # intent/action of the turn
    followups: list[str] = field(default_factory=list)


class RecordingComposer:
    """The configured composer, unchanged, with its raw text and context kept for counting."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.recorded = Recorded()

    async def compose(self, request: Any) -> AsyncIterator[Any]:
        from apps.answers.composing import TextDelta

        self.recorded.headings = {c.alias: c.chunk.heading for c in request.context.chunks}
        async for event in self.inner.compose(request):
            if isinstance(event, TextDelta):
                self.recorded.pieces.append(event.text)
            yield event


def source_items(guide: Path) -> list[str]:
    """Every list item and table row of the guide, as plain text, to spot flattened lists.

    A row is known by its last cell (the one that says something), an item by its text."""
    from markdown_it import MarkdownIt

    from apps.corpus.parsing.markdown import inline_text

    items: list[str] = []
    for path in sorted(guide.glob("*.md")):
        tokens = MarkdownIt("commonmark").enable("table").parse(path.read_text())
        depth, cells = 0, list[str]()
        for token in tokens:
            if token.type in ("list_item_open", "list_item_close"):
                depth += 1 if token.type == "list_item_open" else -1
            elif token.type == "tr_close":
                items.append(_key(cells[-1]) if cells else "")
                cells = []
            elif token.type == "inline" and token.level > 2 and not depth:
                cells.append(inline_text(token))
            elif token.type == "inline" and depth:
                items.append(_key(inline_text(token)))
    return [item for item in items if len(item) >= 12]


def _key(text: str) -> str:
    return " ".join(text.lower().replace("`", "").replace("*", "").split())[:24]


def flattened(text: str, items: list[str]) -> list[str]:
    """The answer lines that hold two or more of the guide's list items or table rows
    (at places that do not overlap: one item's text may hold another's)."""
    return [line for line in text.splitlines() if _separate_matches(_key_line(line), items) >= 2]


def _separate_matches(line: str, items: list[str]) -> int:
    spans = sorted((line.find(item), line.find(item) + len(item)) for item in items if item in line)
    count, end = 0, -1
    for start, stop in spans:
        if start >= end:
            count, end = count + 1, stop
    return count


def _key_line(line: str) -> str:
    return " ".join(line.lower().replace("`", "").replace("*", "").split())


def pasted_row(text: str) -> bool:
    lines = text.splitlines()
    built = any(TABLE_HEAD.match(line) for line in lines)
    return any("|" in line and not (built and line.startswith("|")) for line in lines)


def cited_sentences(raw: str) -> list[tuple[str, str]]:
    """(sentence, alias) for every marker: the text since the previous marker or line."""
    found: list[tuple[str, str]] = []
    for line in raw.splitlines():
        start = 0
        for match in _MARKER.finditer(line):
            sentence = line[start : match.start()].strip(" .|-")
            found.append((re.sub(r"^\d+\.\s+|^\*\*.*?\*\*\s*\|\s*", "", sentence), match.group(1)))
            start = match.end()
    return found


def off_topic(question: str, raw: str, headings: dict[str, str]) -> list[str]:
    from apps.answers.composing.terms import content_terms

    asked = content_terms(question)
    wrong = []
    for sentence, alias in cited_sentences(raw):
        shared = (content_terms(headings.get(alias, "")) | content_terms(sentence)) & asked
        if not shared or _QUOTED_QUESTION.search(sentence) or sentence.startswith("#"):
            wrong.append(sentence)
    return wrong


def broken_comparison(raw: str, sides: list[list[str]], headings: dict[str, str]) -> bool:
    rows = [line for line in raw.splitlines() if line.startswith("| **")]
    if len(rows) != len(sides):
        return True
    for row, names in zip(rows, sides, strict=True):
        label, _, body = row[4:].partition("** |")
        if not any(name in label.lower() for name in names):
            return True
        for sentence, alias in cited_sentences(body):
            about = f"{sentence} {headings.get(alias, '')}".lower()
            if not any(name in about for name in names):
                return True
    return False


_UNIT = re.compile(r"(?<![\d.])\s(?:[KMGT]i?B|ms|px)\b")
_WHAT_IS = re.compile(r"^What (?:is|are) (?P<topic>.+)\?$")
_STATEMENT_VERBS = frozenset(
    ["is", "are", "was", "were", "has", "have", "does", "do", "can", "stays", "gets", "fails"]
)
_MASS = ("ics", "ion", "ment", "ity", "ness", "ance", "ence", "ing", "ware", "age")
_FA_ASKING = frozenset(["چگونه", "چطور", "چرا", "کجا", "چه", "کدام", "آیا", "چیست", "کیست"])


def odd_followup(question: str, language: str) -> str:
    """Why a suggested question reads oddly, or "" when it reads as a person's question."""
    from apps.corpus.text import detect_language

    if any(mark in question for mark in '“”«»"') or " say about " in question:
        return "a heading pasted into a template"
    if len(question.split()) > 2 and detect_language(question) != language:
        return "not in the user's language"
    if language == "fa":
        return _odd_persian(question)
    if not question.endswith("?") or not question[:1].isupper():
        return "not a capitalised question"
    if _UNIT.search(question):
        return "a unit without its number"
    what = _WHAT_IS.match(question)
    topic = what.group("topic").split() if what else []
    if len(topic) == 1 and topic[0].islower():
        word = topic[0]
        if word.endswith(("ed", "ly", "able", "ous", "ive", "ful")) or not word.endswith(_MASS):
            return "a bare word after What is"
    if any(w in _STATEMENT_VERBS for w in topic[1:]) and not {"that", "which", "who"} & set(topic):
        return "a statement after What is"
    if re.fullmatch(r"How do I \w+\?", question):
        return "a verb without its object"
    return ""


def _odd_persian(question: str) -> str:
    if not question.endswith("؟"):
        return "no Persian question mark"
    if sum(word.strip("؟") in _FA_ASKING for word in question.split()) > 1:
        return "asks twice"
    if re.match(r"^[A-Za-z_./-]+\s", question):
        return "a Latin-script topic"
    return ""


async def answer(question: str, collection: str, recorder: RecordingComposer) -> str:
    from apps.answers.models import TurnClient
    from apps.answers.turn.entry import turn_events, turn_open

    recorder.recorded = Recorded()
    opened = await turn_open(
        user_id=None,
        conversation_id=None,
        question=question,
        collection_names=[collection],
        client=TurnClient.EVALUATION,
    )
    route = ""
    async for envelope in turn_events(turn_id=opened.turn.pk, filters=opened.filters):
        if envelope["type"] == "classification":
            route = f"{envelope['data']['intent']}/{envelope['data']['action']}"
        elif envelope["type"] == "followups":
            recorder.recorded.followups = list(envelope["data"]["questions"])
    recorder.recorded.route = route
    return "".join(recorder.recorded.pieces)


def measure(
    item: dict[str, Any],
    raw: str,
    headings: dict[str, str],
    items: list[str],
    followups: tuple[str, ...] = (),
) -> dict[str, Any]:
    text = _MARKER.sub("", raw)
    wrong = off_topic(item["question"], raw, headings)
    flat = flattened(text, items)
    sides: list[list[str]] = item.get("sides") or []
    language = "fa" if re.search(r"[\u0600-\u06ff]", item["question"]) else "en"
    odd = [f"{q} ({why})" for q in followups if (why := odd_followup(q, language))]
    return {
        "question": item["question"],
        "shape": item["shape"],
        "route": "",
        "flattened_list": bool(flat),
        "flattened_lines": flat,
        "pasted_row": pasted_row(text),
        "off_topic": bool(wrong),
        "off_topic_sentences": wrong,
        "broken_comparison": bool(sides) and broken_comparison(raw, sides, headings),
        "odd_followup": bool(odd),
        "odd_followups": odd,
        "followups": list(followups),
        "answer": text,
    }


def run(collection: str, guide: Path) -> list[dict[str, Any]]:
    from apps.answers.providers.registry import providers_default, providers_override

    defaults = providers_default()
    recorder = RecordingComposer(defaults.composer)
    providers = dataclasses.replace(defaults, composer=recorder)
    items = source_items(guide)
    results = []
    with providers_override(providers):
        for item in json.loads(QUESTIONS.read_text()):
            raw = asyncio.run(answer(item["question"], collection, recorder))
            recorded = recorder.recorded
            result = measure(item, raw, recorded.headings, items, tuple(recorded.followups))
            results.append({**result, "route": recorded.route})
    return results


def report(results: list[dict[str, Any]], *, show: bool) -> dict[str, Any]:
    heads = " ".join(f"{c[:10]:>10}" for c in COUNTS)
    print(f"{'question':<58} {'shape':<10} {'route':<26} {heads}")
    for r in results:
        marks = " ".join(f"{'X' if r[c] else '.':>10}" for c in COUNTS)
        print(f"{r['question'][:58]:<58} {r['shape']:<10} {r['route']:<26} {marks}")
        if show:
            print("    " + r["answer"].replace("\n", "\n    "))
            for sentence in r["off_topic_sentences"]:
                print(f"    off-topic: {sentence}")
            for line in r["flattened_lines"]:
                print(f"    flattened: {line[:100]}")
            print(f"    follow-ups: {r['followups']}")
            for odd in r["odd_followups"]:
                print(f"    odd follow-up: {odd}")
    composed = sum(bool(r["answer"]) for r in results)  # the others were searches or clarified
    summary = {
        "questions": len(results),
        "composed": composed,
        "followups": sum(len(r["followups"]) for r in results),
        "odd_followups": sum(len(r["odd_followups"]) for r in results),
        **{c: sum(r[c] for r in results) for c in COUNTS},
    }
    print(json.dumps(summary))
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--collection", default="Guide")
    parser.add_argument("--guide", type=Path, default=REPO / "docs" / "guide")
    parser.add_argument("--show", action="store_true", help="print every answer")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    summary = report(run(args.collection, args.guide), show=args.show)
    return 0 if all(summary[c] == 0 for c in COUNTS) else 1


if __name__ == "__main__":
    sys.exit(main())
