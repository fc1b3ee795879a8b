"""Bad environment values stop start-up with an error that names the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from ragplatform import env

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("reader", "value", "name"),
    [
        (lambda: env.env_bool("X_FLAG"), "maybe", "X_FLAG"),
        (lambda: env.env_int("X_COUNT", 1), "ten", "X_COUNT"),
        (lambda: env.env_int("X_COUNT", 1, minimum=5), "2", "X_COUNT"),
        (lambda: env.env_float("X_RATIO", 0.5, low=0, high=1), "1.5", "X_RATIO"),
        (lambda: env.env_choice("X_MODE", "a", ("a", "b")), "c", "X_MODE"),
    ],
)
def test_bad_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, reader: object, value: str, name: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ImproperlyConfigured, match=name):
        reader()  # type: ignore[operator]


def test_secret_from_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = tmp_path / "key"
    secret.write_text("s3cret\n")
    monkeypatch.delenv("X_SECRET", raising=False)
    monkeypatch.setenv("X_SECRET_FILE", str(secret))
    assert env.env_secret("X_SECRET") == "s3cret"


def _settings_import(**extra: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "ragplatform.settings", **extra}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


def test_settings_refuse_a_bad_threshold() -> None:
    result = _settings_import(RAG_ROUTER_BUMP_THRESHOLD="high")
    assert result.returncode != 0
    assert "RAG_ROUTER_BUMP_THRESHOLD" in result.stderr


def test_production_requires_a_secret_key() -> None:
    result = _settings_import(RAG_ENV="production", DJANGO_SECRET_KEY="")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_database_url_must_be_postgresql() -> None:
    result = _settings_import(DATABASE_URL="mysql://u@h/db")
    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr


def _databases(**extra: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "ragplatform.settings", **extra}
    code = "import django; django.setup(); from django.conf import settings as s; "
    code += "d = s.DATABASES['default']; print(d['OPTIONS'], d.get('CONN_MAX_AGE'), "
    code += "d['CONN_HEALTH_CHECKS'])"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True
    )


def test_database_connections_come_from_a_bounded_pool_by_default() -> None:
    for extra in ({}, {"DATABASE_URL": "postgres://u@db.internal/rag"}):
        result = _databases(**extra, DATABASE_POOL_MAX_SIZE="7")
        assert "'pool': {'min_size': 2, 'max_size': 7, 'timeout': 20.0}" in result.stdout
        # Each connection is checked before it is handed out (a restarted database): Django
        # then gives the pool ConnectionPool.check_connection.
        assert result.stdout.rstrip().endswith("True")
    assert _databases(DATABASE_POOL="false").stdout.startswith("{}")


@pytest.mark.parametrize(
    ("extra", "name"),
    [
        ({"DATABASE_POOL_MIN_SIZE": "5", "DATABASE_POOL_MAX_SIZE": "3"}, "DATABASE_POOL_MAX_SIZE"),
        ({"DATABASE_URL": "postgres://u@h/db", "DATABASE_CONN_MAX_AGE": "60"}, "DATABASE_POOL"),
    ],
)
def test_contradictory_pool_settings_stop_start_up(extra: dict[str, str], name: str) -> None:
    result = _settings_import(**extra)
    assert result.returncode != 0
    assert name in result.stderr
