"""reranker_configured: the one place settings become a reranker (the app and evaluate_retrieval)."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.conf import LazySettings
from django.core.management import CommandError, call_command

from apps.answers.providers.configured import reranker_configured
from apps.answers.retrieval.rerank import NoReranker, RemoteReranker


def test_none_is_the_default(settings: LazySettings) -> None:
    settings.RAG_RERANK = "none"
    settings.RAG_RERANK_BASE_URL = "http://127.0.0.1:9/v1"
    assert isinstance(reranker_configured(), NoReranker)


def test_remote_calls_the_rerank_server_with_the_key(settings: LazySettings) -> None:
    settings.RAG_RERANK = "remote"
    settings.RAG_RERANK_BASE_URL = "http://127.0.0.1:9/v1"
    settings.RAG_RERANK_MODEL = "bge-reranker"
    settings.OPENAI_API_KEY = "sk-test"
    reranker = reranker_configured()
    assert isinstance(reranker, RemoteReranker)
    assert reranker.name == "remote/bge-reranker"
    assert reranker._headers == {"Authorization": "Bearer sk-test"}


def test_remote_without_a_rerank_server_keeps_the_fused_order(settings: LazySettings) -> None:
    settings.RAG_RERANK = "remote"
    settings.RAG_RERANK_BASE_URL = ""
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # the chat server is not a reranker
    assert isinstance(reranker_configured(), NoReranker)


def test_a_mode_overrides_the_setting(settings: LazySettings) -> None:
    settings.RAG_RERANK = "none"
    settings.RAG_RERANK_BASE_URL = "http://127.0.0.1:9/v1"
    assert isinstance(reranker_configured("remote"), RemoteReranker)


def test_evaluate_retrieval_refuses_remote_without_a_rerank_server(
    settings: LazySettings, tmp_path: Path
) -> None:
    settings.RAG_RERANK_BASE_URL = ""
    (tmp_path / "corpus.jsonl").write_text("")
    with pytest.raises(CommandError, match="RAG_RERANK_BASE_URL"):
        call_command(
            "evaluate_retrieval",
            "--dataset",
            str(tmp_path),
            "--rerank",
            "remote",
            stdout=StringIO(),
        )
