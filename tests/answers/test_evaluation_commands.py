"""evaluate_retrieval and evaluate_answers on a tiny BEIR-layout folder written by the test."""

from __future__ import annotations

import dataclasses
import json
from io import StringIO
from pathlib import Path
from typing import cast

import pytest
from django.core.management import call_command

from apps.answers.providers.registry import Providers, providers_override
from tests.answers.fakes import ScriptedComposer, SureRefuser, providers_fake
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def test_evaluate_retrieval_writes_the_agreed_keys(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    target = tmp_path / "retrieval.json"
    call_command(
        "evaluate_retrieval",
        "--dataset",
        str(dataset),
        "--workers",
        "0",
        "--json",
        str(target),
        stdout=StringIO(),
    )
    result = json.loads(target.read_text())
    assert {
        "ndcg@10",
        "recall@100",
        "mrr@10",
        "queries",
        "latency_ms_p50",
        "latency_ms_p95",
    } <= set(result)
    assert result["queries"] == 2 and result["recall@100"] == 1.0
    assert result["ndcg@10"] > 0.6  # each query's own document shares its words


def test_evaluate_retrieval_reports_all_gold_by_hops(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    two_hop = {"_id": "q4", "text": "leave days and VPN profile", "hops": 2}
    with (dataset / "queries.jsonl").open("a") as handle:
        handle.write("\n" + json.dumps(two_hop))
    with (dataset / "qrels.tsv").open("a") as handle:
        handle.write("q4\td1\t1\nq4\td2\t1\n")
    target = tmp_path / "retrieval.json"
    call_command(
        "evaluate_retrieval",
        *("--dataset", str(dataset), "--workers", "0", "--strategy", "complex"),
        *("--json", str(target)),
        stdout=StringIO(),
    )
    result = json.loads(target.read_text())
    # Three documents: every query has all its gold passages in the first ten.
    assert result["all_gold@10"] == 1.0
    assert result["all_gold@10_by_hops"] == {"2": 1.0}  # q1 and q2 say no hop count


def test_a_fusion_share_outside_zero_to_one_is_refused_before_loading(tmp_path: Path) -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="dense_share"):
        call_command(
            "evaluate_retrieval",
            *("--dataset", str(tmp_path / "missing"), "--dense-share", "1.5"),
            stdout=StringIO(),
        )


def test_evaluate_retrieval_records_the_keyword_budget_and_refuses_a_negative_one(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="postings_budget"):
        call_command(
            "evaluate_retrieval",
            *("--dataset", str(tmp_path / "missing"), "--keyword-budget", "-1"),
            stdout=StringIO(),
        )
    for budget, shown in (("0", "exact"), ("2", 2)):
        target = tmp_path / f"retrieval-{budget}.json"
        call_command(
            "evaluate_retrieval",
            *("--dataset", str(dataset), "--workers", "0", "--keyword-budget", budget),
            *("--json", str(target)),
            stdout=StringIO(),
        )
        result = json.loads(target.read_text())
        assert result["keyword_budget"] == shown
        assert result["recall@100"] == 1.0


def test_evaluate_answers_scores_citations_and_refusals(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    # The scripted composer always cites c1 (the best chunk) and never refuses.
    fake = providers_fake(embedder, composer=ScriptedComposer(pieces=("It says so [c1].",)))
    target, signals_file = tmp_path / "answers.json", tmp_path / "signals.jsonl"
    with providers_override(fake):
        call_command(
            "evaluate_answers",
            *("--dataset", str(dataset), "--json", str(target), "--signals", str(signals_file)),
            stdout=StringIO(),
        )
    result = json.loads(target.read_text())
    assert result["answerable"] == 2 and result["unanswerable"] == 1
    assert result["gold_passage_cited"] == 1.0 and result["citation_precision"] == 1.0
    assert result["refusal_rate_unanswerable"] == 0.0 and result["false_refusal_rate"] == 0.0
    assert result["gold_answer_contained"] == 0.0  # "It says so." holds no gold string
    assert 0.0 <= result["confidence_ece"] <= 1.0
    # Every question's signals: the composer said its support is 0.8.
    signals = _signals(signals_file)
    assert set(signals) == {"q1", "q2", "q3"}
    assert signals["q1"]["answerable"] is True and signals["q1"]["right"] is True
    assert signals["q3"]["answerable"] is False and signals["q3"]["right"] is False
    # Cited, but "It says so." holds no answer string: right by citation, not contained.
    assert signals["q1"]["contained"] is False and signals["q3"]["contained"] is False
    assert all(line["refused"] is False and line["set"] == "tiny" for line in signals.values())
    assert {line["support"] for line in signals.values()} == {0.8}
    assert {line["support_source"] for line in signals.values()} == {"test"}
    # The features the retrieval quality reads: the hashed test embedder gives cosines.
    assert all(isinstance(line["cosine"], float) for line in signals.values())
    assert 0.0 < float(signals["q1"]["confidence"]) < 1.0  # type: ignore[arg-type]


def _signal_runs(
    providers: Providers, dataset: Path, tmp_path: Path, runs: dict[str, tuple[str, ...]]
) -> dict[str, dict[str, dict[str, object]]]:
    """`evaluate_answers --signals` once per named set of extra arguments, read back."""
    read = {}
    for name, extra in runs.items():
        target = tmp_path / f"{name}.jsonl"
        with providers_override(providers):
            call_command(
                "evaluate_answers",
                *("--dataset", str(dataset), "--signals", str(target), *extra),
                stdout=StringIO(),
            )
        read[name] = _signals(target)
    return read


def _signals(path: Path) -> dict[str, dict[str, object]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {str(line["query_id"]): line for line in lines}


def test_evaluate_answers_reports_the_highest_refusal_confidence(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    target = tmp_path / "answers.json"
    refusing = dataclasses.replace(providers_fake(embedder), composer=SureRefuser())
    with providers_override(refusing):
        call_command(
            "evaluate_answers", "--dataset", str(dataset), "--json", str(target), stdout=StringIO()
        )
    result = json.loads(target.read_text())
    assert result["refusal_rate_unanswerable"] == 1.0 and result["false_refusal_rate"] == 1.0
    assert 0.0 < result["refusal_confidence_max"] < 0.4  # however sure the composer claims to be


def test_min_evidence_zero_keeps_every_answer_the_default_would_refuse(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    from apps.answers.composing.extractive import ExtractiveComposer

    strict = ExtractiveComposer(embedder, min_evidence=1.0)  # refuses everything
    extractive = dataclasses.replace(providers_fake(embedder), composer=strict)
    runs = _signal_runs(
        extractive, dataset, tmp_path, {"default": (), "zero": ("--min-evidence", "0")}
    )
    assert all(line["refused"] for line in runs["default"].values())
    assert not any(line["refused"] for line in runs["zero"].values())
    assert runs["zero"]["q1"]["right"] is True
    assert {line["support_source"] for line in runs["zero"].values()} == {"evidence-coverage"}
    # The threshold changes what is refused, not the evidence measured.
    assert [line["support"] for line in runs["zero"].values()] == [
        line["support"] for line in runs["default"].values()
    ]


def test_signals_carry_the_answerability_signals_and_a_min_answerability_refuses_on_them(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    from apps.answers.composing.answerability import SIGNAL_NAMES
    from apps.answers.composing.confidence import UNSUPPORTED_SHARE
    from apps.answers.composing.extractive import ExtractiveComposer

    extractive = providers_fake(embedder)
    extractive = dataclasses.replace(extractive, composer=ExtractiveComposer(embedder))
    runs = _signal_runs(
        extractive,
        dataset,
        tmp_path,
        {
            name: ("--min-evidence", "0", "--min-answerability", value)
            for name, value in (("off", "0"), ("strict", "1"))
        },
    )
    assert not any(line["refused"] for line in runs["off"].values())
    names = [list(cast(dict[str, float], line["answerability"])) for line in runs["off"].values()]
    # The composer's signals, and the share of uncited sentences the badge also reads.
    assert names == [[*SIGNAL_NAMES, UNSUPPORTED_SHARE]] * len(runs["off"])
    assert all(
        str(line["refusal_reason"]).startswith("answerability") for line in runs["strict"].values()
    )

    # What the composer weighs does not depend on the threshold; the uncited share is read off
    # the text shown, which a refusal replaces.
    def weighed(run: str) -> list[dict[str, object]]:
        return [
            {k: v for k, v in cast(dict[str, object], line["answerability"]).items()
             if k != UNSUPPORTED_SHARE}
            for line in runs[run].values()
        ]  # fmt: skip

    assert weighed("off") == weighed("strict")


@pytest.mark.parametrize("value", ["1.5", "-0.1"])
def test_a_min_evidence_outside_zero_to_one_is_refused(
    dataset: Path, embedder: CountingEmbedder, value: str
) -> None:
    from django.core.management import CommandError

    from apps.answers.composing.extractive import ExtractiveComposer

    extractive = providers_fake(embedder)
    extractive = dataclasses.replace(extractive, composer=ExtractiveComposer(embedder))
    with providers_override(extractive), pytest.raises(CommandError, match="min_evidence"):
        call_command(
            "evaluate_answers",
            "--dataset",
            str(dataset),
            "--min-evidence",
            value,
            stdout=StringIO(),
        )
    with providers_override(extractive), pytest.raises(CommandError, match="min_answerability"):
        call_command(
            "evaluate_answers",
            *("--dataset", str(dataset), "--min-answerability", value),
            stdout=StringIO(),
        )


def test_min_evidence_needs_the_offline_composer(dataset: Path, embedder: CountingEmbedder) -> None:
    from django.core.management import CommandError

    with providers_override(providers_fake(embedder)), pytest.raises(CommandError, match="offline"):
        call_command(
            "evaluate_answers", "--dataset", str(dataset), "--min-evidence", "0", stdout=StringIO()
        )


@pytest.mark.parametrize("command", ["evaluate_retrieval", "evaluate_answers"])
def test_a_folder_without_a_corpus_is_a_clear_error(command: str, tmp_path: Path) -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match=r"corpus\.jsonl"):
        call_command(command, "--dataset", str(tmp_path), stdout=StringIO())


CONVERSATIONS = [
    {
        "conversation_id": "c1",
        "language": "en",
        "turns": [
            {"text": "What does the WireGuard VPN need?", "gold": ["d2"], "follow_up": False},
            {"text": "and how do I import it?", "gold": ["d2"], "follow_up": True},
            {"text": "How many days of annual leave?", "gold": ["d1"], "follow_up": False},
            {
                "text": "and who approves it?",
                "gold": ["d1"],
                "follow_up": True,
                "subject": "answer",
            },
        ],
    }
]


def _evaluate_conversations(dataset: Path, tmp_path: Path, lines: list[str], *flags: str) -> None:
    path = tmp_path / "conversations.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    call_command(
        "evaluate_conversations",
        "--dataset",
        str(dataset),
        "--conversations",
        str(path),
        *flags,
        stdout=StringIO(),
    )


@pytest.mark.parametrize("rewrite", [True, False])
def test_evaluate_conversations_scores_follow_ups_and_standalone_turns_apart(
    dataset: Path, tmp_path: Path, embedder: CountingEmbedder, rewrite: bool
) -> None:
    fake = providers_fake(embedder, composer=ScriptedComposer(pieces=("It says so [c1].",)))
    target = tmp_path / "conversations.json"
    flags = ["--json", str(target)] + ([] if rewrite else ["--no-rewrite"])
    with providers_override(fake):
        _evaluate_conversations(dataset, tmp_path, [json.dumps(c) for c in CONVERSATIONS], *flags)
    result = json.loads(target.read_text())
    assert result["rewrite"] == ("rules" if rewrite else "off")
    assert result["standalone"]["turns"] == 2 and result["follow_up"]["turns"] == 2
    # Follow-ups whose subject only an answer named are also scored on their own.
    assert result["answer_subject"]["turns"] == 1
    assert result["standalone"]["gold_in_top5"] == 1.0
    assert result["standalone"]["rewritten"] == 0  # new questions are searched as asked
    assert result["follow_up"]["rewritten"] == 2 * int(rewrite)
    assert {"ndcg@10", "gold_passage_cited"} <= set(result["follow_up"])


def test_evaluate_conversations_names_a_bad_line(dataset: Path, tmp_path: Path) -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="line 2"):
        _evaluate_conversations(dataset, tmp_path, [json.dumps(CONVERSATIONS[0]), '{"turns": 3}'])
