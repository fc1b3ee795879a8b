"""Questions posted to /api/turns/ and their Server-Sent Events read back, for the SSE and
REST tests."""

from __future__ import annotations

import json
from typing import Any

from django.http import StreamingHttpResponse
from django.test import AsyncClient

SSE = {"Accept": "text/event-stream"}


async def frames(response: Any) -> list[dict[str, Any]]:
    """Parse an SSE body into {"id", "event", "data"} frames, checking the wire format."""
    assert isinstance(response, StreamingHttpResponse)
    body = b"".join([chunk async for chunk in response.streaming_content]).decode()  # type: ignore[union-attr]
    assert body.endswith("\n\n")
    parsed = []
    for block in body.removesuffix("\n\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        assert set(fields) == {"id", "event", "data"}
        parsed.append({**fields, "data": json.loads(fields["data"])})
    return parsed


async def ask(client: AsyncClient, body: object, **headers: str) -> Any:
    return await client.post(
        "/api/turns/", data=json.dumps(body), content_type="application/json", headers=headers
    )


# Rejected questions; the REST answer endpoint's tests check it rejects them alike.
REJECTED = [
    ({"question": "   "}, 400, "invalid_request"),
    ({}, 400, "invalid_request"),
    (["not", "an", "object"], 400, "invalid_request"),
    ({"question": "Leave?", "collections": ["Nope"]}, 400, "invalid_request"),
    ({"question": "Leave?", "collections": "Handbook"}, 400, "invalid_request"),
    ({"question": "Leave?", "conversation": "nope"}, 400, "invalid_request"),
    ({"question": "x" * 5000}, 400, "invalid_request"),
    (
        {"question": "Leave?", "conversation": "1b4e28ba-2fa1-11d2-883f-0016d3cca427"},
        404,
        "not_found",
    ),
]
