from django.apps import AppConfig
from django.db.models.signals import post_migrate


class PolicyConfig(AppConfig):
    name = "policy"
    verbose_name = "Scheduling policy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from policy.accounts.roles import ensure_role_groups

        post_migrate.connect(ensure_role_groups, sender=self)
        # Imported for their effect: the OpenAPI description of the token authentication
        # class; the Celery tasks, which services enqueue by name (policy.core.broker); the
        # sync's receivers (clusters in automatic push mode are pushed when policies change);
        # the engine tier's questions, answered by name (policy.engine.questions), and what
        # runs before a held snapshot is stepped (policy.clusters.engine.before_step).
        from policy import tasks  # noqa: F401
        from policy.api import schema  # noqa: F401
        from policy.decisions import descheduling, fixes, impact, observed, questions  # noqa: F401
        from policy.policies import rendering  # noqa: F401
        from policy.sync import receivers  # noqa: F401
        from policy.web import questions as page_questions  # noqa: F401
        from policy.web import sweep  # noqa: F401
