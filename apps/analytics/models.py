"""Analytics: the closed category list, the categories of conversations and turns, and the
pre-aggregated daily counts the dashboard reads."""

from __future__ import annotations

import hashlib
import operator
from functools import reduce

from django.db import models
from django.db.models import CharField, F, Func, Q, Value

from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import Conversation, Turn
from apps.corpus.models import Document


class Category(models.Model):
    """Managed by admins; the post-turn step may only choose from the active ones."""

    name = models.CharField(max_length=80, unique=True)
    description = models.TextField(help_text="What belongs here; the classifier reads this.")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.name


class ConversationCategory(models.Model):
    """The categories that apply to a whole conversation (at most 5, replaced every turn)."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="category_links"
    )
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="conversations")
    score = models.FloatField()
    assigned_by = models.CharField(max_length=120)  # classifier that chose it
    assigned_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "category"], name="analytics_conversation_category_once"
            ),
            models.CheckConstraint(
                condition=Q(score__gte=0, score__lte=1), name="analytics_category_score_unit"
            ),
        ]
        verbose_name_plural = "conversation categories"

    def __str__(self) -> str:
        return f"{self.category_id} for {self.conversation_id}"


# The dimension value a count row carries when it is not cut by that dimension: rows with
# collection 0 count every turn once, whatever it could read (so they add up without double
# counting); rows with collection N count the turns that could read collection N.
ANY = 0


class DailyTurnCount(models.Model):
    """Turn counts for one local day, cut by composer, intent, collection, user group and category.

    Kept by `daily_counts_refresh`; the dashboard reads these instead of scanning the turn log.
    A turn is counted in the `collection=ANY` row and in one row per collection it could read
    (every collection when it could read all of them), and likewise in the `group=ANY` row and
    one row per group of its asker, and in the `category=ANY` row and one row per category
    decided at the turn (`TurnCategory`), so a filter picks rows and never adds across a
    dimension.
    A cut without turns has no row at all: a refresh that finds nothing writes nothing.
    """

    day = models.DateField()  # in settings.TIME_ZONE: days must not move with a request's zone
    composer = models.CharField(max_length=120, blank=True)  # as on Turn; "" composed nothing
    intent = models.CharField(max_length=32, blank=True)  # as on Turn; "" not classified
    # Ids, not relations: the counts outlive a deleted collection, group or category (ANY: not
    # cut).
    collection = models.PositiveIntegerField(default=ANY)
    group = models.PositiveIntegerField(default=ANY)
    category = models.PositiveIntegerField(default=ANY)
    turns = models.PositiveIntegerField()
    refused = models.PositiveIntegerField()
    rated = models.PositiveIntegerField()  # turns with a confidence value
    confidence_sum = models.FloatField()  # a sum, not a mean, so days and composers add up
    # One count per ConfidenceBand, named as the band.
    green = models.PositiveIntegerField()
    yellow = models.PositiveIntegerField()
    red = models.PositiveIntegerField()
    fallbacks = models.PositiveIntegerField()
    feedback_up = models.PositiveIntegerField(default=0)
    feedback_down = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["day", "composer", "intent"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "group", "category", "day", "composer", "intent"],
                name="analytics_daily_count_once",
            ),
            models.CheckConstraint(
                condition=Q(turns__gte=1), name="analytics_daily_count_has_turns"
            ),
            models.CheckConstraint(
                condition=Q(
                    refused__lte=F("turns"),
                    rated__lte=F("turns"),
                    fallbacks__lte=F("turns"),
                    feedback_up__lte=F("turns"),
                    feedback_down__lte=F("turns"),
                ),
                name="analytics_daily_count_parts_within_turns",
            ),
            models.CheckConstraint(
                condition=Q(turns__gte=reduce(operator.add, (F(b.value) for b in ConfidenceBand))),
                name="analytics_daily_count_bands_within_turns",
            ),
            models.CheckConstraint(
                condition=Q(confidence_sum__gte=0),
                name="analytics_daily_count_confidence_sum_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.composer or '(none)'} {self.intent or '-'}: {self.turns} turns"


class DailyLatencyCount(models.Model):
    """How many of a day's turns took up to each latency bucket's bound (see `latency.py`).

    A histogram, so percentiles of any range are read from summed buckets instead of from
    every turn; cut by collection, group and category as `DailyTurnCount` is.
    """

    day = models.DateField()
    collection = models.PositiveIntegerField(default=ANY)
    group = models.PositiveIntegerField(default=ANY)
    category = models.PositiveIntegerField(default=ANY)
    bucket = models.PositiveSmallIntegerField()  # index into latency.BUCKET_BOUNDS_MS
    turns = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "group", "category", "day", "bucket"],
                name="analytics_daily_latency_once",
            ),
            models.CheckConstraint(
                condition=Q(turns__gte=1), name="analytics_daily_latency_has_turns"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} bucket {self.bucket}: {self.turns} turns"


class DailyCategoryCount(models.Model):
    """Turns per category a day, from the categories decided at each turn (`TurnCategory`).

    Its `category` is the cut itself: the dashboard filtered to a category reads that
    category's rows, so this table needs no second category column."""

    day = models.DateField()
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="+")
    collection = models.PositiveIntegerField(default=ANY)
    group = models.PositiveIntegerField(default=ANY)
    turns = models.PositiveIntegerField()
    refused = models.PositiveIntegerField()
    feedback_up = models.PositiveIntegerField()
    feedback_down = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "group", "day", "category"],
                name="analytics_daily_category_once",
            ),
            models.CheckConstraint(
                condition=Q(
                    turns__gte=1,
                    refused__lte=F("turns"),
                    feedback_up__lte=F("turns"),
                    feedback_down__lte=F("turns"),
                ),
                name="analytics_daily_category_parts_within_turns",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.category_id}: {self.turns} turns"


class DailyDocumentCount(models.Model):
    """Turns a day whose answer cited a document (each turn once per document it cited), cut
    by the collections the turn could read, its asker's groups and the categories decided at
    it as `DailyTurnCount` is."""

    day = models.DateField()
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    collection = models.PositiveIntegerField(default=ANY)
    group = models.PositiveIntegerField(default=ANY)
    category = models.PositiveIntegerField(default=ANY)
    turns = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "group", "category", "day", "document"],
                name="analytics_daily_document_once",
            ),
            models.CheckConstraint(
                condition=Q(turns__gte=1), name="analytics_daily_document_has_turns"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} document {self.document_id}: {self.turns} turns"


def question_digest(text: str) -> str:
    """`QuestionText.digest` of a text, as the database computes it (`text_sha256`)."""
    return hashlib.sha256(text.encode()).hexdigest()


def text_sha256(text: F) -> Func:
    """SHA-256 of a text's UTF-8 bytes, in hex (PostgreSQL's built-in `sha256`, no extension)."""
    utf8 = Func(text, Value("UTF8"), function="convert_to")
    return Func(
        Func(utf8, function="sha256"), Value("hex"), function="encode", output_field=CharField()
    )


class QuestionText(models.Model):
    """A refused question's exact text, stored once, so the refused-question counts group by an
    integer instead of hashing every text of the period on each view.

    `digest` (the text's SHA-256, in hex) is how the refresh finds a text again: a text may be
    longer than a B-tree entry, and the database checks the digest belongs to the text, so one
    digest is one text. The refresh adds the texts it counts and removes those no count row
    refers to any more (a turn purged, a refusal withdrawn), so no text outlives its turns'
    counts.
    """

    digest = models.CharField(max_length=64, unique=True)
    text = models.TextField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(digest=text_sha256(F("text"))),
                name="analytics_question_text_digest_is_sha256",
            )
        ]

    def __str__(self) -> str:
        return self.text[:60]


class DailyRefusedQuestion(models.Model):
    """How many of a day's refused turns asked one question (its exact text), cut by the
    collections the turn could read, its asker's groups and the categories decided at it as
    `DailyTurnCount` is.

    The dashboard's "most often refused" list sums these over a period instead of grouping the
    period's refused turns by their text on every view. The text is kept as asked, not
    normalised, so the list shows the same rows as the turn list it links to.
    """

    day = models.DateField()
    collection = models.PositiveIntegerField(default=ANY)
    group = models.PositiveIntegerField(default=ANY)
    category = models.PositiveIntegerField(default=ANY)
    question = models.ForeignKey(QuestionText, on_delete=models.PROTECT, related_name="+")
    turns = models.PositiveIntegerField()

    class Meta:
        constraints = [
            # The dashboard's read is an index-only scan of this index: a cut's days, in order,
            # with the question's id and its turns, never the table's pages.
            models.UniqueConstraint(
                fields=["collection", "group", "category", "day", "question"],
                include=["turns"],
                name="analytics_daily_refused_question_once",
            ),
            models.CheckConstraint(
                condition=Q(turns__gte=1), name="analytics_daily_refused_question_has_turns"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} question {self.question_id}: {self.turns} refused"


class MonthlyRefusedQuestion(models.Model):
    """`DailyRefusedQuestion` summed over a calendar month (`month` is its first day), so a
    year's "most often refused" list sums twelve months of rows and the days at its two ends,
    not every day. Kept equal to the sum of the month's day rows by the same refresh that
    writes them (it adds what a day's rows changed by)."""

    month = models.DateField()
    collection = models.PositiveIntegerField(default=ANY)
    group = models.PositiveIntegerField(default=ANY)
    category = models.PositiveIntegerField(default=ANY)
    question = models.ForeignKey(QuestionText, on_delete=models.PROTECT, related_name="+")
    turns = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "group", "category", "month", "question"],
                include=["turns"],
                name="analytics_monthly_refused_question_once",
            ),
            models.CheckConstraint(
                condition=Q(turns__gte=1, month__day=1),
                name="analytics_monthly_refused_question_counted_month",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.month:%Y-%m} question {self.question_id}: {self.turns} refused"


class TurnCategory(models.Model):
    """The categories the post-turn step decided at one turn, kept as they were then.

    `ConversationCategory` is the conversation's current set, replaced every turn; these rows
    are its history, so a turn's audit and the dashboard count what applied at that turn.
    """

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="category_decisions")
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="turns")
    score = models.FloatField()
    assigned_by = models.CharField(max_length=120)
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["turn_id", "-score"]
        constraints = [
            models.UniqueConstraint(
                fields=["turn", "category"], name="analytics_turn_category_once"
            ),
            models.CheckConstraint(
                condition=Q(score__gte=0, score__lte=1), name="analytics_turn_category_score_unit"
            ),
        ]
        verbose_name_plural = "turn categories"

    def __str__(self) -> str:
        return f"{self.category_id} at turn {self.turn_id}"
