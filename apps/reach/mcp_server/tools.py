"""The MCP server (the official `mcp` SDK's FastMCP): tools `search`, `ask`, `fetch` and
`list_collections`, over streamable HTTP at /mcp (`http.py`) or stdio (`manage.py mcp_serve`).

Every tool acts as one user: the Bearer token's over HTTP, the command's `--user` over stdio;
the same access rules, rate limit and turn log as the chat page apply. `ask` is a turn,
recorded with its client (MCP over HTTP or stdio, and what the client says it is); `search`,
`fetch` and `list_collections` answer no question, so they are no turns: each call is logged
(user, client, tool, what it read) at INFO by this module's logger. The SDK validates the
arguments against each tool's signature and answers a wrong type as a tool error; a refusal
of ours (a bad question, an unreadable document) is a tool error with its message.
"""

from __future__ import annotations

import contextvars
import logging
from dataclasses import dataclass
from typing import Annotated, Any
from uuid import UUID

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field
from starlette.datastructures import Headers

from apps.answers.models import TurnClient
from apps.answers.turn.rejections import REJECTIONS
from apps.reach.asking.passages import (
    NotReadable,
    collections_listed,
    passage_fetch,
    passages_search,
)
from apps.reach.asking.replies import Reply
from apps.reach.asking.services import Question, question_answer
from ragplatform.db_threads import db_call

# The user a stdio server acts as (set once by `mcp_serve`); HTTP requests carry their own.
STDIO_USER: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "mcp_stdio_user", default=None
)
SCOPE_USER = "reach.user_id"  # where http.py leaves the token's user in the ASGI scope
SCOPE_BASE_URL = "reach.base_url"

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Answers from an organisation's own documents, with citations. Use `search` to find "
    "passages, `ask` for an answer with numbered sources and a confidence, `fetch` to read a "
    "document or a chunk found by search, `list_collections` for what you may search."
)


def mcp_server_build(*, allowed_hosts: list[str], allowed_origins: list[str]) -> FastMCP:
    """A new server; `allowed_hosts` empty turns the Host check off (ALLOWED_HOSTS "*")."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=bool(allowed_hosts),
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )
    server = FastMCP(
        "answers",
        instructions=INSTRUCTIONS,
        streamable_http_path="/mcp",
        stateless_http=True,  # any process answers any request: nothing kept between them
        json_response=True,
        transport_security=security,
    )
    for tool in (search, ask, fetch, list_collections):
        server.add_tool(tool)
    return server


@dataclass(frozen=True)
class Asker:
    """Who calls a tool, through which door, and where links point."""

    user_id: int
    client: TurnClient
    agent: str  # the client's own name/version, or its User-Agent
    base_url: str

    def logged(self, tool: str, read: str) -> None:
        logger.info(
            "MCP %s by user %s via %s (%s): %s", tool, self.user_id, self.client, self.agent, read
        )


def _asker(ctx: Context) -> Asker:
    """The caller of the request the tool serves."""
    request = ctx.request_context.request
    scope = getattr(request, "scope", None)
    if scope is not None and isinstance(scope.get(SCOPE_USER), int):
        agent = _client_named(ctx) or Headers(scope=scope).get("user-agent", "")
        base_url = str(scope.get(SCOPE_BASE_URL, ""))
        return Asker(scope[SCOPE_USER], TurnClient.MCP_HTTP, agent, base_url)
    if (user_id := STDIO_USER.get()) is not None:
        # No host to link to: links are paths on the platform.
        return Asker(user_id, TurnClient.MCP_STDIO, _client_named(ctx), "")
    raise ToolError("Not signed in")


def _client_named(ctx: Context) -> str:
    """The name/version the client gave in its initialize request. Only a stdio session keeps
    it: each stateless HTTP request has a session of its own, so there the User-Agent stands
    in."""
    params = ctx.request_context.session.client_params
    return "" if params is None else f"{params.clientInfo.name}/{params.clientInfo.version}"


async def search(
    query: Annotated[str, Field(description="What to search for, in words")],
    ctx: Context,
    collections: Annotated[
        list[str] | None, Field(description="Collection names to search (default: all readable)")
    ] = None,
    limit: Annotated[int | None, Field(description="How many passages at most")] = None,
) -> dict[str, Any]:
    """Ranked passages from the documents: title, file, page, snippet, score and a link to the
    reading page of each, best first, one per document."""
    asker = _asker(ctx)
    try:
        found = await passages_search(
            user_id=asker.user_id,
            query=query,
            collection_names=collections or (),
            limit=limit,
            base_url=asker.base_url,
        )
    except REJECTIONS as exc:
        raise ToolError(str(exc)) from exc
    documents = [result["document"] for result in found["results"]]
    asker.logged("search", f"query {found['query']!r} in {collections or 'all'}, {documents=}")
    return found


async def ask(
    question: Annotated[str, Field(description="The question, as a person would ask it")],
    ctx: Context,
    collections: Annotated[
        list[str] | None,
        Field(description="Collection names to answer from (default: all readable)"),
    ] = None,
    conversation: Annotated[
        str | None, Field(description="A conversation id from an earlier answer, to follow up")
    ] = None,
) -> dict[str, Any]:
    """An answer from the documents with numbered citations, its sources and a confidence
    (value 0-1 and band green/yellow/red); the platform refuses honestly when they do not say."""
    asker = _asker(ctx)
    try:
        conversation_id = UUID(conversation) if conversation else None
    except ValueError:
        raise ToolError("conversation must be a conversation id") from None
    question_asked = Question(
        user_id=asker.user_id,
        text=question,
        client=asker.client,
        collection_names=collections or (),
        conversation_id=conversation_id,
        client_agent=asker.agent,
    )
    try:
        reply = await question_answer(question=question_asked, base_url=asker.base_url)
    except REJECTIONS as exc:
        raise ToolError(str(exc)) from exc
    return _reply_data(reply)


def _reply_data(reply: Reply) -> dict[str, Any]:
    if not reply.finished:
        raise ToolError(reply.error_message or "The answer failed")
    return {
        "answer": reply.text,
        "citations": [s.data() for s in reply.sources],
        "confidence": reply.confidence_data(),
        "conversation": str(reply.conversation_id),
        "turn": reply.turn_id,
    }


async def fetch(
    document: Annotated[int, Field(description="A document id, as search and ask give them")],
    ctx: Context,
    chunk: Annotated[
        int | None, Field(description="A chunk id of that document: the chunk with its neighbours")
    ] = None,
) -> dict[str, Any]:
    """One document's text, or one of its chunks with the chunks before and after it."""
    asker = _asker(ctx)
    target = f"document {document}" + ("" if chunk is None else f" chunk {chunk}")
    try:
        fetched = await db_call(passage_fetch)(
            user_id=asker.user_id, document_id=document, chunk_id=chunk, base_url=asker.base_url
        )
    except NotReadable as exc:
        asker.logged("fetch", f"{target} refused")  # probing for documents shows here
        raise ToolError(str(exc)) from exc
    asker.logged("fetch", target)
    return fetched


async def list_collections(ctx: Context) -> dict[str, Any]:
    """The collections you may search and ask about, with how many documents each holds."""
    asker = _asker(ctx)
    listed = await db_call(collections_listed)(user_id=asker.user_id)
    asker.logged("list_collections", f"{[c['name'] for c in listed]}")
    return {"collections": listed}
