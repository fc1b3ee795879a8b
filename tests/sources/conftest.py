"""Real servers for the source tests (session-scoped, on free loopback ports) and, per test,
a fresh place at each kind of source, with a collection and a source that reads it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apps.corpus.models import Collection
from apps.sources.models import Source, SourceKind
from apps.sources.sync.services import source_create
from tests.sources import samba_dovecot, servers
from tests.sources.places import BucketPlace, DiskPlace, MailPlace, SitePlace

KINDS = ("folder", "s3", "webdav", "web", "smb")
Place = DiskPlace | BucketPlace | SitePlace | MailPlace


@pytest.fixture(autouse=True)
def _loopback_site_allowed(settings: Any) -> None:
    """The tests' website is on 127.0.0.1, an internal address a crawl refuses by default."""
    settings.RAG_SOURCE_WEB_ALLOWED_NETWORKS = ["127.0.0.1/32"]


@pytest.fixture(scope="session")
def seaweedfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[servers.Running]:
    with servers.started(servers.seaweedfs_start(tmp_path_factory.mktemp("seaweedfs"))) as s:
        yield s


@pytest.fixture(scope="session")
def wsgidav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[servers.Running]:
    with servers.started(servers.wsgidav_start(tmp_path_factory.mktemp("wsgidav"))) as s:
        yield s


@pytest.fixture(scope="session")
def website(tmp_path_factory: pytest.TempPathFactory) -> Iterator[servers.Running]:
    with servers.started(servers.http_site_start(tmp_path_factory.mktemp("website"))) as s:
        yield s


@pytest.fixture(scope="session")
def samba(tmp_path_factory: pytest.TempPathFactory) -> Iterator[servers.Running]:
    with servers.started(samba_dovecot.samba_start(tmp_path_factory.mktemp("samba"))) as s:
        yield s


@pytest.fixture(scope="session")
def dovecot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[servers.Running]:
    with servers.started(samba_dovecot.dovecot_start(tmp_path_factory.mktemp("dovecot"))) as s:
        yield s


def _name() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


def folder_place(tmp_path: Path) -> DiskPlace:
    root = tmp_path / "source"
    root.mkdir()
    return DiskPlace(SourceKind.FOLDER, root, str(root))


def s3_place(seaweedfs: servers.Running) -> BucketPlace:
    client: Any = servers.s3_client(seaweedfs)
    prefix = _name()
    keys = {"access_key": servers.S3_ACCESS_KEY, "secret_key": servers.S3_SECRET_KEY}
    location = f"{seaweedfs.url}/{servers.S3_BUCKET}/{prefix}"
    return BucketPlace(client, servers.S3_BUCKET, prefix, location, keys)


def webdav_place(wsgidav: servers.Running) -> DiskPlace:
    name = _name()
    root = wsgidav.root / "share" / name
    root.mkdir()
    keys = {"username": servers.DAV_USER, "password": servers.DAV_PASSWORD}
    return DiskPlace(SourceKind.WEBDAV, root, f"{wsgidav.url}/dav/{name}/", keys)


def smb_place(samba: servers.Running) -> DiskPlace:
    name = _name()
    root = samba.root / "share" / name
    root.mkdir()
    keys = {"username": samba_dovecot.SMB_USER, "password": samba_dovecot.SMB_PASSWORD}
    location = f"smb://127.0.0.1:{samba.port}/{samba_dovecot.SMB_SHARE}/{name}"
    return DiskPlace(SourceKind.SMB, root, location, keys)


def mail_place(dovecot: servers.Running) -> MailPlace:
    keys = {"username": samba_dovecot.IMAP_USER, "password": samba_dovecot.IMAP_PASSWORD}
    return MailPlace("127.0.0.1", dovecot.port, _name(), keys)


def web_place(website: servers.Running) -> SitePlace:
    name = _name()
    root = website.root / "site" / name
    root.mkdir()
    return SitePlace(root, f"{website.url}/{name}")


@pytest.fixture(params=KINDS)
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    kind = request.param
    if kind == "folder":
        return folder_place(tmp_path)
    if kind == "s3":
        return s3_place(request.getfixturevalue("seaweedfs"))
    if kind == "webdav":
        return webdav_place(request.getfixturevalue("wsgidav"))
    if kind == "smb":
        return smb_place(request.getfixturevalue("samba"))
    return web_place(request.getfixturevalue("website"))


@pytest.fixture
def source_of(db: None) -> Any:
    def make(place: Place, **fields: Any) -> Source:
        collection = Collection.objects.create(name=_name())
        source = source_create(
            name=_name(),
            kind=place.kind,
            location=place.location,
            collection=collection,
            credentials=place.credentials,
        )
        if fields:
            Source.objects.filter(pk=source.pk).update(**fields)
            source.refresh_from_db()
        return source

    return make
