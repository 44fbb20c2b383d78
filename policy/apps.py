from django.apps import AppConfig


class PolicyConfig(AppConfig):
    name = "policy"
    verbose_name = "Scheduling policy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the OpenAPI description of the token authentication class.
        from policy.api import schema  # noqa: F401
