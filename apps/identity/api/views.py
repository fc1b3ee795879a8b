"""SCIM 2.0 provisioning (RFC 7644) at /scim/v2/: Users, Groups and the discovery documents.

The provisioning client (Entra ID, Okta, Keycloak's SCIM plugin) sends
`Authorization: Bearer <RAG_SCIM_TOKEN>`. Errors use SCIM's own error body (RFC 7644 3.12),
which its clients parse, not the platform's JSON error shape.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from apps.identity.scim import documents
from apps.identity.scim.groups import scim_group_create, scim_group_delete, scim_group_patch
from apps.identity.scim.resources import (
    ScimError,
    group_resource,
    groups_filtered,
    user_resource,
    users_filtered,
)
from apps.identity.scim.services import (
    scim_user_create,
    scim_user_deactivate,
    scim_user_patch,
    scim_user_replace,
)

CONTENT_TYPE = "application/scim+json"


def scim_json(body: Any, *, status: int = 200) -> JsonResponse:
    return JsonResponse(body, status=status, safe=False, content_type=CONTENT_TYPE)


def _error(error: ScimError) -> JsonResponse:
    body = {
        "schemas": [documents.ERROR_SCHEMA],
        "status": str(error.status),
        "detail": error.detail,
    }
    if error.scim_type:
        body["scimType"] = error.scim_type
    return scim_json(body, status=error.status)


def _authorised(request: HttpRequest) -> bool:
    expected = settings.RAG_SCIM_TOKEN
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


def _body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        raise ScimError(400, "the body is not JSON", "invalidSyntax") from None
    if not isinstance(body, dict):
        raise ScimError(400, "the body must be a JSON object", "invalidSyntax")
    return body


def _operations(request: HttpRequest) -> list[dict[str, Any]]:
    operations = _body(request).get("Operations")
    if not isinstance(operations, list):
        raise ScimError(400, "a PatchOp needs an Operations list", "invalidSyntax")
    return operations


class ScimView(View):
    """The token gate and the error body of every SCIM endpoint."""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Callable[..., HttpResponseBase]:
        return csrf_exempt(super().as_view(**initkwargs))

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not _authorised(request):
            return _error(ScimError(401, "a valid provisioning token is required"))
        try:
            return super().dispatch(request, *args, **kwargs)
        except ScimError as error:
            return _error(error)

    @property
    def base(self) -> str:
        return self.request.build_absolute_uri("/scim/v2").rstrip("/")


def _user(pk: str) -> User:
    user = User.objects.filter(pk=pk).first() if pk.isdigit() else None
    if user is None:
        raise ScimError(404, f"no user {pk}")
    return user


def _group(pk: str) -> Group:
    group = Group.objects.filter(pk=pk).first() if pk.isdigit() else None
    if group is None:
        raise ScimError(404, f"no group {pk}")
    return group


class Users(ScimView):
    def get(self, request: HttpRequest) -> HttpResponse:
        users = users_filtered(text=request.GET.get("filter", ""))[: settings.RAG_SCIM_MAX_RESULTS]
        return scim_json(documents.list_response([user_resource(u, base=self.base) for u in users]))

    def post(self, request: HttpRequest) -> HttpResponse:
        user = scim_user_create(data=_body(request))
        return scim_json(user_resource(user, base=self.base), status=201)


class OneUser(ScimView):
    def get(self, request: HttpRequest, pk: str) -> HttpResponse:
        return scim_json(user_resource(_user(pk), base=self.base))

    def put(self, request: HttpRequest, pk: str) -> HttpResponse:
        user = scim_user_replace(user=_user(pk), data=_body(request))
        return scim_json(user_resource(user, base=self.base))

    def patch(self, request: HttpRequest, pk: str) -> HttpResponse:
        user = scim_user_patch(user=_user(pk), operations=_operations(request))
        return scim_json(user_resource(user, base=self.base))

    def delete(self, request: HttpRequest, pk: str) -> HttpResponse:
        scim_user_deactivate(user=_user(pk))  # the account and its audit stay, inactive
        return HttpResponse(status=204)


class Groups(ScimView):
    def get(self, request: HttpRequest) -> HttpResponse:
        groups = groups_filtered(text=request.GET.get("filter", ""))[
            : settings.RAG_SCIM_MAX_RESULTS
        ]
        return scim_json(
            documents.list_response([group_resource(g, base=self.base) for g in groups])
        )

    def post(self, request: HttpRequest) -> HttpResponse:
        group = scim_group_create(data=_body(request))
        return scim_json(group_resource(group, base=self.base), status=201)


class OneGroup(ScimView):
    def get(self, request: HttpRequest, pk: str) -> HttpResponse:
        return scim_json(group_resource(_group(pk), base=self.base))

    def patch(self, request: HttpRequest, pk: str) -> HttpResponse:
        group = scim_group_patch(group=_group(pk), operations=_operations(request))
        return scim_json(group_resource(group, base=self.base))

    def delete(self, request: HttpRequest, pk: str) -> HttpResponse:
        scim_group_delete(group=_group(pk))
        return HttpResponse(status=204)


class ServiceProviderConfig(ScimView):
    def get(self, request: HttpRequest) -> HttpResponse:
        config = documents.service_provider_config(
            base=self.base, max_results=settings.RAG_SCIM_MAX_RESULTS
        )
        return scim_json(config)


class Schemas(ScimView):
    def get(self, request: HttpRequest) -> HttpResponse:
        return scim_json(documents.list_response(documents.schemas(base=self.base)))


class ResourceTypes(ScimView):
    def get(self, request: HttpRequest) -> HttpResponse:
        return scim_json(documents.list_response(documents.resource_types(base=self.base)))
