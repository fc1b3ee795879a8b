"""API tokens stored hashed: every key DRF's authtoken table holds becomes its keyed digest
(ragplatform/api_tokens.py), so each script's existing token keeps working and the table no
longer holds a key anyone could sign in with. Irreversible: a digest gives no key back.

Set RAG_API_TOKEN_HASH_KEY (or keep DJANGO_SECRET_KEY) before migrating: the digests are
made with the key configured now.
"""

from django.conf import settings
from django.db import migrations

from ragplatform.api_tokens import DIGEST_CHARS, token_digest


def keys_hash(apps, schema_editor):  # type: ignore[no-untyped-def]
    token_model = apps.get_model("authtoken", "Token")
    for key in list(token_model.objects.values_list("key", flat=True)):
        digest = token_digest(key, hash_key=settings.RAG_API_TOKEN_HASH_KEY)
        assert len(digest) == DIGEST_CHARS
        # The key is the primary key: an UPDATE renames the row in place.
        token_model.objects.filter(key=key).update(key=digest)


class Migration(migrations.Migration):
    dependencies = [
        ("ragplatform", "0002_worker_heartbeats_and_stored_files"),
        ("authtoken", "0004_alter_tokenproxy_options"),
    ]

    operations = [migrations.RunPython(keys_hash, elidable=False)]
