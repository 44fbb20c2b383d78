"""Views the worker prepares when a snapshot is stored (policy.web.prepared): read back, they give
exactly what the pages build inline."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot, PreparedView
from policy.clusters.services import load_demo_cluster
from policy.policies.demo import seed_demo_policies
from policy.web import pages as support
from policy.web import prepared
from tests.conftest import NOW


def fresh_load(stored: ClusterSnapshot) -> Any:
    """The dashboard's load built inline, as with nothing prepared."""
    support.clear_caches()
    source = support.loadaware_source(stored.cluster)
    return support.cluster_load(
        support.engine_snapshot(stored),
        source.plugin,
        stored.taken_at,
        origin=source.origin,
        profile=source.profile,
        filter_enabled=source.filter_enabled,
        score_enabled=source.score_enabled,
    )


def test_the_encoded_load_decodes_to_a_fresh_build(demo_snapshot: ClusterSnapshot) -> None:
    seed_demo_policies(demo_snapshot.cluster)
    load = fresh_load(demo_snapshot)
    assert load.nodes == demo_snapshot.node_count
    assert prepared.decode_load(prepared.encode_load(load)) == load


def test_storing_a_snapshot_prepares_its_views(db: None, run_on_commit: Any) -> None:
    with run_on_commit():
        stored = load_demo_cluster(nodes=12, now=NOW)
    kinds = set(PreparedView.objects.filter(snapshot=stored).values_list("kind", flat=True))
    assert kinds == {prepared.LOAD, prepared.PENDING}
    support.clear_caches()
    source = support.loadaware_source(stored.cluster)
    page = support.load_for_page(stored, source)
    assert page.load == fresh_load(stored)


def test_a_configuration_change_prepares_the_newest_snapshot_again(
    demo_snapshot: ClusterSnapshot, run_on_commit: Any
) -> None:
    with run_on_commit():
        seed_demo_policies(demo_snapshot.cluster)
    source = support.loadaware_source(demo_snapshot.cluster)
    assert source.digest != "defaults"
    data = prepared.read(demo_snapshot, prepared.LOAD, f"{source.digest}:{source.profile}")
    assert data is not None
    assert prepared.decode_load(data) == fresh_load(demo_snapshot)


def test_pages_read_the_prepared_views_and_show_the_same(
    client: Any, viewer: User, demo_snapshot: ClusterSnapshot
) -> None:
    seed_demo_policies(demo_snapshot.cluster)
    client.force_login(viewer)
    built = client.get("/")
    form = client.get("/evaluate/")
    support.prepare_views(demo_snapshot)
    support.clear_caches()
    from_prepared = client.get("/")
    assert from_prepared.context["summary"] == built.context["summary"]
    assert from_prepared.context["rows"] == built.context["rows"]
    form_prepared = client.get("/evaluate/")
    assert form_prepared.context["form"].fields["pending"].choices == (
        form.context["form"].fields["pending"].choices
    )
    assert form_prepared.context["pending_count"] == form.context["pending_count"] > 0


def test_a_prepared_load_is_read_instead_of_built(
    demo_snapshot: ClusterSnapshot, monkeypatch: Any
) -> None:
    support.prepare_views(demo_snapshot)
    support.clear_caches()

    def no_build(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("built although prepared")

    monkeypatch.setattr(support, "cluster_load", no_build)
    source = support.loadaware_source(demo_snapshot.cluster)
    assert support.load_for_page(demo_snapshot, source).load.nodes == demo_snapshot.node_count
