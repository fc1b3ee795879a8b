"""Answers: the questions accepted, the router's thresholds, the composer and its refusals."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Bool, Choice, Float, Int

ROWS = (
    Int("RAG_MAX_QUESTION_CHARS", 4000, "The longest question accepted.", minimum=10),
    Int("RAG_ASKS_PER_MINUTE", 20, "Questions one user may ask per clock minute.", minimum=1),
    Int("RAG_MAX_COLLECTIONS_PER_QUESTION", 20, "Collections one question may name.", minimum=1),
    Choice("RAG_ROUTER", ("trained", "llm"), "Which router classifies questions."),
    Float("RAG_ROUTER_TIMEOUT_S", 8.0, "The longest the router may take.", low=0.1, high=120.0),
    Float(
        "RAG_ROUTER_BUMP_THRESHOLD",
        0.7,
        "Below this confidence: a tier up, a hybrid answer.",
        low=0.0,
        high=1.0,
    ),
    Float(
        "RAG_ROUTER_CLARIFY_THRESHOLD",
        0.55,
        "Below this confidence: a clarifying question.",
        low=0.0,
        high=1.0,
        also="at most RAG_ROUTER_BUMP_THRESHOLD",
    ),
    Float(
        "RAG_CLARIFY_TOPICS_WAIT_S",
        2.0,
        "How long a clarification waits for topics.",
        low=0.0,
        high=30.0,
    ),
    Float(
        "RAG_CLARIFY_MATCH_SHARE",
        0.6,
        "An unsure router's question is answered from this term share.",
        low=0.0,
        high=1.0,
    ),
    Int(
        "RAG_VAGUE_QUERY_MAX_WORDS",
        2,
        "A query this short that asks nothing is clarified.",
        minimum=0,
    ),
    Choice("RAG_COMPOSER", ("auto", "extractive", "openai"), "Who writes answers."),
    Float(
        "RAG_MIN_EVIDENCE",
        0.49,
        "The offline composer refuses below this evidence.",
        low=0.0,
        high=1.0,
    ),
    Float(
        "RAG_MIN_ANSWERABILITY",
        0.0,
        "Above 0: it also refuses below this answerability.",
        low=0.0,
        high=1.0,
        shown_default="0 (off)",
    ),
    Bool(
        "RAG_REFUSE_UNMENTIONED_NAMES",
        True,
        "Refuse a question naming an identifier (MaxSessions, S3) no passage mentions.",
    ),
    Int(
        "RAG_ANSWER_MIN_CONTENT_WORDS",
        2,
        "An answer with fewer content words is shown in the red band.",
        minimum=0,
    ),
)
