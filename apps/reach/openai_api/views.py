"""The OpenAI-compatible door: `GET /v1/models` and `POST /v1/chat/completions`.

The views gate (the Bearer token, the request's shape, the model the caller may read) and
hand the question to `apps.reach.asking`, which opens it with the chat page's `turn_open`.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync
from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils import timezone
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.answers.conversations.selectors import NotFound
from apps.answers.events import Envelope
from apps.answers.models import TurnClient
from apps.answers.turn.entry import OpenedTurn, RateLimited
from apps.answers.turn.rejections import REJECTIONS, rejection_code
from apps.reach.asking.catalogue import (
    NothingReadable,
    UnknownModel,
    model_collections,
    models_readable,
)
from apps.reach.asking.services import Question, question_answer, question_open, question_stream
from apps.reach.openai_api.auth import BearerTokenAuthentication
from apps.reach.openai_api.bodies import Completion, completion_body, completion_chunks, failed_body
from apps.reach.openai_api.errors import (
    BadCompletion,
    bad_completion_response,
    openai_error,
    openai_exception_handler,
)
from apps.reach.openai_api.requests import CompletionRequest, completion_request_read
from ragplatform.errors import FailureCode
from ragplatform.rate_limits import window_start

_MINUTE = timedelta(minutes=1)  # the window of RAG_ASKS_PER_MINUTE


class OpenAIView(APIView):
    """Bearer tokens only (no session, so no CSRF), errors in OpenAI's shape."""

    authentication_classes = [BearerTokenAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    # OpenAI's published API, not the platform's: left out of /api/schema/ (docs/guide/16).
    schema = None

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response | None]:
        return openai_exception_handler

    @property
    def user_id(self) -> int:
        user_id: int = self.request.user.pk  # type: ignore[assignment]  # IsAuthenticated ran
        return user_id

    def base_url(self) -> str:
        return self.request.build_absolute_uri("/").rstrip("/")


class ModelList(OpenAIView):
    """Every collection the caller may read as a model, and `answers` for all of them."""

    def get(self, request: Request) -> Response:
        models = models_readable(user=request.user)
        data = [
            {"id": m.id, "object": "model", "created": m.created, "owned_by": "platform"}
            | {"description": m.description}
            for m in models
        ]
        return Response({"object": "list", "data": data})


class ChatCompletions(OpenAIView):
    """Answer the conversation's last user message from the model's collections."""

    def post(self, request: Request) -> HttpResponseBase:
        try:
            asked = completion_request_read(request.data)
            question = self._question(asked)
        except BadCompletion as exc:
            return bad_completion_response(exc)
        except UnknownModel as exc:
            return openai_error(FailureCode.NOT_FOUND, str(exc), param="model")
        except NothingReadable as exc:
            return openai_error(FailureCode.FORBIDDEN, str(exc), param="model")
        created = int(time.time())
        try:
            if asked.stream:
                return self._stream(asked, async_to_sync(question_open)(question=question), created)
            reply = async_to_sync(question_answer)(question=question, base_url=self.base_url())
        except REJECTIONS as exc:
            return _rejected(exc)
        completion = Completion(turn_id=reply.turn_id, model=asked.model, created=created)
        if not reply.finished:
            body, status = failed_body(reply)
            return Response(body, status=status)
        return Response(completion_body(completion, reply))

    def _question(self, asked: CompletionRequest) -> Question:
        return Question(
            user_id=self.user_id,
            text=asked.question,
            client=TurnClient.OPENAI,
            collection_names=model_collections(model_id=asked.model, user=self.request.user),
            conversation_id=asked.conversation_id,
            earlier_questions=asked.earlier_questions,
            client_agent=self.request.headers.get("User-Agent", ""),
        )

    def _stream(
        self, asked: CompletionRequest, opened: OpenedTurn, created: int
    ) -> HttpResponseBase:
        completion = Completion(turn_id=opened.turn.pk, model=asked.model, created=created)
        events = async_to_sync(_launched)(opened=opened, user_id=self.user_id)
        chunks = completion_chunks(
            completion=completion,
            events=events,
            base_url=self.base_url(),
            include_usage=asked.include_usage,
        )
        response = StreamingHttpResponse(chunks, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the stream back
        response["X-Conversation-Id"] = str(opened.turn.conversation_id)
        return response


async def _launched(*, opened: OpenedTurn, user_id: int) -> AsyncIterator[Envelope]:
    # Launched on the server's event loop (not the view's thread), where the turn outlives
    # the request and the follower streams.
    return question_stream(opened=opened, user_id=user_id)


def _rejected(exc: Exception) -> Response:
    code = rejection_code(exc)
    if isinstance(exc, RateLimited):
        now = timezone.now()
        wait = window_start(window=_MINUTE, now=now) + _MINUTE - now
        headers = {"Retry-After": str(max(1, math.ceil(wait.total_seconds())))}
        return openai_error(code, str(exc), headers=headers)
    if isinstance(exc, NotFound):
        return openai_error(code, str(exc), param="conversation")
    return openai_error(code, str(exc), param="messages")
