"""Every question's signals, for fitting the confidence blend and the refusal threshold.

`evaluate_answers --signals FILE.jsonl` writes one line per question. With
`--min-evidence 0` nothing is refused for low evidence, so each line also says whether the
answer would have cited a gold passage; benchmarks/calibration_fit.py then replays any
threshold exactly: a question is refused at threshold t when it was refused anyway (another
rule) or when its support is below t, unless the support came from a complete multi-hop chain,
which the threshold does not hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class QuestionSignals:
    set: str  # the dataset's folder name
    query_id: str
    group: str  # the passage the question was written about, where the set says (PersianQA)
    answerable: bool
    refused: bool
    refusal_reason: str
    right: bool  # an answerable question whose answer cites a gold passage
    support: float | None  # the composer's own estimate; None when it sent none
    support_source: str
    cosine: float | None  # retrieval features, as confidence.retrieval_features reads them
    agreed: bool
    confidence: float  # the blend shipped when the line was written
    answerability: dict[str, float]  # the composer's answerability signals, by name
    # The answer text holds one of the question's answer strings (whether or not it was a
    # refusal, as `right`); None for a set without answer strings. calibration_fit.py
    # --label contained fits the badge to it: the badge rates the answer shown.
    contained: bool | None = None


def signals_write(path: Path, signals: Iterable[QuestionSignals]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for line in signals:
            handle.write(json.dumps(asdict(line), ensure_ascii=False) + "\n")
