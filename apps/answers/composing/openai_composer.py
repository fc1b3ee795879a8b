"""The chat-model composer: streams the model's answer, cited with [cN] markers.

The model is asked to end with a line `CONFIDENCE: 0.x`. That line must never reach
the user, yet the text around it streams as it arrives, so `AnswerTail` holds back only
what is still ambiguous: a segment that may turn out to be the confidence line, and an
unclosed `[` that may be a marker the stream then breaks off inside.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Collection, Sequence

from apps.answers.composing.layout import closest_titles, refusal_pieces
from apps.answers.composing.prompts import CONFIDENCE_LABEL, answer_messages
from apps.answers.composing.types import (
    ANSWER_TRUNCATED,
    EMPTY_ANSWER,
    MODEL_INTERRUPTED,
    MODEL_TIMEOUT,
    MODEL_UNAVAILABLE,
    ComposeRequest,
    ComposerError,
    ComposerEvent,
    Refusal,
    SupportSignal,
    TextDelta,
)
from apps.answers.providers.chat import (
    FINISH_LENGTH,
    ChatError,
    ChatMessage,
    ChatModel,
    ChatTimeout,
    stream_finish_reason,
)
from apps.answers.streaming import citations_validate, extract_citations, sentences_without_citation
from apps.corpus.text import last_sentence_start, normalise_text, split_sentences

_DECORATION = " \t\n*_>#-"
_OPEN_MARKER = re.compile(r"\[[\s\dcC,;،؛۰-۹٠-٩]*\Z")
_MAX_MARKER_HOLD = 48
_CONFIDENCE_LINE = re.compile(rf"[\s*_>#-]*{CONFIDENCE_LABEL}[\s*_]*[:：=]", re.IGNORECASE)
_CONFIDENCE_VALUE = re.compile(r"[:：=][\s*_]*(\d+(?:[.,]\d+)?|[.,]\d+)\s*(%?)")
_REFUSAL_EN = re.compile(
    r"\b(?:do|does|did) not (?:contain|say|mention|cover|include|provide|answer)"
    r"|\b(?:don't|doesn't) (?:contain|say|mention|cover)"
    r"|\bnot (?:in|found in|mentioned in|covered (?:by|in)) the (?:documents|sources)"
    r"|\bno information (?:about|on|in)\b",
    re.IGNORECASE,
)
_REFUSAL_FA = re.compile(
    r"در (?:اسناد|منابع|مدارک)[^.!؟?\n]*(?:نیست|وجود ندارد|نیامده|اشاره‌ای نشده|ذکر نشده)"
    r"|اطلاعاتی[^.!؟?\n]*(?:وجود ندارد|نیست)"
)


class AnswerTail:
    """Feed model pieces; get back the text that is safe to show now."""

    def __init__(self) -> None:
        self._pending = ""
        self._started = False
        self.confidence: float | None = None
        self.dangling_marker = False

    def feed(self, piece: str) -> str:
        self._pending = self._drop_confidence_lines(self._pending + piece, final=False)
        if not self._started:
            self._pending = self._pending.lstrip()
        cut = _safe_length(self._pending)
        out, self._pending = self._pending[:cut], self._pending[cut:]
        self._started = self._started or bool(out)
        return out

    def finish(self) -> str:
        text = self._drop_confidence_lines(self._pending, final=True)
        self._pending = ""
        dangling = _OPEN_MARKER.search(text)
        if dangling is not None:
            self.dangling_marker = True
            text = text[: dangling.start()]
        return text.rstrip() if self._started else text.strip()

    def _drop_confidence_lines(self, text: str, *, final: bool) -> str:
        lines = text.split("\n")
        kept: list[str] = []
        for index, line in enumerate(lines):
            complete = final or index < len(lines) - 1
            if complete and _CONFIDENCE_LINE.match(line):
                self.confidence = (
                    _confidence_value(line) if self.confidence is None else self.confidence
                )
                continue
            kept.append(line)
        return "\n".join(kept)


def _safe_length(text: str) -> int:
    segment = last_sentence_start(text, abbreviations=False)
    if _may_be_confidence(text[segment:]):
        # The whitespace before it waits too, so an answer never ends in a blank line.
        return len(text[:segment].rstrip())
    bracket = text.rfind("[")
    if (
        bracket >= 0
        and len(text) - bracket <= _MAX_MARKER_HOLD
        and _OPEN_MARKER.match(text, bracket)
    ):
        return len(text[:bracket].rstrip(" "))
    return len(text)


def _may_be_confidence(segment: str) -> bool:
    head = segment.lstrip(_DECORATION).upper()
    if len(head) <= len(CONFIDENCE_LABEL):
        return CONFIDENCE_LABEL.startswith(head)
    rest = head[len(CONFIDENCE_LABEL) :].lstrip(" *_")
    return head.startswith(CONFIDENCE_LABEL) and (not rest or rest[0] in ":：=")


def _confidence_value(line: str) -> float | None:
    match = _CONFIDENCE_VALUE.search(normalise_text(line))
    if match is None:
        return None
    value = float(match.group(1).replace(",", "."))
    if match.group(2) or value > 1.0:
        value /= 100.0
    return value if 0.0 <= value <= 1.0 else None


def marker_coverage(answer: str, aliases: Collection[str]) -> float:
    """The share of the answer's sentences that carry a marker of a retrieved passage."""
    text, marks = extract_citations(answer)
    valid = citations_validate(marks=marks, allowed_aliases=aliases).valid
    total = sentences_without_citation(text=text, marks=())
    if total == 0:
        return 0.0
    return 1.0 - sentences_without_citation(text=text, marks=valid) / total


def is_refusal(answer: str, aliases: Collection[str]) -> bool:
    """A refusal opens the answer, or stands in an answer that cites nothing valid."""
    text, marks = extract_citations(answer)
    sentences = split_sentences(text)
    first = sentences[0] if sentences else ""
    if _says_not_found(first):
        return True
    cited = citations_validate(marks=marks, allowed_aliases=aliases).valid
    return not cited and _says_not_found(text)


def _says_not_found(text: str) -> bool:
    return bool(_REFUSAL_EN.search(text) or _REFUSAL_FA.search(normalise_text(text)))


def composer_error(exc: ChatError, *, started: bool) -> ComposerError:
    if started:
        return ComposerError(MODEL_INTERRUPTED, f"the answer broke off: {exc}")
    if isinstance(exc, ChatTimeout):
        return ComposerError(MODEL_TIMEOUT, str(exc), retryable=exc.retryable)
    return ComposerError(MODEL_UNAVAILABLE, str(exc), retryable=exc.retryable)


async def stream_pieces(
    chat: ChatModel,
    messages: Sequence[ChatMessage],
    *,
    timeout_s: float,
    max_tokens: int,
    temperature: float = 0.2,
    on_finish: Callable[[str | None], None] | None = None,
) -> AsyncGenerator[str, None]:
    """The model's pieces, all within `timeout_s`; running out of time is a ChatTimeout.
    `on_finish` hears why a complete reply ended (its finish reason, if the model says)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    pieces = chat.stream(messages=messages, temperature=temperature, max_tokens=max_tokens)
    try:
        while True:
            # The deadline wraps each await, never a yield, so it cannot cancel the consumer.
            try:
                async with asyncio.timeout_at(deadline):
                    piece = await anext(pieces, None)
            except TimeoutError as exc:
                raise ChatTimeout(f"no complete answer within {timeout_s:g} s") from exc
            if piece is None:
                if on_finish is not None:
                    on_finish(stream_finish_reason(pieces))
                return
            yield piece
    finally:
        close = getattr(pieces, "aclose", None)
        if close is not None:
            await close()


class OpenAIComposer:
    def __init__(self, chat: ChatModel, *, timeout_s: float, max_tokens: int = 600) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.name = f"openai/{chat.name}"
        self._chat = chat
        self._timeout_s = timeout_s
        self._max_tokens = max_tokens

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        tail = AnswerTail()
        shown: list[str] = []
        ended: list[str | None] = []
        pieces = stream_pieces(
            self._chat,
            answer_messages(request),
            timeout_s=self._timeout_s,
            max_tokens=self._max_tokens,
            on_finish=ended.append,
        )
        try:
            async with contextlib.aclosing(pieces):
                async for piece in pieces:
                    text = tail.feed(piece)
                    if text:
                        shown.append(text)
                        yield TextDelta(text)
        except ChatError as exc:
            raise composer_error(exc, started=bool(shown)) from exc
        rest = tail.finish()
        if rest:
            shown.append(rest)
            yield TextDelta(rest)
        if shown and ended == [FINISH_LENGTH]:
            # What was written stays, but it is not a whole answer: say so, never "finished".
            raise ComposerError(
                ANSWER_TRUNCATED, f"the answer reached the {self._max_tokens}-token limit"
            )
        async for event in self._closing_events("".join(shown), tail, request):
            yield event

    async def _closing_events(
        self, answer: str, tail: AnswerTail, request: ComposeRequest
    ) -> AsyncIterator[ComposerEvent]:
        if not answer.strip():
            raise ComposerError(EMPTY_ANSWER, "the model returned no answer text")
        if tail.dangling_marker:
            raise ComposerError(MODEL_INTERRUPTED, "the answer stopped inside a citation marker")
        aliases = [c.alias for c in request.context.chunks]
        refused = is_refusal(answer, aliases)
        if refused:
            # Like the offline composer's refusal, it names the closest documents.
            for piece in refusal_pieces(request.language, closest_titles(request.context))[1:]:
                yield TextDelta(piece)
        coverage = marker_coverage(answer, aliases)
        if tail.confidence is not None:
            # Uncalibrated, a model's own figure may not claim more support than its valid
            # markers show: a small model reports 0.9 for an answer that cites nothing.
            yield SupportSignal(
                value=min(tail.confidence, coverage),
                source="self-reported",
                signals=(("self_reported", tail.confidence), ("marker_coverage", coverage)),
            )
        else:
            yield SupportSignal(value=coverage, source="marker-coverage")
        if refused:
            yield Refusal(reason="the model said the sources do not answer")
