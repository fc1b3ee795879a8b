"""The configured providers, built once per process from settings.

Offline by default; with OPENAI_BASE_URL and RAG_CHAT_MODEL set, the chat model serves the
composer (RAG_COMPOSER=auto|openai), HyDE and multi-hop bridging, and the llm router if asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import cache

from django.conf import settings

from apps.answers.composing.conversational import ConversationalResponder
from apps.answers.composing.extractive import ExtractiveComposer
from apps.answers.composing.openai_composer import OpenAIComposer
from apps.answers.composing.types import Composer
from apps.answers.providers.chat import ChatModel
from apps.answers.providers.configured import (
    chat_model_configured,
    json_chat_adapter,
    keyword_pruning_configured,
    reranker_configured,
)
from apps.answers.retrieval.pipeline import RetrievalConfig, Retriever
from apps.answers.routing.fallback import FallbackClassifier
from apps.answers.routing.llm import LLMClassifier
from apps.answers.routing.trained import TrainedClassifier
from apps.answers.routing.types import QueryClassifier
from apps.corpus.search.embedders import Embedder, default_embedder, embedder_override
from ragplatform.seams import Seam


@dataclass(frozen=True)
class Providers:
    embedder: Embedder
    classifier: QueryClassifier
    retriever: Retriever
    composer: Composer
    fallback_composer: Composer | None  # serves when the online composer fails before text
    responder: Composer
    chat: ChatModel | None
    router_timeout_s: float
    rewrite_timeout_s: float  # a follow-up's rewrite by the chat model
    context_budget_tokens: int
    bump_threshold: float
    clarify_threshold: float
    rewrite_max_tokens: int = 64


def _classifier(chat: ChatModel | None) -> QueryClassifier:
    trained = TrainedClassifier.from_artefact()
    if settings.RAG_ROUTER == "llm" and chat is not None:
        timeout_s = settings.RAG_ROUTER_TIMEOUT_S
        llm = LLMClassifier(
            json_chat_adapter(chat), timeout_s=timeout_s, max_tokens=settings.RAG_ROUTER_MAX_TOKENS
        )
        return FallbackClassifier(llm, trained, timeout_s=timeout_s)
    return trained


def _router_timeout_s(classifier: QueryClassifier) -> float:
    # The LLM router's own limit is RAG_ROUTER_TIMEOUT_S; its fallback needs time after that.
    if isinstance(classifier, FallbackClassifier):
        return classifier.total_timeout_s
    return settings.RAG_ROUTER_TIMEOUT_S


def _extractive(embedder: Embedder) -> ExtractiveComposer:
    """With the sentence vectors stored ahead of questions, unless turned off (then the model
    embeds them at each question)."""
    # Imported here: the store's models need the app registry, which this module must not.
    from apps.answers.sentence_vectors.stored import StoredSentenceVectors

    vectors = StoredSentenceVectors(embedder) if settings.RAG_SENTENCE_VECTORS else None
    return ExtractiveComposer(embedder, vectors=vectors)


@cache
def _configured_providers() -> Providers:
    embedder = default_embedder()
    chat = chat_model_configured()
    extractive = _extractive(embedder)
    online = chat is not None and settings.RAG_COMPOSER in ("auto", "openai")
    composer: Composer = (
        OpenAIComposer(
            chat, timeout_s=settings.RAG_CHAT_TIMEOUT_S, max_tokens=settings.RAG_ANSWER_MAX_TOKENS
        )
        if online and chat
        else extractive
    )
    classifier = _classifier(chat)
    return Providers(
        embedder=embedder,
        classifier=classifier,
        retriever=Retriever(
            embedder=embedder,
            config=RetrievalConfig(
                keyword_scoring="ts_rank_cd"
                if settings.RAG_KEYWORD_SCORING == "ts_rank_cd"
                else "bm25",
                keyword_pruning=keyword_pruning_configured(),
                ef_search=settings.RAG_HNSW_EF_SEARCH,
                fusion="rrf" if settings.RAG_FUSION == "rrf" else "zscore",
                dense_share=settings.RAG_FUSION_DENSE_SHARE,
                expansion_timeout_s=settings.RAG_EXPANSION_TIMEOUT_S,
                hyde_max_tokens=settings.RAG_HYDE_MAX_TOKENS,
                bridge_max_tokens=settings.RAG_BRIDGE_MAX_TOKENS,
            ),
            reranker=reranker_configured(),
            chat=chat,
        ),
        composer=composer,
        fallback_composer=extractive if composer is not extractive else None,
        responder=ConversationalResponder(
            chat=chat,
            timeout_s=settings.RAG_SMALL_TALK_TIMEOUT_S,
            max_tokens=settings.RAG_SMALL_TALK_MAX_TOKENS,
        ),
        chat=chat,
        router_timeout_s=_router_timeout_s(classifier),
        rewrite_timeout_s=settings.RAG_REWRITE_TIMEOUT_S,
        rewrite_max_tokens=settings.RAG_REWRITE_MAX_TOKENS,
        context_budget_tokens=settings.RAG_CONTEXT_BUDGET_TOKENS,
        bump_threshold=settings.RAG_ROUTER_BUMP_THRESHOLD,
        clarify_threshold=settings.RAG_ROUTER_CLARIFY_THRESHOLD,
    )


_seam: Seam[Providers] = Seam(_configured_providers)


def providers_default() -> Providers:
    """The providers every turn and command uses: the configured ones, or those that
    `providers_override` put in place."""
    return _seam()


@contextmanager
def providers_override(providers: Providers) -> Iterator[Providers]:
    """Use `providers`, and their embedder for ingestion too, while the block runs."""
    with _seam.override(providers), embedder_override(providers.embedder):
        yield providers


def providers_build_override(build: Callable[[], Providers]) -> AbstractContextManager[None]:
    """Build the providers with `build` on each ask while the block runs: how a turn meets
    providers that cannot be built (a model that is not there)."""
    return _seam.override_build(build)
