"""OpenLDAP's slapd, started by the tests on a free port with a temporary config and database.

Seeded with people and nested groups: ada is in `engineers`, which is a member of `research`
(so ada is in research through nesting), and in `staff`; ben is in `admins`.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import ldap
import ldap.modlist
import pytest

from tests.identity.servers import LDAP_MODULES, SCHEMAS, SLAPD, free_port

BASE = "dc=example,dc=org"
ROOT_DN = f"cn=admin,{BASE}"
ROOT_PASSWORD = "directory-root-secret"
SERVICE_DN = f"cn=service,{BASE}"
SERVICE_PASSWORD = "directory-service-secret"
PEOPLE = f"ou=people,{BASE}"
GROUPS = f"ou=groups,{BASE}"
PLACEHOLDER = f"cn=placeholder,{BASE}"
PASSWORDS = {"ada": "ada-directory-pass", "ben": "ben-directory-pass"}


def person_dn(uid: str) -> str:
    return f"uid={uid},{PEOPLE}"


def group_dn(cn: str) -> str:
    return f"cn={cn},{GROUPS}"


_CONFIG = """\
include {schemas}/core.schema
include {schemas}/cosine.schema
include {schemas}/inetorgperson.schema
modulepath {modules}
moduleload back_mdb
pidfile {folder}/slapd.pid
database mdb
maxsize 10485760
suffix "{base}"
rootdn "{root}"
rootpw {password}
directory {folder}/db
access to attrs=userPassword by self read by anonymous auth by * none
access to * by * read
"""

_ENTRIES: list[tuple[str, dict[str, list[str]]]] = [
    (BASE, {"objectClass": ["dcObject", "organization"], "dc": ["example"], "o": ["Example"]}),
    (PEOPLE, {"objectClass": ["organizationalUnit"], "ou": ["people"]}),
    (GROUPS, {"objectClass": ["organizationalUnit"], "ou": ["groups"]}),
    (
        SERVICE_DN,
        {
            "objectClass": ["person"],
            "cn": ["service"],
            "sn": ["service"],
            "userPassword": [SERVICE_PASSWORD],
        },
    ),
    *[
        (
            person_dn(uid),
            {
                "objectClass": ["inetOrgPerson"],
                "uid": [uid],
                "cn": [uid.title()],
                "givenName": [uid.title()],
                "sn": ["Directory"],
                "mail": [f"{uid}@example.org"],
                "userPassword": [password],
            },
        )
        for uid, password in PASSWORDS.items()
    ],
    # groupOfNames needs a member: the placeholder keeps the group when ada is taken out.
    (
        group_dn("engineers"),
        {"objectClass": ["groupOfNames"], "member": [person_dn("ada"), PLACEHOLDER]},
    ),
    (group_dn("research"), {"objectClass": ["groupOfNames"], "member": [group_dn("engineers")]}),
    (group_dn("staff"), {"objectClass": ["groupOfNames"], "member": [person_dn("ada")]}),
    (group_dn("admins"), {"objectClass": ["groupOfNames"], "member": [person_dn("ben")]}),
]


@dataclass
class Directory:
    folder: Path
    port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def uri(self) -> str:
        return f"ldap://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(SLAPD), "-f", str(self.folder / "slapd.conf"), "-h", f"{self.uri}/", "-d", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        assert self.process.stderr is not None
        pytest.fail(f"slapd did not start: {self.process.stderr.read()[-2000:]!r}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def connection(self) -> ldap.ldapobject.LDAPObject:
        conn = ldap.initialize(self.uri)
        conn.simple_bind_s(ROOT_DN, ROOT_PASSWORD)
        return conn

    def member_remove(self, *, group: str, member: str) -> None:
        self.connection().modify_s(
            group_dn(group), [(ldap.MOD_DELETE, "member", [member.encode()])]
        )

    def member_add(self, *, group: str, member: str) -> None:
        self.connection().modify_s(group_dn(group), [(ldap.MOD_ADD, "member", [member.encode()])])

    def seed(self) -> None:
        conn = self.connection()
        for dn, attributes in _ENTRIES:
            encoded = {name: [v.encode() for v in values] for name, values in attributes.items()}
            conn.add_s(dn, ldap.modlist.addModlist(encoded))


@contextmanager
def ldap_directory(*, folder: Path) -> Iterator[Directory]:
    if not SLAPD.exists():
        pytest.fail("the LDAP tests need OpenLDAP's slapd: run `bash scripts/system-deps.sh`")
    (folder / "db").mkdir()
    config = _CONFIG.format(
        schemas=SCHEMAS,
        modules=LDAP_MODULES,
        folder=folder,
        base=BASE,
        root=ROOT_DN,
        password=ROOT_PASSWORD,
    )
    (folder / "slapd.conf").write_text(config)
    directory = Directory(folder=folder, port=free_port())
    directory.start()
    try:
        directory.seed()
        yield directory
    finally:
        directory.stop()
