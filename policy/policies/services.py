"""Changes to policy objects: create, update, delete, revert and import, each one recorded.

Every change runs in one transaction that first locks the rows it changes
(``select_for_update``) and re-checks the version the caller last saw (``expected_version``,
the API's ``If-Match``); a stale version raises :class:`PreconditionFailed` and changes
nothing. Objects of a scheduler configuration (the configuration, its profiles, their
LoadAware args) lock the configuration row first, so changes to one configuration are
serialized, and the whole document is validated by the engine before the transaction commits:
an invalid result raises :class:`PolicyInvalid` and nothing is saved.

The API viewsets and the UI call these functions; serializers and forms only check input.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction

from policy.accounts.changes import ChangeContext, history, record_change
from policy.clusters.models import Cluster
from policy.core.choices import ChangeAction
from policy.core.models import VersionedModel
from policy.policies import documents, signals
from policy.policies.documents import BuiltDocument
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from scoring import DEFAULT_SCHEDULER, INVALID, FieldError

M = TypeVar("M", bound=VersionedModel)


# -- errors -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LocatedError:
    """A validation error on one API object: ``field`` is the object's own field path,
    ``path`` the path a reader of the whole request understands (e.g. ``profiles[1].plugins``
    for a scheduler configuration, or the document path of an import)."""

    kind: str
    object_id: int | None
    field: str
    path: str
    type: str
    detail: str


class PolicyInvalid(Exception):
    """The change would leave a policy invalid; nothing was saved."""

    def __init__(self, errors: list[LocatedError], subject_id: int | None = None) -> None:
        super().__init__("; ".join(f"{e.path}: {e.detail}" for e in errors))
        self.errors = errors
        self.subject_id = subject_id  # the object being changed, when it had an id


class PreconditionFailed(Exception):
    """The object changed since the caller read it (``If-Match`` no longer matches)."""

    def __init__(self, current_version: int) -> None:
        super().__init__(f"the object is at version {current_version}")
        self.current_version = current_version


class VersionNotFound(Exception):
    """``revert`` to a version the history does not have."""


def _from_validation_error(kind: str, obj: models.Model, exc: ValidationError) -> PolicyInvalid:
    errors = []
    for field, items in exc.error_dict.items():
        for item in items:
            name = "" if field == "__all__" else field
            params = item.params or {}
            if not name and item.code == "unique_together" and params.get("unique_check"):
                name = str(params["unique_check"][-1])  # (cluster, name): the name is taken
            for message in item.messages:
                errors.append(LocatedError(kind, obj.pk, name, name, INVALID, message))
    return PolicyInvalid(errors)


# -- the generic service ------------------------------------------------------------------------


def _set_fields(obj: models.Model, values: Mapping[str, Any]) -> None:
    for name, value in values.items():
        field = obj._meta.get_field(name)
        if field.is_relation:
            setattr(obj, field.attname, value.pk if isinstance(value, models.Model) else value)  # type: ignore[union-attr]
        else:
            setattr(obj, name, copy.deepcopy(value))


class PolicyService(Generic[M]):
    """Create/update/delete/revert of one model, with history and optimistic concurrency."""

    model: type[M]
    kind: ClassVar[str]
    # Set at creation, never changed afterwards (the parent object).
    parent_fields: ClassVar[tuple[str, ...]] = ()

    # -- hooks ----------------------------------------------------------------------------------

    def check(self, obj: M) -> None:
        """Field and model validation (``full_clean``: validators, constraints, ``clean()``)."""
        try:
            obj.full_clean()
        except ValidationError as exc:
            raise _from_validation_error(self.kind, obj, exc) from None

    def history_snapshot(self, obj: M) -> dict[str, Any]:
        return obj.snapshot()

    def cluster_of(self, obj: M) -> Cluster:
        cluster_id = obj.cluster_id_for_history()
        assert cluster_id is not None
        return Cluster.objects.get(pk=cluster_id)

    def lock(self, pk: int) -> M:
        """The row, locked for the transaction (raises ``DoesNotExist``)."""
        return self.model._default_manager.select_for_update().get(pk=pk)

    # -- operations -----------------------------------------------------------------------------

    def create(self, values: Mapping[str, Any], ctx: ChangeContext) -> M:
        with transaction.atomic():
            obj = self.model()
            _set_fields(obj, values)
            self.check(obj)
            self._save(obj)
            record_change(
                ctx, obj, ChangeAction.CREATE, before=None, after=self.history_snapshot(obj)
            )
            _pushed(self.cluster_of(obj))
            return obj

    def update(
        self,
        pk: int,
        values: Mapping[str, Any],
        ctx: ChangeContext,
        *,
        expected_version: int | None,
    ) -> M:
        with transaction.atomic():
            obj = self.lock(pk)
            _check_version(obj, expected_version)
            before = self.history_snapshot(obj)
            changes = {k: v for k, v in values.items() if k not in self.parent_fields}
            self._update(obj, changes, ctx, before, ChangeAction.UPDATE, "")
            return obj

    def delete(self, pk: int, ctx: ChangeContext, *, expected_version: int | None) -> None:
        with transaction.atomic():
            obj = self.lock(pk)
            _check_version(obj, expected_version)
            cluster = self.cluster_of(obj)
            record_change(
                ctx, obj, ChangeAction.DELETE, before=self.history_snapshot(obj), after=None
            )
            obj.delete()
            _pushed(cluster)

    def revert(
        self, pk: int, version: int, ctx: ChangeContext, *, expected_version: int | None
    ) -> M:
        """Restore the state the object had at ``version`` (itself a new, recorded change)."""
        with transaction.atomic():
            obj = self.lock(pk)
            _check_version(obj, expected_version)
            state = version_state(obj, version)
            before = self.history_snapshot(obj)
            values = {
                name: state[name]
                for name in obj.SNAPSHOT_FIELDS
                if name in state and name not in self.parent_fields
            }
            self._update(
                obj, values, ctx, before, ChangeAction.REVERT, f"reverted to version {version}"
            )
            return obj

    # -- internals ------------------------------------------------------------------------------

    def _update(
        self,
        obj: M,
        values: Mapping[str, Any],
        ctx: ChangeContext,
        before: dict[str, Any],
        action: str,
        message: str,
    ) -> None:
        _set_fields(obj, values)
        self.check(obj)
        obj.version += 1
        self._save(obj)
        record_change(
            ctx, obj, action, before=before, after=self.history_snapshot(obj), message=message
        )
        _pushed(self.cluster_of(obj))

    def _save(self, obj: M) -> None:
        try:
            with transaction.atomic():
                obj.save()
        except IntegrityError as exc:  # a concurrent request took a unique name since check()
            raise PolicyInvalid(
                [LocatedError(self.kind, obj.pk, "name", "name", INVALID, _integrity_message(exc))]
            ) from None


def _integrity_message(exc: IntegrityError) -> str:
    text = str(exc)
    if "one_default" in text:
        return "The cluster already has a default collect policy."
    if "unique" in text.lower() or "duplicate" in text.lower():
        return "Another object already uses this name (or this parent) in the cluster."
    return "The change conflicts with another object."


# ``expected_version`` of a write made when the object did not exist yet: if it exists by the
# time the write runs, someone else created it meanwhile (versions start at 1).
NOT_THERE_YET = 0


def _check_version(obj: VersionedModel, expected: int | None) -> None:
    if expected is not None and obj.version != expected:
        raise PreconditionFailed(obj.version)


def _pushed(cluster: Cluster) -> None:
    """Tell the sync (``policy.sync.receivers``) that the cluster's policies changed: clusters
    in automatic push mode get every committed change pushed."""
    signals.policies_changed.send(sender=Cluster, cluster=cluster)


def version_state(obj: VersionedModel, version: int) -> dict[str, Any]:
    """The object's recorded state right after it reached ``version``."""
    change = (
        history(obj)
        .filter(object_version=version, postchange_data__isnull=False)
        .order_by("-id")
        .first()
    )
    if change is None or not isinstance(change.postchange_data, dict):
        raise VersionNotFound(f"version {version} is not in this object's history")
    return dict(change.postchange_data)


# -- clusters and the two cluster-level policies -------------------------------------------------


class ClusterService(PolicyService[Cluster]):
    model = Cluster
    kind = "cluster"
    parent_fields = ("name", "kind", "kubeconfig_path", "kubeconfig_context")

    def cluster_of(self, obj: Cluster) -> Cluster:
        return obj


class NodeThresholdPolicyService(PolicyService[NodeThresholdPolicy]):
    model = NodeThresholdPolicy
    kind = "node_threshold_policy"
    parent_fields = ("cluster",)


class CollectPolicyService(PolicyService[NodeMetricCollectPolicy]):
    model = NodeMetricCollectPolicy
    kind = "collect_policy"
    parent_fields = ("cluster",)


# -- scheduler configurations -------------------------------------------------------------------


def tree_errors(built: BuiltDocument, errors: list[FieldError]) -> PolicyInvalid:
    """The engine's errors of a built document, each located on the object and field an
    editor can change (the one mapping from engine paths to stored objects)."""
    located = []
    for error in errors:
        where = documents.locate(built, error)
        located.append(
            LocatedError(
                where.kind, where.object_id, where.field, where.tree_path, error.type, error.detail
            )
        )
    return PolicyInvalid(located)


def validated_tree(configuration: SchedulerConfiguration) -> tuple[dict[str, Any], BuiltDocument]:
    """The configuration's tree and its built document, after the engine found it valid
    (:class:`PolicyInvalid` with located errors otherwise)."""
    tree = configuration.tree()
    built, errors = documents.validate_tree(tree, configuration.cluster.scheduler_target())
    if errors:
        raise tree_errors(built, errors)
    return tree, built


class _TreeService(PolicyService[M]):
    """Objects of a scheduler configuration: changes lock the configuration, are validated as
    a whole document, and bump and record the configuration too."""

    def configuration_id(self, values: Mapping[str, Any] | None, obj: M | None) -> int:
        raise NotImplementedError

    def create(self, values: Mapping[str, Any], ctx: ChangeContext) -> M:
        with transaction.atomic():
            configuration = _lock_configuration(self.configuration_id(values, None))
            before = configuration.tree()
            obj = super().create(values, ctx)
            _finish(configuration, before, ctx, f"{self.kind} {obj} created", obj.pk)
            return obj

    def update(
        self,
        pk: int,
        values: Mapping[str, Any],
        ctx: ChangeContext,
        *,
        expected_version: int | None,
    ) -> M:
        with transaction.atomic():
            configuration = _lock_configuration(self._configuration_of(pk))
            before = configuration.tree()
            obj = super().update(pk, values, ctx, expected_version=expected_version)
            _finish(configuration, before, ctx, f"{self.kind} {obj} updated", pk)
            return obj

    def delete(self, pk: int, ctx: ChangeContext, *, expected_version: int | None) -> None:
        with transaction.atomic():
            configuration = _lock_configuration(self._configuration_of(pk))
            before = configuration.tree()
            name = str(self.model._default_manager.get(pk=pk))
            super().delete(pk, ctx, expected_version=expected_version)
            _finish(configuration, before, ctx, f"{self.kind} {name} deleted", pk)

    def revert(
        self, pk: int, version: int, ctx: ChangeContext, *, expected_version: int | None
    ) -> M:
        with transaction.atomic():
            configuration = _lock_configuration(self._configuration_of(pk))
            before = configuration.tree()
            obj = super().revert(pk, version, ctx, expected_version=expected_version)
            _finish(
                configuration, before, ctx, f"{self.kind} {obj} reverted to version {version}", pk
            )
            return obj

    def _configuration_of(self, pk: int) -> int:
        obj = self.model._default_manager.get(pk=pk)
        return self.configuration_id(None, obj)


def _lock_configuration(pk: int) -> SchedulerConfiguration:
    return SchedulerConfiguration.objects.select_for_update().get(pk=pk)


def _finish(
    configuration: SchedulerConfiguration,
    before: dict[str, Any],
    ctx: ChangeContext,
    message: str,
    subject_id: int | None,
) -> None:
    """Validate the configuration's document, then bump and record the configuration."""
    try:
        after, _ = validated_tree(configuration)
    except PolicyInvalid as exc:
        exc.subject_id = subject_id
        raise
    configuration.version += 1
    configuration.save(update_fields=["version", "updated"])
    after["version"] = configuration.version  # the tree was taken before the bump
    record_change(
        ctx, configuration, ChangeAction.UPDATE, before=before, after=after, message=message
    )


class ProfileService(_TreeService[SchedulerProfile]):
    model = SchedulerProfile
    kind = "profile"
    parent_fields = ("configuration",)

    def configuration_id(
        self, values: Mapping[str, Any] | None, obj: SchedulerProfile | None
    ) -> int:
        if obj is not None:
            return obj.configuration_id
        assert values is not None
        return _pk(values["configuration"])


class LoadAwareArgsService(_TreeService[LoadAwareSchedulingArgs]):
    model = LoadAwareSchedulingArgs
    kind = "loadaware_args"
    parent_fields = ("profile",)

    def configuration_id(
        self, values: Mapping[str, Any] | None, obj: LoadAwareSchedulingArgs | None
    ) -> int:
        if obj is not None:
            return obj.profile.configuration_id
        assert values is not None
        profile = values["profile"]
        if not isinstance(profile, SchedulerProfile):
            profile = SchedulerProfile.objects.get(pk=profile)
        return profile.configuration_id


def _pk(value: Any) -> int:
    return int(value.pk if isinstance(value, models.Model) else value)


ADOPTED = "adopted from the cluster"


class SchedulerConfigurationService(PolicyService[SchedulerConfiguration]):
    model = SchedulerConfiguration
    kind = "configuration"
    parent_fields = ("cluster",)

    def history_snapshot(self, obj: SchedulerConfiguration) -> dict[str, Any]:
        return obj.tree()

    def check(self, obj: SchedulerConfiguration) -> None:
        """Field checks, then the engine's validation of the whole document as it would be."""
        super().check(obj)
        tree = {"id": None, **obj.snapshot(), "profiles": []} if obj.pk is None else obj.tree()
        built, errors = documents.validate_tree(tree, obj.cluster.scheduler_target())
        if errors:
            raise tree_errors(built, errors)

    def _save(self, obj: SchedulerConfiguration) -> None:
        try:
            with transaction.atomic():
                obj.save()
        except IntegrityError:
            raise PolicyInvalid(
                [
                    LocatedError(
                        self.kind,
                        obj.pk,
                        "cluster",
                        "cluster",
                        INVALID,
                        "This cluster already has a scheduler configuration.",
                    )
                ]
            ) from None

    def revert(
        self, pk: int, version: int, ctx: ChangeContext, *, expected_version: int | None
    ) -> SchedulerConfiguration:
        """Restore the whole configuration (profiles and args included) as it was."""
        with transaction.atomic():
            configuration = self.lock(pk)
            _check_version(configuration, expected_version)
            tree = version_state(configuration, version)
            apply_tree(
                configuration, tree, ctx, ChangeAction.REVERT, f"reverted to version {version}"
            )
            return configuration

    def import_document(
        self,
        cluster: Cluster,
        source: str,
        ctx: ChangeContext,
        *,
        expected_version: int | None,
        message: str = "imported",
        confirmed_deletes: Collection[str] | None = None,
    ) -> tuple[SchedulerConfiguration, bool]:
        """Create or replace the cluster's configuration from a document (YAML or JSON) of any
        config version the cluster's scheduler reads (v1beta1 to v1).

        Returns the configuration and whether it was created. The document is kept as written
        (``source_document``): what is written back is it with later edits applied. With
        ``confirmed_deletes`` (schedulerNames, :func:`profile_key`), a replacement that drops a
        stored profile not named there raises :class:`DeletesUnconfirmed`.
        """
        errors = documents.validate_import(source, cluster.scheduler_target())
        if errors:
            raise PolicyInvalid(
                [LocatedError("document", None, e.field, e.field, e.type, e.detail) for e in errors]
            )
        tree = documents.tree_from_document(documents.parse_source(source))
        with transaction.atomic():
            Cluster.objects.select_for_update().get(pk=cluster.pk)
            existing = SchedulerConfiguration.objects.select_for_update().filter(cluster=cluster)
            configuration = existing.first()
            created = configuration is None
            if configuration is None:
                configuration = SchedulerConfiguration(cluster=cluster)
                configuration.save()
            else:
                _check_version(configuration, expected_version)
                if confirmed_deletes is not None:
                    _check_deletes(configuration, tree, confirmed_deletes)
            apply_tree(configuration, tree, ctx, ChangeAction.IMPORT, message, created=created)
            return configuration, created

    def adopt(self, cluster: Cluster, source: str, ctx: ChangeContext) -> SchedulerConfiguration:
        """Store the configuration the cluster's scheduler runs (its ConfigMap's document) as
        the cluster's, when schedboard stores none: pushing then writes it back unchanged.
        :class:`PolicyInvalid` when it is invalid; :class:`PreconditionFailed` when one
        appeared meanwhile."""
        configuration, _ = self.import_document(
            cluster, source, ctx, expected_version=NOT_THERE_YET, message=ADOPTED
        )
        return configuration


def profile_key(profile: SchedulerProfile) -> str:
    """How a deletion is confirmed: the profile's schedulerName (``default-scheduler`` when it
    sets none, as kube-scheduler defaults it)."""
    return profile.scheduler_name or DEFAULT_SCHEDULER


def profile_label(profile: SchedulerProfile) -> str:
    """The profile as people read it in a confirmation."""
    if profile.scheduler_name:
        return profile.scheduler_name
    return f"{DEFAULT_SCHEDULER} (schedulerName not set)"


class DeletesUnconfirmed(Exception):
    """An import would delete stored profiles its request did not name."""

    def __init__(self, profiles: list[SchedulerProfile]) -> None:
        self.profiles = profiles
        listed = ", ".join(
            f"{profile_label(p)} (version {p.version}"
            + (
                f"; plugin args: {', '.join(str(c.get('name', '')) for c in p.plugin_config)}"
                if p.plugin_config
                else ""
            )
            + ")"
            for p in profiles
        )
        super().__init__(
            f"this import deletes stored profiles the document does not have: {listed}; list "
            "each schedulerName in delete_profiles to confirm (their history stays readable)"
        )


def dropped_profiles(
    configuration: SchedulerConfiguration, tree: Mapping[str, Any]
) -> list[SchedulerProfile]:
    """The stored profiles an import of ``tree`` deletes: :func:`apply_tree` matches profiles by
    schedulerName, so those whose name the tree does not have."""
    named = {str(entry.get("scheduler_name") or "") for entry in tree.get("profiles") or []}
    profiles = configuration.profiles.order_by("position", "id")
    return [p for p in profiles if p.scheduler_name not in named]


def _check_deletes(
    configuration: SchedulerConfiguration, tree: Mapping[str, Any], confirmed: Collection[str]
) -> None:
    """:class:`DeletesUnconfirmed` when the tree drops stored profiles not in ``confirmed``."""
    missing = [p for p in dropped_profiles(configuration, tree) if profile_key(p) not in confirmed]
    if missing:
        raise DeletesUnconfirmed(missing)


def apply_tree(
    configuration: SchedulerConfiguration,
    tree: Mapping[str, Any],
    ctx: ChangeContext,
    action: str,
    message: str,
    *,
    created: bool = False,
) -> None:
    """Make the configuration, its profiles and their args equal to ``tree``.

    Profiles in the tree with an ``id`` update that profile (or are re-created with it when
    it was deleted); without one, they update the profile of the same schedulerName, else a
    new one. Every object changed gets its own change-log row; the configuration gets one
    with the whole tree before and after.
    """
    before = None if created else configuration.tree()
    values = {
        name: tree[name]
        for name in SchedulerConfiguration.SNAPSHOT_FIELDS
        if name in tree and name != "cluster"
    }
    values["source_document"] = tree.get("source_document")  # none in trees before it existed
    _set_fields(configuration, values)
    existing = {p.pk: p for p in configuration.profiles.select_related("loadaware_args")}
    by_name: dict[str, list[SchedulerProfile]] = {}
    for profile in existing.values():
        by_name.setdefault(profile.scheduler_name, []).append(profile)
    kept: set[int] = set()
    for position, wanted in enumerate(tree.get("profiles") or []):
        matched = _match_profile(wanted, existing, by_name, kept)
        is_new = matched is None
        profile = matched or SchedulerProfile(configuration=configuration)
        free_id = wanted.get("id") and not SchedulerProfile.objects.filter(pk=wanted["id"]).exists()
        if is_new and free_id:
            profile.pk = wanted["id"]
        profile_before = None if is_new else profile.snapshot()
        _set_fields(
            profile,
            {
                "position": wanted.get("position", position),
                "scheduler_name": wanted.get("scheduler_name") or "",
                "percentage_of_nodes_to_score": wanted.get("percentage_of_nodes_to_score"),
                "plugins": wanted.get("plugins") or {},
                "plugin_config": wanted.get("plugin_config") or [],
            },
        )
        _save_child(ctx, ProfileService(), profile, profile_before, action)
        kept.add(profile.pk)
        _apply_args(ctx, profile, wanted.get("loadaware_args"), action)
    for pk, profile in existing.items():
        if pk not in kept:
            record_change(ctx, profile, ChangeAction.DELETE, before=profile.snapshot(), after=None)
            profile.delete()
    SchedulerConfigurationService().check(configuration)
    after = configuration.tree()
    if before is not None and after == before:
        return  # already in that state: no new version
    configuration.version += 0 if created else 1
    configuration.save()
    after["version"] = configuration.version
    record_change(
        ctx,
        configuration,
        ChangeAction.CREATE if created and action != ChangeAction.IMPORT else action,
        before=before,
        after=after,
        message=message,
    )
    _pushed(configuration.cluster)


def _match_profile(
    wanted: Mapping[str, Any],
    existing: dict[int, SchedulerProfile],
    by_name: dict[str, list[SchedulerProfile]],
    kept: set[int],
) -> SchedulerProfile | None:
    pk = wanted.get("id")
    if pk is not None:
        return existing.get(pk)
    for profile in by_name.get(wanted.get("scheduler_name") or "", []):
        if profile.pk not in kept:
            return profile
    return None


def _apply_args(
    ctx: ChangeContext, profile: SchedulerProfile, wanted: Mapping[str, Any] | None, action: str
) -> None:
    try:
        args: LoadAwareSchedulingArgs | None = profile.loadaware_args
    except LoadAwareSchedulingArgs.DoesNotExist:
        args = None
    if wanted is None:
        if args is not None:
            record_change(ctx, args, ChangeAction.DELETE, before=args.snapshot(), after=None)
            args.delete()
        return
    is_new = args is None
    if args is None:
        args = LoadAwareSchedulingArgs(profile=profile)
        if (
            wanted.get("id")
            and not LoadAwareSchedulingArgs.objects.filter(pk=wanted["id"]).exists()
        ):
            args.pk = wanted["id"]
    args_before = None if is_new else args.snapshot()
    _set_fields(
        args,
        {
            name: wanted.get(name)
            for name in LoadAwareSchedulingArgs.SNAPSHOT_FIELDS
            if name != "profile"
        },
    )
    _save_child(ctx, LoadAwareArgsService(), args, args_before, action)


def _save_child(
    ctx: ChangeContext,
    service: PolicyService[Any],
    obj: VersionedModel,
    before: dict[str, Any] | None,
    action: str,
) -> None:
    """Save a profile or args changed by a tree operation (only when it changed)."""
    if before is not None and obj.snapshot() == before:
        return
    service.check(obj)
    if before is not None:
        obj.version += 1
    obj.save(force_insert=before is None)
    record_change(
        ctx,
        obj,
        ChangeAction.CREATE if before is None else action,
        before=before,
        after=obj.snapshot(),
    )
