from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from policy import services


class Command(BaseCommand):
    help = "Generate a synthetic cluster and store it as a new snapshot of the demo cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", default=services.DEMO_CLUSTER, help="Cluster name.")
        parser.add_argument("--nodes", type=int, default=60, help="Number of nodes (default 60).")
        parser.add_argument("--seed", type=int, default=7, help="Random seed (default 7).")

    def handle(self, *args: Any, name: str, nodes: int, seed: int, **options: Any) -> None:
        snapshot = services.load_demo_cluster(name=name, nodes=nodes, seed=seed)
        self.stdout.write(
            self.style.SUCCESS(
                f"Cluster {name!r}: snapshot {snapshot.pk} with {snapshot.node_count} nodes, "
                f"{snapshot.pod_count} bound and {snapshot.pending_pod_count} pending pods, "
                f"{snapshot.node_metric_count} NodeMetrics."
            )
        )
