from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from policy.accounts.changes import ChangeContext
from policy.clusters.gateway.discovery import SCHEDULER_CONFIGMAP_PLACES
from policy.clusters.gateway.errors import GatewayError
from policy.core.choices import ClusterKind
from policy.policies.services import PolicyInvalid
from policy.sync.connect import (
    DESCHEDULER_CONFIGMAP,
    SLO_CONFIGMAP,
    add_cluster,
    parse_configmap,
)

PLACES = "; ".join(f"{place} ({place.source})" for place in SCHEDULER_CONFIGMAP_PLACES)


class Command(BaseCommand):
    help = (
        "Connect a cluster: check that its API server answers, find its scheduler's ConfigMap, "
        "check schedboard's permissions, and store it. Nothing is written to the cluster."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="A name for the cluster (lowercase letters, digits, -).")
        how = parser.add_mutually_exclusive_group(required=True)
        how.add_argument("--kubeconfig", metavar="PATH", help="A kubeconfig file on this server.")
        how.add_argument(
            "--in-cluster",
            action="store_true",
            help="Use the pod's service account (schedboard runs in the cluster; see deploy/).",
        )
        parser.add_argument("--context", default="", help="Kubeconfig context (default: current).")
        parser.add_argument(
            "--scheduler-configmap",
            metavar="NAMESPACE/NAME[:KEY]",
            help=f"Where the scheduler reads its configuration. Default: looked for in {PLACES}.",
        )
        parser.add_argument(
            "--slo-configmap",
            metavar="NAMESPACE/NAME",
            default=f"{SLO_CONFIGMAP.namespace}/{SLO_CONFIGMAP.name}",
            help="Koordinator's slo-controller ConfigMap (default: %(default)s).",
        )
        parser.add_argument(
            "--descheduler-configmap",
            metavar="NAMESPACE/NAME[:KEY]",
            default=str(DESCHEDULER_CONFIGMAP),
            help="Where koord-descheduler reads its configuration (default: %(default)s).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            scheduler = (
                parse_configmap(options["scheduler_configmap"])
                if options["scheduler_configmap"]
                else None
            )
            slo = parse_configmap(options["slo_configmap"], SLO_CONFIGMAP.key)
            descheduler = parse_configmap(
                options["descheduler_configmap"], DESCHEDULER_CONFIGMAP.key
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        kind = ClusterKind.IN_CLUSTER if options["in_cluster"] else ClusterKind.KUBECONFIG
        try:
            connected = add_cluster(
                options["name"],
                kind=kind,
                ctx=ChangeContext.system(),
                kubeconfig_path=options["kubeconfig"] or "",
                context=options["context"],
                scheduler_configmap=scheduler,
                slo_configmap=slo,
                descheduler_configmap=descheduler,
            )
        except GatewayError as exc:
            raise CommandError(f"cannot connect: {exc}") from None
        except PolicyInvalid as exc:
            raise CommandError(f"not stored: {exc}") from None
        for line in connected.report():
            style = self.style.WARNING if line.startswith(("missing", "apply")) else str
            self.stdout.write(style(line))
        cluster = connected.cluster
        self.stdout.write(
            self.style.SUCCESS(
                f"Cluster {cluster.name!r} stored (id {cluster.pk}). Read it with the Sync page's "
                f"'Refresh from cluster' or POST /api/v1/clusters/{cluster.pk}/refresh/."
            )
        )
