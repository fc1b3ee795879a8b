"""A website crawl refuses internal addresses (loopback, private, link-local, the cloud
metadata address) unless RAG_SOURCE_WEB_ALLOWED_NETWORKS allows them: checked after the host
name is resolved, and again on every redirect hop. The tests' own site is on 127.0.0.1, which
the sources conftest allows; here that is taken back or narrowed."""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from apps.corpus.models import Document
from apps.sources.kinds import web_guard
from apps.sources.kinds.web_guard import address_refused
from apps.sources.models import Source, SourceItem
from apps.sources.sync.run import source_sync
from tests.conftest import CountingEmbedder
from tests.processes import free_port
from tests.sources import servers
from tests.sources.conftest import web_place

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def redirector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[servers.Running]:
    root = tmp_path_factory.mktemp("redirector")
    port = free_port()
    script = Path(__file__).with_name("redirect_server.py")
    command = [sys.executable, str(script), str(port)]
    with servers.started(servers._start(command, port=port, root=root)) as running:
        yield running


INTERNAL = ["127.0.0.1", "10.1.2.3", "192.168.0.9", "172.16.0.1", "169.254.169.254", "100.64.0.1"]
INTERNAL += ["0.0.0.0", "::1", "fd00:ec2::254", "fe80::1", "::ffff:127.0.0.1", "224.0.0.1"]  # noqa: S104


@pytest.mark.parametrize("address", INTERNAL)
def test_internal_addresses_are_refused_unless_allowed(address: str) -> None:
    ip = ipaddress.ip_address(address)
    assert address_refused(ip, allowed=())
    assert not address_refused(ip, allowed=(ipaddress.ip_network(address),))
    assert not address_refused(ipaddress.ip_address("93.184.215.14"), allowed=())


def test_a_site_on_loopback_is_refused_and_keeps_what_was_stored(
    website: servers.Running, source_of: Any, embedder: CountingEmbedder, settings: Any
) -> None:
    place = web_place(website)
    place.put("alpha", "Aardvarks dig burrows at night.")
    source = source_of(place)
    assert source_sync(source_id=source.pk, wait=True).added == 1
    settings.RAG_SOURCE_WEB_ALLOWED_NETWORKS = []

    report = source_sync(source_id=source.pk, wait=True)

    assert report.status == "failed" and "127.0.0.1 is an internal address" in report.error
    assert "RAG_SOURCE_WEB_ALLOWED_NETWORKS" in report.error
    assert Document.objects.filter(collection=source.collection).count() == 1


def test_a_name_is_checked_after_it_is_resolved(
    website: servers.Running, source_of: Any, settings: Any
) -> None:
    settings.RAG_SOURCE_WEB_ALLOWED_NETWORKS = []
    place = web_place(website)
    place.put("alpha", "Aardvarks.")
    source = source_of(place)
    Source.objects.filter(pk=source.pk).update(
        location=place.location.replace("127.0.0.1", "localhost")
    )

    report = source_sync(source_id=source.pk)

    assert report.status == "failed" and "localhost is an internal address" in report.error


@pytest.mark.parametrize(
    "target", ["http://169.254.169.254/latest/meta-data/", "http://127.0.0.2:{port}/x.html"]
)
def test_every_redirect_hop_is_checked(
    target: str, website: servers.Running, redirector: servers.Running, source_of: Any
) -> None:
    # Only the start page's own server is allowed: the hop it redirects to is not.
    place = web_place(website)
    source = source_of(place)
    url = target.format(port=website.port)
    Source.objects.filter(pk=source.pk).update(location=f"{redirector.url}/to?url={quote(url)}")

    report = source_sync(source_id=source.pk)

    host = url.split("/")[2].split(":")[0]
    assert report.status == "failed" and f"{host} is an internal address" in report.error


def test_a_setting_that_is_no_network_is_a_clear_error(
    website: servers.Running, source_of: Any, settings: Any
) -> None:
    settings.RAG_SOURCE_WEB_ALLOWED_NETWORKS = ["intranet"]
    source = source_of(web_place(website))
    report = source_sync(source_id=source.pk)
    assert report.status == "failed" and "'intranet', which is not a network" in report.error


class OneAnswerResolver:
    """What the guard's lookup answers for `docs.test`: the address it checks. The system's
    resolver knows no such name, so the page is read only if the connection goes to the
    address that was checked rather than looking the name up again."""

    def __init__(self, port: int) -> None:
        self.port = port

    def __getattr__(self, name: str) -> Any:
        return getattr(socket, name)

    def getaddrinfo(self, host: str, *args: Any, **kwargs: Any) -> Any:
        if host == "docs.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", self.port))]
        return socket.getaddrinfo(host, *args, **kwargs)


def test_the_connection_goes_to_the_address_that_was_checked(
    website: servers.Running, source_of: Any, embedder: CountingEmbedder, monkeypatch: Any
) -> None:
    place = web_place(website)
    place.put("alpha", "Aardvarks dig burrows at night.")
    source = source_of(place)
    named = f"{place.url}/alpha.html".replace("127.0.0.1", "docs.test")
    Source.objects.filter(pk=source.pk).update(location=named)
    monkeypatch.setattr(web_guard, "socket", OneAnswerResolver(website.port))

    report = source_sync(source_id=source.pk, wait=True)

    assert (report.status, report.added, report.error) == ("ok", 1, "")
    assert SourceItem.objects.get(source=source).key.startswith("http://docs.test:")
