"""Who reads what, read-only in the admin: for each collection who may read it through which
group, for each person why they read what they read, with the source of each membership.

The pages only display `access/selectors.py`, which asks the corpus's one access rule."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from apps.identity.access.selectors import (
    Grant,
    collection_readers_explain,
    user_access_explain,
)
from apps.identity.models import CollectionAccess, PersonAccess
from ragplatform.admin_base import ReadOnlyAdmin


def _grants(grants: tuple[Grant, ...]) -> SafeString:
    return format_html_join(
        "; ",
        "{} of <b>{}</b> ({})",
        ((g.role, g.group, ", ".join(g.sources)) for g in grants),
    )


def _table(head: tuple[str, ...], rows: Sequence[tuple[object, ...]]) -> SafeString:
    header = format_html_join("", "<th>{}</th>", ((h,) for h in head))
    body = format_html_join(
        "",
        "<tr>{}</tr>",
        ((format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows),
    )
    return format_html('<table class="access"><tr>{}</tr>{}</table>', header, body)


@admin.register(CollectionAccess)
class CollectionAccessAdmin(ReadOnlyAdmin):
    list_display = ["name", "public"]
    search_fields = ["name"]
    fields = readonly_fields = ("name", "public", "readers")

    @admin.display(description="who reads it")
    def readers(self, collection: CollectionAccess) -> SafeString:
        limit = settings.RAG_IDENTITY_ACCESS_PAGE_USERS
        readers = collection_readers_explain(collection=collection, limit=limit)
        rows = [
            (r.user.get_username(), _yes(r.reads), _yes(r.writes), _grants(r.grants))
            for r in readers
        ]
        everyone = "Public: every signed-in person reads it. " if collection.public else ""
        note = format_html(
            "{}Superusers read everything. At most {} members are shown.", everyone, limit
        )
        table = _table(("person", "reads", "writes", "through"), rows)
        return format_html("<p>{}</p>{}", note, table)


@admin.register(PersonAccess)
class PersonAccessAdmin(ReadOnlyAdmin):
    list_display = ["username", "first_name", "last_name", "is_active"]
    search_fields = ["username", "first_name", "last_name", "email"]
    fields = readonly_fields = ("username", "is_active", "is_superuser", "collections")

    @admin.display(description="reads")
    def collections(self, person: PersonAccess) -> SafeString:
        rows = [
            (r.collection.name, _yes(r.writes), _why(r.public, r.superuser, r.grants))
            for r in user_access_explain(user=person)
        ]
        return _table(("collection", "writes", "why"), rows)


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _why(public: bool, superuser: bool, grants: tuple[Grant, ...]) -> SafeString:
    reasons = [format_html("{}", "superuser")] if superuser else []
    reasons += [format_html("{}", "public")] if public else []
    reasons += [_grants(grants)] if grants else []
    return format_html_join("; ", "{}", ((r,) for r in reasons))
