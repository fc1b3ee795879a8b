"""The access matrix: users in different groups x every read path; only what they may read
appears (two private collections A and B hold the same handbook, so retrieval would find
both if nothing filtered)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import AsyncClient, Client

from apps.answers.models import Turn
from apps.answers.providers.registry import providers_override
from apps.answers.routing.types import Intent
from apps.corpus.access import collections_readable
from apps.identity.models import DirectoryMembership
from tests.answers.access_world import EXPECTED, USERS, World, collections_of, world_build
from tests.answers.fakes import FixedClassifier, classification, providers_fake
from tests.answers.sockets import connected, receive_until, terminal
from tests.answers.sse import SSE, ask, frames
from tests.conftest import CountingEmbedder

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_db_connections"),
]

SEARCH = "documents about leave"
# Half its words in no document: unclear even with topics to offer.
UNCLEAR = "leave vpn hmm umm"


@pytest.fixture
def world(embedder: CountingEmbedder) -> Iterator[World]:
    classifier = FixedClassifier(
        when={
            SEARCH: classification(Intent.SEARCH),
            UNCLEAR: classification(confidence=0.2),  # below the clarify threshold
        }
    )
    built = world_build(embedder)
    with providers_override(providers_fake(embedder, classifier=classifier)):
        yield built


async def ws_ask(user: User, question: str, **extra: Any) -> list[dict[str, Any]]:
    communicator = await connected(user)
    await communicator.send_json_to({"type": "ask", "question": question, **extra})
    received = await receive_until(communicator, terminal)
    await communicator.disconnect()
    return received


def _sources(events: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Per kind of passage, the collections of the documents the events name."""
    data = [(e["type"], e["data"]) for e in events]
    return {
        "citations": collections_of([d["document"] for t, d in data if t == "citation"]),
        "results": collections_of(
            [r["document"] for t, d in data if t == "search_results" for r in d["results"]]
        ),
        "followups": collections_of(
            [i for t, d in data if t == "followups" for i in d["documents"]]
        ),
        "clarification": collections_of(
            [i for t, d in data if t == "clarification" for i in d["documents"]]
        ),
    }


@pytest.mark.parametrize("who", USERS)
async def test_websocket_answer_cites_and_suggests_only_from_readable_collections(
    world: World, who: str
) -> None:
    events = await ws_ask(world.users[who], "How many days of annual leave?")
    seen = await sync_to_async(_sources)(events)
    assert seen["citations"] <= EXPECTED[who]
    assert seen["followups"] == EXPECTED[who]  # every readable collection was searched
    if EXPECTED[who]:
        assert seen["citations"], "a reader of the handbook gets a cited answer"
    turn = await Turn.objects.aget(pk=events[0]["turn"])
    if who == "superuser":
        assert turn.readable_collections is None  # unrestricted
    else:
        readable = {c.pk for c in (world.a, world.b) if c.name in EXPECTED[who]}
        assert set(turn.readable_collections or []) == readable


@pytest.mark.parametrize("who", USERS)
async def test_search_results_and_clarification_topics_come_from_readable_collections(
    world: World, who: str
) -> None:
    searched = await ws_ask(world.users[who], SEARCH)
    assert (await sync_to_async(_sources)(searched))["results"] == EXPECTED[who]
    clarified = await ws_ask(world.users[who], UNCLEAR)
    topics = (await sync_to_async(_sources)(clarified))["clarification"]
    assert topics <= EXPECTED[who] and bool(topics) == bool(EXPECTED[who])


@pytest.mark.parametrize("who", USERS)
async def test_sse_ask_naming_a_collection_works_only_if_readable(world: World, who: str) -> None:
    client = AsyncClient()
    await client.aforce_login(world.users[who])
    response = await ask(
        client, {"question": "How many days of leave?", "collections": ["A"]}, **SSE
    )
    if "A" not in EXPECTED[who]:
        unknown = await ask(client, {"question": "Leave?", "collections": ["Nope"]}, **SSE)
        assert response.status_code == unknown.status_code == 400
        # The same words for a collection one cannot read and one that does not exist.
        assert response.json()["error"]["message"] == "No collection named 'A'"
        assert unknown.json()["error"]["message"] == "No collection named 'Nope'"
        return
    assert response.status_code == 200
    events = [f["data"] for f in await frames(response)]
    seen = await sync_to_async(_sources)(events)
    assert seen["citations"] == {"A"} and seen["followups"] == {"A"}


async def test_forged_collection_ids_are_refused(world: World) -> None:
    client = AsyncClient()
    await client.aforce_login(world.users["reader_b"])
    forged = await ask(client, {"question": "Leave?", "collections": [world.a.pk]}, **SSE)
    assert forged.status_code == 400
    assert "collection names" in forged.json()["error"]["message"]


def _get(world: World, who: str, url: str) -> Any:
    client = Client()
    client.force_login(world.users[who])
    return client.get(url)


@pytest.mark.parametrize("who", USERS)
def test_source_view_and_documents_api_show_only_readable_documents(world: World, who: str) -> None:
    listed = _get(world, who, "/api/documents/?page_size=100").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert {r["collection"] for r in rows} == EXPECTED[who]
    for name in ("A", "B"):
        document_id = min(world.document_ids(name))
        readable = name in EXPECTED[who]
        source = _get(world, who, f"/documents/{document_id}/source/")
        detail = _get(world, who, f"/api/documents/{document_id}/")
        assert source.status_code == detail.status_code == (200 if readable else 404)
    missing = _get(world, who, "/documents/999999/source/")
    assert missing.status_code == 404  # the same answer as for an unreadable document


def test_admin_document_and_chunk_lists_show_only_writable_collections(world: World) -> None:
    def listed(who: str, model: str) -> tuple[int, str]:
        response = _get(world, who, f"/admin/corpus/{model}/")
        return response.status_code, response.content.decode()

    status, page = listed("editor_a", "document")
    assert status == 200
    a_ids, b_ids = world.document_ids("A"), world.document_ids("B")
    assert all(f"/admin/corpus/document/{i}/change/" in page for i in a_ids)
    assert not any(f"/admin/corpus/document/{i}/change/" in page for i in b_ids)
    status, page = listed("superuser", "document")
    assert all(f"/admin/corpus/document/{i}/change/" in page for i in a_ids | b_ids)
    assert _get(world, "editor_a", f"/admin/corpus/document/{min(b_ids)}/change/").status_code in {
        302,
        404,
    }
    status, page = listed("editor_a", "chunk")
    assert status == 200
    assert all(f"/admin/corpus/chunk/{i}/change/" in page for i in world.chunk_ids("A"))
    assert not any(f"/admin/corpus/chunk/{i}/change/" in page for i in world.chunk_ids("B"))
    assert listed("analyst", "document")[0] == 403
    assert listed("reader_a", "document")[0] == 302  # not staff: off to the login page


async def _replays(world: World, turn_id: int) -> list[list[dict[str, Any]]]:
    """The turn's events through the SSE replay and the socket's resume."""
    user = world.users["reader_a"]
    client = AsyncClient()
    await client.aforce_login(user)
    sse = [
        f["data"]
        for f in await frames(await client.get(f"/api/turns/{turn_id}/events", headers=SSE))
    ]
    communicator = await connected(user)
    await communicator.send_json_to({"type": "resume", "turn": turn_id, "last_seq": 0})
    resumed = await receive_until(communicator, terminal)
    await communicator.disconnect()
    return [sse, resumed]


async def test_replay_after_access_is_removed_withholds_the_passages(world: World) -> None:
    user = world.users["reader_a"]
    answered = await ws_ask(user, "How many days of annual leave?")
    searched = await ws_ask(user, SEARCH)
    clarified = await ws_ask(user, UNCLEAR)
    turns = [events[0]["turn"] for events in (answered, searched, clarified)]
    for turn_id in turns:  # while A is readable, a replay shows everything
        for replay in await _replays(world, turn_id):
            assert (await sync_to_async(_sources)(replay)) == await sync_to_async(_sources)(
                [e for e in (answered + searched + clarified) if e["turn"] == turn_id and e["seq"]]
            )

    await sync_to_async(user.groups.remove)(world.readers_a)

    for turn_id in turns:
        for replay in await _replays(world, turn_id):
            assert replay[-1]["type"] == "finished"
            assert all(e["type"] != "citation" for e in replay)
            for event in replay:
                data = event["data"]
                if event["type"] == "search_results":
                    assert data["results"] == []
                if event["type"] == "followups":
                    assert data["questions"] == []
                if event["type"] == "clarification":
                    assert data["options"] == [] and "A" not in data["question"]
    page = await sync_to_async(_get)(
        world, "reader_a", f"/c/{answered[0]['data']['conversation']}/"
    )
    html = page.content.decode()
    # The page carries its URL templates with the placeholder id 0; no real document is linked.
    assert page.status_code == 200 and not re.search(r"/documents/[1-9]\d*/", html)
    assert 'class="followup"' not in html


def _shown_everywhere(world: World, turn_id: int, conversation: str) -> dict[str, Any]:
    """What every path that shows the stored turn gives reader_a: the REST API's turn detail,
    conversation detail and turns list, the chat page, and the preview of its first citation."""
    turn = _get(world, "reader_a", f"/api/turns/{turn_id}/").json()
    detail = _get(world, "reader_a", f"/api/conversations/{conversation}/").json()
    listed = _get(world, "reader_a", f"/api/conversations/{conversation}/turns/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    api = [turn, *(t for t in detail["turns"] if t["id"] == turn_id)]
    api += [t for t in rows if t["id"] == turn_id]
    aliases = [c["alias"] for c in turn["citations"] if c["kind"] == "cited"]
    preview = (
        _get(world, "reader_a", f"/turns/{turn_id}/sources/{aliases[0]}/") if aliases else None
    )
    return {
        "api": api,
        "page": _get(world, "reader_a", f"/c/{conversation}/").content.decode(),
        "preview": None if preview is None else preview.status_code,
    }


async def test_every_path_that_shows_a_stored_turn_withholds_what_was_lost(world: World) -> None:
    user = world.users["reader_a"]
    answered = await ws_ask(user, "How many days of annual leave?")
    conversation = answered[0]["data"]["conversation"]
    clarified = await ws_ask(user, UNCLEAR, conversation=conversation)
    turn_id, clarify_id = answered[0]["turn"], clarified[0]["turn"]
    before = await sync_to_async(_shown_everywhere)(world, turn_id, conversation)
    assert len(before["api"]) == 3  # the turn in each of the three API bodies
    # Follow-ups come from the cited document's own sections, so a small handbook may offer
    # none; the citations are what every path must withhold, the follow-ups with them.
    for shown in before["api"]:
        assert shown["citations"]
        assert {c["title"] for c in shown["citations"]} and all(
            c["snippet"] for c in shown["citations"]
        )
    assert before["preview"] == 200

    await sync_to_async(user.groups.remove)(world.readers_a)

    after = await sync_to_async(_shown_everywhere)(world, turn_id, conversation)
    assert len(after["api"]) == 3
    for shown in after["api"]:
        assert shown["citations"] == [] and shown["followups"] == []
        assert shown["answer"]  # the answer text itself stays
    assert after["preview"] is None  # no citation left to preview...
    alias = before["api"][0]["citations"][0]["alias"]
    preview = await sync_to_async(_get)(world, "reader_a", f"/turns/{turn_id}/sources/{alias}/")
    assert preview.status_code == 404  # ...and the one seen before is gone too
    assert not re.search(r"/documents/[1-9]\d*/", after["page"])
    assert 'class="followup"' not in after["page"]
    sse, resumed = await _replays(world, turn_id)
    for replay in (sse, resumed):
        assert all(e["type"] != "citation" for e in replay)
        assert all(e["data"]["questions"] == [] for e in replay if e["type"] == "followups")
    # A clarifying question keeps only the topics still readable, in the API as in the replay.
    (replayed, *_) = await _replays(world, clarify_id)
    asked = next(e["data"]["question"] for e in replayed if e["type"] == "clarification")
    clarify = await sync_to_async(_get)(world, "reader_a", f"/api/turns/{clarify_id}/")
    assert clarify.json()["answer"] == asked
    topics = next(e["data"]["options"] for e in clarified if e["type"] == "clarification")
    assert topics and not any(t in asked for t in topics)


@pytest.mark.parametrize(
    ("who", "source"),
    [
        ("oidc_reader_a", "oidc"),
        ("ldap_reader_b", "ldap"),
        ("scim_reader_a", "scim"),
        ("oidc_outsider", "oidc"),
    ],
)
def test_directory_users_of_oidc_ldap_and_scim_read_exactly_what_their_groups_give(
    world: World, who: str, source: str
) -> None:
    user = world.users[who]
    granted = set(
        DirectoryMembership.objects.filter(user=user, source=source).values_list(
            "group__name", flat=True
        )
    )
    assert granted == set(user.groups.values_list("name", flat=True))  # none added by hand
    assert set(collections_readable(user=user).values_list("name", flat=True)) == EXPECTED[who]
