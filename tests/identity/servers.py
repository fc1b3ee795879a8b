"""The real identity servers the identity tests start: an OpenID provider and an LDAP directory.

Each starts on a free loopback port in a temporary folder and is stopped at the end. A missing
binary or package fails the test with what to install (scripts/system-deps.sh installs both);
it never skips.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

PROVIDER_DIR = Path(__file__).resolve().parent / "oidc_provider"
CLIENT_ID = "ragplatform"
CLIENT_SECRET = "identity-tests-client-secret"
SLAPD = Path("/usr/sbin/slapd")
SCHEMAS = Path("/etc/ldap/schema")
LDAP_MODULES = Path("/usr/lib/ldap")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(process: subprocess.Popen[str], *, what: str, seconds: float = 20) -> None:
    assert process.stdout is not None
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if "ready" in line:
            return
        if process.poll() is not None:
            break
    process.kill()
    pytest.fail(f"{what} did not start: {process.stdout.read()[-2000:]}")


@dataclass(frozen=True)
class OpenIdProvider:
    issuer: str
    port: int

    def misbehave(self, mode: str) -> None:
        requests.post(
            f"{self.issuer}/_test/mode", json={"mode": mode}, timeout=5
        ).raise_for_status()


def _signing_key() -> dict[str, object]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk: dict[str, object] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key))
    # PyJWT marks a private key sign-only; the provider also verifies its own ID token hints.
    jwk.pop("key_ops", None)
    return {**jwk, "kid": "identity-tests", "alg": "RS256", "use": "sig"}


def _provider_config(
    *, rp_url: str, accounts: dict[str, dict[str, object]], client_id: str, callback_path: str
) -> dict[str, object]:
    return {
        "signing_key": _signing_key(),
        "accounts": accounts,
        "client": {
            "client_id": client_id,
            "client_secret": CLIENT_SECRET,
            "redirect_uris": [f"{rp_url}{callback_path}"],
            "post_logout_redirect_uris": [f"{rp_url}/accounts/login/"],
            "response_types": ["code"],
            "grant_types": ["authorization_code"],
            "token_endpoint_auth_method": "client_secret_post",
        },
    }


@contextmanager
def openid_provider(
    *,
    rp_url: str,
    accounts: dict[str, dict[str, object]],
    folder: Path,
    client_id: str = CLIENT_ID,
    callback_path: str = "/accounts/oidc/callback/",
    host: str = "127.0.0.1",
) -> Iterator[OpenIdProvider]:
    """One provider with one client, whose redirect URI is `callback_path` on `rp_url`; start
    it twice (two folders) for two providers with their own issuers and clients. `host` names
    the issuer: `localhost` keeps a second provider's cookies apart from the first's in the
    browser, which keeps cookies per host, not per port."""
    node = shutil.which("node")
    if node is None or not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.fail(
            "the OpenID provider needs Node and the oidc-provider package: "
            "run `bash scripts/system-deps.sh` (npm install --prefix tests/identity/oidc_provider)"
        )
    port = free_port()
    issuer = f"http://{host}:{port}"
    config = folder / "provider.json"
    settings = _provider_config(
        rp_url=rp_url, accounts=accounts, client_id=client_id, callback_path=callback_path
    )
    config.write_text(json.dumps(settings))
    log = (folder / "provider.log").open("w")
    process = subprocess.Popen(
        [node, str(PROVIDER_DIR / "provider.mjs"), str(port), issuer, str(config)],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        cwd=PROVIDER_DIR,
    )
    _wait_ready(process, what="the OpenID provider")
    try:
        yield OpenIdProvider(issuer=issuer, port=port)
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
