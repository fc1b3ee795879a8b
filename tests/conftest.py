"""Shared fixtures: a real PostgreSQL (the embedded one unless DATABASE_URL is set) for data tests."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from django.conf import LazySettings
from pytest_django import DjangoDbBlocker

from apps.corpus.search.embedders import embedder_override
from tests.factories import CollectionFactory


class CountingEmbedder:
    """A deterministic stand-in for the embedding model that counts what it was asked to embed.

    Texts sharing words get similar vectors (a hashed bag of words), so retrieval-shaped tests
    still make sense; it is used where the model's quality is not what the test is about.
    """

    model_id = "test/hashed-bow"
    dimensions = 384

    def __init__(self) -> None:
        self.passages_embedded = 0
        self.queries_embedded = 0
        self.calls = 0

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        self.passages_embedded += len(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        self.queries_embedded += 1
        return self._vector(text)

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        import hashlib

        vector = np.zeros(self.dimensions, dtype=np.float32)
        for word in text.lower().split():
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % self.dimensions] += 1.0
        norm = float(np.linalg.norm(vector)) or 1.0
        return vector / norm


@pytest.fixture(autouse=True)
def _isolated_storage(settings: LazySettings, tmp_path: Path) -> None:
    """Uploaded files and the embedding cache go to a per-test folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RAG_EMBEDDING_CACHE_DIR = tmp_path / "embedding-cache"


@pytest.fixture
def embedder() -> Iterator[CountingEmbedder]:
    """Replace the configured embedder everywhere with the counting one (through the one seam
    every caller reads: ingestion, retrieval, the evaluation commands, post-turn tasks)."""
    fake = CountingEmbedder()
    with embedder_override(fake):
        yield fake


@pytest.fixture
def collection(db: None) -> object:
    return CollectionFactory()


def _migration_seeds_apply() -> None:
    """The rows the migrations seed (the roles and the starter categories), from the
    migrations' own lists; idempotent."""
    from django.contrib.auth.models import Group, Permission

    from apps.analytics.models import Category

    roles = importlib.import_module(
        "apps.analytics.migrations.0008_roles_readers_editors_auditors_analysts"
    ).ROLES
    for name, codenames in roles.items():
        group, _ = Group.objects.get_or_create(name=name)
        for app_label, codename in codenames:
            group.permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )
    identity = importlib.import_module(
        "apps.identity.migrations.0002_auditors_read_identity_events"
    )
    Group.objects.get(name="auditors").permissions.add(
        *Permission.objects.filter(
            content_type__app_label="identity", codename__in=identity.AUDITOR_PERMISSIONS
        )
    )
    starter = importlib.import_module("apps.analytics.migrations.0002_seed_starter_categories")
    for name, description in starter.STARTER:
        Category.objects.get_or_create(name=name, defaults={"description": description})


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> None:
    """A test database kept between runs (`make quick`, --reuse-db) was flushed by the last
    run's transactional tests, seeded rows included: seed them again before any test."""
    with django_db_blocker.unblock():
        _migration_seeds_apply()
