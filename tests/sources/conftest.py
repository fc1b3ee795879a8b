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
from tests.sources import servers
from tests.sources.places import BucketPlace, DiskPlace, SitePlace

KINDS = ("folder", "s3", "webdav", "web")


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


def web_place(website: servers.Running) -> SitePlace:
    name = _name()
    root = website.root / "site" / name
    root.mkdir()
    return SitePlace(root, f"{website.url}/{name}")


@pytest.fixture(params=KINDS)
def place(request: pytest.FixtureRequest, tmp_path: Path) -> DiskPlace | BucketPlace | SitePlace:
    kind = request.param
    if kind == "folder":
        return folder_place(tmp_path)
    if kind == "s3":
        return s3_place(request.getfixturevalue("seaweedfs"))
    if kind == "webdav":
        return webdav_place(request.getfixturevalue("wsgidav"))
    return web_place(request.getfixturevalue("website"))


@pytest.fixture
def source_of(db: None) -> Any:
    def make(place: DiskPlace | BucketPlace | SitePlace, **fields: Any) -> Source:
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
