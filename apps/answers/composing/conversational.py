"""Replies to greetings, thanks and questions about the assistant: no retrieval, no markers.

With a chat model the reply is a short streamed completion; without one a fixed reply in
the user's language says what the platform does. A model that fails before its first word
raises, so the turn falls back to the fixed replies and records why (as for answers). No SupportSignal is sent: there is nothing a reply here could cite.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping

from apps.answers.composing.openai_composer import composer_error, stream_pieces
from apps.answers.composing.prompts import conversational_messages
from apps.answers.composing.types import (
    ANSWER_TRUNCATED,
    EMPTY_ANSWER,
    ComposeRequest,
    ComposerError,
    ComposerEvent,
    TextDelta,
)
from apps.answers.providers.chat import FINISH_LENGTH, ChatError, ChatModel
from apps.corpus.text import greeting_kind, split_sentences

REPLIES: Mapping[str, Mapping[str, str]] = {
    "en": {
        "about": (
            "I answer questions from your organisation's documents and cite the exact source "
            "for each point. I can also find documents, compare options and explain procedures "
            "step by step. What would you like to know?"
        ),
        "greeting": "Hello!",
        "thanks": "You're welcome! Ask me anything else about your documents.",
        "farewell": "Goodbye! Come back whenever you have a question about your documents.",
    },
    "fa": {
        "about": (
            "من به پرسش‌ها از روی اسناد سازمان شما پاسخ می‌دهم و برای هر نکته منبع دقیق آن را "
            "ذکر می‌کنم. همچنین می‌توانم اسناد را پیدا کنم، گزینه‌ها را مقایسه کنم و مراحل انجام "
            "کارها را گام‌به‌گام توضیح دهم. چه چیزی می‌خواهید بدانید؟"
        ),
        "greeting": "سلام!",
        "thanks": "خواهش می‌کنم! هر پرسش دیگری درباره اسنادتان دارید، بپرسید.",
        "farewell": "خدانگهدار! هر وقت پرسشی درباره اسنادتان داشتید، برگردید.",
    },
}


def message_kind(query: str) -> str:
    """'thanks', 'farewell' or 'greeting' for small talk; 'about' for anything else."""
    return greeting_kind(query) or "about"


def offline_pieces(request: ComposeRequest) -> list[str]:
    sentences = split_sentences(offline_reply(request.query, request.language))
    return [s if index == 0 else f" {s}" for index, s in enumerate(sentences)]


def offline_reply(query: str, language: str) -> str:
    replies = REPLIES.get(language, REPLIES["en"])
    kind = message_kind(query)
    if kind == "greeting":
        return f"{replies['greeting']} {replies['about']}"
    return replies[kind]


class ConversationalResponder:
    def __init__(
        self, chat: ChatModel | None = None, *, timeout_s: float = 10.0, max_tokens: int = 120
    ) -> None:
        if timeout_s <= 0 or max_tokens < 1:
            raise ValueError("timeout_s must be positive and max_tokens >= 1")
        self.name = f"conversational/{chat.name}" if chat else "conversational/offline"
        self._chat = chat
        self._timeout_s = timeout_s
        self._max_tokens = max_tokens

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        if self._chat is None:
            for text in offline_pieces(request):
                yield TextDelta(text)
            return
        shown = False
        ended: list[str | None] = []
        reply = self._model_reply(self._chat, request, ended)
        try:
            async with contextlib.aclosing(reply):
                async for text in reply:
                    shown = True
                    yield TextDelta(text)
        except ChatError as exc:
            # Before the first word the turn hands over to the offline replies, and records
            # why; after it, the reply is cut.
            raise composer_error(exc, started=shown) from exc
        if not shown:
            raise ComposerError(EMPTY_ANSWER, "the model returned no reply")
        if ended == [FINISH_LENGTH]:
            raise ComposerError(
                ANSWER_TRUNCATED, f"the reply reached the {self._max_tokens}-token limit"
            )

    async def _model_reply(
        self, chat: ChatModel, request: ComposeRequest, ended: list[str | None]
    ) -> AsyncGenerator[str, None]:
        messages = conversational_messages(
            query=request.query, language=request.language, history=request.history
        )
        pieces = stream_pieces(
            chat,
            messages,
            timeout_s=self._timeout_s,
            max_tokens=self._max_tokens,
            temperature=0.5,
            on_finish=ended.append,
        )
        started = False
        async with contextlib.aclosing(pieces):
            async for piece in pieces:
                # Leading blank lines are dropped so an all-blank reply counts as no reply.
                text = piece if started else piece.lstrip()
                if text:
                    started = True
                    yield text
