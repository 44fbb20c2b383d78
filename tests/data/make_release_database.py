"""Fill a database the way release 9c602b8 (the last before ``policy/`` was split by domain)
did, for ``tests/policy/test_release_upgrade.py``: run it from a checkout of that release.

    git worktree add /tmp/release 9c602b8 && cd /tmp/release
    DATABASE_URL=sqlite:////tmp/release.sqlite3 python manage.py migrate
    DATABASE_URL=sqlite:////tmp/release.sqlite3 python manage.py shell < make_release_database.py
    sqlite3 /tmp/release.sqlite3 .dump > tests/data/release-9c602b8.sql

Module paths here are that release's.
"""

from datetime import UTC, datetime

from django.contrib.auth.models import User
from policy.evaluation import evaluate_pod
from policy.services import create_token, load_demo_cluster, seed_demo_policies
from policy.services.sync import plan

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
admin = User.objects.create_user("release-admin", password="not-used-here")
first = load_demo_cluster(nodes=6, seed=3, now=NOW)
load_demo_cluster(nodes=6, seed=3, now=NOW.replace(minute=5))  # a chain's second snapshot
cluster = first.cluster
seed_demo_policies(cluster)
create_token(admin, name="automation")
evaluate_pod(
    cluster,
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}]},
    },
    user=admin,
)
plan(cluster, user=admin)
