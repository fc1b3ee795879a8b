"""Two private collections with the same handbook, and users in different groups, for the
access tests: who reads what on every path."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission, User

from apps.corpus.models import Chunk, Collection, Document
from apps.identity.groups.services import memberships_apply
from apps.identity.oidc.claims import Profile
from apps.identity.oidc.providers import OidcProvider
from apps.identity.oidc.services import oidc_account_create
from apps.identity.scim.groups import scim_group_patch
from apps.identity.scim.services import scim_user_create
from apps.identity.vocabulary import Source
from tests.answers.fakes import handbook_load
from tests.conftest import CountingEmbedder

# The role groups as the data migration defines them (recreated here: a transactional test
# empties the tables, the migration's rows included).
ROLES: dict[str, list[tuple[str, str]]] = importlib.import_module(
    "apps.analytics.migrations.0008_roles_readers_editors_auditors_analysts"
).ROLES

# Which collections each user may read. The last four come from a directory: their groups
# are given by OpenID Connect, LDAP or SCIM, not by hand (see `directory_users_add`).
EXPECTED: dict[str, set[str]] = {
    "reader_a": {"A"},
    "reader_b": {"B"},
    "editor_a": {"A"},
    "analyst": set(),
    "superuser": {"A", "B"},
    "oidc_reader_a": {"A"},
    "ldap_reader_b": {"B"},
    "scim_reader_a": {"A"},
    "oidc_outsider": set(),
}
USERS = list(EXPECTED)


def role(name: str) -> Group:
    group, _ = Group.objects.get_or_create(name=name)
    for app_label, codename in ROLES[name]:
        group.permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return group


@dataclass
class World:
    a: Collection
    b: Collection
    users: dict[str, User]
    readers_a: Group

    def document_ids(self, *names: str) -> set[int]:
        return set(Document.objects.filter(collection__name__in=names).values_list("pk", flat=True))

    def chunk_ids(self, *names: str) -> set[int]:
        chunks = Chunk.objects.filter(document__collection__name__in=names)
        return set(chunks.values_list("pk", flat=True))


def collections_of(document_ids: object) -> set[str]:
    """The names of the collections the given document ids belong to."""
    ids = [d for d in document_ids if isinstance(d, int)]  # type: ignore[attr-defined]
    return set(Document.objects.filter(pk__in=ids).values_list("collection__name", flat=True))


def world_build(embedder: CountingEmbedder) -> World:
    a = handbook_load(embedder, "A", public=False)
    b = handbook_load(embedder, "B", public=False)
    readers_a, readers_b = (
        Group.objects.create(name="a-readers"),
        Group.objects.create(name="b-readers"),
    )
    writers_a = Group.objects.create(name="a-writers")
    a.reader_groups.add(readers_a)
    b.reader_groups.add(readers_b)
    a.writer_groups.add(writers_a)
    password = "a-long-test-password"
    users = {
        "reader_a": User.objects.create_user("reader_a", password=password),
        "reader_b": User.objects.create_user("reader_b", password=password),
        "editor_a": User.objects.create_user("editor_a", password=password, is_staff=True),
        "analyst": User.objects.create_user("analyst", password=password, is_staff=True),
        "superuser": User.objects.create_superuser("superuser", password=password),
    }
    users["reader_a"].groups.add(readers_a, role("readers"))
    users["reader_b"].groups.add(readers_b, role("readers"))
    users["editor_a"].groups.add(writers_a, role("editors"))
    users["analyst"].groups.add(role("analysts"))
    users.update(directory_users_add())
    return World(a=a, b=b, users=users, readers_a=readers_a)


def directory_users_add() -> dict[str, User]:
    """Users whose groups come from each directory source, made by the same identity service
    functions the real paths call: the OpenID backend (`oidc_account_create`), the LDAP
    backend (`memberships_apply` with the directory's group names) and the SCIM views
    (`scim_user_create`, `scim_group_patch`). The real provider, directory and SCIM client
    drive those paths in tests/identity and tests/e2e; here, where every user is asked over
    every read path, starting them for each test would add minutes and test nothing more
    about access, which reads only the groups these functions leave."""
    provider = OidcProvider(
        key="matrix",
        label="Matrix IdP",
        issuer="https://idp.example",
        client_id="ragplatform",
        client_secret="",
        scopes="openid",
        username_claim="preferred_username",
        groups_claim="groups",
        groups_required=True,
        sign_algo="RS256",
    )

    def oidc(name: str, groups: list[str]) -> User:
        profile = Profile(username=name, first_name="", last_name="", email="")
        return oidc_account_create(
            provider=provider, subject=name, profile=profile, groups=groups, request=None
        )

    ldap_user = User.objects.create_user("ldap_reader_b", password=None)
    memberships_apply(user=ldap_user, source=Source.LDAP, external_names=["b-readers", "readers"])
    scim_user = scim_user_create(data={"userName": "scim_reader_a", "active": True})
    for name in ("a-readers", "readers"):
        member = {"op": "add", "path": "members", "value": [{"value": str(scim_user.pk)}]}
        scim_group_patch(group=Group.objects.get(name=name), operations=[member])
    return {
        "oidc_reader_a": oidc("oidc_reader_a", ["a-readers", "readers"]),
        "ldap_reader_b": ldap_user,
        "scim_reader_a": scim_user,
        "oidc_outsider": oidc("oidc_outsider", ["readers", "not-a-group-here"]),
    }
