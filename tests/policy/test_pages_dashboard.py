"""The dashboard: every node's LoadAware load against its effective threshold, freshness, what
would be filtered now and why, aggregates, trends, and the node list's filters and pages."""

from __future__ import annotations

import gzip
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from policy.clusters.models import ClusterSnapshot
from policy.clusters.services import load_demo_cluster
from policy.web.links import edit_links
from policy.web.presenters.charts import COLOURS, shared_stylesheet
from tests.conftest import NOW
from tests.policy.builders import loadaware_configuration

pytestmark = pytest.mark.django_db


def dashboard(client: Client, user: User, query: str = "") -> Any:
    client.force_login(user)
    response = client.get(f"/{query}")
    assert response.status_code == 200, response.content[:500]
    return response


def test_counts_and_verdicts_come_from_loadaware(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    response = dashboard(client, viewer)
    load = response.context["summary"]
    assert load.nodes == 12
    assert load.metrics == {"fresh": 9, "expired": 2, "missing": 1}
    assert load.args.origin == "Koordinator's defaults (no scheduler configuration)"
    assert load.args.thresholds == {"cpu": 65, "memory": 95}
    by_name = {node.name: node for node in load.rows}
    # Expired NodeMetrics are filtered (enableScheduleWhenNodeMetricsExpired defaults to false).
    expired = [n for n in load.rows if n.metric == "expired"]
    assert expired and all(n.filtered == "node(s) nodeMetric expired" for n in expired)
    assert all(n.usage["cpu"].total is None for n in expired)
    # Every usage verdict agrees with the numbers shown.
    for node in load.rows:
        if node.metric == "fresh":
            over = any(u.total > u.threshold > 0 for u in node.usage.values())
            assert (node.filtered is not None) == over, node
    # No NodeMetric: not load-aware, never filtered.
    missing = next(n for n in load.rows if n.metric == "missing")
    assert missing.filtered is None and missing.usage["cpu"].measured is None
    # The annotated node takes its thresholds from the annotation.
    annotated = by_name["general-b-0010"]
    assert annotated.threshold_source == "node annotation"
    assert annotated.usage["cpu"].threshold == 75 and annotated.usage["memory"].threshold == 90
    assert by_name["general-b-0001"].threshold_source == "args"
    html = response.content.decode()
    assert "LoadAware args in force" in html
    assert f'{load.filtered}</span><span class="label">filtered by LoadAware now' in html
    for reason, count in load.reasons():
        assert f'<span class="count">{count}</span> {reason}' in html


def test_filtered_nodes_are_listed_with_their_reason(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    response = dashboard(client, viewer, "?state=filtered")
    rows = response.context["rows"]
    assert rows and all(node.filtered for node in rows)
    assert len(rows) == response.context["summary"].filtered
    html = response.content.decode()
    assert html.count('<span class="verdict bad">') == len(rows)
    reason = "node(s) nodeMetric expired"
    rows = dashboard(client, viewer, f"?reason={reason}").context["rows"]
    assert {node.metric for node in rows} == {"expired"}


def test_search_zone_pool_state_and_band_filters(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    names = [n.name for n in dashboard(client, viewer, "?q=GPU").context["rows"]]
    assert names == ["gpu-a-0000", "gpu-b-0004", "gpu-b-0007", "gpu-c-0011"]
    rows = dashboard(client, viewer, "?zone=eu-west-1b&pool=general").context["rows"]
    assert rows and all(n.zone == "eu-west-1b" and n.pool == "general" for n in rows)
    assert [n.name for n in dashboard(client, viewer, "?state=cordoned").context["rows"]] == [
        "general-a-0009"
    ]
    assert [n.name for n in dashboard(client, viewer, "?state=annotated").context["rows"]] == [
        "general-b-0010"
    ]
    rows = dashboard(client, viewer, "?band=cpu:30-40").context["rows"]
    assert rows and all(30 <= n.usage["cpu"].total < 40 for n in rows)
    response = dashboard(client, viewer, "?q=nothing-like-this")
    assert b"No node matches these filters." in response.content
    # Malformed filters are ignored rather than failing the page.
    assert len(dashboard(client, viewer, "?band=disk:x&state=bogus").context["rows"]) == 12


def test_sorting_keeps_unmeasured_nodes_last(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    rows = dashboard(client, viewer, "?sort=-cpu_load").context["rows"]
    loads = [n.cpu_load for n in rows if n.cpu_load is not None]
    assert loads == sorted(loads, reverse=True)
    assert all(n.cpu_load is None for n in rows[len(loads) :])
    rows = dashboard(client, viewer, "?sort=age").context["rows"]
    ages = [n.metric_age for n in rows if n.metric_age is not None]
    assert ages == sorted(ages)
    html = dashboard(client, viewer, "?sort=memory_load").content.decode()
    assert 'aria-sort="ascending"' in html
    assert "sort=-memory_load" in html  # the header now offers the other direction


def test_histograms_count_every_measured_node(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    response = dashboard(client, viewer)
    charts = response.context["charts"]
    assert [c["resource"] for c in charts] == ["cpu", "memory"]
    load = response.context["summary"]
    for chart in charts:
        measured = sum(1 for n in load.rows if n.usage[chart["resource"]].total is not None)
        assert chart["unmeasured"] == load.nodes - measured
        svg = str(chart["svg"])
        assert 'class="chart pygal-chart"' in svg and 'role="img"' in svg
        # Each bar's tooltip counts its nodes (both of its segments carry the same one).
        tips = set(re.findall(r"<title>([^<]*: (\d+) nodes?)", svg))
        assert sum(int(n) for _, n in tips) == measured
        assert "▲" in svg  # the band holding the args threshold is marked
    assert "band=cpu%3A" in str(charts[0]["svg"]) or "band=cpu:" in str(charts[0]["svg"])


def test_pages_of_a_larger_cluster(client: Client, viewer: User) -> None:
    load_demo_cluster(nodes=60, now=NOW)
    response = dashboard(client, viewer, "?per_page=25&page=3")
    page = response.context["page_obj"]
    assert page.paginator.num_pages == 3 and len(response.context["rows"]) == 10
    html = response.content.decode()
    assert "Page 3 of 3" in html and 'rel="prev"' in html
    # The partial answers only the table, for in-place refreshes.
    client.force_login(viewer)
    partial = client.get("/?per_page=25", HTTP_X_PARTIAL="nodes").content.decode()
    assert "<html" not in partial and partial.count('<th scope="row">') == 25
    # An unknown page size falls back to the default.
    assert dashboard(client, viewer, "?per_page=7").context["per_page"] == 50


def test_trends_across_snapshots_and_decisions(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    html = dashboard(client, viewer).content.decode()
    assert "One snapshot so far" in html
    assert "No decision in the last 14 days" in html
    load_demo_cluster(nodes=12, now=NOW + timedelta(minutes=5))
    from policy.decisions.services import evaluate_pod

    cluster = demo_snapshot.cluster
    evaluate_pod(cluster, {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}})
    trends = dashboard(client, viewer).context["trends"]
    assert trends["snapshots"] == 2
    assert [s["label"] for s in trends["series"]] == [
        "Nodes",
        "Pods bound",
        "Pods pending",
        "NodeMetrics",
    ]
    assert trends["total"] == 1
    assert "Decisions per day over the last 14 days: 1 in all" in str(trends["decisions"])


def test_configuration_args_and_node_annotations(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    configuration = loadaware_configuration(
        demo_snapshot.cluster, usage_thresholds={"cpu": 30, "memory": 90}
    )
    load = dashboard(client, viewer).context["summary"]
    assert load.args.origin.startswith(f"scheduler configuration #{configuration.pk}")
    assert load.args.thresholds == {"cpu": 30, "memory": 90}
    by_name = {n.name: n for n in load.rows}
    assert by_name["general-b-0001"].usage["cpu"].threshold == 30
    # The annotation replaces the args' thresholds as a whole.
    assert by_name["general-b-0010"].usage["cpu"].threshold == 75
    fresh = [n for n in load.rows if n.metric == "fresh" and n.threshold_source == "args"]
    assert all((n.usage["cpu"].total > 30) == bool(n.filtered) for n in fresh)


def test_configuration_without_loadaware_says_so(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    configuration = loadaware_configuration(demo_snapshot.cluster)
    profile = configuration.profiles.get()
    profile.plugins = {}
    profile.save()
    response = dashboard(client, viewer)
    assert "No profile of scheduler configuration" in response.content.decode()
    assert response.context["summary"].args.thresholds == {"cpu": 65, "memory": 95}


def test_edit_controls_only_for_editors(
    client: Client, viewer: User, editor: User, demo_snapshot: ClusterSnapshot
) -> None:
    html = dashboard(client, viewer).content.decode()
    assert "Edit " not in html
    html = dashboard(client, editor).content.decode()
    for label, url in edit_links(demo_snapshot.cluster):
        assert f'href="{url}">Edit {label}</a>' in html


def test_navigation_reaches_every_page(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    html = dashboard(client, viewer).content.decode()
    assert '<a class="skip-link" href="#main">' in html and '<main id="main"' in html
    kept = f"?cluster={demo_snapshot.cluster_id}"
    for path in ("/", "/evaluate/", "/decisions/"):
        assert f'href="{path}{kept}"' in html
    assert 'href="/api/v1/"' in html
    assert f'<a href="/{kept}" aria-current="page">Dashboard</a>' in html


def test_pages_are_compressed_for_browsers_that_accept_gzip(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    client.force_login(viewer)
    plain = client.get("/")
    packed = client.get("/", HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    page = gzip.decompress(packed.content)
    assert b"</html>" in page and len(packed.content) * 3 < len(page)


def test_charts_share_one_stylesheet_and_keep_their_colours(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    response = dashboard(client, viewer)
    html = response.content.decode()
    charts = re.findall(r"<svg[^>]*pygal-chart.*?</svg>", html, re.S)
    assert len(charts) >= 2
    assert "<style" not in html and "font-family" not in html  # no chart carries pygal's CSS
    assert 'href="/static/charts.css"' in html
    for svg in charts[:2]:  # the histograms: within threshold, above it
        series = dict(re.findall(r'class="series serie-\d+ color-(\d+)" fill="(#\w+)"', svg))
        assert series == {"0": COLOURS["ok"], "1": COLOURS["over"]}
        legends = re.findall(r'<rect[^>]*class="color-(\d+) reactive"[^>]*fill="(#\w+)"', svg)
        assert sorted(set(legends)) == [("0", COLOURS["ok"]), ("1", COLOURS["over"])]


def test_the_shared_chart_stylesheet_is_pygals_for_our_style() -> None:
    css = (Path(settings.BASE_DIR) / "static" / "charts.css").read_text()
    assert css.endswith(shared_stylesheet())  # regenerate: python -m policy.web.presenters.charts
    assert ".pygal-chart .axis .guide.line" in css and ".color-" not in css


def test_a_cluster_without_nodes_has_a_dashboard(client: Client, viewer: User) -> None:
    """A newly connected cluster may have no node yet: an empty dashboard, not an error."""
    from policy.clusters.models import Cluster
    from policy.clusters.services import record_snapshot

    cluster = Cluster.objects.create(name="empty", kind="demo")
    record_snapshot(cluster, [], NOW)
    response = dashboard(client, viewer, f"?cluster={cluster.pk}")
    assert response.context["summary"].nodes == 0


def test_search_finds_nodes_by_label(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    nodes = [o for o in demo_snapshot.objects if o["kind"] == "Node"]
    zone = "topology.kubernetes.io/zone"
    some_zone = nodes[0]["metadata"]["labels"][zone]
    in_zone = sorted(
        n["metadata"]["name"] for n in nodes if n["metadata"]["labels"][zone] == some_zone
    )

    def names(query: str) -> list[str]:
        return sorted(n.name for n in dashboard(client, viewer, query).context["rows"])

    assert names(f"?q={zone}={some_zone}") == in_zone
    assert names(f"?q={some_zone.upper()}") == in_zone  # any part, any case
    pool = nodes[0]["metadata"]["labels"]["pool"]
    assert names(f"?q=pool={pool}") == sorted(
        n["metadata"]["name"] for n in nodes if n["metadata"]["labels"].get("pool") == pool
    )


def test_a_dashboard_prepared_before_labels_were_kept_still_reads(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """Prepared rows from before a field was added decode with its default."""
    from policy.web.prepared import decode_load, encode_load

    load = dashboard(client, viewer).context["summary"]
    data = encode_load(load)
    assert decode_load(data).rows == load.rows and load.rows[0].labels
    data["rows"] = [fields[:-1] for fields in data["rows"]]  # as stored before labels were kept
    assert [row.labels for row in decode_load(data).rows] == [()] * len(load.rows)


def test_the_load_names_the_configuration_version_in_force_now(
    client: Client, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    """The load is kept by the args' digest: after a revert makes the same document a later
    version, the dashboard names that version, not the one it was prepared under."""
    from policy.policies.models import SchedulerConfiguration

    configuration = loadaware_configuration(demo_snapshot.cluster)
    first = dashboard(client, viewer).context["summary"].args.origin
    assert first.startswith(f"scheduler configuration #{configuration.pk} v{configuration.version}")
    later = configuration.version + 2  # edited, then reverted to this document
    SchedulerConfiguration.objects.filter(pk=configuration.pk).update(version=later)
    again = dashboard(client, viewer)
    assert again.context["summary"].args.origin.startswith(
        f"scheduler configuration #{configuration.pk} v{later},"
    )
    assert f"v{later}, profile" in again.content.decode()
