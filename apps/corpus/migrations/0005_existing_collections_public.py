from django.db import migrations


def existing_public(apps, schema_editor):
    # Collections made before access control were readable by everyone: keep them so, so an
    # upgrade changes nothing for existing users. New collections start private.
    apps.get_model("corpus", "Collection").objects.update(public=True)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0004_collection_access_public_reader_writer_groups")]
    operations = [migrations.RunPython(existing_public, migrations.RunPython.noop)]
