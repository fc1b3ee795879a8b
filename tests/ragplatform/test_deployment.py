"""The deployment docs/guide/15-deployment.md describes, run: nginx (Debian's package) with the
guide's nginx block, only its placeholders replaced, in front of two daphne processes and two
task workers on the test database, in production mode (tests/deployment.py). A small version
of `benchmarks/deployment.py`, so that the guide's configuration keeps working as the guide
says: `nginx -t` passes, questions over SSE and the WebSocket stream through it (a dropped
client resumes), plain HTTP is redirected, static files come from nginx, and an upload over
client_max_body_size is refused by nginx before daphne sees it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connections

from apps.answers.models import Turn, TurnStatus
from apps.answers.turn.selectors import turn_events_since
from benchmarks.stream_clients import ClientRun, client_run
from tests.answers.fakes import handbook_load
from tests.conftest import CountingEmbedder
from tests.deployment import (
    UPLOAD_PATH,
    Deployment,
    Ports,
    deployment_start,
    oversized_upload_probe,
    redirect_probe,
    static_probe,
    upload_probe,
)
from tests.nginx import GUIDE, GuideDrift, Site, guide_config
from tests.processes import session_cookie, sse_client, sse_envelopes

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]
PORTS = Ports(8760)  # 8760-8763: nginx's HTTPS and HTTP, then the two daphne processes
PIECES, PIECE_DELAY_S = 12, 0.25  # a three-second answer: time to drop it and to see it stream
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def deployment(django_db_setup: None) -> Iterator[Deployment]:
    started = deployment_start(
        str(settings.DATABASES["default"]["NAME"]),
        PORTS,
        secret_key=settings.SECRET_KEY,
        RAG_ASKS_PER_MINUTE=1000,
        STREAM_PIECES=PIECES,
        STREAM_PIECE_DELAY_S=PIECE_DELAY_S,
    )
    yield started
    started.stop()
    started.remove()


@pytest.fixture
async def cookie() -> AsyncIterator[str]:
    await sync_to_async(handbook_load)(CountingEmbedder())
    user = await User.objects.acreate_superuser("deployer", password=None)
    yield await sync_to_async(session_cookie)(user)
    await sync_to_async(connections.close_all)()  # the test database is dropped at the end


def test_nginx_accepts_the_guides_configuration(deployment: Deployment) -> None:
    assert "test is successful" in deployment.nginx.config_test()


def test_a_placeholder_missing_from_the_guide_is_an_error(tmp_path: Path) -> None:
    guide = tmp_path / "guide.md"
    guide.write_text(GUIDE.read_text().replace("listen 443 ssl;", "listen 8443 ssl;"))
    site = Site(1, 2, (3, 4), tmp_path / "c.pem", tmp_path / "c.key", tmp_path)
    with pytest.raises(GuideDrift, match="listen 443 ssl;"):
        guide_config(site, guide)


async def test_questions_over_both_transports_through_nginx_lose_nothing_and_resume(
    deployment: Deployment, cookie: str
) -> None:
    proxy = deployment.proxy
    runs = [
        ClientRun(transport, proxy, proxy if dropped else None, cookie)
        for transport in ("ws", "sse")
        for dropped in (False, True)
    ]
    for run in runs:
        await client_run(run, timeout_s=60)

    for run in runs:
        assert run.error == ""
        assert run.terminal is not None and run.terminal["type"] == "finished"
        assert run.turn is not None
        stored = await sync_to_async(turn_events_since)(turn_id=run.turn)
        assert sorted({e["seq"] for e in run.received}) == [e["seq"] for e in stored]
        assert len(run.received) == len(stored)  # none twice
    assert all(run.following_again for run in runs if run.resume_on is not None)


async def test_sse_through_nginx_arrives_while_the_answer_is_written_not_buffered(
    deployment: Deployment, cookie: str
) -> None:
    async with (
        sse_client(deployment.proxy, cookie) as client,
        client.stream("POST", "/api/turns/", json={"question": "How many days of leave?"}) as r,
    ):
        assert r.status_code == 200
        async for envelope in sse_envelopes(r):
            if envelope["type"] == "token":
                break
    # A buffering proxy would have held the first token until the response ended.
    turn = await Turn.objects.aget(pk=envelope["turn"])
    assert turn.status == TurnStatus.STREAMING


def test_plain_http_is_redirected_to_https(deployment: Deployment) -> None:
    status, location = redirect_probe(PORTS, "/chat/?q=1")
    assert (status, location) == (301, "https://127.0.0.1/chat/?q=1")


def test_static_files_come_from_nginx_with_their_expiry(deployment: Deployment) -> None:
    response = static_probe(deployment)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "max-age=2592000"  # expires 30d
    assert deployment.daphne_requests("GET /static/") == 0


def test_an_upload_over_the_limit_is_refused_by_nginx_before_daphne_sees_it(
    deployment: Deployment, cookie: str
) -> None:
    refusal = oversized_upload_probe(deployment.proxy, cookie, 100 * MIB + 1)
    assert refusal.status == 413
    assert refusal.server.startswith("nginx")
    assert "client intended to send too large body" in deployment.nginx.log.read_text()

    # One below the limit goes through, and a task worker processes it.
    assert upload_probe(deployment.proxy, cookie) == (202, "ready")
    assert deployment.daphne_requests(f"POST {UPLOAD_PATH}") == 1
