"""A database filled by the previous release (9c602b8, before ``policy/`` was split by domain;
``tests/data/make_release_database.py`` made it) upgrades with ``migrate`` and nothing is lost:
every row of every table is still there, and the new code reads all of it (snapshots put
together from their chain, the scheduler configuration built, the decision's explanation
rebuilt, the history, tokens and jobs). Separate processes, as an operator runs an upgrade."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DUMP = ROOT / "tests" / "data" / "release-9c602b8.sql.gz"

READ_EVERYTHING = """
import json
from django.apps import apps
from policy.clusters.models import ClusterSnapshot
from policy.decisions.models import PlacementDecision
from policy.policies.models import SchedulerConfiguration

models = apps.get_app_config("policy").get_models()
rows = {m._meta.db_table: len(list(m._default_manager.all())) for m in models}
snapshots = [len(s.objects) for s in ClusterSnapshot.snapshots.order_by("id")]
documents = [c.build().document["kind"] for c in SchedulerConfiguration.objects.all()]
decisions = [
    (d.pod_name, d.selected_node, len(d.explanation["nodes"]))
    for d in PlacementDecision.objects.all()
]
read = {"rows": rows, "snapshots": snapshots, "documents": documents, "decisions": decisions}
print(json.dumps(read))
"""


def _tables(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as con:
        names = [
            row[0]
            for row in con.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'policy_%'"
            )
        ]
        return {name: con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}


def _manage(db: Path, *args: str, stdin: str | None = None) -> str:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db}",
        "CELERY_BROKER_URL": "",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_a_database_of_the_previous_release_upgrades_with_nothing_lost(tmp_path: Path) -> None:
    db = tmp_path / "release.sqlite3"
    with sqlite3.connect(db) as con:
        con.executescript(gzip.decompress(DUMP.read_bytes()).decode())
    before = _tables(db)
    assert before["policy_placementdecision"] == 1 and before["policy_clustersnapshot"] == 2

    _manage(db, "migrate", "--no-input")
    after = _tables(db)
    assert {name: after[name] for name in before} == before  # every old row kept

    read = json.loads(_manage(db, "shell", stdin=READ_EVERYTHING).strip().splitlines()[-1])
    assert {table: count for table, count in read["rows"].items() if table in before} == {
        table: count for table, count in before.items() if table in read["rows"]
    }
    assert set(read["rows"]) >= {"policy_cluster", "policy_placementdecision", "policy_syncjob"}
    nodes = 6  # the demo cluster the release stored, with its pods and NodeMetrics
    assert len(read["snapshots"]) == 2 and all(count > nodes for count in read["snapshots"])
    assert read["documents"] == ["KubeSchedulerConfiguration"]
    [(pod, node, explained)] = read["decisions"]
    assert pod == "web-0" and node and explained == nodes
