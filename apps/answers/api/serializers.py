"""What the REST API returns and accepts; every body is built from stored rows."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.answers.api.selectors import REPLAY_EVENTS, turn_retrieval_metadata
from apps.answers.models import Citation, Conversation, Turn
from apps.answers.turn.replay import StoredTurnShown, turn_stored_visible
from apps.corpus.access import user_collection_ids_readable
from apps.corpus.models import Collection


class CitationSerializer(serializers.ModelSerializer[Citation]):
    """A source of an answer. `chunk_index` and `domain` are null once the chunk or document is
    gone; the copied title, file, page and snippet stay."""

    chunk_index = serializers.IntegerField(read_only=True, allow_null=True)
    domain = serializers.CharField(read_only=True, allow_null=True)

    class Meta:
        model = Citation
        fields = [
            "alias",
            "kind",
            "document",
            "chunk",
            "chunk_index",
            "title",
            "source_file",
            "page",
            "domain",
            "snippet",
            "position",
        ]
        read_only_fields = fields


class ErrorDetailSerializer(serializers.Serializer[None]):
    code = serializers.CharField()
    message = serializers.CharField()


class ErrorSerializer(serializers.Serializer[None]):
    """The error body of every endpoint: {"error": {"code", "message"}}."""

    error = ErrorDetailSerializer()


class TurnSerializer(serializers.ModelSerializer[Turn]):
    """A stored turn as its owner may read it now: through the one replay filter, so citations,
    follow-ups and clarification topics from collections they lost access to are withheld."""

    citations = serializers.SerializerMethodField()
    answer = serializers.SerializerMethodField()
    followups = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()

    class Meta:
        model = Turn
        fields = [
            "id",
            "conversation",
            "index",
            "question",
            "answer",
            "status",
            "action",
            "intent",
            "confidence",
            "confidence_band",
            "refused",
            "refusal_reason",
            "partial",
            "followups",
            "created_at",
            "finished_at",
            "citations",
            "error",
        ]
        read_only_fields = fields

    @extend_schema_field(CitationSerializer(many=True))
    def get_citations(self, turn: Turn) -> Any:
        return CitationSerializer(self._shown(turn).citations, many=True).data

    def get_answer(self, turn: Turn) -> str:
        return self._shown(turn).answer

    def get_followups(self, turn: Turn) -> list[str]:
        return self._shown(turn).followups

    def _shown(self, turn: Turn) -> StoredTurnShown:
        # One filter per turn for the three fields (a list's rows share this serializer).
        cache: dict[int, StoredTurnShown] = self.context.setdefault("shown", {})
        if turn.pk not in cache:
            events = getattr(turn, "replay_events", None)
            if events is None:
                events = list(turn.events.filter(type__in=REPLAY_EVENTS).order_by("seq"))
            cache[turn.pk] = turn_stored_visible(
                turn=turn,
                citations=list(turn.citations.all()),
                events=events,
                readable=self._readable(turn),
            )
        return cache[turn.pk]

    def _readable(self, turn: Turn) -> frozenset[int] | None:
        # The API shows a turn to its owner only: what the owner may read now decides.
        owners: dict[int, frozenset[int] | None] = self.context.setdefault("readable", {})
        owner: int = turn.conversation.user_id  # type: ignore[assignment]
        if owner not in owners:
            owners[owner] = user_collection_ids_readable(user_id=owner)
        return owners[owner]

    @extend_schema_field(ErrorDetailSerializer(allow_null=True))
    def get_error(self, turn: Turn) -> dict[str, str] | None:
        """The failure code and message of a turn that failed or was cancelled, else null."""
        if not turn.error_code:
            return None
        return {"code": turn.error_code, "message": turn.error_message}


class RetrievalMetadataSerializer(serializers.Serializer[dict[str, Any]]):
    models = serializers.DictField(child=serializers.CharField())
    retrieved = serializers.IntegerField(help_text="chunks retrieval returned")
    used_in_context = serializers.IntegerField(help_text="chunks the answer was composed from")
    context_tokens = serializers.IntegerField(allow_null=True)
    context_budget_tokens = serializers.IntegerField(allow_null=True)
    latency_ms = serializers.DictField(
        child=serializers.FloatField(), help_text="milliseconds per stage; nested as outer.inner"
    )


class AnswerSerializer(TurnSerializer):
    """A turn as the answer endpoint returns it: the turn, with what retrieval did."""

    retrieval_metadata = serializers.SerializerMethodField()

    class Meta(TurnSerializer.Meta):
        fields = [*TurnSerializer.Meta.fields, "retrieval_metadata"]
        read_only_fields = fields

    @extend_schema_field(RetrievalMetadataSerializer)
    def get_retrieval_metadata(self, turn: Turn) -> dict[str, Any]:
        return RetrievalMetadataSerializer(turn_retrieval_metadata(turn=turn)).data


class QuestionSerializer(serializers.Serializer[None]):
    """Only for the schema: the endpoint hands the body to `turn_open`, which validates it
    exactly as it does for the WebSocket and SSE."""

    question = serializers.CharField()
    conversation = serializers.UUIDField(required=False, allow_null=True)
    collections = serializers.ListField(child=serializers.CharField(), required=False)


class ConversationSerializer(serializers.ModelSerializer[Conversation]):
    turn_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Conversation
        fields = ["id", "title", "created_at", "updated_at", "turn_count"]
        read_only_fields = ["id", "created_at", "updated_at", "turn_count"]
        # Stored blank until the post-turn step titles it; a rename must name it.
        extra_kwargs = {"title": {"allow_blank": False}}

    def validate_title(self, value: str) -> str:
        # One line in the sidebar: runs of whitespace (line breaks, tabs) become one space.
        return " ".join(value.split())


class ConversationDetailSerializer(ConversationSerializer):
    turns = TurnSerializer(many=True, read_only=True)

    class Meta(ConversationSerializer.Meta):
        fields = [*ConversationSerializer.Meta.fields, "turns"]


class CollectionSerializer(serializers.ModelSerializer[Collection]):
    document_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Collection
        fields = ["id", "name", "description", "created_at", "document_count"]
        read_only_fields = fields
