from __future__ import annotations

import getpass
import json
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.corpus.ingestion.services import collection_get_or_create
from apps.sources.credentials import credentials_parse
from apps.sources.models import Source, SourceKind
from apps.sources.sync.services import source_create


class Command(BaseCommand):
    help = (
        "Add a source that fills a collection. Credentials never come from the command line: "
        "from the environment variable --credentials-env names, or a prompt (--prompt)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=SourceKind.values)
        parser.add_argument(
            "location", help="folder, s3://bucket/prefix, URL, smb://host/share, imaps://host/INBOX"
        )
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--name", help="the source's name (default: the location)")
        parser.add_argument("--every", type=int, help="sync every this many minutes")
        parser.add_argument("--include", action="append", default=[], help="glob to take")
        parser.add_argument("--exclude", action="append", default=[], help="glob to leave")
        parser.add_argument(
            "--credentials-env", help="an environment variable holding the credentials (JSON)"
        )
        parser.add_argument("--prompt", action="store_true", help="ask for the credentials")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"] or options["location"]
        if Source.objects.filter(name=name).exists():
            raise CommandError(f"A source named {name!r} exists already.")
        source = source_create(
            name=name,
            kind=SourceKind(options["kind"]),
            location=options["location"],
            collection=collection_get_or_create(name=options["collection"]),
            credentials=_credentials(options),
            include="\n".join(options["include"]),
            exclude="\n".join(options["exclude"]),
            every_minutes=options["every"],
        )
        self.stdout.write(json.dumps({"source": source.name, "id": source.pk}))


def _credentials(options: dict[str, Any]) -> dict[str, str]:
    text = ""
    if variable := options["credentials_env"]:
        if variable not in os.environ:
            raise CommandError(f"The environment variable {variable} is not set.")
        text = os.environ[variable]
    elif options["prompt"]:
        text = getpass.getpass("Credentials (JSON, or name=value;name=value): ")
        text = text.replace(";", "\n") if not text.strip().startswith("{") else text
    try:
        return credentials_parse(text=text)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
