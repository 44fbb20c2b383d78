"""schedboard's plugin engine: Kubernetes objects in, explained scheduling decisions out.

A pure library (stdlib, numpy, PyYAML). Django, Celery and the Kubernetes client live at the
edges of the project and call into it; nothing here imports them.

The names below are the engine's public API, the only ones the rest of the project imports
(an import contract in ``pyproject.toml`` enforces it); ``docs/engine-api.md`` describes them.
Everything else under ``scoring`` may change without notice.
"""

# The engine and what it answers.
from scoring.advisor import advise, loadaware_sweep, swept_field
from scoring.advisor.impact import annotated as annotated_nodes
from scoring.advisor.impact import impact as placement_impact
from scoring.advisor.impact import load_filtered
from scoring.config import (
    FLAVORS,
    SchedulerConfiguration,
    Target,
    check_configuration,
    dump_configuration,
    infer_target,
    load_configuration,
    parse_target,
    sparse_document,
    validate_configuration,
)
from scoring.config.catalog import CATALOG as PLUGIN_CATALOG
from scoring.config.catalog import EXTENSION_POINTS, PLUGIN_TYPE_NAMES
from scoring.config.loader import CONFIG_API_VERSION, CONFIG_KIND, ConfigurationCheck
from scoring.config.loader import parse_text as parse_configuration_text
from scoring.config.registries import Registry, config_versions_of
from scoring.config.schema import KUBE_SCHEDULER_CONFIGURATION, PLUGINS_FIELD_ORDER
from scoring.config.schema import Decoder as SchemaDecoder
from scoring.config.targets import MULTI_POINT, document_plugins, target_from_image
from scoring.config.versions import GROUP as CONFIG_GROUP
from scoring.decision import Decision
from scoring.decision_codec import (
    DEFAULT_RANKED,
    NodeSelection,
    StoredExplanation,
    base_digest,
    pack_decision,
)
from scoring.decision_codec import DIGEST as BASE_DIGEST_BYTES
from scoring.decision_codec import Base as DecisionBase
from scoring.decision_codec import Packed as PackedDecision
from scoring.decision_codec import encode as encode_explanation
from scoring.decision_page import page as explanation_page
from scoring.descheduler.args import SCALAR_DEFAULTS as LOWNODELOAD_DEFAULTS
from scoring.descheduler.args import LowNodeLoadArgs
from scoring.descheduler.coherence import Finding as CoherenceFinding
from scoring.descheduler.coherence import LoadAwareSide
from scoring.descheduler.coherence import check as check_coherence
from scoring.descheduler.config import DeschedulerConfiguration
from scoring.descheduler.config import load as load_descheduler_configuration
from scoring.descheduler.config import parse_document as parse_descheduler_document
from scoring.descheduler.lownodeload import NodeLoad as LowNodeLoadNode
from scoring.descheduler.lownodeload import balance as balance_low_node_load
from scoring.descheduler.replacement import place_evicted
from scoring.descheduler.slo_thresholds import CONFIGMAP_KEY as RESOURCE_THRESHOLD_KEY
from scoring.descheduler.slo_thresholds import ResourceThresholdConfig
from scoring.descheduler.slo_thresholds import parse as parse_resource_thresholds
from scoring.engine import Engine
from scoring.errors import (
    DUPLICATE,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    TYPE_INVALID,
    ConfigurationInvalid,
    FieldError,
    InputError,
)
from scoring.field_errors import required as required_field
from scoring.goint import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, fits_int64
from scoring.inputs import load_json, load_yaml
from scoring.json_items import json_items as stream_json_items
from scoring.k8s_names import is_dns1123_subdomain, is_label_key
from scoring.loading import flatten, parse_documents
from scoring.object_fields import ObjectError
from scoring.objects import DEFAULT_SCHEDULER, Pod, parse_node, parse_pod
from scoring.plugins.limitaware.limits import pod_limits
from scoring.plugins.loadaware.args import AGGREGATION_TYPES, DEFAULT_NODE_METRIC_EXPIRATION_SECONDS
from scoring.plugins.loadaware.args import ARGS_KIND as LOADAWARE_ARGS_KIND
from scoring.plugins.loadaware.args import PLUGIN_NAME as LOADAWARE
from scoring.plugins.loadaware.args import default_args as default_loadaware_args
from scoring.plugins.loadaware.args import validate_args as validate_loadaware_args
from scoring.plugins.loadaware.node_load import (
    ArgsInForce,
    NodeLoadDetail,
    NodeLoadFacts,
    ResourceLoad,
    node_load_detail,
    node_loads,
)
from scoring.plugins.loadaware.plugin import LoadAwareScheduling
from scoring.plugins.loadaware.thresholds import (
    ANNOTATION_USAGE_THRESHOLDS,
    FROM_ANNOTATION,
    ThresholdProfile,
    custom_usage_thresholds,
)
from scoring.plugins.nodeaffinity import REASON_POD as NODE_AFFINITY_POD_REASON
from scoring.plugins.nrt.topology import parse_topology
from scoring.quantity import QuantityError, resource_amount
from scoring.selectors import (
    Requirement,
    SelectorError,
    match_label_selector,
    parse_label_selector,
)
from scoring.selectors import describe_error as describe_selector_error
from scoring.simulation.compare import cluster_state, differences, run_summary, what_if
from scoring.simulation.metrics import reported_resources
from scoring.simulation.simulator import SimulationRun
from scoring.simulation.workload import (
    TooManyPods,
    expand_workload,
    workload_controllers,
    workload_pod,
)
from scoring.snapshot import BoolArray, Snapshot, gc_paused
from scoring.synthetic import cpu_quantity, generate_cluster, memory_quantity
from scoring.timeutil import parse_time

__all__ = [
    "AGGREGATION_TYPES",
    "ANNOTATION_USAGE_THRESHOLDS",
    "BASE_DIGEST_BYTES",
    "CONFIG_API_VERSION",
    "CONFIG_GROUP",
    "CONFIG_KIND",
    "DEFAULT_NODE_METRIC_EXPIRATION_SECONDS",
    "DEFAULT_RANKED",
    "DEFAULT_SCHEDULER",
    "DUPLICATE",
    "EXTENSION_POINTS",
    "FLAVORS",
    "FROM_ANNOTATION",
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "INVALID",
    "KUBE_SCHEDULER_CONFIGURATION",
    "LOADAWARE",
    "LOADAWARE_ARGS_KIND",
    "LOWNODELOAD_DEFAULTS",
    "MULTI_POINT",
    "NODE_AFFINITY_POD_REASON",
    "NOT_SUPPORTED",
    "PLUGINS_FIELD_ORDER",
    "PLUGIN_CATALOG",
    "PLUGIN_TYPE_NAMES",
    "REQUIRED",
    "RESOURCE_THRESHOLD_KEY",
    "TOO_LONG",
    "TOO_MANY",
    "TYPE_INVALID",
    "ArgsInForce",
    "BoolArray",
    "CoherenceFinding",
    "ConfigurationCheck",
    "ConfigurationInvalid",
    "Decision",
    "DecisionBase",
    "DeschedulerConfiguration",
    "Engine",
    "FieldError",
    "InputError",
    "LoadAwareScheduling",
    "LoadAwareSide",
    "LowNodeLoadArgs",
    "LowNodeLoadNode",
    "NodeLoadDetail",
    "NodeLoadFacts",
    "NodeSelection",
    "ObjectError",
    "PackedDecision",
    "Pod",
    "QuantityError",
    "Registry",
    "Requirement",
    "ResourceLoad",
    "ResourceThresholdConfig",
    "SchedulerConfiguration",
    "SchemaDecoder",
    "SelectorError",
    "SimulationRun",
    "Snapshot",
    "StoredExplanation",
    "Target",
    "ThresholdProfile",
    "TooManyPods",
    "advise",
    "annotated_nodes",
    "balance_low_node_load",
    "base_digest",
    "check_coherence",
    "check_configuration",
    "cluster_state",
    "config_versions_of",
    "cpu_quantity",
    "custom_usage_thresholds",
    "default_loadaware_args",
    "describe_selector_error",
    "differences",
    "document_plugins",
    "dump_configuration",
    "encode_explanation",
    "expand_workload",
    "explanation_page",
    "fits_int64",
    "flatten",
    "gc_paused",
    "generate_cluster",
    "infer_target",
    "is_dns1123_subdomain",
    "is_label_key",
    "load_configuration",
    "load_descheduler_configuration",
    "load_filtered",
    "load_json",
    "load_yaml",
    "loadaware_sweep",
    "match_label_selector",
    "memory_quantity",
    "node_load_detail",
    "node_loads",
    "pack_decision",
    "parse_configuration_text",
    "parse_descheduler_document",
    "parse_documents",
    "parse_label_selector",
    "parse_node",
    "parse_pod",
    "parse_resource_thresholds",
    "parse_target",
    "parse_time",
    "parse_topology",
    "place_evicted",
    "placement_impact",
    "pod_limits",
    "reported_resources",
    "required_field",
    "resource_amount",
    "run_summary",
    "sparse_document",
    "stream_json_items",
    "swept_field",
    "target_from_image",
    "validate_configuration",
    "validate_loadaware_args",
    "what_if",
    "workload_controllers",
    "workload_pod",
]
