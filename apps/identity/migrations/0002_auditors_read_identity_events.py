from django.contrib.auth.management import create_permissions
from django.db import migrations

# Auditors read the identity audit as they read the turn log; nobody edits it.
AUDITOR_PERMISSIONS = ["view_identityevent", "view_externalidentity", "view_groupmapping"]


def auditors_grant(apps, schema_editor):
    config = apps.get_app_config("identity")
    config.models_module = True
    create_permissions(config, verbosity=0, apps=apps)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    auditors, _ = Group.objects.get_or_create(name="auditors")
    auditors.permissions.add(
        *Permission.objects.filter(
            content_type__app_label="identity", codename__in=AUDITOR_PERMISSIONS
        )
    )


def auditors_revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    group = apps.get_model("auth", "Group").objects.filter(name="auditors").first()
    if group is not None:
        group.permissions.remove(
            *Permission.objects.filter(
                content_type__app_label="identity", codename__in=AUDITOR_PERMISSIONS
            )
        )


class Migration(migrations.Migration):
    dependencies = [
        ("identity", "0001_identity_accounts_groups_audit"),
        ("analytics", "0008_roles_readers_editors_auditors_analysts"),
    ]

    operations = [migrations.RunPython(auditors_grant, auditors_revoke)]
