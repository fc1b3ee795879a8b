"""The chat page's conversation list: rename, delete and search, and what the sidebar, the
collection picker and the empty state show.

The endpoints answer the page's small script with JSON (`Accept: application/json`) and a plain
form post with a redirect, so the list still works without JavaScript. Bad input is a 4xx
with a message; someone else's or a deleted conversation is a 404, as everywhere else.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from apps.answers.conversations.selectors import (
    NotFound,
    collections_pickable,
    conversation_collections_chosen,
    conversation_get,
    conversations_grouped,
    conversations_sidebar,
    example_topics,
)
from apps.answers.conversations.services import (
    ConversationBusy,
    InvalidTitle,
    conversation_deleted_mark,
    conversation_title_clean,
    conversation_title_set,
)
from apps.answers.models import Conversation
from ragplatform.errors import FailureCode, json_error
from ragplatform.gates import (
    methods_allowed,
    signed_in_required_or_login,
    signed_in_user_id,
    wants_json,
)


def chat_sidebar_context(
    request: HttpRequest, *, user_id: int, conversation: Conversation | None
) -> dict[str, Any]:
    """The sidebar (grouped, filtered by `?q=`), the collection picker and the empty state's
    examples, for the chat page."""
    # The search box caps its length; a longer hand-typed address is cut, not refused.
    query = _query(request)[: settings.RAG_CONVERSATION_SEARCH_MAX_CHARS]
    pickable = collections_pickable(user_id=user_id)
    chosen = (
        conversation_collections_chosen(conversation_id=conversation.pk, pickable=pickable)
        if conversation
        else []
    )
    return {
        "groups": _groups(user_id, query),
        "search_query": query,
        "search_max_chars": settings.RAG_CONVERSATION_SEARCH_MAX_CHARS,
        "collections": [{"name": c.name, "chosen": c.name in chosen} for c in pickable],
        "collections_chosen": len(chosen),
        "examples": [] if conversation else example_topics(user_id=user_id, language=_language()),
        "chat_strings": chat_strings(),
    }


def chat_strings() -> dict[str, str]:
    """What the page's scripts show, in the interface language (the scripts hold no text)."""
    return {
        "reconnecting": _("Reconnecting…"),
        "still_sending": _("Still sending the last question…"),
        "not_connected": _("Not connected yet; please try again in a moment."),
        "dropped": _("The connection dropped before the question arrived; please ask again."),
        "unreachable": _("The server could not be reached; please try again."),
        "collections_all": _("All collections"),
        # %(chosen)s and %(total)s are filled in by the script.
        "collections_some": _("Collections: %(chosen)s of %(total)s"),
        # The answer area: actions, feedback, the source preview and the support badge.
        "copied": _("Copied."),
        "copy_failed": _("Could not copy; select the text instead."),
        # A code block's copy button, and what it says once the code is copied.
        "copy_code": _("Copy code"),
        "code_copied": _("Code copied."),
        "sources": _("Sources"),
        "page": _("p."),
        "thanks": _("Thanks for your feedback."),
        "feedback_failed": _("Your feedback was not saved; please try again."),
        "preview_failed": _("This source cannot be shown."),
        "chunk_gone": _("The document has changed since; this is the text the answer cited."),
        # %(score)s is the page's OCR confidence (0 to 100), filled in by the script.
        "ocr_read": _("read by OCR, confidence %(score)s of 100"),
        "well_supported": _("Well supported"),
        "partly_supported": _("Partly supported"),
        "not_supported": _("Not supported"),
        # %(score)s and %(message)s are filled in by the script.
        "support_score": _("Support score %(score)s of 1"),
        # The answer as it streams: its sources and results, and its end, said once.
        "source": _("Source"),
        "relevance": _("Relevance: how likely the document matches, from 0 to 1"),
        "no_results": _("No matching documents."),
        # %(query)s is filled in by the script.
        "nothing_matches": _("Nothing in the documents matches “%(query)s”."),
        "weak_matches": _("Weak matches:"),
        # Shown in the answer before its first words: what the platform is doing.
        "searching": _("Searching…"),
        "writing": _("Writing…"),
        "stopped": _("Stopped."),
        "answer_done": _("The answer is complete."),
        "answer_failed": _("The answer could not be completed. %(message)s"),
    }


def _groups(user_id: int, query: str) -> list[Any]:
    conversations = conversations_sidebar(user_id=user_id, query=query)
    return conversations_grouped(conversations=conversations)


def _query(request: HttpRequest) -> str:
    # PostgreSQL text cannot hold NUL, and no title or answer contains one.
    return request.GET.get("q", "").replace("\x00", "").strip()


def _language() -> str:
    return get_language() or "en"


def _owned(request: HttpRequest, conversation_id: UUID) -> Conversation:
    return conversation_get(conversation_id=conversation_id, user_id=signed_in_user_id(request))


@methods_allowed("POST")
@signed_in_required_or_login
def conversation_rename(request: HttpRequest, conversation_id: UUID) -> HttpResponse:
    try:
        conversation = _owned(request, conversation_id)
        title = conversation_title_clean(request.POST.get("title"))
    except NotFound:
        return json_error(FailureCode.NOT_FOUND, _("No such conversation"))
    except InvalidTitle as exc:
        return json_error(FailureCode.INVALID_REQUEST, str(exc))
    conversation_title_set(conversation_id=conversation.pk, title=title)
    if wants_json(request):
        return JsonResponse({"id": str(conversation.pk), "title": title})
    return HttpResponseRedirect(reverse("chat-conversation", args=[conversation.pk]))


@methods_allowed("POST")
@signed_in_required_or_login
def conversation_delete(request: HttpRequest, conversation_id: UUID) -> HttpResponse:
    try:
        conversation_deleted_mark(conversation_id=_owned(request, conversation_id).pk)
    except NotFound:
        return json_error(FailureCode.NOT_FOUND, _("No such conversation"))
    except ConversationBusy:
        message = _("A question in this conversation is still being answered; stop it first.")
        return json_error(FailureCode.CONFLICT, message)
    if wants_json(request):
        return JsonResponse({"id": str(conversation_id), "deleted": True})
    return HttpResponseRedirect(reverse("chat"))


@methods_allowed("GET")
@signed_in_required_or_login
def conversation_search(request: HttpRequest) -> HttpResponse:
    """The conversation list alone, filtered by `?q=`, for the sidebar's search box."""
    query = _query(request)
    if len(query) > settings.RAG_CONVERSATION_SEARCH_MAX_CHARS:
        message = _("Search for at most %(limit)d characters") % {
            "limit": settings.RAG_CONVERSATION_SEARCH_MAX_CHARS
        }
        return json_error(FailureCode.INVALID_REQUEST, message)
    context = {
        "groups": _groups(signed_in_user_id(request), query),
        "search_query": query,
        "conversation": None,
        "current_id": request.GET.get("current", ""),
    }
    return render(request, "answers/_conversation_list.html", context)
