"""KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``) as kube-scheduler 1.35 reads it.

Loading defaults the configuration exactly as v1 does (default plugins through ``multiPoint``,
default plugin args), validates it with upstream's rules and messages (configuration, plugin
args, and the framework's startup checks), and gives each profile's plugins per extension point
in the order and with the weights the framework runs them.

Modules: :mod:`.catalog` (known plugins), :mod:`.defaults` (v1 defaulting), :mod:`.expansion`
(multiPoint expansion and weights), :mod:`.validation` (config validation),
:mod:`.plugin_args` (args schemas, defaulting, validation), :mod:`.framework_checks` (startup
errors), :mod:`.loader` (the pipeline), :mod:`.model` (results), :mod:`.dump` (rendering).
"""

from scoring.config.catalog import EXTENSION_POINTS, PluginSpec, known_plugins
from scoring.config.dump import dump_configuration
from scoring.config.features import KUBERNETES_VERSION
from scoring.config.loader import default_configuration, load_configuration, validate_configuration
from scoring.config.model import PluginRef, Profile, SchedulerConfiguration

__all__ = [
    "EXTENSION_POINTS",
    "KUBERNETES_VERSION",
    "PluginRef",
    "PluginSpec",
    "Profile",
    "SchedulerConfiguration",
    "default_configuration",
    "dump_configuration",
    "known_plugins",
    "load_configuration",
    "validate_configuration",
]
