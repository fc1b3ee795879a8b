"""benchmarks/search_relevance_fit.py: the weighted logistic fit and its figures."""

from __future__ import annotations

import numpy as np

from benchmarks.search_relevance_fit import Rows, _auc, _fit


def _rows(beta: np.ndarray, count: int, seed: int) -> Rows:
    generator = np.random.default_rng(seed)
    features = generator.uniform(-0.5, 1.5, size=(count, 2))
    p = 1.0 / (1.0 + np.exp(-(beta[0] + features @ beta[1:])))
    relevant = generator.uniform(size=count) < p
    return Rows(features, relevant, np.arange(count) // 10, np.ones(count // 10, dtype=bool))


def test_the_fit_recovers_the_coefficients_that_made_the_labels() -> None:
    truth = np.array([-3.0, 4.0, 2.0])

    fitted = _fit([_rows(truth, 20000, seed=1)])

    assert np.allclose(fitted, truth, atol=0.3)


def test_a_set_counts_the_same_however_many_rows_it_has() -> None:
    small = _rows(np.array([-1.0, 2.0, 0.0]), 2000, seed=2)
    other = _rows(np.array([-5.0, 2.0, 1.0]), 2000, seed=3)
    tenfold = Rows(
        np.tile(other.features, (10, 1)),
        np.tile(other.relevant, 10),
        np.tile(other.question, 10),
        np.tile(other.answerable, 10),
    )

    assert np.allclose(_fit([small, other]), _fit([small, tenfold]), atol=1e-6)


def test_the_area_under_the_curve_orders_relevant_above_irrelevant() -> None:
    p = np.array([0.9, 0.8, 0.2, 0.1])

    assert _auc(p, np.array([True, True, False, False])) == 1.0
    assert _auc(p, np.array([False, False, True, True])) == 0.0
