"""Forms of the policy editors: input shapes and types only.

What values mean (thresholds in 0..100, known plugins, one queueSort...) is for the services to
say, with the engine's validators (as for the API); their errors are put back on these forms'
fields by the views. JSON-shaped fields are edited as YAML (JSON is YAML too).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import time
from typing import Any, ClassVar

import yaml
from django import forms
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.forms.utils import pretty_name

from policy.clusters.models import Cluster
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
from scoring import (
    AGGREGATION_TYPES,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    PLUGINS_FIELD_ORDER,
    InputError,
    load_yaml,
)

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


RESOURCE_KEY = "{}-resource"  # the rows' inputs: <field>-resource and <field>-value, repeated
VALUE_KEY = "{}-value"
BLANK_ROWS = 2  # empty rows offered after the filled ones (without JavaScript, rows to add)
CORE_PICKS = ("cpu", "memory", "ephemeral-storage")
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
_TOKEN = re.compile(r"[^\s:,;'\"()\[\]{}]+")

# What leaving cpu or memory out of a map that replaces another one means.
LEFT_OUT = {
    "usage_thresholds": "the {} check would be off",
    "prod_usage_thresholds": "the {} check would be off",
    "aggregated_usage_thresholds": "the {} check would be off",
    "resource_weights": "{} would not be scored",
}


def _getlist(data: Any, key: str) -> list[str] | None:
    if key not in data:
        return None
    if hasattr(data, "getlist"):
        return [str(v) for v in data.getlist(key)]
    value = data[key]
    return [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]


class ResourceRowsWidget(forms.Widget):
    """Rows of a resource name and a number, posted as repeated ``<name>-resource`` and
    ``<name>-value`` inputs (rendered by ``policy/policies/_resource_map.html``). Without
    them, a single ``<name>`` value is YAML text, as the field took before (scripts)."""

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        resources = _getlist(data, RESOURCE_KEY.format(name))
        values = _getlist(data, VALUE_KEY.format(name))
        if resources is None and values is None:
            return data.get(name)
        resources, values = resources or [], values or []
        width = max(len(resources), len(values))
        resources += [""] * (width - len(resources))
        values += [""] * (width - len(values))
        return list(zip(resources, values, strict=True))

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return not any(k in data for k in (name, RESOURCE_KEY.format(name), VALUE_KEY.format(name)))

    def id_for_label(self, id_: str) -> str:
        return id_  # the rows' fieldset (the error summary links there)


def parse_rows(rows: list[tuple[str, str]]) -> tuple[dict[str, Any], dict[int, list[str]]]:
    """The map the rows give and each faulty row's messages, by its index among the filled rows
    (blank rows are no entry, and are not counted).

    Names and numbers are checked by :func:`resource_map_validator`, the one rule for these
    maps (what a value must be beyond an integer is for the services to say)."""
    data: dict[str, Any] = {}
    problems: dict[int, list[str]] = {}
    seen: dict[str, int] = {}
    filled = [(n.strip(), v.strip()) for n, v in rows if n.strip() or v.strip()]
    for index, (name, text) in enumerate(filled):
        if not name:
            problems[index] = [f"Row {index + 1}: give the resource the value {text} is for."]
            continue
        if not text:
            problems[index] = [f"{name}: give a value (an integer), or clear the row."]
            continue
        if name in seen:
            problems[index] = [
                f"Row {index + 1}: {name} is given twice (also row {seen[name] + 1})."
            ]
            continue
        value: Any = int(text) if _INTEGER_TEXT.fullmatch(text) else text
        try:
            resource_map_validator({name: value})
        except forms.ValidationError as exc:
            problems[index] = list(exc.messages)
            continue
        seen[name] = index
        data[name] = value
    return data, problems


@dataclass
class ResourceRow:
    index: int
    resource: str
    value: str
    errors: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)


def _row_of(message: str, rows: list[ResourceRow]) -> ResourceRow | None:
    """The row a message is about: "Row N: ..." or the first row whose resource it names."""
    if match := re.match(r"Row (\d+):", message):
        number = int(match.group(1))
        return rows[number - 1] if 0 < number <= len(rows) else None
    tokens = {token.rstrip(".") for token in _TOKEN.findall(message)}
    for row in rows:
        name = row.resource.strip()
        if name and (message.startswith(f"{name}:") or name in tokens):
            return row
    return None


class ResourceMapBoundField(forms.BoundField):
    """The rows to show: the posted ones (or the map's entries), then blank ones; each error
    and warning on the row of the resource it names, the others on the field."""

    def _rows(self) -> tuple[list[ResourceRow], list[str]]:
        value = self.value()
        if isinstance(value, dict):
            pairs = [(str(k), str(v)) for k, v in value.items()]
        elif isinstance(value, list):
            pairs = [(str(k), str(v)) for k, v in value if str(k).strip() or str(v).strip()]
        else:  # None, or YAML text (a script's post): its entries if it reads as a map
            parsed = _lenient_map(value)
            pairs = [(str(k), str(v)) for k, v in parsed.items()]
        rows = [ResourceRow(i, k, v) for i, (k, v) in enumerate(pairs)]
        rows += [ResourceRow(len(rows) + i, "", "") for i in range(BLANK_ROWS)]
        loose: list[str] = []
        for message in self.errors:
            row = _row_of(str(message), rows[: len(pairs)])
            (row.errors if row else loose).append(str(message))
        form: Any = self.form
        warned: dict[str, list[tuple[str, str]]] = form.resource_warnings()
        for resource, message in warned.get(self.name, []):
            for row in rows[: len(pairs)]:
                if row.resource.strip() == resource:
                    row.warnings.append(message)
                    break
        return rows, loose

    @property
    def rows(self) -> list[ResourceRow]:
        return self._rows()[0]

    @property
    def id_for_label(self) -> str:
        """Where the error summary links: the first faulty row's number (its name, if that is
        what is wrong), else the rows' fieldset."""
        for row in self.rows:
            if row.errors:
                try:
                    resource_map_validator({row.resource.strip(): 0})
                except forms.ValidationError:
                    return f"{self.auto_id}_{row.index}_resource"
                return f"{self.auto_id}_{row.index}_value"
        return str(self.auto_id)

    @property
    def field_errors(self) -> list[str]:
        """Errors that name no row (shown under the field)."""
        return self._rows()[1]

    @property
    def picks(self) -> list[str]:
        return list(getattr(self.form, "resource_picks", CORE_PICKS))

    @property
    def unit(self) -> str:
        field: Any = self.field
        return str(field.unit)


def _lenient_map(text: Any) -> dict[str, Any]:
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        data = load_yaml(text, source="YAML")
    except (yaml.YAMLError, InputError):
        return {}
    return dict(data) if isinstance(data, dict) else {}


class ResourceMapField(YAMLField):
    """``map[ResourceName]int64`` as rows of a resource and an integer (a blank row is no
    entry; no entry: None). Its cleaned value is the dict the services take."""

    resource_map = True  # templates render its rows (``_resource_map.html``)

    def __init__(self, *, unit: str = "Percent", **kwargs: Any) -> None:
        self.unit = unit
        kwargs.setdefault("widget", ResourceRowsWidget())
        super().__init__(shape=dict, empty=None, **kwargs)

    def get_bound_field(self, form: forms.BaseForm, field_name: str) -> forms.BoundField:
        return ResourceMapBoundField(form, self, field_name)

    def prepare_value(self, value: Any) -> Any:
        return value  # rows, a map or text: the bound field lays them out

    def to_python(self, value: Any) -> Any:
        if isinstance(value, list):
            data, problems = parse_rows(value)
            if problems:
                raise forms.ValidationError([m for i in sorted(problems) for m in problems[i]])
            if not data:
                return None
        else:
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


# "Default false." and "Default 180; must be > 0." (what follows the semicolon stays)
_BARE_DEFAULT = re.compile(r"\s*Default [^\s.{;]+(?:\.(?=\s|$)|; (\w))")
_MAP_DEFAULT = re.compile(r"Default \{[^}]*\}")  # "Default {cpu: 65, memory: 95} when empty"


def without_default(help_text: Any) -> str:
    """``help_text`` without the default's value (the model's help, written for the API schema,
    names it; the editor shows it apart), keeping when the default applies."""
    text = _BARE_DEFAULT.sub(lambda m: f" {m[1].upper()}" if m[1] else "", str(help_text))
    return _MAP_DEFAULT.sub("The default applies", text).strip()


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

    # Fields of the editor only, not stored (not shown on detail pages, not given to services).
    form_only: ClassVar[tuple[str, ...]] = ()

    # Resource map fields whose non-empty value replaces another map (not merged with it):
    # what it replaces. The warning about unreported resources says so.
    replaces: ClassVar[dict[str, str]] = {}

    def __init__(
        self,
        *args: Any,
        instance: models.Model | None = None,
        resources: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if instance is not None and "initial" not in kwargs:
            kwargs["initial"] = self.initial_from(instance)
        super().__init__(*args, **kwargs)
        # The resources the cluster's nodes report (None: not known, nothing is warned about).
        self.reported = None if resources is None else frozenset(resources)
        self.resource_picks = [*CORE_PICKS, *sorted(set(resources or ()) - set(CORE_PICKS))]
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

    def for_cluster(self, cluster: Cluster, *, new: bool) -> None:
        """Adapt to the cluster edited in (its time zone, its other policies); ``new``: the form
        creates an object."""

    def grouped(self, *, editing: bool = True) -> list[tuple[str, list[forms.BoundField]]]:
        """(legend, bound fields) per fieldset; not ``editing`` (a detail page): without the
        fields that are not stored (``form_only``)."""
        groups = [
            (legend, [self[name] for name in names if editing or name not in self.form_only])
            for legend, names in self.fieldsets
        ]
        return [(legend, bound) for legend, bound in groups if bound]

    def resource_warnings(self) -> dict[str, list[tuple[str, str]]]:
        """Per resource map field, (resource, message) for each resource of its valid value that
        no node of the cluster's newest snapshot reports: accepted, but never used (often a
        typo, such as ``cpuu``, which also drops the defaults' cpu entry). Unbound: of the
        stored values (an edit page shows them at once)."""
        cleaned = getattr(self, "cleaned_data", None) if self.is_bound else self.initial
        if self.reported is None or not cleaned:
            return {}
        out: dict[str, list[tuple[str, str]]] = {}
        fields: Any = self.fields
        for name, field in fields.items():
            value = cleaned.get(name) if isinstance(field, ResourceMapField) else None
            if not isinstance(value, dict):
                continue
            for resource in value:
                if resource in self.reported:
                    continue
                message = (
                    f"{self[name].label}: no node of the newest snapshot reports {resource!r} "
                    "(a typo?), so this entry is never used."
                )
                if replaced := self.replaces.get(name):
                    missing = " and ".join(r for r in ("cpu", "memory") if r not in value)
                    message += f" A non-empty map replaces {replaced}"
                    if missing and name in LEFT_OUT:
                        message += (
                            f": with no {missing} entry here, {LEFT_OUT[name].format(missing)}"
                        )
                    message += "."
                out.setdefault(name, []).append((resource, message))
        return out

    @classmethod
    def has_resource_maps(cls) -> bool:
        return any(isinstance(field, ResourceMapField) for field in cls.base_fields.values())

    def warning_messages(self) -> list[str]:
        return [message for items in self.resource_warnings().values() for _, message in items]


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
    # Estimated scaling factors are merged with the defaults; the other maps have none.
    replaces = dict.fromkeys(["usage_thresholds", "resource_weights"], "the defaults")
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
    resource_weights = ResourceMapField(unit="Weight")
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
                # The editor states the default beside the help; the help must not repeat it.
                fields[name].help_text = without_default(fields[name].help_text)
        self.defaults = defaults


# -- node threshold and collect policies --------------------------------------------------------


def threshold_moment(
    mode: str | None, at: time | None, start: time | None, end: time | None
) -> tuple[time | None, str]:
    """When to evaluate a threshold policy (``mode``: "now", "at" ``at``, or "window": while
    its window ``start``–``end`` is open): a wall-clock time in the cluster's time zone (None:
    now), and how a page says it."""
    if mode == "at" and at is not None:
        return at, f"at {at:%H:%M}"
    if mode == "window":
        if start is None or end is None:
            return None, "now (it has no time window: always active)"
        return start, f"while its time window is open ({start:%H:%M}–{end:%H:%M}), at {start:%H:%M}"
    return None, "now"


class NodeThresholdPolicyForm(PolicyForm):
    model = NodeThresholdPolicy
    replaces = dict.fromkeys(
        ["usage_thresholds", "prod_usage_thresholds", "aggregated_usage_thresholds"],
        "the LoadAware args' map",
    )
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
        ("Preview at (not saved)", ["preview_when", "preview_at"]),
    ]
    WINDOW_LEGEND = "Daily time window (the cluster's time zone)"
    form_only = ("preview_when", "preview_at")
    time_zone = ""

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
    # Not stored: when "Preview" evaluates the policies (which nodes get which annotation then).
    preview_when = forms.ChoiceField(
        choices=[
            ("now", "Now"),
            ("at", "At the time below"),
            ("window", "While its time window is open"),
        ],
        required=False,
        initial="now",
        label="Evaluate the preview",
        help_text="Which nodes get which annotation then; every policy's window counts.",
    )
    preview_at = forms.TimeField(
        required=False,
        widget=forms.TimeInput(attrs={"type": "time"}),
        label="Preview at (local time)",
        help_text="With “At the time below”: a wall-clock time in the cluster's time zone.",
    )

    def initial_from(self, instance: models.Model) -> dict[str, Any]:
        data = super().initial_from(instance)
        if getattr(instance, "node_selector", None) == {}:
            data["node_selector"] = "{}"
        data.pop("preview_when", None)
        data.pop("preview_at", None)
        return data

    def values(self) -> dict[str, Any]:
        return {k: v for k, v in super().values().items() if k not in self.form_only}

    def for_cluster(self, cluster: Cluster, *, new: bool) -> None:
        self.time_zone = cluster.timezone
        for name in ("active_from", "active_until", "preview_at"):
            field = self.fields[name]
            field.help_text = f"{field.help_text} Time zone: {cluster.timezone}.".strip()
            self[name].help_text = field.help_text  # a bound field copies it when first made

    def grouped(self, *, editing: bool = True) -> list[tuple[str, list[forms.BoundField]]]:
        out = super().grouped(editing=editing)
        if self.time_zone:
            legend = f"Daily time window (time zone {self.time_zone}, the cluster's)"
            out = [(legend if lg == self.WINDOW_LEGEND else lg, bound) for lg, bound in out]
        return out

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if (
            "preview" in self.data
            and cleaned.get("preview_when") == "at"
            and cleaned.get("preview_at") is None
            and "preview_at" not in self.errors
        ):
            self.add_error("preview_at", "Give the time to preview at.")
        return cleaned

    def preview_moment(self) -> tuple[time | None, str]:
        """The wall-clock time (cluster's time zone) the preview evaluates at, None: now; and
        how the preview says it."""
        data = getattr(self, "cleaned_data", {})
        return threshold_moment(
            data.get("preview_when"),
            data.get("preview_at"),
            data.get("active_from"),
            data.get("active_until"),
        )

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

    def for_cluster(self, cluster: Cluster, *, new: bool) -> None:
        """A new policy starts as the cluster default while the cluster has none, else as a
        per-node override (with a selector); the "Cluster default" box says which and why."""
        if not new:
            return
        default = cluster.collect_policies.filter(is_default=True).first()
        field = self.fields["is_default"]
        selector = self.fields["node_selector"]
        if default is None:
            self.initial["is_default"] = True
            field.help_text = (
                f"{cluster.name} has no default collect policy yet, so this one starts as the "
                "cluster default: it applies to every node (no node selector). Untick it to "
                "make a per-node override instead."
            )
        else:
            self.initial["is_default"] = False
            field.help_text = (
                f"{cluster.name}'s default collect policy is {default.name}, so this one starts "
                "as a per-node override: give the node selector of the nodes it applies to."
            )
            selector.widget.attrs["placeholder"] = "matchLabels:\n  pool: batch"
        selector.help_text = (
            "Overrides only: a metav1.LabelSelector, e.g. matchLabels: {pool: batch}. "
            "Empty for the cluster default."
        )
        for name in ("is_default", "node_selector"):  # a bound field copies it when first made
            self[name].help_text = self.fields[name].help_text
