"""Conversations, turns, their persisted stream events and citations (the audit trail), and the
router's labelled queries and evaluation runs."""

from __future__ import annotations

import uuid
from enum import StrEnum

from django.conf import settings
from django.db import models
from django.db.models import Q

# TurnAction is defined with the router's vocabulary, which must import without Django;
# model code takes it from here.
from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.events import TERMINAL_EVENTS
from apps.answers.routing.types import Intent, Strategy, Tier, TurnAction
from apps.corpus.models import Chunk, Document
from apps.corpus.text import Language


def value_choices(vocabulary: type[StrEnum]) -> list[tuple[str, str]]:
    """Choices that show the stored value itself, as the admin and the audit page always did."""
    return [(member.value, member.value) for member in vocabulary]


def value_known(field: str, vocabulary: type[StrEnum]) -> Q:
    """The field holds one of the vocabulary's values, or is blank (not set yet)."""
    return Q(**{f"{field}__in": ["", *(member.value for member in vocabulary)]})


class Conversation(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    title = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Set when its owner deletes it: hidden from them at once, kept for the audit until the
    # retention (RAG_DELETED_CONVERSATION_RETENTION_DAYS) purges it.
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(
                fields=["user", "-updated_at"],
                condition=Q(deleted_at__isnull=True),
                name="answers_conversation_live_idx",
            )
        ]

    def __str__(self) -> str:
        return self.title or f"Conversation {str(self.id)[:8]}"


class TurnStatus(models.TextChoices):
    STREAMING = "streaming", "Streaming"
    FINISHED = "finished", "Finished"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class TurnClient(models.TextChoices):
    """The door a question came through, set by the transport that opened its turn."""

    CHAT = "chat", "Chat page (WebSocket)"
    SSE = "sse", "SSE (POST /api/turns/)"
    API = "api", "REST API (POST /api/answers/)"
    COMMAND = "command", "manage.py ask"
    OPENAI = "openai", "OpenAI-compatible (/v1)"
    MCP_HTTP = "mcp_http", "MCP over streamable HTTP"
    MCP_STDIO = "mcp_stdio", "MCP over stdio"
    WIDGET = "widget", "Embeddable widget"
    EVALUATION = "evaluation", "Evaluation run"
    # Turns asked before the client was recorded: any door could have asked them, so
    # claiming one would put a guess in the audit.
    UNKNOWN = "unknown", "Unknown (before clients were recorded)"


class Turn(models.Model):
    """One question and everything that happened answering it; written before any work starts."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField()
    question = models.TextField()
    answer = models.TextField(blank=True)  # markers stripped; what the user saw
    client = models.CharField(max_length=12, choices=TurnClient.choices, default=TurnClient.UNKNOWN)
    # What the client said it is, cut to fit: the MCP initialize's name/version when the
    # session holds it (stdio), else the request's User-Agent (OpenAI, MCP over HTTP).
    client_agent = models.CharField(max_length=200, blank=True)
    status = models.CharField(
        max_length=12, choices=TurnStatus.choices, default=TurnStatus.STREAMING
    )
    partial = models.BooleanField(default=False)  # the answer stopped early (see error_code)
    language = models.CharField(max_length=8, blank=True)
    # Router
    intent = models.CharField(max_length=32, blank=True, choices=value_choices(Intent))
    router_confidence = models.FloatField(null=True, blank=True)
    tier = models.CharField(max_length=2, blank=True)
    strategy = models.CharField(max_length=10, blank=True)
    action = models.CharField(max_length=16, blank=True, choices=value_choices(TurnAction))
    classification = models.JSONField(default=dict, blank=True)
    # The collection ids the turn could retrieve from, as decided when it opened; null means
    # every collection (a superuser, or the operator at the command line). Ids, not a relation:
    # the record must survive a collection being deleted.
    readable_collections = models.JSONField(null=True, blank=True)
    # Answer quality
    confidence = models.FloatField(null=True, blank=True)
    confidence_band = models.CharField(max_length=6, blank=True)
    refused = models.BooleanField(default=False)
    refusal_reason = models.CharField(max_length=300, blank=True)  # the composer's own words
    unsupported_sentences = models.PositiveIntegerField(default=0)
    # What the badge was computed from: the composer's support and its signals, the retrieval's
    # features. The audit shows them; evaluations refit the blend from them.
    confidence_inputs = models.JSONField(default=dict, blank=True)
    dropped_citations = models.JSONField(default=list, blank=True)
    followups = models.JSONField(default=list, blank=True)
    # Provenance
    composer = models.CharField(max_length=120, blank=True)
    fallback_reason = models.CharField(max_length=300, blank=True)
    models_used = models.JSONField(default=dict, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    retrieval_trace = models.JSONField(default=dict, blank=True)
    context = models.JSONField(default=dict, blank=True)  # aliases, budget, utilisation
    timings_ms = models.JSONField(default=dict, blank=True)
    error_code = models.CharField(max_length=40, blank=True)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Durability (database clock): while streaming, the answering process renews the lease; a
    # lapsed lease means that process is gone and the turn is failed as interrupted. A cancel
    # request and the last time a client followed the turn are how every process learns
    # whether the answer is still wanted.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    followed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["conversation_id", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "index"], name="answers_turn_unique_index"
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__gte=0, confidence__lte=1),
                name="answers_turn_confidence_unit",
            ),
            models.CheckConstraint(
                condition=~Q(status=TurnStatus.FAILED) | ~Q(error_code=""),
                name="answers_turn_failed_has_code",
            ),
            models.CheckConstraint(
                condition=value_known("intent", Intent), name="answers_turn_intent_known"
            ),
            models.CheckConstraint(
                condition=value_known("action", TurnAction), name="answers_turn_action_known"
            ),
            models.CheckConstraint(
                condition=value_known("tier", Tier), name="answers_turn_tier_known"
            ),
            models.CheckConstraint(
                condition=value_known("strategy", Strategy), name="answers_turn_strategy_known"
            ),
            models.CheckConstraint(
                condition=value_known("confidence_band", ConfidenceBand),
                name="answers_turn_confidence_band_known",
            ),
            models.CheckConstraint(
                condition=value_known("language", Language), name="answers_turn_language_known"
            ),
            models.CheckConstraint(
                condition=Q(client__in=[client.value for client in TurnClient]),
                name="answers_turn_client_known",
            ),
        ]
        indexes = [
            models.Index(fields=["-created_at"], name="answers_turn_created_idx"),
            # The analytics dashboard's question lists: least confident answers of a period,
            # and the refused turns of a period (a seventh of the log, or less).
            models.Index(
                fields=["confidence", "created_at"],
                condition=Q(confidence__isnull=False),
                name="answers_turn_confidence_idx",
            ),
            models.Index(
                fields=["created_at"], condition=Q(refused=True), name="answers_turn_refused_idx"
            ),
            # The sweeper's scan: only streaming turns, by when their lease lapses.
            models.Index(
                fields=["lease_expires_at"],
                condition=Q(status=TurnStatus.STREAMING),
                name="answers_turn_lease_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"Turn {self.index} of {self.conversation_id}"


class TurnEvent(models.Model):
    """Every event sent for a turn, in order, so a reconnecting client can replay from last_seq."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=20)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["turn_id", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "seq"], name="answers_event_unique_seq"),
            # A turn ends once: a second `finished` or `failed` cannot be stored.
            models.UniqueConstraint(
                fields=["turn"],
                condition=Q(type__in=sorted(str(t) for t in TERMINAL_EVENTS)),
                name="answers_event_one_terminal",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.type}"


class CitationKind(models.TextChoices):
    CITED = "cited", "Cited in the answer"
    ATTRIBUTED = "attributed", "Attributed after the answer"


class Citation(models.Model):
    """A source of a turn's answer. Text and source are copied so the audit survives re-ingestion."""

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="citations")
    alias = models.CharField(max_length=8)
    kind = models.CharField(max_length=12, choices=CitationKind.choices, default=CitationKind.CITED)
    chunk = models.ForeignKey(Chunk, null=True, blank=True, on_delete=models.SET_NULL)
    document = models.ForeignKey(Document, null=True, blank=True, on_delete=models.SET_NULL)
    title = models.CharField(max_length=500, blank=True)
    source_file = models.CharField(max_length=700, blank=True)
    page = models.PositiveIntegerField(null=True, blank=True)
    snippet = models.TextField(blank=True)
    position = models.PositiveIntegerField(null=True, blank=True)  # offset in the answer text

    class Meta:
        ordering = ["turn_id", "alias"]
        constraints = [
            models.UniqueConstraint(
                fields=["turn", "alias", "kind"], name="answers_citation_unique_alias"
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.alias}] {self.title}"


class FeedbackRating(models.TextChoices):
    UP = "up", "Helpful"
    DOWN = "down", "Not helpful"


class FeedbackReason(models.TextChoices):
    WRONG_SOURCE = "wrong_source", "Wrong source"
    NOT_IN_DOCUMENTS = "not_in_documents", "Not in the documents"
    INCOMPLETE = "incomplete", "Incomplete"
    OTHER = "other", "Other"


class TurnFeedback(models.Model):
    """The asker's thumbs up or down on one answer, with an optional reason and comment.

    One row per turn: asking again replaces the rating (the latest opinion is the one counted).
    """

    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="feedback")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    rating = models.CharField(max_length=4, choices=FeedbackRating.choices)
    reason = models.CharField(max_length=20, blank=True, choices=FeedbackReason.choices)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(rating__in=[choice.value for choice in FeedbackRating]),
                name="answers_feedback_rating_known",
            ),
            models.CheckConstraint(
                condition=Q(reason__in=["", *(choice.value for choice in FeedbackReason)]),
                name="answers_feedback_reason_known",
            ),
        ]
        indexes = [
            models.Index(fields=["rating", "-updated_at"], name="answers_feedback_rating_idx")
        ]

    def __str__(self) -> str:
        return f"{self.rating} on {self.turn}"


class LabelledQuery(models.Model):
    """The router's labelled set; analysts can add rows in the admin."""

    class Split(models.TextChoices):
        TRAIN = "train", "Train"
        TEST = "test", "Test"
        UNSEEN = "unseen", "Unseen (generalisation)"

    text = models.TextField()
    intent = models.CharField(max_length=32)
    tier = models.CharField(max_length=2)
    language = models.CharField(max_length=8)
    split = models.CharField(max_length=8, choices=Split.choices)
    # For a follow-up fragment: the earlier question it continues ("" when standalone).
    context = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "analytics_labelledquery"  # created before the router's rows moved here
        verbose_name_plural = "labelled queries"
        constraints = [
            models.UniqueConstraint(fields=["text", "split"], name="analytics_labelled_query_once"),
            models.CheckConstraint(
                condition=Q(intent__in=[intent.value for intent in Intent]),
                name="analytics_labelled_query_intent_known",
            ),
            models.CheckConstraint(
                condition=Q(tier__in=[tier.value for tier in Tier]),
                name="analytics_labelled_query_tier_known",
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class RouterEvaluation(models.Model):
    """One run of `manage.py evaluate_router`, kept for the dashboard."""

    classifier = models.CharField(max_length=40)
    dataset = models.CharField(max_length=300)
    split = models.CharField(max_length=20, blank=True)
    examples = models.PositiveIntegerField()
    accuracy = models.FloatField()
    macro_f1 = models.FloatField()
    latency_ms_p50 = models.FloatField()
    latency_ms_p95 = models.FloatField()
    report = models.JSONField()  # labels, confusion matrix, per-class figures
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "analytics_routerevaluation"  # created before the router's rows moved here
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.classifier} on {self.split or 'all'}: accuracy {self.accuracy:.3f}"


# The composer's stored sentence vectors live in their room (import them from there); imported
# here so that Django registers them with this app.
from apps.answers.sentence_vectors.models import ChunkSentences, SentenceVector  # noqa: E402, F401
