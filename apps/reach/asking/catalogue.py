"""What a caller may ask, as the model ids OpenAI clients list and choose from.

`answers` means every collection the caller may read; `answers/<collection name>` one of them.
The ids are names, not database ids, so a client's saved choice survives a re-install and
reads well in a model picker; renaming a collection renames its model. A model the caller may
not read is refused exactly like one that does not exist, so its name leaks nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.corpus.access import Reader, collections_readable

ALL_COLLECTIONS = "answers"
PREFIX = f"{ALL_COLLECTIONS}/"


class UnknownModel(LookupError):
    """No such model for this caller (it does not exist, or they may not read it)."""


class NothingReadable(PermissionError):
    """The caller may read no collection at all: there is nothing to answer from."""


@dataclass(frozen=True)
class AskModel:
    id: str
    created: int  # seconds since the epoch, as OpenAI lists them
    description: str
    collection: str | None  # None: every readable collection


def models_readable(*, user: Reader) -> list[AskModel]:
    """The all-collections model first, then one per readable collection by name; nothing
    for a caller who may read no collection."""
    collections = list(collections_readable(user=user).order_by("name"))
    if not collections:
        return []
    first = min(int(c.created_at.timestamp()) for c in collections)
    every = AskModel(ALL_COLLECTIONS, first, "Every collection you may read", None)
    return [every] + [
        AskModel(f"{PREFIX}{c.name}", int(c.created_at.timestamp()), c.description, c.name)
        for c in collections
    ]


def model_collections(*, model_id: object, user: Reader) -> tuple[str, ...]:
    """The collection names a model asks about; () means every readable one."""
    if model_id == ALL_COLLECTIONS:
        if not collections_readable(user=user).exists():
            raise NothingReadable("Your account may not read any collection")
        return ()
    if isinstance(model_id, str) and model_id.startswith(PREFIX):
        name = model_id.removeprefix(PREFIX)
        if collections_readable(user=user).filter(name=name).exists():
            return (name,)
    raise UnknownModel(f"The model {model_id!r} does not exist")
