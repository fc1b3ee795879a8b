"""Analytics: the closed category list, conversation categories and daily turn counts."""

from __future__ import annotations

import operator
from functools import reduce

from django.db import models
from django.db.models import F, Q

from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import Conversation


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


class DailyTurnCount(models.Model):
    """Turn counts for one local day and one composer, kept by `daily_counts_refresh`.

    The dashboard reads these instead of scanning the turn log. A day's figures are the sum of
    its rows; a day and composer without turns has no row at all, so a refresh that finds
    nothing deletes instead of writing zeros.
    """

    day = models.DateField()  # in settings.TIME_ZONE: days must not move with a request's zone
    composer = models.CharField(max_length=120, blank=True)  # as on Turn; "" composed nothing
    turns = models.PositiveIntegerField()
    refused = models.PositiveIntegerField()
    rated = models.PositiveIntegerField()  # turns with a confidence value
    confidence_sum = models.FloatField()  # a sum, not a mean, so days and composers add up
    # One count per ConfidenceBand, named as the band.
    green = models.PositiveIntegerField()
    yellow = models.PositiveIntegerField()
    red = models.PositiveIntegerField()
    fallbacks = models.PositiveIntegerField()

    class Meta:
        ordering = ["day", "composer"]
        constraints = [
            models.UniqueConstraint(fields=["day", "composer"], name="analytics_daily_count_once"),
            models.CheckConstraint(
                condition=Q(turns__gte=1), name="analytics_daily_count_has_turns"
            ),
            models.CheckConstraint(
                condition=Q(
                    refused__lte=F("turns"), rated__lte=F("turns"), fallbacks__lte=F("turns")
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
        return f"{self.day} {self.composer or '(none)'}: {self.turns} turns"
