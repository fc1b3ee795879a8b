"""A disk cache of passage vectors keyed by (model, content hash).

It lives outside the work tree and the database (RAG_EMBEDDING_CACHE_DIR), so dropping
the database, a fresh clone or a new evaluation collection never pays for the same
vectors twice. SQLite in WAL mode lets several worker processes share it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


class EmbeddingCache:
    def __init__(self, *, directory: Path, model_id: str, dimensions: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)
        self._dimensions = dimensions
        self._db = sqlite3.connect(directory / f"{safe}-{dimensions}.sqlite3", timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, v BLOB)")

    def get_many(self, hashes: Iterable[str]) -> dict[str, Vector]:
        found: dict[str, Vector] = {}
        keys = list(dict.fromkeys(hashes))
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT hash, v FROM vectors WHERE hash IN ({marks})",  # noqa: S608 - only '?' marks
                batch,
            )
            for key, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if vector.shape == (self._dimensions,):
                    found[key] = vector
        return found

    def put_many(self, vectors: Mapping[str, Vector]) -> None:
        rows = [(key, np.asarray(v, dtype=np.float32).tobytes()) for key, v in vectors.items()]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)

    def close(self) -> None:
        self._db.close()
