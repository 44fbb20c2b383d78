"""Create the role groups: viewer, editor, operator (see policy/roles.py)."""

from django.db import migrations

ROLES = ("viewer", "editor", "operator")


def create_roles(apps, schema_editor):
    group = apps.get_model("auth", "Group")
    for name in ROLES:
        group.objects.get_or_create(name=name)


def delete_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("policy", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_roles, delete_roles)]
