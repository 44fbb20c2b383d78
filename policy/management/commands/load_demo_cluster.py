from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from policy.clusters import services as cluster_services
from policy.policies import demo


class Command(BaseCommand):
    help = "Generate a synthetic cluster and store it as a new snapshot of the demo cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", default=cluster_services.DEMO_CLUSTER, help="Cluster name.")
        parser.add_argument("--nodes", type=int, default=60, help="Number of nodes (default 60).")
        parser.add_argument("--seed", type=int, default=7, help="Random seed (default 7).")
        parser.add_argument(
            "--no-policies",
            action="store_true",
            help="Do not give a cluster without a scheduler configuration the demo's "
            "(a profile with LoadAwareScheduling and its default args).",
        )

    def handle(
        self, *args: Any, name: str, nodes: int, seed: int, no_policies: bool, **options: Any
    ) -> None:
        snapshot = cluster_services.load_demo_cluster(name=name, nodes=nodes, seed=seed)
        if not no_policies and demo.seed_demo_policies(snapshot.cluster):
            self.stdout.write("Stored the demo scheduler configuration (LoadAwareScheduling).")
        self.stdout.write(
            self.style.SUCCESS(
                f"Cluster {name!r}: snapshot {snapshot.pk} with {snapshot.node_count} nodes, "
                f"{snapshot.pod_count} bound and {snapshot.pending_pod_count} pending pods, "
                f"{snapshot.node_metric_count} NodeMetrics."
            )
        )
