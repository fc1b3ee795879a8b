"""The one sign-in gate and the JSON method gate, on `def` and `async def` views alike, and the
error vocabulary they answer with."""

from __future__ import annotations

import json
from inspect import iscoroutinefunction
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

from ragplatform.errors import HTTP_STATUS, FailureCode, code_for_status, json_error
from ragplatform.gates import (
    methods_allowed,
    signed_in_required,
    signed_in_required_or_login,
    user_signed_in,
)
from ragplatform.login_throttle import lockout_response

# The codes clients see today; a change here changes the protocol.
PUBLISHED = {
    "invalid_request", "unauthenticated", "forbidden", "not_found", "method_not_allowed",
    "not_acceptable", "conflict", "request_too_large", "file_too_large",
    "unsupported_media_type", "unsupported_file_type", "rate_limited", "login_locked",
    "unavailable",
    "cancelled", "model_unavailable", "model_timeout", "model_interrupted", "answer_truncated",
    "empty_answer", "interrupted", "internal_error",
}  # fmt: skip


def sync_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok")


async def async_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok")


def _request(user: Any, method: str = "get", **headers: str) -> HttpRequest:
    request = getattr(RequestFactory(), method)("/x/", headers=headers)
    request.user = user

    async def auser() -> Any:
        return user

    request.auser = auser  # what AuthenticationMiddleware sets
    return request


def _call(view: Any, request: HttpRequest) -> HttpResponse:
    if iscoroutinefunction(view):
        response: HttpResponse = async_to_sync(view)(request)
        return response
    response = view(request)
    return response


def _error(response: HttpResponse) -> dict[str, str]:
    body = json.loads(response.content)
    assert set(body) == {"error"}
    error: dict[str, str] = body["error"]
    return error


def test_the_codes_clients_see_are_unchanged() -> None:
    assert {code.value for code in FailureCode} == PUBLISHED


def test_a_refusal_by_status_gets_the_general_code() -> None:
    assert code_for_status(413) is FailureCode.REQUEST_TOO_LARGE
    assert code_for_status(415) is FailureCode.UNSUPPORTED_MEDIA_TYPE
    assert code_for_status(429) is FailureCode.RATE_LIMITED
    assert code_for_status(418) is FailureCode.INVALID_REQUEST
    assert code_for_status(503) is FailureCode.INTERNAL
    assert all(code_for_status(status) in HTTP_STATUS for status in HTTP_STATUS.values())


def test_json_error_takes_its_status_from_the_code() -> None:
    response = json_error(FailureCode.CONFLICT, "Busy", headers={"Retry-After": "5"})
    assert response.status_code == 409 and response["Retry-After"] == "5"
    assert _error(response) == {"code": "conflict", "message": "Busy"}


@pytest.mark.parametrize("view", [sync_view, async_view], ids=["def", "async def"])
def test_the_sign_in_gate_keeps_the_kind_of_view(view: Any) -> None:
    assert iscoroutinefunction(signed_in_required(view)) == iscoroutinefunction(view)
    assert iscoroutinefunction(methods_allowed("GET")(view)) == iscoroutinefunction(view)


@pytest.mark.parametrize("view", [sync_view, async_view], ids=["def", "async def"])
def test_a_signed_out_caller_gets_401_in_the_one_body(view: Any) -> None:
    response = _call(signed_in_required(view), _request(AnonymousUser()))
    assert response.status_code == 401
    assert _error(response)["code"] == FailureCode.UNAUTHENTICATED


@pytest.mark.django_db
@pytest.mark.parametrize("view", [sync_view, async_view], ids=["def", "async def"])
def test_a_signed_in_caller_reaches_the_view(view: Any) -> None:
    user = User.objects.create_user("ada")
    response = _call(signed_in_required(view), _request(user))
    assert response.status_code == 200 and response.content == b"ok"


@pytest.mark.django_db
@pytest.mark.parametrize("view", [sync_view, async_view], ids=["def", "async def"])
def test_a_deactivated_account_is_signed_out(view: Any) -> None:
    user = User.objects.create_user("ada", is_active=False)
    assert not user_signed_in(user) and not user_signed_in(None)
    assert _call(signed_in_required(view), _request(user)).status_code == 401


def test_a_plain_form_post_goes_to_the_login_page_a_script_gets_401() -> None:
    gated = signed_in_required_or_login(sync_view)
    browser = gated(_request(AnonymousUser(), "post", Accept="text/html"))
    script = gated(_request(AnonymousUser(), "post", Accept="application/json"))
    assert browser.status_code == 302 and "/accounts/login/" in browser["Location"]
    assert script.status_code == 401


@pytest.mark.parametrize("view", [sync_view, async_view], ids=["def", "async def"])
def test_a_wrong_method_is_a_json_405(view: Any) -> None:
    gated = methods_allowed("get", "head")(view)
    refused = _call(gated, _request(AnonymousUser(), "post"))
    assert refused.status_code == 405 and refused["Allow"] == "GET, HEAD"
    assert _error(refused)["code"] == FailureCode.METHOD_NOT_ALLOWED
    assert _call(gated, _request(AnonymousUser())).status_code == 200


def test_a_locked_out_script_gets_login_locked() -> None:
    response = lockout_response(RequestFactory().post("/api/answers/"))
    assert response.status_code == 429 and response["Retry-After"]
    assert _error(response)["code"] == FailureCode.LOGIN_LOCKED
