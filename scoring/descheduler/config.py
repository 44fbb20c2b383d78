"""``DeschedulerConfiguration`` (descheduler/v1alpha2) as koord-descheduler loads it.

Upstream: cmd/koord-descheduler/app/options/configfile.go (``loadConfig``: the scheme's strict
universal decoder, so unknown top-level fields fail), pkg/descheduler/apis/config/v1alpha2/
{types,defaults,default_plugins}.go and validation/validation.go
(``ValidateDeschedulerConfiguration``: at least one profile, names required and unique,
``pluginConfig`` names unique per profile; only MigrationController's args are validated there,
LowNodeLoad's are validated by the plugin's ``New``, i.e. only when it is enabled).

The document is kept as written (:attr:`DeschedulerConfiguration.raw`): plugins and args this
module does not model stay untouched, and nothing here writes a default back into it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring import field_errors as fe
from scoring.config.loader import parse_text
from scoring.descheduler.args import ARGS_KIND, PLUGIN_NAME, LowNodeLoadArgs, load_args
from scoring.durations import SECOND, DurationError, parse_duration
from scoring.errors import ConfigurationInvalid, FieldError, InputError

API_VERSION = "descheduler/v1alpha2"
KIND = "DeschedulerConfiguration"
DEFAULT_PROFILE = "koord-descheduler"
MIGRATION_CONTROLLER = "MigrationController"
EXTENSION_POINTS = ("deschedule", "balance", "evict", "filter")
DEFAULT_EVICT_FILTER = (MIGRATION_CONTROLLER,)  # default_plugins.go: evict and filter

_TOP_FIELDS = (
    "apiVersion",
    "kind",
    "leaderElection",
    "clientConnection",
    "healthzBindAddress",
    "metricsBindAddress",
    "debugging",
    "enableProfiling",
    "enableContentionProfiling",
    "profiles",
    "deschedulingInterval",
    "dryRun",
    "nodeSelector",
    "maxNoOfPodsToEvictPerNode",
    "maxNoOfPodsToEvictPerNamespace",
    "maxNoOfPodsToEvictTotal",
)
_PROFILE_FIELDS = ("name", "plugins", "pluginConfig", "nodeSelector")


@dataclass(frozen=True)
class MigrationSettings:
    """The MigrationController args that decide which pods a LowNodeLoad eviction may take."""

    namespaces_include: tuple[str, ...] = ()
    namespaces_exclude: tuple[str, ...] = ()
    scheduler_names: tuple[str, ...] = ("koord-scheduler",)
    job_mode: str = "ReservationFirst"
    priority_threshold: int | None = None
    evict_local_storage_pods: bool = False
    evict_system_critical_pods: bool = False
    ignore_pvc_pods: bool = False
    evict_failed_bare_pods: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class Profile:
    name: str
    enabled: Mapping[str, tuple[str, ...]]  # extension point → enabled plugin names, in order
    plugin_config: Mapping[str, Mapping[str, Any]]  # plugin name → args as written
    index: int

    def is_enabled(self, point: str, plugin: str) -> bool:
        return plugin in self.enabled.get(point, ())


@dataclass(frozen=True)
class DeschedulerConfiguration:
    raw: Mapping[str, Any] = field(repr=False)
    interval_ns: int  # deschedulingInterval (0: run once)
    dry_run: bool
    profiles: tuple[Profile, ...]
    lownodeload: LowNodeLoadArgs | None  # the first profile that enables LowNodeLoad
    lownodeload_profile: str | None
    lownodeload_args_path: str | None  # where its args live in the document
    migration: MigrationSettings

    @property
    def lownodeload_enabled(self) -> bool:
        return self.lownodeload_profile is not None


def parse_document(text: str | bytes, source: str = "koord-descheduler-config") -> Any:
    """The document (YAML or JSON) as written; :class:`InputError` when unparseable."""
    return parse_text(text, source)


def load(doc: Any) -> DeschedulerConfiguration:
    """Decode and validate; :class:`ConfigurationInvalid` lists every located error."""
    if not isinstance(doc, Mapping):
        raise InputError(f"expected a {KIND} object ({API_VERSION})")
    errors: list[FieldError] = []
    if doc.get("apiVersion") != API_VERSION:
        errors.append(fe.invalid("apiVersion", doc.get("apiVersion"), f"expected {API_VERSION}"))
    if doc.get("kind") != KIND:
        errors.append(fe.invalid("kind", doc.get("kind"), f"expected {KIND}"))
    for name in doc:
        if name not in _TOP_FIELDS:
            errors.append(fe.invalid(str(name), doc[name], f'unknown field "{name}"'))
    interval = _interval(doc.get("deschedulingInterval"), errors)
    profiles = _profiles(doc.get("profiles"), errors)
    lnl_profile = next((p for p in profiles if p.is_enabled("balance", PLUGIN_NAME)), None)
    lnl_args: LowNodeLoadArgs | None = None
    args_path: str | None = None
    if lnl_profile is not None:
        args_path, raw_args = _plugin_args(lnl_profile, PLUGIN_NAME)
        try:
            lnl_args = load_args(raw_args, args_path or "")
        except ConfigurationInvalid as exc:
            errors.extend(exc.errors)
    migration = _migration(profiles, errors)
    if errors:
        raise ConfigurationInvalid(errors)
    return DeschedulerConfiguration(
        raw=copy.deepcopy(dict(doc)),
        interval_ns=interval,
        dry_run=doc.get("dryRun") is True,
        profiles=tuple(profiles),
        lownodeload=lnl_args,
        lownodeload_profile=None if lnl_profile is None else lnl_profile.name,
        lownodeload_args_path=args_path,
        migration=migration,
    )


def lownodeload_args_of(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """LowNodeLoad's args as written in any profile's ``pluginConfig`` (enabled or not)."""
    for profile in doc.get("profiles") or ():
        for entry in (profile or {}).get("pluginConfig") or ():
            if isinstance(entry, Mapping) and entry.get("name") == PLUGIN_NAME:
                args = entry.get("args")
                return args if isinstance(args, Mapping) else {}
    return None


def _interval(value: Any, errors: list[FieldError]) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        try:
            return parse_duration(value)
        except DurationError as exc:
            errors.append(fe.invalid("deschedulingInterval", value, str(exc)))
            return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # a JSON number is a Duration in nanoseconds
    errors.append(fe.invalid("deschedulingInterval", value, "expected a duration"))
    return 0


def _enabled(plugins: Mapping[str, Any], point: str) -> tuple[str, ...]:
    """Defaults plus enabled minus disabled (``disabled: '*'`` drops the defaults)."""
    block = plugins.get(point) or {}
    disabled = {str((d or {}).get("name")) for d in block.get("disabled") or ()}
    names = [] if "*" in disabled else [n for n in _defaults(point) if n not in disabled]
    for entry in block.get("enabled") or ():
        name = str((entry or {}).get("name"))
        if name not in names:
            names.append(name)
    return tuple(names)


def _defaults(point: str) -> tuple[str, ...]:
    return DEFAULT_EVICT_FILTER if point in ("evict", "filter") else ()


def _profiles(value: Any, errors: list[FieldError]) -> list[Profile]:
    if not isinstance(value, list) or not value:
        errors.append(fe.required("profiles"))
        return []
    profiles: list[Profile] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(value):
        path = fe.index("profiles", i)
        if not isinstance(raw, Mapping):
            errors.append(fe.invalid(path, raw, "expected an object"))
            continue
        for name in raw:
            if name not in _PROFILE_FIELDS:
                errors.append(
                    fe.invalid(fe.child(path, str(name)), raw[name], f'unknown field "{name}"')
                )
        name = str(raw.get("name") or "")
        if not name and len(value) == 1:
            name = DEFAULT_PROFILE  # a lone unnamed profile (SetDefaults_DeschedulerConfiguration)
        if not name:
            errors.append(fe.required(fe.child(path, "name")))
        if name in seen:
            errors.append(
                fe.duplicate(
                    fe.child(path, "name"), fe.child(fe.index("profiles", seen[name]), "name")
                )
            )
        seen[name] = i
        plugins = raw.get("plugins") or {}
        config: dict[str, Mapping[str, Any]] = {}
        for j, entry in enumerate(raw.get("pluginConfig") or ()):
            plugin = str((entry or {}).get("name"))
            if plugin in config:
                errors.append(fe.duplicate(fe.index(fe.child(path, "pluginConfig"), j), plugin))
            config[plugin] = (entry or {}).get("args") or {}
        enabled = {point: _enabled(plugins, point) for point in EXTENSION_POINTS}
        profiles.append(Profile(name, enabled, config, i))
    return profiles


def _plugin_args(profile: Profile, plugin: str) -> tuple[str | None, Mapping[str, Any] | None]:
    raw_config = profile.plugin_config.get(plugin)
    if raw_config is None:
        return None, None
    names = list(profile.plugin_config)
    return f"profiles[{profile.index}].pluginConfig[{names.index(plugin)}].args", raw_config


def _migration(profiles: list[Profile], errors: list[FieldError]) -> MigrationSettings:
    """The subset of ``MigrationControllerArgs`` the eviction filter reads (defaults.go)."""
    for profile in profiles:
        if not profile.is_enabled("evict", MIGRATION_CONTROLLER):
            continue
        raw = profile.plugin_config.get(MIGRATION_CONTROLLER) or {}
        namespaces = raw.get("namespaces") or {}
        threshold = raw.get("priorityThreshold") or {}
        value = threshold.get("value") if isinstance(threshold, Mapping) else None
        names = raw.get("schedulerNames")
        return MigrationSettings(
            namespaces_include=tuple(namespaces.get("include") or ()),
            namespaces_exclude=tuple(namespaces.get("exclude") or ()),
            scheduler_names=tuple(names) if names else ("koord-scheduler",),
            job_mode=str(raw.get("defaultJobMode") or "ReservationFirst"),
            priority_threshold=value if isinstance(value, int) else None,
            evict_local_storage_pods=raw.get("evictLocalStoragePods") is True,
            evict_system_critical_pods=raw.get("evictSystemCriticalPods") is True,
            ignore_pvc_pods=raw.get("ignorePvcPods") is True,
            evict_failed_bare_pods=raw.get("evictFailedBarePods") is True,
            dry_run=raw.get("dryRun") is True,
        )
    return MigrationSettings()


def interval_seconds(config: DeschedulerConfiguration) -> float:
    return config.interval_ns / SECOND


__all__ = [
    "ARGS_KIND",
    "DeschedulerConfiguration",
    "MigrationSettings",
    "Profile",
    "load",
    "lownodeload_args_of",
    "parse_document",
]
