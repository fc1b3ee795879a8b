from __future__ import annotations

import factory

from apps.corpus.models import Collection


class CollectionFactory(factory.django.DjangoModelFactory[Collection]):
    class Meta:
        model = Collection

    name = factory.Sequence(lambda n: f"Collection {n}")
    description = "Test documents"
