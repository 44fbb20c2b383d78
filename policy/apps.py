from django.apps import AppConfig
from django.db.models.signals import post_migrate


class PolicyConfig(AppConfig):
    name = "policy"
    verbose_name = "Scheduling policy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from policy.roles import ensure_role_groups

        post_migrate.connect(ensure_role_groups, sender=self)
        # Registers the OpenAPI description of the token authentication class.
        from policy.api import schema  # noqa: F401
