"""REST endpoints: they gate (signed in, owner only, request shape) and call selectors and
services. Someone else's conversation or turn is a 404, as everywhere else in the app."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.db.models import Count, QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from apps.answers.api.selectors import (
    conversation_turns,
    conversations_listed,
    conversations_with_turns,
    turns_listed,
)
from apps.answers.api.serializers import (
    AnswerSerializer,
    CollectionSerializer,
    ConversationDetailSerializer,
    ConversationSerializer,
    ErrorSerializer,
    QuestionSerializer,
    TurnSerializer,
)
from apps.answers.api.services import (
    ConversationBusy,
    answer_ask,
    conversation_deleted_mark,
    conversation_rename,
)
from apps.answers.models import Conversation, Turn, TurnStatus
from apps.answers.turn.entry import conversation_id_parse
from apps.answers.turn.rejections import REJECTIONS, rejection_code
from apps.corpus.access import collections_readable
from apps.corpus.models import Collection
from ragplatform.errors import FailureCode, error_response

# A turn that ended without an answer: the pipeline (not the request) failed.
FAILED_TURN_STATUS = {
    FailureCode.MODEL_UNAVAILABLE: status.HTTP_503_SERVICE_UNAVAILABLE,
    FailureCode.MODEL_TIMEOUT: status.HTTP_504_GATEWAY_TIMEOUT,
    FailureCode.INTERNAL: status.HTTP_500_INTERNAL_SERVER_ERROR,
}
REJECTED = {
    code: OpenApiResponse(ErrorSerializer, description=description)
    for code, description in (
        (400, "invalid question, collection or conversation id"),
        (401, "not signed in, or a bad or deactivated token"),
        (404, "no such conversation (or someone else's)"),
        (429, "too many questions a minute"),
    )
}


class OwnedApiView(APIView):
    """A view of the signed-in user's own things (errors: REST_FRAMEWORK's EXCEPTION_HANDLER)."""

    @property
    def user_id(self) -> int:
        user_id: int = self.request.user.pk  # type: ignore[assignment]  # IsAuthenticated ran
        return user_id


class ConversationList(OwnedApiView, generics.ListAPIView[Conversation]):
    """The signed-in user's conversations, most recently active first."""

    serializer_class = ConversationSerializer

    def get_queryset(self) -> QuerySet[Conversation]:
        return conversations_listed(user_id=self.user_id)


@extend_schema_view(
    delete=extend_schema(responses={204: None, 404: ErrorSerializer, 409: ErrorSerializer}),
    patch=extend_schema(responses={200: ConversationSerializer, 400: ErrorSerializer}),
)
class ConversationDetail(OwnedApiView, generics.RetrieveUpdateDestroyAPIView[Conversation]):
    """One conversation with its turns; PATCH renames it (`title`), DELETE removes it from the
    owner's list (the audit keeps its turns until the retention purges them; refused with 409
    while a question in it is still being answered)."""

    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[Conversation]:
        if self.request.method == "GET":
            return conversations_with_turns(user_id=self.user_id)
        return conversations_listed(user_id=self.user_id)

    def get_serializer_class(self) -> type[BaseSerializer[Conversation]]:
        if self.request.method == "GET":
            return ConversationDetailSerializer
        return ConversationSerializer

    def perform_update(self, serializer: BaseSerializer[Conversation]) -> None:
        title, conversation = serializer.validated_data.get("title"), serializer.instance
        if title is not None and isinstance(conversation, Conversation):
            serializer.instance = conversation_rename(conversation=conversation, title=title)

    def perform_destroy(self, instance: Conversation) -> None:
        conversation_deleted_mark(conversation_id=instance.pk)

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, ConversationBusy):
            return error_response(FailureCode.CONFLICT, str(exc))
        return super().handle_exception(exc)


class ConversationTurnList(OwnedApiView, generics.ListAPIView[Turn]):
    """The turns of one of the user's conversations, in order, with their citations."""

    serializer_class = TurnSerializer

    def get_queryset(self) -> QuerySet[Turn]:
        conversation = generics.get_object_or_404(
            conversations_listed(user_id=self.user_id), pk=self.kwargs["pk"]
        )
        return conversation_turns(user_id=self.user_id, conversation_id=conversation.pk)


class TurnDetail(OwnedApiView, generics.RetrieveAPIView[Turn]):
    """One of the user's turns with its citations."""

    serializer_class = TurnSerializer

    def get_queryset(self) -> QuerySet[Turn]:
        return turns_listed(user_id=self.user_id)


class CollectionList(OwnedApiView, generics.ListAPIView[Collection]):
    """The collections the user may read: the names to give in `collections` when asking."""

    serializer_class = CollectionSerializer

    def get_queryset(self) -> QuerySet[Collection]:
        readable = collections_readable(user=self.request.user)
        return readable.annotate(document_count=Count("documents", distinct=True)).order_by("name")


class AnswerCreate(OwnedApiView):
    """Ask a question and get the whole answer in one JSON body (no streaming): the same
    checks, rate limit and pipeline as the WebSocket and `POST /api/turns/` (SSE). A question
    that is refused gets the same error code and status as there; a turn that fails gets its
    body with `status` failed and `error` set."""

    parser_classes = [JSONParser]

    @extend_schema(
        request=QuestionSerializer,
        responses={
            200: AnswerSerializer,
            **REJECTED,
            502: OpenApiResponse(AnswerSerializer, description="the turn failed; see `error`"),
            503: OpenApiResponse(AnswerSerializer, description="no model is available"),
            504: OpenApiResponse(AnswerSerializer, description="the model timed out"),
        },
    )
    def post(self, request: Request) -> Response:
        body = request.data
        if not isinstance(body, dict):
            raise ParseError("The body must be a JSON object")
        try:
            turn_id = async_to_sync(answer_ask)(
                user_id=self.user_id,
                conversation_id=conversation_id_parse(body.get("conversation")),
                question=body.get("question"),
                collection_names=body.get("collections") or (),
            )
        except REJECTIONS as exc:
            return error_response(rejection_code(exc), str(exc))
        turn = turns_listed(user_id=self.user_id).get(pk=turn_id)
        return Response(AnswerSerializer(turn).data, status=_answer_status(turn))


def _answer_status(turn: Turn) -> int:
    if turn.status == TurnStatus.FINISHED:
        return status.HTTP_200_OK
    try:
        code = FailureCode(turn.error_code)
    except ValueError:
        code = FailureCode.INTERNAL
    return FAILED_TURN_STATUS.get(code, status.HTTP_502_BAD_GATEWAY)
