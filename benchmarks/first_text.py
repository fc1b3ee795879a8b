"""Time to first text and to the end of an answer, one asker at a time, over the guide.

Each question is a new conversation asked through the real turn (`turn_open(user_id=None,
...)` + `turn_events`, as `manage.py ask` does) with the configured offline providers, in this
process, nothing else asking. Measured from just before `turn_open` (the turn stored) to the
first `token` event with visible text (`first_text_ms`) and to the `finished` event
(`finished_ms`). The first WARMUP questions of each run load the models and warm the caches and
are not counted. The turns' end steps (analytics' tasks) are skipped and the benchmark's
conversations are deleted at the end, so the queue and the turn log stay as they were.

    python benchmarks/first_text.py [--rounds N] [--json FILE]
    python benchmarks/first_text.py --compare DIR [--rounds N] [--json FILE]

`--compare DIR` measures another checkout (an earlier commit) and this one in alternation
(DIR, this, DIR, this, ...; each run a fresh process), both on this checkout's database, and
reports both; the JSON's top level is this checkout's figures, `previous` the other's. The
guide must be ingested first (`python manage.py ingest docs/guide --collection "Platform
guide" --wait`; `make serve` does it), and, for stored sentence vectors, filled
(`python manage.py sentence_vectors_fill --wait`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
COLLECTION = "Platform guide"
WARMUP = (
    "What is a collection?",
    "How are answers cited?",
)
QUESTIONS = (
    "What file formats can I ingest?",
    "How do I upload several files at once?",
    "What does a yellow confidence badge mean?",
    "What does RAG_CHUNK_MAX_WORDS set?",
    "How do I check that ingestion worked?",
    "What happens when the chat model is unreachable?",
    "Which event types does an answer stream send?",
    "How do I resume an answer after the connection drops?",
    "What does the turn audit show?",
    "How is the refusal threshold chosen?",
    "What does the failed status mean?",
    "How do I create an API token?",
    "Which filters can I use in search?",
    "How do I add a group mapping for single sign-on?",
    "چگونه سوال بپرسم؟",
    "What is the difference between dense search and keyword search?",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="runs (per checkout)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--compare", type=Path, help="an earlier checkout, run in alternation")
    parser.add_argument("--root", type=Path, default=REPO, help=argparse.SUPPRESS)
    parser.add_argument("--collection", default=COLLECTION)
    args = parser.parse_args(argv)
    if args.compare:
        figures = alternated(args)
    elif args.root != REPO or args.rounds == 1:
        figures = one_run(args.root, args.collection)
    else:
        runs = [_child(REPO, args.collection) for _ in range(args.rounds)]
        figures = summary(runs)
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    return 0


# ---- alternation: each run a process of its own ----------------------------------------------


def alternated(args: argparse.Namespace) -> dict[str, Any]:
    previous: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    loads = [_load()]
    for _ in range(args.rounds):
        previous.append(_child(args.compare.resolve(), args.collection))
        current.append(_child(REPO, args.collection))
        loads.append(_load())
    figures = summary(current)
    figures["previous"] = summary(previous)
    figures["previous"]["root"] = str(args.compare.resolve())
    figures["load_average_1m"] = loads
    figures["ratio_first_text_p50"] = _ratio(figures, "first_text_ms_p50")
    figures["ratio_finished_p50"] = _ratio(figures, "finished_ms_p50")
    return figures


def _child(root: Path, collection: str) -> dict[str, Any]:
    """One run in a new process on `root`'s code and this checkout's database."""
    env = {**os.environ, "RAG_DATA_DIR": os.environ.get("RAG_DATA_DIR", str(REPO / ".data"))}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, __file__, "--root", str(root), "--json", out.name]
        subprocess.run(  # noqa: S603 - this very script, with paths we chose
            [*command, "--collection", collection],
            check=True,
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        result: dict[str, Any] = json.loads(Path(out.name).read_text())
    print(
        f"{root.name}: first text p50 {result['first_text_ms_p50']:.0f} ms, "
        f"finished p50 {result['finished_ms_p50']:.0f} ms",
        file=sys.stderr,
    )
    return result


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    first = [q["first_text_ms"] for run in runs for q in run["questions"]]
    finished = [q["finished_ms"] for run in runs for q in run["questions"]]
    return {
        **_figures(first, finished),
        "runs": len(runs),
        "run_first_text_ms_p50": [r["first_text_ms_p50"] for r in runs],
        "run_finished_ms_p50": [r["finished_ms_p50"] for r in runs],
        "questions": [q for run in runs for q in run["questions"]],
        "commit": runs[0].get("commit", "") if runs else "",
    }


def _ratio(figures: dict[str, Any], key: str) -> float:
    return round(figures[key] / figures["previous"][key], 3) if figures["previous"][key] else 0.0


def _figures(first: list[float], finished: list[float]) -> dict[str, Any]:
    return {
        "first_text_ms_p50": round(statistics.median(first), 1),
        "first_text_ms_p95": round(_percentile(first, 0.95), 1),
        "finished_ms_p50": round(statistics.median(finished), 1),
        "finished_ms_p95": round(_percentile(finished, 0.95), 1),
        "samples": len(first),
    }


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


# ---- one run, in this process ----------------------------------------------------------------


def one_run(root: Path, collection: str) -> dict[str, Any]:
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    load_before = _load()
    questions = asyncio.run(_ask_all(collection))
    figures = _figures(
        [q["first_text_ms"] for q in questions], [q["finished_ms"] for q in questions]
    )
    return {
        **figures,
        "questions": questions,
        "commit": _commit(root),
        "load_average_1m": [load_before, _load()],
    }


async def _ask_all(collection: str) -> list[dict[str, Any]]:
    from apps.answers.turn.end_steps import turn_end_steps_override
    from ragplatform.db_threads import db_call

    conversations: list[Any] = []
    measured: list[dict[str, Any]] = []
    try:
        with turn_end_steps_override({}):
            for question in WARMUP:
                await _ask(question, collection, conversations)
            for question in QUESTIONS:
                measured.append(await _ask(question, collection, conversations))
    finally:
        await db_call(_conversations_delete)(conversations)
    return measured


async def _ask(question: str, collection: str, conversations: list[Any]) -> dict[str, Any]:
    from apps.answers.models import TurnClient
    from apps.answers.turn.entry import turn_events, turn_open
    from ragplatform.db_threads import db_call

    start = time.perf_counter()
    opened = await turn_open(
        user_id=None,
        conversation_id=None,
        question=question,
        collection_names=[collection],
        client=TurnClient.COMMAND,
    )
    conversations.append(opened.turn.conversation_id)
    first_text = 0.0
    kinds: list[str] = []
    async for envelope in turn_events(turn_id=opened.turn.pk, filters=opened.filters):
        elapsed = (time.perf_counter() - start) * 1000
        kinds.append(envelope["type"])
        if envelope["type"] == "token" and not first_text and envelope["data"]["text"].strip():
            first_text = elapsed
        if envelope["type"] in ("finished", "failed"):
            finished = elapsed
            ended = envelope["type"]
    timings = await db_call(_timings)(opened.turn.pk)
    return {
        "question": question,
        "stages_ms": {k: v for k, v in timings.items() if isinstance(v, int | float)},
        "first_text_ms": round(first_text or finished, 1),
        "finished_ms": round(finished, 1),
        "end": ended,
        "events": kinds,
    }


def _timings(turn_id: int) -> dict[str, Any]:
    from apps.answers.models import Turn

    return dict(Turn.objects.get(pk=turn_id).timings_ms or {})


def _conversations_delete(ids: list[Any]) -> None:
    from apps.answers.models import Conversation

    Conversation.objects.filter(pk__in=ids).delete()


def _commit(root: Path) -> str:
    found = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],  # noqa: S607 - git from PATH
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],  # noqa: S607
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


if __name__ == "__main__":
    sys.exit(main())
