"""`POST /widget/ask`, the embeddable widget's one request, and its CORS preflight.

Only pages from RAG_WIDGET_ALLOWED_ORIGINS get CORS headers (their own origin echoed, never
`*`, never credentials): a page from any other origin is refused at the preflight and again
at the request. No cookie is read, so there is no ambient authority for CSRF to guard
(hence csrf_exempt); the widget's key and account are checked in access.py.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from apps.answers.models import TurnClient
from apps.answers.turn.rejections import REJECTIONS, rejection_code
from apps.answers.turn.services import InvalidQuestion
from apps.answers.web.views import SSE
from apps.reach.asking.services import Question, question_open, question_stream
from apps.reach.widget.access import (
    CollectionNotOffered,
    WidgetConfig,
    WidgetOff,
    WidgetRefused,
    WrongKey,
    collections_chosen,
    key_check,
    widget_config,
    widget_user_id,
)
from apps.reach.widget.origins import origin_allowed
from apps.reach.widget.stream import widget_sse
from ragplatform.db_threads import db_call
from ragplatform.errors import FailureCode, json_error

KEY_HEADER = "X-Widget-Key"
_PREFLIGHT_MAX_AGE_S = "600"
_REFUSALS: dict[type[WidgetRefused], FailureCode] = {
    WidgetOff: FailureCode.NOT_FOUND,
    WrongKey: FailureCode.UNAUTHENTICATED,
    CollectionNotOffered: FailureCode.FORBIDDEN,
}


@require_GET
def widget_script(request: HttpRequest) -> HttpResponse:
    """The widget's script with its words in the asker's language and the address it asks.

    A script tag needs no CORS, and nothing in it is private: any page may load it; only the
    listed origins may then ask (widget_ask)."""
    config = {"words": _words(), "ask_path": reverse("reach-widget-ask")}
    script = render_to_string("reach/widget.js", {"config": json.dumps(config)})
    response = HttpResponse(script, content_type="text/javascript; charset=utf-8")
    patch_vary_headers(response, ["Accept-Language"])
    return response


def _words() -> dict[str, object]:
    return {
        "title": gettext("Ask the documents"),
        "question": gettext("Question"),
        "ask": gettext("Ask"),
        "sources": gettext("Sources"),
        "bands": {
            "green": gettext("High confidence"),
            "yellow": gettext("Some confidence"),
            "red": gettext("Low confidence"),
        },
        "failed": gettext("The answer failed"),
        # %(status)s: the HTTP status the platform answered with.
        "refused": gettext("The platform refused the question (%(status)s)"),
        "unreachable": gettext("The answer service could not be reached from this page"),
    }


@csrf_exempt
async def widget_ask(request: HttpRequest) -> HttpResponseBase:
    config = widget_config()
    origin = request.headers.get("Origin")
    if not origin_allowed(origin=origin, allowed=config.origins):
        # No CORS headers: the browser keeps the refusal from the page that asked.
        return json_error(FailureCode.FORBIDDEN, "This page's origin may not use the widget")
    if request.method == "OPTIONS":
        response: HttpResponseBase = _preflight()
    elif request.method == "POST":
        response = await _ask(request, config)
    else:
        response = json_error(FailureCode.METHOD_NOT_ALLOWED, "Use POST")
    response["Access-Control-Allow-Origin"] = str(origin)
    patch_vary_headers(response, ["Origin"])  # a cache must not hand one origin's to another
    return response


def _preflight() -> HttpResponse:
    response = HttpResponse(status=204)
    response["Access-Control-Allow-Methods"] = "POST"
    response["Access-Control-Allow-Headers"] = f"Content-Type, {KEY_HEADER}"
    response["Access-Control-Max-Age"] = _PREFLIGHT_MAX_AGE_S
    return response


async def _ask(request: HttpRequest, config: WidgetConfig) -> HttpResponseBase:
    try:
        key_check(config=config, sent=request.headers.get(KEY_HEADER, ""))
        body = json.loads(request.body or b"{}")
        if not isinstance(body, dict):
            raise InvalidQuestion("The body must be a JSON object")
        collections = collections_chosen(config=config, asked=body.get("collections"))
        user_id = await db_call(widget_user_id)(config=config)
        question = Question(
            user_id=user_id,
            text=body.get("question"),
            client=TurnClient.WIDGET,
            collection_names=collections,
        )
        opened = await question_open(question=question)
    except WidgetRefused as exc:
        return json_error(_REFUSALS[type(exc)], str(exc))
    except REJECTIONS as exc:
        return json_error(rejection_code(exc), str(exc))
    except ValueError:  # malformed JSON
        return json_error(FailureCode.INVALID_REQUEST, "The body is not valid JSON")
    events = question_stream(opened=opened, user_id=user_id)
    base_url = request.build_absolute_uri("/").rstrip("/")
    sse = widget_sse(turn_id=opened.turn.pk, events=events, base_url=base_url)
    response = StreamingHttpResponse(sse, content_type=SSE)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the stream back
    return response
