"""RAG_ENV=production: `check --deploy` is clean, and every unsafe setting stops start-up."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from ragplatform.security import CONTENT_SECURITY_POLICY

ROOT = Path(__file__).resolve().parent.parent.parent
GOOD_KEY = "k3y-" + "".join(chr(ord("a") + i % 26) + str(i % 10) for i in range(40))
PRODUCTION = {
    "RAG_ENV": "production",
    "DJANGO_DEBUG": "false",
    "DJANGO_SECRET_KEY": GOOD_KEY,
    "DJANGO_ALLOWED_HOSTS": "rag.example.org",
}
SETTINGS_PROBE = """
import json, django
from django.conf import settings
django.setup()
print(json.dumps({
    "session_secure": settings.SESSION_COOKIE_SECURE,
    "csrf_secure": settings.CSRF_COOKIE_SECURE,
    "hsts": settings.SECURE_HSTS_SECONDS,
    "ssl_redirect": settings.SECURE_SSL_REDIRECT,
    "proxy_header": settings.SECURE_PROXY_SSL_HEADER,
    "whitenoise": "whitenoise.middleware.WhiteNoiseMiddleware" in settings.MIDDLEWARE,
    "auth": settings.REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"],
}))
"""


def _run(args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "RAG_ENV"))},
        "DJANGO_SETTINGS_MODULE": "ragplatform.settings",
        **extra,
    }
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_check_deploy_with_valid_production_settings_prints_no_warnings() -> None:
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], **PRODUCTION)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "WARNINGS" not in result.stderr + result.stdout
    assert "System check identified no issues" in result.stdout


def test_production_turns_on_secure_transport_and_turns_off_basic_auth() -> None:
    result = _run(["-c", SETTINGS_PROBE], **PRODUCTION, RAG_PROXY_SSL_HEADER="X-Forwarded-Proto")
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["session_secure"] and values["csrf_secure"] and values["ssl_redirect"]
    assert values["hsts"] == 31_536_000
    assert values["proxy_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert values["whitenoise"]
    assert values["auth"] == [
        "ragplatform.login_throttle.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ]  # no Basic auth in production


def test_development_keeps_cookies_plain_and_basic_auth() -> None:
    result = _run(["-c", SETTINGS_PROBE], RAG_ENV="development")
    values = json.loads(result.stdout)
    assert not values["session_secure"] and values["hsts"] == 0
    assert "rest_framework.authentication.BasicAuthentication" in values["auth"]


@pytest.mark.parametrize(
    ("unsafe", "variable"),
    [
        ({"DJANGO_DEBUG": "true"}, "DJANGO_DEBUG"),
        ({"DJANGO_SECRET_KEY": ""}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": "short-key"}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": "ab" * 40}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": "django-insecure-" + GOOD_KEY}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_ALLOWED_HOSTS": "*"}, "DJANGO_ALLOWED_HOSTS"),
        ({"DJANGO_ALLOWED_HOSTS": "rag.example.org,*"}, "DJANGO_ALLOWED_HOSTS"),
        ({"DJANGO_ALLOWED_HOSTS": ""}, "DJANGO_ALLOWED_HOSTS"),
    ],
)
def test_each_unsafe_production_setting_stops_start_up(
    unsafe: dict[str, str], variable: str
) -> None:
    result = _run(["manage.py", "check"], **{**PRODUCTION, **unsafe})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert variable in result.stderr.strip().splitlines()[-1]


@pytest.mark.django_db
def test_every_page_carries_the_content_security_policy(client: Client) -> None:
    response = client.get("/accounts/login/")
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert b"<script>" not in response.content


def test_templates_have_no_inline_scripts_or_handlers() -> None:
    # The policy blocks inline code; json_script data blocks are never executed, so they pass.
    handler = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        for tag in re.findall(r"<script\b[^>]*>", text, re.IGNORECASE):
            assert "src=" in tag or 'type="application/json"' in tag, f"{template}: {tag}"
        assert not handler.search(text), f"{template}: inline event handler"


def test_collected_scripts_import_each_other_by_their_hashed_names(tmp_path: Path) -> None:
    done = _run(
        ["manage.py", "collectstatic", "--noinput", "-v0"],
        **PRODUCTION,
        RAG_STATIC_ROOT=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    chat = (tmp_path / manifest["answers/chat.js"]).read_text(encoding="utf-8")
    helpers = Path(manifest["ragplatform/helpers.js"]).name
    assert f'from "../ragplatform/{helpers}"' in chat
