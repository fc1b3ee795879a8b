"""Retrieval: the follow-up rewrite, the two search legs, their fusion, the context budget."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Choice, Float, Int

ROWS = (
    Float(
        "RAG_REWRITE_TIMEOUT_S",
        4.0,
        "The longest a chat model's follow-up rewrite takes.",
        low=0.1,
        high=60.0,
    ),
    # 100 keeps recall@10 >= 0.99 at 100k chunks; raise it to ~200 from several hundred
    # thousand chunks up (benchmarks/vector_scale.py, docs/benchmarks.md).
    Int("RAG_HNSW_EF_SEARCH", 100, "The HNSW candidate list per query.", minimum=10),
    Choice("RAG_KEYWORD_SCORING", ("bm25", "ts_rank_cd"), "How keyword search ranks chunks."),
    # benchmarks/search_scale.py, docs/benchmarks.md: bounds the keyword leg on large
    # collections (postings read per query); 0 reads them all (exact BM25).
    Int(
        "RAG_KEYWORD_POSTINGS_BUDGET",
        50_000,
        "The postings one keyword search reads in full.",
        minimum=0,
    ),
    Int(
        "RAG_KEYWORD_RESCORE_DEPTH",
        500,
        "The keyword candidates whose score the most common words complete.",
        minimum=1,
    ),
    Choice("RAG_FUSION", ("zscore", "rrf"), "How the dense and keyword results are combined."),
    Float(
        "RAG_FUSION_DENSE_SHARE",
        0.6,
        "The dense results' share of a zscore fusion.",
        low=0.0,
        high=1.0,
    ),
    # benchmarks/search_relevance_fit.py; docs/guide/05-search.md says what it changes.
    Float(
        "RAG_SEARCH_MATCH_FROM",
        0.3,
        "The relevance from which a search result is a match, not a weak match.",
        low=0.0,
        high=1.0,
    ),
    Int(
        "RAG_CONTEXT_BUDGET_TOKENS",
        1800,
        "Tokens of passages an answer is composed from.",
        minimum=100,
    ),
)
