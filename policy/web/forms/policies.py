"""Forms of the policy editors: input shapes and types only.

What values mean (thresholds in 0..100, known plugins, one queueSort...) is for the services to
say, with the engine's validators (as for the API); their errors are put back on these forms'
fields by the views. JSON-shaped fields are edited as YAML (JSON is YAML too).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import yaml
from django import forms
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.forms.utils import pretty_name

from policy.core.validators import plugin_config_validator, resource_map_validator
from policy.policies.documents import AGGREGATED_FIELDS, ARGS_FIELDS, CONFIGURATION_FIELDS
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.web.presenters.policies import loadaware_defaults
from scoring.config.schema import PLUGINS_FIELD_ORDER
from scoring.errors import InputError
from scoring.goint import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from scoring.inputs import load_yaml
from scoring.plugins.loadaware.args import AGGREGATION_TYPES

MAX_TEXT = 256 * 1024


class YAMLField(forms.CharField):
    """A JSON value typed as YAML text; ``shape`` is ``dict`` or ``list``; empty is ``empty``."""

    shape: type = dict

    def __init__(self, *, shape: type = dict, empty: Any = None, rows: int = 3, **kwargs: Any):
        self.shape = shape
        self.empty = empty
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", MAX_TEXT)
        attrs = {"rows": rows, "spellcheck": "false", "class": "yaml"}
        kwargs.setdefault("widget", forms.Textarea(attrs=attrs))
        super().__init__(strip=False, **kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, str) or value is None:
            return value or ""
        if value == {} or value == []:
            return ""
        return yaml.safe_dump(value, sort_keys=False, default_flow_style=False).rstrip("\n")

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value)
        if not text or not text.strip():
            return self.empty
        try:
            data = load_yaml(text, source="YAML")
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            problem = getattr(exc, "problem", exc)
            raise forms.ValidationError(f"Not valid YAML{where}: {problem}") from None
        except InputError as exc:
            raise forms.ValidationError(str(exc)) from None
        if data is None:
            return self.empty
        if not isinstance(data, self.shape):
            noun = "a mapping (key: value lines)" if self.shape is dict else "a list (- item lines)"
            raise forms.ValidationError(f"Expected {noun}.")
        return data


class ResourceMapField(YAMLField):
    """``map[ResourceName]int64``, one ``resource: value`` per line."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("rows", 2)
        super().__init__(shape=dict, empty=None, **kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict) and value:
            return "\n".join(f"{k}: {v}" for k, v in value.items())
        return super().prepare_value(value)

    def to_python(self, value: Any) -> Any:
        data = super().to_python(value)
        if data is None:
            return None
        resource_map_validator(data)  # its ValidationError is the form field's error
        return dict(data)


class LinesField(forms.CharField):
    """A list of names, one per line (or separated by commas)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", MAX_TEXT)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}))
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(str(v) for v in value)
        return value or ""

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [part.strip() for part in text.replace(",", "\n").splitlines() if part.strip()]


def tristate(default: str, **kwargs: Any) -> forms.TypedChoiceField:
    """An optional boolean: unset (the default applies), yes or no."""
    return forms.TypedChoiceField(
        choices=[("", f"Not set (default: {default})"), ("true", "Yes"), ("false", "No")],
        coerce=lambda value: value == "true",
        empty_value=None,
        required=False,
        **kwargs,
    )


def _int(**kwargs: Any) -> forms.IntegerField:
    kwargs.setdefault("min_value", INT64_MIN)
    kwargs.setdefault("max_value", INT64_MAX)
    return forms.IntegerField(required=False, **kwargs)


def _model_help(model: type[models.Model], name: str) -> str:
    return str(getattr(model._meta.get_field(name), "help_text", ""))


class PolicyForm(forms.Form):
    """Base: the hidden version the user last saw, fieldsets, and values for the services."""

    model: ClassVar[type[models.Model]]
    # (legend, field names); every field but ``version`` appears in one fieldset.
    fieldsets: ClassVar[list[tuple[str, list[str]]]] = []
    v1_names: ClassVar[dict[str, str]] = {}
    defaults: dict[str, str] = {}

    version = forms.IntegerField(required=False, widget=forms.HiddenInput, min_value=1)

    def __init__(self, *args: Any, instance: models.Model | None = None, **kwargs: Any) -> None:
        if instance is not None and "initial" not in kwargs:
            kwargs["initial"] = self.initial_from(instance)
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        for name, field in fields.items():
            if name == "version":
                continue
            if not field.help_text:
                try:
                    field.help_text = _model_help(self.model, name)
                except FieldDoesNotExist:  # a form-only field
                    field.help_text = ""
            if name in self.v1_names and field.label is None:
                field.label = f"{pretty_name(name)} ({self.v1_names[name]})"

    def initial_from(self, instance: models.Model) -> dict[str, Any]:
        data: dict[str, Any] = {"version": getattr(instance, "version", None)}
        for name in self.base_fields:
            if name == "version":
                continue
            value = getattr(instance, name, None)
            if isinstance(self.base_fields[name], forms.TypedChoiceField) and (
                value is None or isinstance(value, bool)
            ):
                value = "" if value is None else ("true" if value else "false")
            data[name] = value
        return data

    def values(self) -> dict[str, Any]:
        """What the service gets: every field but the version."""
        return {k: v for k, v in self.cleaned_data.items() if k != "version"}

    def grouped(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(legend, [self[name] for name in names]) for legend, names in self.fieldsets]


# -- scheduler configurations -------------------------------------------------------------------


class SchedulerConfigurationForm(PolicyForm):
    model = SchedulerConfiguration
    v1_names = CONFIGURATION_FIELDS
    fieldsets = [
        ("Description", ["description"]),
        (
            "Scheduling",
            [
                "parallelism",
                "percentage_of_nodes_to_score",
                "pod_initial_backoff_seconds",
                "pod_max_backoff_seconds",
            ],
        ),
        (
            "Profiling and start-up",
            ["enable_profiling", "enable_contention_profiling", "delay_cache_until_active"],
        ),
        ("Connections and extenders (YAML)", ["leader_election", "client_connection", "extenders"]),
    ]

    description = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )
    parallelism = _int(min_value=INT32_MIN, max_value=INT32_MAX)
    percentage_of_nodes_to_score = _int(min_value=INT32_MIN, max_value=INT32_MAX)
    pod_initial_backoff_seconds = _int()
    pod_max_backoff_seconds = _int()
    enable_profiling = tristate("true")
    enable_contention_profiling = tristate("true")
    delay_cache_until_active = forms.BooleanField(required=False)
    leader_election = YAMLField(shape=dict, empty={})
    client_connection = YAMLField(shape=dict, empty={})
    extenders = YAMLField(shape=list, empty=[], rows=4)


class SchedulerProfileForm(PolicyForm):
    """A profile; ``plugins`` is edited per extension point, one plugin per line."""

    model = SchedulerProfile
    v1_names = {
        "scheduler_name": "schedulerName",
        "percentage_of_nodes_to_score": "percentageOfNodesToScore",
        "plugin_config": "pluginConfig",
    }
    POINTS: ClassVar[tuple[str, ...]] = tuple(PLUGINS_FIELD_ORDER)

    scheduler_name = forms.CharField(required=False, max_length=253)
    position = forms.IntegerField(required=False, min_value=0, max_value=10_000, initial=0)
    percentage_of_nodes_to_score = _int(min_value=INT32_MIN, max_value=INT32_MAX)
    plugin_config = YAMLField(
        shape=list,
        empty=[],
        rows=6,
        help_text="pluginConfig, as in v1: a list of {name, args}. LoadAwareScheduling's args "
        "have their own editor.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        for point in self.POINTS:
            for which in ("enabled", "disabled"):
                fields[f"plugins_{point}_{which}"] = forms.CharField(
                    required=False,
                    max_length=16 * 1024,
                    label=f"{point} {which}",
                    widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}),
                )

    @property
    def fieldsets(self) -> list[tuple[str, list[str]]]:  # type: ignore[override]
        return [
            ("Profile", ["scheduler_name", "position", "percentage_of_nodes_to_score"]),
            ("Plugin arguments (pluginConfig, YAML)", ["plugin_config"]),
        ]

    def plugin_rows(self) -> list[tuple[str, forms.BoundField, forms.BoundField]]:
        return [
            (point, self[f"plugins_{point}_enabled"], self[f"plugins_{point}_disabled"])
            for point in self.POINTS
        ]

    def line_of(self, box: str, name: str) -> int | None:
        """The line of ``box`` (as typed) that names plugin ``name``."""
        text = str(self.data.get(self.add_prefix(box), "") or "")
        for number, line in enumerate(text.splitlines(), 1):
            if line.split()[:1] == [name]:
                return number
        return None

    def plugin_message(self, box: str, message: str, name: str | None = None) -> str:
        """A message about a box, with the line of the plugin it names (``name``, else the
        one it quotes; the engine's index counts the default plugins too, so it is not the
        line)."""
        if name is None:
            match = re.search(r'"([^"]+)"', message)
            name = match[1] if match else None
        number = self.line_of(box, name) if name else None
        return f"Line {number}: {message}" if number else message

    def initial_from(self, instance: models.Model) -> dict[str, Any]:
        data = super().initial_from(instance)
        plugins = getattr(instance, "plugins", None) or {}
        for point in self.POINTS:
            for which in ("enabled", "disabled"):
                entries = (plugins.get(point) or {}).get(which) or []
                data[f"plugins_{point}_{which}"] = "\n".join(
                    f"{e.get('name', '')} {e['weight']}"
                    if e.get("weight") is not None
                    else str(e.get("name", ""))
                    for e in entries
                )
        return data

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        plugins: dict[str, Any] = {}
        for point in self.POINTS:
            for which in ("enabled", "disabled"):
                name = f"plugins_{point}_{which}"
                entries = []
                for number, line in enumerate((data.get(name) or "").splitlines(), 1):
                    parts = line.split()
                    if not parts:
                        continue
                    entry: dict[str, Any] = {"name": parts[0]}
                    if len(parts) > 2 or (len(parts) == 2 and not _is_int(parts[1])):
                        self.add_error(
                            name,
                            f"Line {number}: write a plugin name, then optionally its weight "
                            f"(e.g. NodeResourcesFit 2).",
                        )
                        continue
                    if len(parts) == 2:
                        entry["weight"] = int(parts[1])
                    entries.append(entry)
                if entries:
                    plugins.setdefault(point, {})[which] = entries
        data["plugins"] = plugins
        for entry in data.get("plugin_config") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                self.add_error("plugin_config", "Each entry needs a name (and optional args).")
                break
            if set(entry) - {"name", "args"}:
                self.add_error("plugin_config", f"{entry['name']}: only name and args are allowed.")
                break
        else:
            try:
                plugin_config_validator(data.get("plugin_config"))
            except forms.ValidationError as exc:
                self.add_error("plugin_config", exc)
        return data

    def values(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "scheduler_name": data.get("scheduler_name") or "",
            "position": data.get("position") or 0,
            "percentage_of_nodes_to_score": data.get("percentage_of_nodes_to_score"),
            "plugins": data.get("plugins") or {},
            "plugin_config": data.get("plugin_config") or [],
        }


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


# -- LoadAware args -----------------------------------------------------------------------------


_LOADAWARE_V1 = {**ARGS_FIELDS, **{k: f"aggregated.{v}" for k, v in AGGREGATED_FIELDS.items()}}


class LoadAwareArgsForm(PolicyForm):
    """Every field of Koordinator's LoadAwareSchedulingArgs; empty means its default."""

    model = LoadAwareSchedulingArgs
    v1_names = _LOADAWARE_V1
    fieldsets = [
        (
            "Filter: usage thresholds",
            ["usage_thresholds", "prod_usage_thresholds", "prod_usage_include_sys"],
        ),
        (
            "Filter: NodeMetric freshness",
            [
                "node_metric_expiration_seconds",
                "filter_expired_node_metrics",
                "enable_schedule_when_node_metrics_expired",
            ],
        ),
        (
            "Score",
            ["resource_weights", "dominant_resource_weight", "score_according_prod_usage"],
        ),
        (
            "Estimation",
            [
                "estimator",
                "estimated_scaling_factors",
                "estimated_seconds_after_pod_scheduled",
                "estimated_seconds_after_initialized",
                "allow_customize_estimation",
            ],
        ),
        (
            "Aggregated usage (percentiles)",
            [
                "aggregated_usage_thresholds",
                "aggregated_usage_aggregation_type",
                "aggregated_usage_aggregated_duration",
                "aggregated_score_aggregation_type",
                "aggregated_score_aggregated_duration",
            ],
        ),
        ("Other", ["supported_resources", "plugin_config_index"]),
    ]

    usage_thresholds = ResourceMapField()
    prod_usage_thresholds = ResourceMapField()
    prod_usage_include_sys = tristate("false")
    node_metric_expiration_seconds = _int()
    filter_expired_node_metrics = tristate("true")
    enable_schedule_when_node_metrics_expired = tristate("false")
    resource_weights = ResourceMapField()
    dominant_resource_weight = _int()
    score_according_prod_usage = tristate("false")
    estimator = forms.CharField(required=False, max_length=253)
    estimated_scaling_factors = ResourceMapField()
    estimated_seconds_after_pod_scheduled = _int()
    estimated_seconds_after_initialized = _int()
    allow_customize_estimation = tristate("false")
    aggregated_usage_thresholds = ResourceMapField()
    aggregated_usage_aggregation_type = forms.ChoiceField(
        choices=[("", "Not set"), *[(t, t) for t in AGGREGATION_TYPES]], required=False
    )
    aggregated_usage_aggregated_duration = forms.CharField(required=False, max_length=64)
    aggregated_score_aggregation_type = forms.ChoiceField(
        choices=[("", "Not set (score on current usage)"), *[(t, t) for t in AGGREGATION_TYPES]],
        required=False,
    )
    aggregated_score_aggregated_duration = forms.CharField(required=False, max_length=64)
    supported_resources = YAMLField(shape=list, empty=None, rows=2)
    plugin_config_index = forms.IntegerField(required=False, min_value=0, max_value=1000)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        defaults = loadaware_defaults()
        fields: Any = self.fields
        for name, default in defaults.items():
            if name in fields:
                fields[name].widget.attrs.setdefault("placeholder", default)
        self.defaults = defaults


# -- node threshold and collect policies --------------------------------------------------------


class NodeThresholdPolicyForm(PolicyForm):
    model = NodeThresholdPolicy
    fieldsets = [
        ("Policy", ["name", "description", "enabled", "priority"]),
        ("Target nodes (names or a label selector, not both)", ["node_names", "node_selector"]),
        (
            "Thresholds (percent per resource)",
            [
                "usage_thresholds",
                "prod_usage_thresholds",
                "aggregated_usage_thresholds",
                "aggregated_usage_aggregation_type",
                "aggregated_usage_aggregated_duration",
            ],
        ),
        ("Daily time window (the cluster's time zone)", ["active_from", "active_until"]),
    ]

    name = forms.SlugField(max_length=63)
    description = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )
    enabled = forms.BooleanField(required=False, initial=True)
    priority = forms.IntegerField(min_value=-1000, max_value=1000, initial=0)
    node_names = LinesField(label="Node names (one per line)")
    node_selector = YAMLField(
        shape=dict,
        empty=None,
        rows=4,
        label="Node selector (YAML)",
        help_text="A metav1.LabelSelector, e.g. matchLabels: {pool: batch}; {} selects every "
        "node; empty: target by names.",
    )
    usage_thresholds = ResourceMapField()
    prod_usage_thresholds = ResourceMapField()
    aggregated_usage_thresholds = ResourceMapField()
    aggregated_usage_aggregation_type = forms.ChoiceField(
        choices=[("", "Not set"), *[(t, t) for t in AGGREGATION_TYPES]], required=False
    )
    aggregated_usage_aggregated_duration = forms.CharField(required=False, max_length=64)
    active_from = forms.TimeField(required=False, widget=forms.TimeInput(attrs={"type": "time"}))
    active_until = forms.TimeField(required=False, widget=forms.TimeInput(attrs={"type": "time"}))

    def initial_from(self, instance: models.Model) -> dict[str, Any]:
        data = super().initial_from(instance)
        if getattr(instance, "node_selector", None) == {}:
            data["node_selector"] = "{}"
        return data

    def clean_node_selector(self) -> Any:
        raw = self.data.get(self.add_prefix("node_selector"), "")
        value = self.cleaned_data.get("node_selector")
        if value is None and isinstance(raw, str) and raw.strip() == "{}":
            return {}
        return value


class CollectPolicyForm(PolicyForm):
    model = NodeMetricCollectPolicy
    fieldsets = [
        ("Policy", ["name", "description", "is_default", "priority"]),
        ("Nodes (overrides only)", ["node_selector"]),
        ("NodeMetric collection", ["report_interval_seconds", "aggregate_duration_seconds"]),
    ]

    name = forms.SlugField(max_length=63)
    description = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )
    is_default = forms.BooleanField(required=False, label="Cluster default")
    priority = forms.IntegerField(min_value=-1000, max_value=1000, initial=0)
    node_selector = YAMLField(shape=dict, empty=None, rows=4, label="Node selector (YAML)")
    report_interval_seconds = _int(label="Report interval seconds (reportIntervalSeconds)")
    aggregate_duration_seconds = _int(label="Aggregate duration seconds (aggregateDurationSeconds)")
