"""The widget's gate: a listed origin, its publishable key, and only its own collections.

The key is published in the host page, so it is no secret from that page's readers: what it
may do is bounded by the account it asks as (RAG_WIDGET_USER, whose access rules and rate limit
apply) and by RAG_WIDGET_COLLECTIONS. The origin list keeps other sites' pages from using it in
their visitors' browsers (docs/guide/16-other-clients).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model

from apps.reach.widget.origins import origins_parse


class WidgetRefused(Exception):
    """A widget request refused before anything is asked; the message says why."""


class WidgetOff(WidgetRefused):
    pass


class WrongKey(WidgetRefused):
    pass


class CollectionNotOffered(WidgetRefused):
    pass


@dataclass(frozen=True)
class WidgetConfig:
    origins: frozenset[str]
    key: str
    username: str
    collections: tuple[str, ...]

    @property
    def enabled(self) -> bool:
        return bool(self.origins and self.key and self.username)


def widget_config() -> WidgetConfig:
    """Read on every request, so a test (or a reload) that changes the settings is obeyed."""
    return WidgetConfig(
        origins=origins_parse(
            settings.RAG_WIDGET_ALLOWED_ORIGINS, name="RAG_WIDGET_ALLOWED_ORIGINS"
        ),
        key=settings.RAG_WIDGET_KEY,
        username=settings.RAG_WIDGET_USER,
        collections=tuple(settings.RAG_WIDGET_COLLECTIONS),
    )


def key_check(*, config: WidgetConfig, sent: str) -> None:
    if not config.enabled:
        raise WidgetOff("The answer widget is not configured on this platform")
    # Constant time, so the key cannot be guessed a character at a time.
    if not hmac.compare_digest(sent.encode(), config.key.encode()):
        raise WrongKey("The widget key is wrong")


def collections_chosen(*, config: WidgetConfig, asked: object) -> tuple[str, ...]:
    """The page's data-collections, which may only narrow the widget's own list."""
    if asked in (None, "", []):
        return config.collections
    if not isinstance(asked, list) or not all(isinstance(name, str) for name in asked):
        raise CollectionNotOffered("collections must be a list of collection names")
    if config.collections:
        outside = [name for name in asked if name not in config.collections]
        if outside:
            raise CollectionNotOffered(f"The widget does not answer from: {', '.join(outside)}")
    return tuple(asked)


def widget_user_id(*, config: WidgetConfig) -> int:
    """The asking account's id; WidgetOff when it does not exist or is deactivated."""
    found = (
        get_user_model()
        .objects.filter(username=config.username, is_active=True)
        .values_list("pk", flat=True)
        .first()
    )
    if found is None:
        raise WidgetOff("The answer widget's account does not exist or is deactivated")
    return int(found)
