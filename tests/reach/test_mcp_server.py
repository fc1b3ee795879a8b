"""The MCP server, driven by the official `mcp` client: over streamable HTTP against a real
daphne process (/mcp with a Bearer token) and over stdio against `manage.py mcp_serve`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation

from apps.answers.models import Turn, TurnClient, TurnStatus
from tests.processes import ROOT, Server
from tests.reach.conftest import World

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]
TOOLS = {"search", "ask", "fetch", "list_collections"}
QUESTION = "How many days of annual leave do employees get?"
AGENT = "desk-agent/2.1"  # what the test's client says it is, on either transport


@asynccontextmanager
async def _over_http(server: Server, token: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}", "User-Agent": AGENT}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(f"{server.http}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def _over_stdio(username: str, errlog: TextIO = sys.stderr) -> AsyncIterator[ClientSession]:
    env = {
        **os.environ,
        "STREAM_DATABASE": str(settings.DATABASES["default"]["NAME"]),
        "PYTHONPATH": str(ROOT),
        "RAG_LOG_LEVEL": "INFO",  # the tools' read log goes to stderr (`errlog`)
    }
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.reach.mcp_stdio", "--user", username],
        env=env,
        cwd=ROOT,
    )
    name, version = AGENT.split("/")
    client_info = Implementation(name=name, version=version)
    async with (
        stdio_client(parameters, errlog=errlog) as (read, write),
        ClientSession(read, write, client_info=client_info) as session,
    ):
        await session.initialize()
        yield session


def _data(result: CallToolResult) -> dict[str, Any]:
    assert not result.isError, result.content
    assert result.structuredContent is not None
    return result.structuredContent


def _error(result: CallToolResult) -> str:
    assert result.isError
    return " ".join(getattr(c, "text", "") for c in result.content)


async def _every_tool(session: ClientSession, world: World, client: TurnClient) -> None:
    """What both transports must do alike; `ask` is a turn recorded with its `client`."""
    listed = await session.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    search = next(t for t in listed.tools if t.name == "search")
    assert search.inputSchema["required"] == ["query"]

    found = _data(await session.call_tool("search", {"query": "annual leave days", "limit": 3}))
    assert found["results"] and len(found["results"]) <= 3
    best = found["results"][0]
    assert best["source_file"] == "leave.md" and best["snippet"] and best["score"] > 0
    assert "/documents/" in best["url"] and best["chunk_index"] is not None

    answered = _data(await session.call_tool("ask", {"question": QUESTION}))
    assert "[1]" in answered["answer"] and "Sources:" in answered["answer"]
    assert answered["citations"][0]["source_file"] == "leave.md"
    assert answered["confidence"]["band"] in {"green", "yellow", "red"}
    turn = await Turn.objects.aget(pk=answered["turn"])
    assert turn.status == TurnStatus.FINISHED
    assert (turn.client, turn.client_agent) == (client, AGENT)

    chunk = _data(
        await session.call_tool("fetch", {"document": best["document"], "chunk": best["chunk"]})
    )
    assert chunk["chunk"] == best["chunk"] and chunk["text"]
    whole = _data(await session.call_tool("fetch", {"document": best["document"]}))
    assert "twenty-six days" in whole["text"]

    collections = _data(await session.call_tool("list_collections", {}))
    assert [c["name"] for c in collections["collections"]] == ["Handbook"]


async def _refusals(session: ClientSession, world: World) -> None:
    secret = await sync_to_async(world.secret_document)()
    refused = _error(await session.call_tool("fetch", {"document": secret.pk}))
    missing = _error(await session.call_tool("fetch", {"document": 999_999}))
    assert refused.replace(str(secret.pk), "N") == missing.replace("999999", "N")
    assert "salaries" not in refused.lower()
    hidden = _error(
        await session.call_tool("search", {"query": "salaries", "collections": ["Board"]})
    )
    assert "Board" in hidden and "salaries" not in hidden.lower()
    assert "query" in _error(await session.call_tool("search", {"query": 42}))
    assert "limit" in _error(await session.call_tool("search", {"query": "leave", "limit": "many"}))
    assert "document" in _error(await session.call_tool("fetch", {"document": "the board's"}))
    assert "empty" in _error(await session.call_tool("ask", {"question": "  "}))


async def test_every_tool_over_streamable_http(server: Server, world: World) -> None:
    async with _over_http(server, world.token) as session:
        await _every_tool(session, world, TurnClient.MCP_HTTP)
        await _refusals(session, world)


async def test_every_tool_over_stdio(world: World, tmp_path: Path) -> None:
    with (tmp_path / "stderr.log").open("w+") as errlog:
        async with _over_stdio("ada", errlog) as session:
            await _every_tool(session, world, TurnClient.MCP_STDIO)
            await _refusals(session, world)
        errlog.seek(0)
        logged = errlog.read()
    # The calls that answer no question are no turns, but each read is logged with its user.
    user_id = world.user.pk
    for line in (
        f"MCP search by user {user_id} via mcp_stdio ({AGENT}): query 'annual leave days'",
        f"MCP fetch by user {user_id} via mcp_stdio ({AGENT}): document ",
        f"MCP list_collections by user {user_id} via mcp_stdio ({AGENT}): ['Handbook']",
    ):
        assert line in logged
    assert "refused" in logged  # a fetch of the unreadable document, too


async def test_mcp_over_http_needs_a_valid_token(server: Server, world: World) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        missing = await http.post(f"{server.http}/mcp", json={})
        wrong = await http.post(
            f"{server.http}/mcp", json={}, headers={"Authorization": "Bearer nope"}
        )

    for response in (missing, wrong):
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert json.loads(response.text)["error"]["code"] == "unauthenticated"
