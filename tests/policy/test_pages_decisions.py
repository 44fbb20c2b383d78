"""A stored decision (winner, ranking with per-plugin scores, filtered nodes grouped by reason,
LoadAware's arithmetic) and the decision history with the API's filters."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from policy.clusters.models import ClusterSnapshot
from policy.clusters.services import load_demo_cluster
from policy.core.choices import DecisionSource
from policy.decisions.models import PlacementDecision
from policy.decisions.services import evaluate_pod
from tests.conftest import NOW
from tests.policy.builders import loadaware_configuration

pytestmark = pytest.mark.django_db


def pod(name: str = "web-1", cpu: str = "1", namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]},
    }


def evaluated(snapshot: ClusterSnapshot, **kwargs: Any) -> PlacementDecision:
    return evaluate_pod(snapshot.cluster, pod(**kwargs), source=DecisionSource.UI)


def test_decision_page_shows_winner_ranking_and_filtered_groups(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    decision = evaluated(demo_snapshot, cpu="6")
    client.force_login(viewer)
    response = client.get(f"/decisions/{decision.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"<title>Decision {decision.pk}: default/web-1 · schedboard</title>" in html
    view = response.context["view"]
    assert view.selected == decision.selected_node == view.winner.name
    assert view.feasible + view.filtered == 12 == view.total
    assert [name for name, _ in view.score_plugins] == [
        "TaintToleration",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ]
    totals = [node.total for node in view.ranked]
    assert totals == sorted(totals, reverse=True)
    for node in view.ranked:
        assert node.total == sum(cell.weighted for cell in node.scores if cell)
    # Every filtered node is in a group for each of its failing plugins, reasons verbatim.
    filtered = {e["name"]: e for e in decision.explanation["nodes"] if not e["feasible"]}
    grouped = {n.name for g in view.groups for n in g.nodes}
    assert grouped == set(filtered)
    for group in view.groups:
        assert escape(group.reason) in html
        for node in group.nodes:
            failing = filtered[node.name]["filters"]
            assert any(f["plugin"] == group.plugin and f["code"] != "Success" for f in failing)
    assert "node(s) were unschedulable" in html  # the cordoned node


def test_big_decisions_show_top_nodes_then_expand(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    load_demo_cluster(nodes=60, now=NOW)
    decision = evaluated(demo_snapshot)
    client.force_login(viewer)
    response = client.get(f"/decisions/{decision.pk}/")
    view = response.context["view"]
    assert view.feasible > 10 and len(response.context["ranked"]) == 10
    assert f"Show all {view.feasible} ranked nodes" in response.content.decode()
    response = client.get(f"/decisions/{decision.pk}/?ranked=all")
    assert len(response.context["ranked"]) == view.feasible
    group = max(view.groups, key=lambda g: g.count)
    response = client.get(f"/decisions/{decision.pk}/?group={group.number}")
    assert response.context["open_group"].number == group.number
    assert len(response.context["group_page"].object_list) == group.count


def test_loadaware_arithmetic_behind_the_verdict(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    loadaware_configuration(demo_snapshot.cluster, usage_thresholds={"cpu": 35, "memory": 90})
    decision = evaluated(demo_snapshot, cpu="500m")
    client.force_login(viewer)
    html = client.get(f"/decisions/{decision.pk}/").content.decode()
    refused = [
        e
        for e in decision.explanation["nodes"]
        if any(
            f["plugin"] == "LoadAwareScheduling" and f["reason"] and "usage" in f["reason"]
            for f in e["filters"]
        )
    ]
    assert refused
    summary = refused[0]["details"]["LoadAwareScheduling"]["summary"]
    assert "measured +" in summary and "> 35% threshold from args" in summary
    assert escape(summary) in html
    page = client.get(f"/decisions/{decision.pk}/nodes/{refused[0]['name']}/")
    assert page.status_code == 200
    lines = page.context["la_lines"]
    assert any(line.exceeds for line in lines)
    assert "The filter's arithmetic" in page.content.decode()


def test_decision_node_page(client: Client, viewer: User, demo_snapshot: ClusterSnapshot) -> None:
    decision = evaluated(demo_snapshot)
    client.force_login(viewer)
    feasible = decision.explanation["nodes"][0]
    response = client.get(f"/decisions/{decision.pk}/nodes/{feasible['name']}/")
    assert response.status_code == 200 and response.context["rank"] == 1
    html = response.content.decode()
    for score in feasible["scores"]:
        assert f'<th scope="row">{score["plugin"]}</th>' in html
    # ImageLocality has its own card: the pod's container images, whether the node holds them.
    il = response.context["il"]
    assert [line.container for line in il.lines] == ["app"] and not il.lines[0].on_node
    assert 'id="il-heading"' in html and "not on this node" in html
    assert client.get(f"/decisions/{decision.pk}/nodes/nope/").status_code == 404
    assert client.get("/decisions/999999/").status_code == 404


def test_history_filters_and_pages(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    for k in range(3):
        evaluated(demo_snapshot, name=f"web-{k}", namespace="shop")
    huge = evaluated(demo_snapshot, name="huge", cpu="1000")
    client.force_login(viewer)
    response = client.get("/decisions/")
    assert response.status_code == 200
    assert response.context["page_obj"].paginator.count == 4
    html = response.content.decode()
    assert "<title>Decisions · schedboard</title>" in html
    for field in ("pod", "namespace", "node", "profile", "outcome", "created_after"):
        assert f'for="id_{field}"' in html
    assert 'type="datetime-local"' in html

    def names(query: str) -> list[str]:
        page = client.get(f"/decisions/?{query}").context["page_obj"]
        return sorted(d.pod_name for d in page.object_list)

    assert names("namespace=shop") == ["web-0", "web-1", "web-2"]
    assert names("pod=huge") == ["huge"]
    assert names("outcome=unschedulable") == ["huge"]
    node = PlacementDecision.objects.get(pod_name="web-0").selected_node
    assert "web-0" in names(f"node={node}")
    assert len(names("profile=default-scheduler")) == 4
    later = (timezone.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    assert names(f"created_after={later}") == []
    assert len(names(f"created_before={later}")) == 4
    assert f'href="/decisions/{huge.pk}/"' in html
    response = client.get("/decisions/?outcome=bogus")
    assert response.context["invalid"] and b"Some filters are invalid" in response.content
    # Text filters match any part of the value, in any case, and say so.
    assert names("pod=WEB") == ["web-0", "web-1", "web-2"]
    assert names("namespace=Sho") == ["web-0", "web-1", "web-2"]
    assert len(names("profile=DEFAULT")) == 4
    assert "Pod name contains" in html
    # Why a pod was not placed is a column of the list.
    assert huge.message.startswith("0/") and huge.message[:40] in html


def test_history_sorts_by_any_column(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    for name in ("b-pod", "c-pod", "a-pod"):
        evaluated(demo_snapshot, name=name)
    client.force_login(viewer)

    def order(query: str) -> list[str]:
        return [d.pod_name for d in client.get(f"/decisions/?{query}").context["page_obj"]]

    assert order("") == ["a-pod", "c-pod", "b-pod"]  # newest first
    assert order("sort=pod") == ["a-pod", "b-pod", "c-pod"]
    assert order("sort=-pod") == ["c-pod", "b-pod", "a-pod"]
    html = client.get("/decisions/?sort=pod&namespace=default").content.decode()
    assert 'aria-sort="ascending"' in html
    [link] = re.findall(r'<a href="\?([^"]*)" title="Sort by pod">', html)
    assert parse_qs(link.replace("&amp;", "&")) == {"namespace": ["default"], "sort": ["-pod"]}


def test_history_pagination(client: Client, viewer: User, demo_snapshot: ClusterSnapshot) -> None:
    first = evaluated(demo_snapshot)
    rows = [
        PlacementDecision(
            **{
                f.name: getattr(first, f.name)
                for f in PlacementDecision._meta.concrete_fields
                if f.name not in ("id", "created")
            }
        )
        for _ in range(60)
    ]
    PlacementDecision.objects.bulk_create(rows)
    client.force_login(viewer)
    response = client.get("/decisions/?page=2")
    page = response.context["page_obj"]
    assert page.number == 2 and len(page.object_list) == 11
    caption = response.content.decode().split('class="muted table-caption">')[1].split("</p>")[0]
    assert caption.startswith("61 decisions ·") and "match" not in caption


def test_history_needs_a_role(client: Client, nobody: User) -> None:
    client.force_login(nobody)
    assert client.get("/decisions/").status_code == 403


def test_the_schedulers_own_decisions_are_filtered_by_agreement(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    from policy.decisions import evaluation, services
    from tests.conftest import engine_decision
    from tests.scoring.builders import make_container, make_pod

    cluster = demo_snapshot.cluster
    manifest = make_pod("bound-1", containers=[make_container("a", {"cpu": "100m"})])
    decision = engine_decision(cluster.latest_snapshot(), manifest)
    other = next(n for n in decision.cycle.snapshot.node_names if not decision.compare(n).agrees)
    for actual, digest in ((decision.selected_node, "a"), (other, "b")):
        evaluated = evaluation.run(cluster, manifest, actual_node=actual or "")
        services.record(cluster, manifest, evaluated, digest=digest, source=DecisionSource.CLUSTER)
    client.force_login(viewer)
    agrees = client.get("/decisions/?agreement=agrees").context["page_obj"].object_list
    assert [d.actual_node for d in agrees] == [decision.selected_node]
    page = client.get("/decisions/?source=cluster&agreement=disagrees")
    [shown] = page.context["page_obj"].object_list
    assert shown.actual_node == other and shown.agreement == "disagrees"
    assert f"scheduler chose {other}" in page.content.decode()


def test_the_dashboard_shows_agreement_with_the_scheduler_per_profile(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    from policy.decisions import evaluation, services
    from tests.conftest import engine_decision
    from tests.scoring.builders import make_container, make_pod

    cluster = demo_snapshot.cluster
    manifest = make_pod("bound-2", containers=[make_container("a", {"cpu": "100m"})])
    decision = engine_decision(cluster.latest_snapshot(), manifest)
    worse = next(n for n in decision.cycle.snapshot.node_names if not decision.compare(n).agrees)
    for n, actual in enumerate([decision.selected_node or "", decision.selected_node or "", worse]):
        evaluated = evaluation.run(cluster, manifest, actual_node=actual)
        services.record(cluster, manifest, evaluated, digest=str(n), source=DecisionSource.CLUSTER)
    client.force_login(viewer)
    page = client.get(f"/?cluster={cluster.pk}")
    [row] = page.context["agreement"]
    assert (row["profile"], row["agree"], row["total"], row["rate"]) == (
        decision.profile,
        2,
        3,
        67,
    )
    assert "67% of 3 bindings (2 agree)" in page.content.decode()


def test_node_page_explains_topology_spread_and_pod_affinity(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """The two plugins that look at other pods get their own cards: the domain, how many pods
    matched there (and which), and what that means for the node."""
    bound = next(
        o for o in demo_snapshot.objects if o["kind"] == "Pod" and o["spec"].get("nodeName")
    )
    namespace = bound["metadata"]["namespace"]
    [(key, value)] = list(bound["metadata"]["labels"].items())[:1]
    selector = {"matchLabels": {key: value}}
    manifest = pod(name="spread-1", namespace=namespace)
    manifest["metadata"]["labels"] = {key: value}
    manifest["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": selector,
        }
    ]
    manifest["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    decision = evaluate_pod(demo_snapshot.cluster, manifest, source=DecisionSource.UI)
    client.force_login(viewer)
    node = bound["spec"]["nodeName"]
    response = client.get(f"/decisions/{decision.pk}/nodes/{node}/")
    html = response.content.decode()
    assert (
        'id="pts-heading">PodTopologySpread' in html and 'id="ipa-heading">InterPodAffinity' in html
    )
    [spread] = response.context["spread"]
    assert spread.kind == "DoNotSchedule" and spread.domain.startswith(
        "topology.kubernetes.io/zone="
    )
    assert int(spread.matching.split()[0]) >= 1 and "skew" in spread.meaning
    anti = next(
        line for line in response.context["affinity"] if line.kind == "required anti-affinity"
    )
    assert anti.domain == f"kubernetes.io/hostname={node}"
    assert f"{namespace}/{bound['metadata']['name']}" in anti.pods  # the pod that blocks it
    assert escape(f"{namespace}/{bound['metadata']['name']}") in html
    assert not [
        p for p, _ in response.context["others"] if p in ("PodTopologySpread", "InterPodAffinity")
    ]


def test_two_decisions_side_by_side(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """The same pod asking for more: fewer nodes fit, the page puts those nodes first."""
    small = evaluated(demo_snapshot, name="grow", cpu="1")
    big = evaluated(demo_snapshot, name="grow", cpu="20")
    client.force_login(viewer)
    detail = client.get(f"/decisions/{big.pk}/").content.decode()
    assert f'href="/decisions/compare/?a={big.pk}"' in detail  # previous decision of the pod
    assert (
        f'/decisions/compare/?a={small.pk}"'
        not in client.get(f"/decisions/{small.pk}/").content.decode()
    )  # the first decision of a pod has none
    response = client.get(f"/decisions/compare/?a={big.pk}")
    assert (response.context["a"].pk, response.context["b"].pk) == (small.pk, big.pk)
    comparison = response.context["comparison"]
    assert comparison.changed == small.feasible_nodes - big.feasible_nodes > 0
    first = comparison.lines[0]
    assert first.changed and first.a.rank is not None and first.b.rank is None
    assert first.b.reason.startswith("NodeResourcesFit: Insufficient cpu")
    assert comparison.total_nodes == 12
    explicit = client.get(f"/decisions/compare/?a={small.pk}&b={big.pk}")
    assert explicit.context["comparison"].changed == comparison.changed
    assert client.get("/decisions/compare/?a=x").status_code == 404
    assert client.get(f"/decisions/compare/?a={small.pk}").status_code == 404  # no earlier one


def test_the_page_says_when_the_clusters_scheduler_may_rank_differently(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """kube-scheduler's default profile scores with DynamicResources, which the engine does not
    model: the ranking is exact for what is modelled, and the page says what is not."""
    decision = evaluated(demo_snapshot, name="ranked", cpu="1")
    assert decision.explanation["rankingMayDiffer"] is True
    because = decision.explanation["rankingMayDifferBecause"]
    assert "DynamicResources" in because
    client.force_login(viewer)
    html = client.get(f"/decisions/{decision.pk}/").content.decode()
    assert "may rank these nodes differently" in html and ", ".join(because) in html
    lonely = evaluated(demo_snapshot, name="huge", cpu="1000")  # no node: nothing to rank
    html = client.get(f"/decisions/{lonely.pk}/").content.decode()
    assert "may rank these nodes differently" not in html


def test_groups_open_the_largest_and_merge_result_codes_of_one_reason(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """Insufficient cpu is one group even when some nodes are UnschedulableAndUnresolvable
    (the pod asks for more than they have at all) and others Unschedulable."""
    decision = evaluated(demo_snapshot, cpu="14")
    client.force_login(viewer)
    response = client.get(f"/decisions/{decision.pk}/")
    html = response.content.decode()
    view = response.context["view"]
    reasons = [(g.plugin, g.reason) for g in view.groups]
    assert len(reasons) == len(set(reasons))
    cpu = next(g for g in view.groups if g.reason == "Insufficient cpu")
    codes = {
        f["code"]
        for e in decision.explanation["nodes"]
        for f in e["filters"]
        if f["reason"] == "Insufficient cpu" or "Insufficient cpu" in f.get("reasons", [])
    }
    assert {code for code, _ in cpu.code_counts} == codes
    assert sum(count for _, count in cpu.code_counts) == cpu.count
    largest = view.groups[0]
    assert largest.count == max(g.count for g in view.groups)
    opened = re.findall(r'<details class="group" open id="group-(\d+)">', html)
    assert opened == [str(g.number) for g in view.groups if g.number == 1 or g.count <= 3]


def test_node_selector_groups_name_the_label_and_the_values_nodes_have(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    manifest = pod(name="on-gpu")
    manifest["spec"]["nodeSelector"] = {"pool": "gpu"}
    decision = evaluate_pod(demo_snapshot.cluster, manifest, source=DecisionSource.UI)
    client.force_login(viewer)
    response = client.get(f"/decisions/{decision.pk}/")
    group = next(g for g in response.context["view"].groups if g.plugin == "NodeAffinity")
    pools: dict[str, int] = {}
    for entry in decision.explanation["nodes"]:
        if any(f["plugin"] == "NodeAffinity" and f["code"] != "Success" for f in entry["filters"]):
            value = entry["details"]["NodeAffinity"]["nodeSelectorMismatches"]["pool"]
            pools[value] = pools.get(value, 0) + 1
    counts = ", ".join(
        f"pool={value} ({count})" for value, count in sorted(pools.items(), key=lambda i: -i[1])
    )
    assert group.hints == [f"needs pool=gpu; these nodes have {counts}"]
    assert escape(group.hints[0]) in response.content.decode()


def test_skipped_score_plugins_are_stated_with_weights_and_why(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    decision = evaluated(demo_snapshot, cpu="1")
    client.force_login(viewer)
    html = client.get(f"/decisions/{decision.pk}/").content.decode()
    section = html.split('id="skipped-scores"')[1].split("</section>")[0]
    for plugin in ("NodeAffinity", "PodTopologySpread", "InterPodAffinity"):
        assert f"<strong>{plugin}</strong> (weight 2):" in section
    assert "PreScore returned Skip" in section and 'class="muted"' not in section
    unmodelled = html.split('id="unmodelled"')[1].split("</section>")[0]
    assert "<strong>DynamicResources</strong> (score weight 2)" in unmodelled


def test_node_page_lays_out_node_resources_fit_like_loadaware(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    decision = evaluated(demo_snapshot, cpu="1500m")
    client.force_login(viewer)
    entry = decision.explanation["nodes"][0]
    response = client.get(f"/decisions/{decision.pk}/nodes/{entry['name']}/")
    html = response.content.decode()
    fit = response.context["fit"]
    raw = next(s["raw"] for s in entry["scores"] if s["plugin"] == "NodeResourcesFit")
    assert fit.raw == raw and fit.average.endswith(f"= {raw}")
    cpu = fit.resources[0]
    assert cpu.resource == "cpu" and cpu.pod == "1.5" and cpu.unit == "cores"
    assert 'id="fit-heading"' in html and "The score's arithmetic on this node" in html
    assert " Gi" in fit.lines[1].formula and "× 100 /" in fit.lines[0].formula
    # The raw YAML of the plugin's explanation is gone: the card replaces it.
    assert "<h2>NodeResourcesFit</h2>" not in html and "scoredRequested" not in html
