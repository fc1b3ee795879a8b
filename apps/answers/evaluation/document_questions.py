"""The questions file of `evaluate_documents`: one JSON object a line, about a folder of files.

    {"id": "offline-03", "question": "which environment variable ...?", "language": "en",
     "kind": "name", "gold_file": "apt-offline-guide.txt", "answers": ["APT_CONFIG"],
     "quote": "# export APT_CONFIG=...", "closest_file": null}

An answerable question names the file that answers it (`gold_file`, a file name in the folder)
and the strings any right answer contains (`answers`); an unanswerable one has kind
"unanswerable", no gold file and no answers, and may name the file that comes closest
(`closest_file`) and words the documents never use (`absent_terms`). `language` and `quote`
are for the reader. Every problem is reported with its line and field, before anything runs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

UNANSWERABLE = "unanswerable"
# What a question asks for; the figures are cut by it, so a typo would make a group of one.
KINDS = (
    "value",
    "name",
    "command",
    "procedure",
    "definition",
    "yesno",
    "comparison",
    UNANSWERABLE,
)
# One character occurs in nearly any answer, so it would count nearly every answer right.
MIN_ANSWER_CHARS = 2


class QuestionFileError(ValueError):
    """The questions file cannot be used; the message names the line and the field."""


@dataclass(frozen=True)
class DocumentQuestion:
    question_id: str
    question: str
    kind: str
    answers: tuple[str, ...]
    gold_file: str | None = None
    language: str = ""
    quote: str | None = None
    closest_file: str | None = None
    absent_terms: tuple[str, ...] = ()
    line: int = 0

    @property
    def answerable(self) -> bool:
        return self.kind != UNANSWERABLE

    @property
    def file_format(self) -> str:
        """The gold file's type (the closest file's for an unanswerable question), by suffix."""
        name = self.gold_file or self.closest_file or ""
        return Path(name).suffix.lstrip(".").lower() or "?"


def document_questions_load(
    path: Path, *, files: Collection[str] | None = None
) -> list[DocumentQuestion]:
    """Every question of the file; `files`, when given, are the file names a gold or closest
    file must be one of. Raises QuestionFileError."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionFileError(f"{path}: cannot be read ({exc})") from exc
    questions: list[DocumentQuestion] = []
    seen: Counter[str] = Counter()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            question = _question(line, number, files)
        except QuestionFileError as exc:
            raise QuestionFileError(f"{path}, {exc}") from None
        seen[question.question_id] += 1
        if seen[question.question_id] > 1:
            raise QuestionFileError(
                f"{path}, line {number}, field id: {question.question_id!r} is used twice"
            )
        questions.append(question)
    if not questions:
        raise QuestionFileError(f"{path}: no questions")
    return questions


def _question(line: str, number: int, files: Collection[str] | None) -> DocumentQuestion:
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise QuestionFileError(f"line {number}: not JSON ({exc})") from exc
    if not isinstance(record, dict):
        raise QuestionFileError(f"line {number}: not a JSON object")
    try:
        return _checked(record, number, files)
    except _FieldError as exc:
        raise QuestionFileError(f"line {number}, field {exc.field}: {exc.problem}") from None


class _FieldError(Exception):
    def __init__(self, field: str, problem: str) -> None:
        super().__init__(field, problem)
        self.field, self.problem = field, problem


def _checked(
    record: Mapping[str, Any], number: int, files: Collection[str] | None
) -> DocumentQuestion:
    kind = _text(record, "kind")
    if kind not in KINDS:
        raise _FieldError("kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    answers = _strings(record, "answers")
    gold_file = _optional_text(record, "gold_file")
    closest_file = _optional_text(record, "closest_file")
    if kind == UNANSWERABLE:
        if answers or gold_file:
            field = "answers" if answers else "gold_file"
            raise _FieldError(field, "an unanswerable question has none")
    else:
        if not gold_file:
            raise _FieldError("gold_file", "an answerable question names the file that answers it")
        if not answers:
            raise _FieldError("answers", "an answerable question needs at least one answer")
    if short := [a for a in answers if len(a.strip()) < MIN_ANSWER_CHARS]:
        raise _FieldError("answers", f"{short[0]!r} is too short to tell answers apart")
    for field, name in (("gold_file", gold_file), ("closest_file", closest_file)):
        if name and files is not None and name not in files:
            raise _FieldError(field, f"{name!r} is not one of the documents")
    return DocumentQuestion(
        question_id=_text(record, "id"),
        question=_text(record, "question"),
        kind=kind,
        answers=answers,
        gold_file=gold_file,
        language=_optional_text(record, "language") or "",
        quote=_optional_text(record, "quote"),
        closest_file=closest_file,
        absent_terms=_strings(record, "absent_terms"),
        line=number,
    )


def _text(record: Mapping[str, Any], field: str) -> str:
    value = record.get(field)
    if not isinstance(value, str) or not value.strip():
        raise _FieldError(field, "required, a non-empty string")
    return value.strip()


def _optional_text(record: Mapping[str, Any], field: str) -> str | None:
    value = record.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _FieldError(field, "a string or null")
    return value.strip() or None


def _strings(record: Mapping[str, Any], field: str) -> tuple[str, ...]:
    value = record.get(field, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _FieldError(field, "a list of strings")
    return tuple(v for v in value if v.strip())
