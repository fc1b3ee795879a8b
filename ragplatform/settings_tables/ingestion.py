"""Ingestion: where originals are kept, upload limits, the admin's upload pages, chunking."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Bool, Choice, Float, Folder, Int

MIB = 1024 * 1024

ROWS = (
    # The database by default, so a task worker on any machine that reaches it reads what the
    # web process received; "filesystem" keeps them under RAG_MEDIA_ROOT, shared by all.
    Choice(
        "RAG_ORIGINALS_STORAGE",
        ("database", "filesystem"),
        "Where the originals of uploaded documents are kept.",
    ),
    Folder(
        "RAG_MEDIA_ROOT",
        "{RAG_DATA_DIR}/media",
        "Uploaded files with filesystem storage.",
        setting="MEDIA_ROOT",
    ),
    Folder("RAG_DEMO_DOCS_DIR", "docs/guide", "The folder `make serve` ingests as the demo."),
    Int("RAG_MAX_UPLOAD_BYTES", 25 * MIB, "The largest file accepted for ingestion.", minimum=1),
    # Several files in one admin upload; larger bodies are refused unread.
    Int(
        "RAG_MAX_REQUEST_BYTES",
        100 * MIB,
        "The largest request body read at all.",
        minimum=1024,
        also="at least RAG_MAX_UPLOAD_BYTES",
    ),
    Int("RAG_UPLOADS_PER_HOUR", 200, "Files one user may upload per clock hour.", minimum=1),
    Float(
        "RAG_KEPT_UPLOADS_HOURS",
        24.0,
        "How long files of a failed admin upload are kept.",
        low=0.1,
        high=720.0,
    ),
    Float(
        "RAG_ADMIN_PROGRESS_POLL_S",
        2.0,
        "How often the admin's document list refreshes.",
        low=0.5,
        high=300.0,
    ),
    Int("RAG_CHUNK_MAX_WORDS", 140, "The longest chunk, in words.", minimum=20),
    Int("RAG_CHUNK_OVERLAP_WORDS", 25, "Words consecutive chunks share.", minimum=0),
    # OCR (Tesseract) of scanned PDF pages and images, on the task workers only.
    Bool("RAG_OCR", True, "Read scanned pages and images with OCR."),
    Int("RAG_OCR_MAX_PAGES", 200, "Pages of one document read by OCR at most.", minimum=1),
    Float(
        "RAG_OCR_PAGE_TIMEOUT_S", 60.0, "Seconds OCR may spend on one page.", low=1.0, high=3600.0
    ),
    Int("RAG_OCR_DPI", 200, "Resolution scanned PDF pages are rendered at for OCR.", minimum=72),
    Int(
        "RAG_PDF_TABLE_MAX_PAGES",
        0,
        "Pages of one PDF searched for tables (pdfplumber) at most.",
        minimum=0,
    ),
)
