from django.contrib.auth.management import create_permissions
from django.db import migrations

# The groups a new install ships with, and the model permissions each needs (app, codename).
# Readers only chat, which needs no model permission; what they may read is the collections'
# reader groups. Editors manage documents in the admin and the API, limited to the collections
# whose writer groups they are in. Auditors read turns and conversations. Analysts read the
# aggregates and the router's figures, never a question's text.
ROLES = {
    "readers": [],
    "editors": [
        ("corpus", "view_collection"),
        ("corpus", "view_document"),
        ("corpus", "add_document"),
        ("corpus", "change_document"),
        ("corpus", "delete_document"),
        ("corpus", "view_chunk"),
    ],
    "auditors": [
        ("answers", "view_conversation"),
        ("answers", "view_turn"),
        ("answers", "view_turnevent"),
        ("answers", "view_citation"),
        ("analytics", "view_category"),
        ("analytics", "view_conversationcategory"),
    ],
    "analysts": [
        ("analytics", "view_category"),
        ("analytics", "view_dailyturncount"),
        ("answers", "view_routerevaluation"),
        ("answers", "view_labelledquery"),
    ],
}


def roles_create(apps, schema_editor):
    # Permissions are created after migrate finishes; on a fresh database they do not exist yet.
    for config in apps.get_app_configs():
        config.models_module = True
        create_permissions(config, verbosity=0, apps=apps)
        config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in ROLES.items():
        group, _ = Group.objects.get_or_create(name=name)
        for app_label, codename in codenames:
            group.permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )


def roles_remove(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0007_router_models_moved_to_answers"),
        ("answers", "0004_turn_event_one_terminal"),
        ("corpus", "0005_existing_collections_public"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(roles_create, roles_remove)]
