"""The chat's answer actions over HTTP: a cited source's preview and the asker's feedback.

Views gate (signed in, well-formed) and forward; the work is in `source_preview.py` and
`feedback.py`. Someone else's turn, or a source the reader may not read, is a 404 exactly
like one that does not exist.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from apps.answers.conversations.selectors import NotFound
from apps.answers.turn.feedback import InvalidFeedback, feedback_parse, turn_feedback_set
from apps.answers.web.source_preview import citation_preview_get

MAX_ALIAS_CHARS = 8  # Citation.alias


def _error(status: int, message: str) -> JsonResponse:
    return JsonResponse({"error": {"message": message}}, status=status)


def _user_id(request: HttpRequest) -> int | None:
    """The signed-in user's id, None for an anonymous request."""
    user = request.user
    return int(user.pk) if user.is_authenticated and user.pk is not None else None


@require_GET
def source_preview(request: HttpRequest, turn_id: int, alias: str) -> JsonResponse:
    user_id = _user_id(request)
    if user_id is None:
        return _error(401, "Log in first")
    if len(alias) > MAX_ALIAS_CHARS:
        return _error(404, "No such source")
    try:
        preview = citation_preview_get(turn_id=turn_id, user_id=user_id, alias=alias)
    except NotFound as exc:
        return _error(404, str(exc))
    return JsonResponse(preview)


@require_POST
def turn_feedback(request: HttpRequest, turn_id: int) -> JsonResponse:
    user_id = _user_id(request)
    if user_id is None:
        return _error(401, "Log in first")
    try:
        rating, reason, comment = feedback_parse(json.loads(request.body or b"null"))
        feedback = turn_feedback_set(
            turn_id=turn_id, user_id=user_id, rating=rating, reason=reason, comment=comment
        )
    except NotFound as exc:
        return _error(404, str(exc))
    except InvalidFeedback as exc:
        return _error(400, str(exc))
    except ValueError:  # malformed JSON (or not UTF-8)
        return _error(400, "The body is not valid JSON")
    return JsonResponse(
        {"rating": feedback.rating, "reason": feedback.reason, "comment": feedback.comment}
    )
