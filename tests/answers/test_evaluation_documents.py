"""evaluate_documents: the questions file, the scoring of stored turns, and the command end to
end on two small files written by the test, through the real turn path."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from io import StringIO
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.core.management import CommandError, call_command
from django.db import connections

from apps.answers.composing.types import (
    ComposeRequest,
    ComposerEvent,
    Refusal,
    SupportSignal,
    TextDelta,
)
from apps.answers.evaluation.answer_metrics import answer_string_found
from apps.answers.evaluation.document_questions import (
    DocumentQuestion,
    QuestionFileError,
    document_questions_load,
)
from apps.answers.evaluation.document_scores import (
    AskedTurn,
    question_score,
    records_figures,
)
from apps.answers.evaluation.documents import evaluation_documents_load, evaluation_files
from apps.answers.models import Turn, TurnClient
from apps.answers.providers.registry import providers_override
from apps.answers.routing.types import Intent
from apps.corpus.models import Document
from tests.answers.fakes import FixedClassifier, classification, providers_fake
from tests.conftest import CountingEmbedder

LEAVE = DocumentQuestion("q1", "How many days of leave?", "value", ("twenty-six",), "leave.md")
NOTHING = DocumentQuestion("q9", "Where do I park?", "unanswerable", ())


def _asked(**changes: object) -> AskedTurn:
    answered = AskedTurn(
        turn_id=1,
        status="finished",
        action="answer",
        intent="factual_question",
        strategy="simple",
        answer="Employees take Twenty-Six\n days of annual leave.",
        refused=False,
        confidence=0.8,
        band="green",
        cited_files=("leave.md",),
    )
    return replace(answered, **changes)  # type: ignore[arg-type]


# --- matching and scoring --------------------------------------------------------------------


def test_an_answer_string_matches_ignoring_case_and_whitespace_but_as_written() -> None:
    assert answer_string_found("Use  --Print-URIs\nfor that", ["--print-uris"])
    assert not answer_string_found("print the uris", ["--print-uris"])  # a flag stays a flag
    assert answer_string_found("It doesn\u2019t create it", ["doesn't create"])
    assert not answer_string_found("anything", ["", "   "])


def test_a_right_answer_citing_the_gold_file_in_the_top_band() -> None:
    record = question_score(question=LEAVE, asked=_asked())
    assert record.correct and record.gold_cited and not record.refused
    assert record.band == "green" and record.format == "md" and record.route == "answer"


def test_a_refused_answerable_question_is_wrong_and_a_false_refusal() -> None:
    # The refusal names the gold file's title and even the answer: a refusal is no answer.
    asked = _asked(refused=True, band="red", confidence=0.3, answer="Not found: twenty-six")
    record = question_score(question=LEAVE, asked=asked)
    assert record.refused and not record.correct
    figures = records_figures([record])
    assert figures["false_refusals"] == 1.0 and figures["honest_refusals"] is None
    assert figures["calibration_error"] is None  # refusals are not answers given


def test_an_unanswerable_question_is_right_only_when_refused() -> None:
    refused = question_score(question=NOTHING, asked=_asked(refused=True, cited_files=()))
    answered = question_score(question=NOTHING, asked=_asked())
    assert refused.correct and not answered.correct
    assert records_figures([refused, answered])["honest_refusals"] == 0.5
    assert NOTHING.file_format == "?" and not refused.gold_cited


def test_a_bare_result_list_or_a_clarification_is_not_an_answer() -> None:
    search = _asked(action="search", answer="", confidence=None, band="", cited_files=())
    clarify = _asked(action="clarify", answer="Do you mean twenty-six days of leave?")
    records = [question_score(question=LEAVE, asked=a) for a in (search, clarify)]
    assert not any(r.correct or r.refused for r in records)
    figures = records_figures(records)
    assert figures["bare_result_lists"] == 1 and figures["clarifications"] == 1


def test_well_supported_precision_and_calibration_over_the_answers_given() -> None:
    right = question_score(question=LEAVE, asked=_asked(confidence=0.9))
    wrong = question_score(question=LEAVE, asked=_asked(answer="Ten days.", confidence=0.9))
    middling = question_score(
        question=LEAVE, asked=_asked(band="yellow", confidence=0.5, cited_files=("vpn.md",))
    )
    figures = records_figures([right, wrong, middling])
    assert figures["well_supported"] == 2 and figures["well_supported_precision"] == 0.5
    assert figures["gold_file_cited"] == round(2 / 3, 4)
    # Bins: 0.9 holds one right and one wrong (|0.9 - 0.5|), 0.5 one right (|0.5 - 1|).
    assert figures["calibration_error"] == round((2 * 0.4 + 0.5) / 3, 4)
    assert figures["correct"] == round(2 / 3, 4)


# --- the questions file ----------------------------------------------------------------------

GOOD = {
    "id": "q1",
    "question": "How many days of annual leave?",
    "language": "en",
    "kind": "value",
    "gold_file": "leave.md",
    "answers": ["twenty-six"],
    "quote": "twenty-six days",
    "closest_file": None,
}


def _questions_file(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    )
    return path


def test_the_questions_file_is_read_with_its_fields(tmp_path: Path) -> None:
    unanswerable = {
        **GOOD,
        "id": "u1",
        "kind": "unanswerable",
        "gold_file": None,
        "answers": [],
        "closest_file": "leave.md",
        "absent_terms": ["sabbatical"],
    }
    path = _questions_file(tmp_path, GOOD, "", unanswerable)
    first, second = document_questions_load(path, files={"leave.md"})
    assert first.answers == ("twenty-six",) and first.answerable and first.line == 1
    assert not second.answerable and second.absent_terms == ("sabbatical",) and second.line == 3
    assert second.file_format == "md"  # an unanswerable question counts under its closest file


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"line 2: not JSON"),
        ("[1, 2]", r"line 2: not a JSON object"),
        ({**GOOD, "id": "q2", "kind": "trivia"}, r"line 2, field kind: 'trivia' is not one of"),
        ({**GOOD, "id": "q2", "question": ""}, r"line 2, field question: required"),
        ({**GOOD, "id": "q2", "gold_file": None}, r"line 2, field gold_file: an answerable"),
        ({**GOOD, "id": "q2", "answers": "x"}, r"line 2, field answers: a list of strings"),
        ({**GOOD, "id": "q2", "answers": ["7"]}, r"line 2, field answers: '7' is too short"),
        ({**GOOD, "kind": "unanswerable", "id": "q2"}, r"line 2, field answers: an unanswerable"),
        ({**GOOD, "id": "q2", "gold_file": "nope.pdf"}, r"line 2, field gold_file: 'nope.pdf'"),
        (GOOD, r"line 2, field id: 'q1' is used twice"),
    ],
)
def test_a_bad_questions_line_is_named_by_line_and_field(
    tmp_path: Path, line: object, message: str
) -> None:
    path = _questions_file(tmp_path, GOOD, line)
    with pytest.raises(QuestionFileError, match=message):
        document_questions_load(path, files={"leave.md"})


def test_an_empty_questions_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QuestionFileError, match="no questions"):
        document_questions_load(_questions_file(tmp_path, ""))


# --- the command, end to end -----------------------------------------------------------------

FILES = {
    "leave.md": "# Leave\n\nEmployees take twenty-six days of annual leave every year.",
    "vpn.txt": "VPN\n\nThe company VPN uses WireGuard. Import the profile into the client.",
}
QUESTIONS = [
    {**GOOD, "id": "leave", "question": "How many days of annual leave do employees take?"},
    {
        **GOOD,
        "id": "vpn",
        "question": "Which protocol does the company VPN use?",
        "kind": "name",
        "gold_file": "vpn.txt",
        "answers": ["WireGuard"],
    },
    {
        **GOOD,
        "id": "vpn-docs",
        "question": "documents about the VPN profile",
        "kind": "name",
        "gold_file": "vpn.txt",
        "answers": ["WireGuard"],
    },
    {
        **GOOD,
        "id": "parking",
        "question": "Where is the parking garage?",
        "kind": "unanswerable",
        "gold_file": None,
        "answers": [],
        "closest_file": "leave.md",
    },
]


class _Composer:
    """Quotes the best passage with its marker; refuses the parking question."""

    name = "test-extract"

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        if "parking" in request.query:
            yield TextDelta("The documents do not say.")
            yield Refusal("no evidence")
            yield SupportSignal(0.1, "test")
            return
        best = request.context.chunks[0]
        yield TextDelta(f"{best.text} [{best.alias}]")
        yield SupportSignal(0.95, "test")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "handbook"
    (docs / "it").mkdir(parents=True)
    (docs / "leave.md").write_text(FILES["leave.md"])
    (docs / "it" / "vpn.txt").write_text(FILES["vpn.txt"])  # found recursively
    (docs / "notes.bin").write_bytes(b"\x00\x01")  # not a supported type: left out
    return docs


@pytest.fixture
def routed(embedder: CountingEmbedder) -> Iterator[None]:
    router = FixedClassifier(when={"documents about": classification(Intent.SEARCH)})
    with providers_override(providers_fake(embedder, classifier=router, composer=_Composer())):  # type: ignore[arg-type]
        yield
    # The turns' database work ran in asgiref's thread: close that connection as well.
    asyncio.run(sync_to_async(connections.close_all)())


@pytest.mark.django_db(transaction=True)
def test_the_command_ingests_the_folder_asks_every_question_and_scores_it(
    folder: Path, tmp_path: Path, routed: None
) -> None:
    questions = _questions_file(tmp_path, *QUESTIONS)
    target, signals, out = tmp_path / "run.json", tmp_path / "signals.jsonl", StringIO()
    call_command(
        "evaluate_documents",
        *("--docs", str(folder), "--questions", str(questions), "--json", str(target)),
        *("--signals", str(signals)),
        stdout=out,
        stderr=StringIO(),
    )
    result = json.loads(target.read_text())
    # What each badge read is stored with its turn and written for calibration_fit.py.
    lines = {line["query_id"]: line for line in map(json.loads, signals.read_text().splitlines())}
    assert set(lines) == {"leave", "vpn", "vpn-docs", "parking"}
    assert lines["leave"]["support"] == 0.95 and lines["leave"]["support_source"] == "test"
    assert lines["leave"]["right"] and lines["leave"]["set"] == "handbook"
    assert lines["leave"]["contained"] and not lines["parking"]["contained"]
    assert lines["leave"]["cosine"] is not None and lines["leave"]["group"] == "leave.md"
    assert lines["parking"]["refused"] and lines["parking"]["refusal_reason"] == "no evidence"
    assert not lines["parking"]["answerable"] and lines["vpn-docs"]["support"] is None
    stored = Turn.objects.get(question=QUESTIONS[0]["question"]).confidence_inputs
    assert stored["support"] == 0.95 and "agreed" in stored
    by_id = {q["id"]: q for q in result["questions"]}
    assert by_id["leave"]["correct"] and by_id["leave"]["cited_files"] == ["leave.md"]
    assert by_id["vpn"]["correct"] and by_id["vpn"]["gold_cited"]
    assert by_id["vpn-docs"]["route"] == "search" and not by_id["vpn-docs"]["correct"]
    assert by_id["parking"]["refused"] and by_id["parking"]["correct"]
    overall = result["summary"]["overall"]
    assert overall["questions"] == 4 and overall["correct"] == 0.75
    assert overall["honest_refusals"] == 1.0 and overall["false_refusals"] == 0.0
    assert overall["bare_result_lists"] == 1
    # The hashed test embedder's cosines are low: whatever the bands, they are the turns'.
    bands = [by_id[name]["band"] for name in ("leave", "vpn", "parking")]
    assert set(bands) <= {"green", "yellow", "red"} and by_id["parking"]["band"] == "red"
    assert overall["well_supported"] == bands.count("green")
    assert by_id["leave"]["turn_id"] == Turn.objects.get(question=QUESTIONS[0]["question"]).pk
    assert set(result["summary"]["by_format"]) == {"md", "txt"}
    assert result["summary"]["by_kind"]["name"]["questions"] == 2
    assert result["run"]["collection"] == "evaluation: handbook"
    assert result["run"]["documents"]["processed"] == 2
    # Each question in a new conversation of the operator's, restricted to the collection.
    turns = Turn.objects.all()
    assert turns.count() == 4 and len({t.conversation_id for t in turns}) == 4
    assert {t.conversation.user_id for t in turns} == {None}
    assert {t.client for t in turns} == {TurnClient.EVALUATION}  # kept apart from real askers
    assert "all questions" in out.getvalue() and "format txt" in out.getvalue()

    # Run again: the unchanged documents are reused, not processed again.
    call_command(
        "evaluate_documents",
        *("--docs", str(folder), "--questions", str(questions), "--json", str(target)),
        *("--kind", "unanswerable"),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    again = json.loads(target.read_text())
    assert again["run"]["documents"] | {"seconds": 0} == {
        "files": 2,
        "processed": 0,
        "unchanged": 2,
        "failed": [],
        "pending": [],
        "stale": [],
        "seconds": 0,
    }
    assert [q["id"] for q in again["questions"]] == ["parking"]
    assert Document.objects.count() == 2


@pytest.mark.django_db
def test_a_file_that_fails_in_processing_is_reported_and_the_others_load(
    folder: Path, embedder: CountingEmbedder
) -> None:
    (folder / "broken.pdf").write_bytes(b"not a PDF at all")
    files = evaluation_files(folder)
    loaded = evaluation_documents_load(files=files, collection_name="eval", timeout_s=5)
    assert set(loaded.files) == {"broken.pdf", "leave.md", "vpn.txt"}
    assert [name for name, _ in loaded.failed] == ["broken.pdf"]
    assert "PDF" in loaded.failed[0][1]  # why, in the document's own words
    assert not loaded.pending and not loaded.stale
    ready = Document.objects.filter(status="ready").values_list("filename", flat=True)
    assert sorted(ready) == ["leave.md", "vpn.txt"]


@pytest.mark.django_db
def test_a_missing_or_empty_folder_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    questions = _questions_file(tmp_path, GOOD)
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "sub" / "image.bin").write_bytes(b"\x00")
    for docs, message in ((tmp_path / "missing", "is not a folder"), (empty, "no file of a")):
        with pytest.raises(CommandError, match=message):
            call_command("evaluate_documents", "--docs", str(docs), "--questions", str(questions))
    assert not Document.objects.exists() and not Turn.objects.exists()


@pytest.mark.django_db
def test_a_malformed_questions_line_stops_the_command_before_ingesting(
    folder: Path, tmp_path: Path
) -> None:
    questions = _questions_file(tmp_path, GOOD, {**GOOD, "id": "q2", "kind": "riddle"})
    with pytest.raises(CommandError, match="line 2, field kind: 'riddle'"):
        call_command("evaluate_documents", "--docs", str(folder), "--questions", str(questions))
    assert not Document.objects.exists()


@pytest.mark.django_db
def test_two_files_of_one_name_are_refused(folder: Path, tmp_path: Path) -> None:
    (folder / "it" / "leave.md").write_text("Another leave policy.")
    with pytest.raises(CommandError, match="have the same file name"):
        call_command(
            "evaluate_documents",
            *("--docs", str(folder), "--questions", str(_questions_file(tmp_path, GOOD))),
        )
