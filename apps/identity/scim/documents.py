"""What a SCIM 2.0 client reads first (RFC 7643 sections 5-7, RFC 7644 section 4): the service
provider's configuration, the schemas of the two resources and the resource types."""

from __future__ import annotations

from typing import Any

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
_CONFIG_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
_TYPE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
_SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema"


def service_provider_config(*, base: str, max_results: int) -> dict[str, Any]:
    unsupported = {"supported": False}
    return {
        "schemas": [_CONFIG_SCHEMA],
        "patch": {"supported": True},
        "bulk": {**unsupported, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": True, "maxResults": max_results},
        "changePassword": unsupported,
        "sort": unsupported,
        "etag": unsupported,
        "authenticationSchemes": [
            {
                "type": "oauthbearertoken",
                "name": "Provisioning token",
                "description": "Authorization: Bearer <RAG_SCIM_TOKEN>",
                "primary": True,
            }
        ],
        "meta": {
            "resourceType": "ServiceProviderConfig",
            "location": f"{base}/ServiceProviderConfig",
        },
    }


def _attribute(name: str, kind: str = "string", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "type": kind,
        "multiValued": False,
        "required": False,
        "caseExact": False,
        "mutability": "readWrite",
        "returned": "default",
        "uniqueness": "none",
        **extra,
    }


def _name() -> dict[str, Any]:
    parts = [_attribute("givenName"), _attribute("familyName"), _attribute("formatted")]
    return _attribute("name", "complex", subAttributes=parts)


def _multi(name: str, kind: str = "string", **extra: Any) -> dict[str, Any]:
    parts = [
        _attribute("value", kind, **extra),
        _attribute("display"),
        _attribute("primary", "boolean"),
    ]
    return _attribute(name, "complex", multiValued=True, subAttributes=parts)


def schemas(*, base: str) -> list[dict[str, Any]]:
    user = [
        _attribute("userName", required=True, uniqueness="server"),
        _name(),
        _attribute("displayName"),
        _attribute("externalId"),
        _attribute("active", "boolean"),
        _multi("emails"),
        _multi("groups", mutability="readOnly"),
    ]
    group = [
        _attribute("displayName", required=True, uniqueness="server"),
        _attribute("externalId"),
        _multi("members", "reference", referenceTypes=["User"]),
    ]
    return [
        _schema(USER_SCHEMA, "User", user, base=base),
        _schema(GROUP_SCHEMA, "Group", group, base=base),
    ]


def _schema(uri: str, name: str, attributes: list[dict[str, Any]], *, base: str) -> dict[str, Any]:
    return {
        "schemas": [_SCHEMA_SCHEMA],
        "id": uri,
        "name": name,
        "description": f"{name} account",
        "attributes": attributes,
        "meta": {"resourceType": "Schema", "location": f"{base}/Schemas/{uri}"},
    }


def resource_types(*, base: str) -> list[dict[str, Any]]:
    return [
        {
            "schemas": [_TYPE_SCHEMA],
            "id": name,
            "name": name,
            "endpoint": f"/{name}s",
            "schema": uri,
            "meta": {"resourceType": "ResourceType", "location": f"{base}/ResourceTypes/{name}"},
        }
        for name, uri in (("User", USER_SCHEMA), ("Group", GROUP_SCHEMA))
    ]


def list_response(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schemas": [LIST_SCHEMA],
        "totalResults": len(resources),
        "startIndex": 1,
        "itemsPerPage": len(resources),
        "Resources": resources,
    }
