"""The asker's rating of an answer: validated here, stored one row per turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from apps.answers.models import FeedbackRating, FeedbackReason, TurnFeedback, TurnStatus
from apps.answers.turn.selectors import turn_get


class InvalidFeedback(ValueError):
    """The rating, reason or comment is not acceptable (answered 400 with this message)."""


def _text(body: Mapping[str, Any], key: str) -> str:
    value = body.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidFeedback(f'"{key}" must be a string')
    return value.strip()


def feedback_parse(body: object) -> tuple[str, str, str]:
    """(rating, reason, comment) from a request body, or InvalidFeedback saying what is wrong."""
    if not isinstance(body, Mapping):
        raise InvalidFeedback("The body must be a JSON object")
    rating, reason, comment = (_text(body, key) for key in ("rating", "reason", "comment"))
    if rating not in FeedbackRating.values:
        raise InvalidFeedback(f'"rating" must be one of {", ".join(FeedbackRating.values)}')
    if reason and reason not in FeedbackReason.values:
        raise InvalidFeedback(
            f'"reason" must be empty or one of {", ".join(FeedbackReason.values)}'
        )
    limit = settings.RAG_FEEDBACK_COMMENT_MAX_CHARS
    if len(comment) > limit:
        raise InvalidFeedback(f"The comment is too long (at most {limit} characters)")
    return rating, reason, comment


def turn_feedback_set(
    *, turn_id: int, user_id: int, rating: str, reason: str = "", comment: str = ""
) -> TurnFeedback:
    """Rate one of the user's own finished answers; a second rating replaces the first.

    Raises NotFound for a turn that is not the user's, InvalidFeedback for one still streaming.
    """
    turn = turn_get(turn_id=turn_id, user_id=user_id)
    if turn.status == TurnStatus.STREAMING:
        raise InvalidFeedback("This answer is still being written; rate it once it has finished")
    feedback, _ = TurnFeedback.objects.update_or_create(
        turn=turn,
        defaults={"user_id": user_id, "rating": rating, "reason": reason, "comment": comment},
    )
    return feedback
