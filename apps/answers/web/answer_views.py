"""The chat's answer actions over HTTP: a cited source's preview and the asker's feedback.

Views gate (signed in, well-formed) and forward; the work is in `source_preview.py` and
`feedback.py`. Someone else's turn, or a source the reader may not read, is a 404 exactly
like one that does not exist.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, JsonResponse

from apps.answers.conversations.selectors import NotFound
from apps.answers.turn.feedback import InvalidFeedback, feedback_parse, turn_feedback_set
from apps.answers.web.source_preview import citation_preview_get
from ragplatform.errors import FailureCode, json_error
from ragplatform.gates import methods_allowed, signed_in_required, signed_in_user_id

MAX_ALIAS_CHARS = 8  # Citation.alias


@methods_allowed("GET")
@signed_in_required
def source_preview(request: HttpRequest, turn_id: int, alias: str) -> JsonResponse:
    user_id = signed_in_user_id(request)
    if len(alias) > MAX_ALIAS_CHARS:
        return json_error(FailureCode.NOT_FOUND, "No such source")
    try:
        preview = citation_preview_get(turn_id=turn_id, user_id=user_id, alias=alias)
    except NotFound as exc:
        return json_error(FailureCode.NOT_FOUND, str(exc))
    return JsonResponse(preview)


@methods_allowed("POST")
@signed_in_required
def turn_feedback(request: HttpRequest, turn_id: int) -> JsonResponse:
    user_id = signed_in_user_id(request)
    try:
        rating, reason, comment = feedback_parse(json.loads(request.body or b"null"))
        feedback = turn_feedback_set(
            turn_id=turn_id, user_id=user_id, rating=rating, reason=reason, comment=comment
        )
    except NotFound as exc:
        return json_error(FailureCode.NOT_FOUND, str(exc))
    except InvalidFeedback as exc:
        return json_error(FailureCode.INVALID_REQUEST, str(exc))
    except ValueError:  # malformed JSON (or not UTF-8)
        return json_error(FailureCode.INVALID_REQUEST, "The body is not valid JSON")
    return JsonResponse(
        {"rating": feedback.rating, "reason": feedback.reason, "comment": feedback.comment}
    )
