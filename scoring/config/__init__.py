"""KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1beta2``, ``v1beta3``, ``v1``) as
the scheduler it is for reads it.

Loading defaults the configuration exactly as its version does in the target's release (default
plugins per extension point in v1beta2, through ``multiPoint`` from v1beta3; default plugin
args), validates it with upstream's rules and messages (configuration, plugin args, and the
framework's startup checks against the target's plugin registry), and gives each profile's
plugins per extension point in the order and with the weights the framework runs them.

Modules: :mod:`.catalog` (plugins the engine knows), :mod:`.targets` (the scheduler a document is
for), :mod:`.registries` (plugins per scheduler build and release), :mod:`.versions` (what
differs between config versions), :mod:`.defaults` (defaulting), :mod:`.expansion` (multiPoint
expansion and weights), :mod:`.validation` (config validation), :mod:`.plugin_args` (args
schemas, defaulting, validation), :mod:`.framework_checks` (startup errors), :mod:`.loader` (the
pipeline), :mod:`.model` (results), :mod:`.dump` (rendering, effective or as written).
"""

from scoring.config.catalog import EXTENSION_POINTS, PluginSpec, known_plugins
from scoring.config.dump import dump_configuration, render_document, sparse_document
from scoring.config.features import KUBERNETES_VERSION
from scoring.config.loader import (
    ConfigurationCheck,
    check_configuration,
    default_configuration,
    load_configuration,
    validate_configuration,
)
from scoring.config.model import PluginRef, Profile, SchedulerConfiguration
from scoring.config.targets import FLAVORS, Target, infer_target, parse_target

__all__ = [
    "EXTENSION_POINTS",
    "FLAVORS",
    "KUBERNETES_VERSION",
    "ConfigurationCheck",
    "PluginRef",
    "PluginSpec",
    "Profile",
    "SchedulerConfiguration",
    "Target",
    "check_configuration",
    "default_configuration",
    "dump_configuration",
    "infer_target",
    "known_plugins",
    "load_configuration",
    "parse_target",
    "render_document",
    "sparse_document",
    "validate_configuration",
]
