"""Render a loaded configuration back to ``kubescheduler.config.k8s.io/v1`` YAML."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from scoring.config.model import SchedulerConfiguration


def dump_configuration(config: SchedulerConfiguration | Mapping[str, Any]) -> str:
    """The defaulted configuration (its ``document``) as v1 YAML.

    The output is what kube-scheduler would see after defaulting; loading it back gives the same
    configuration (same document, same profiles).
    """
    document = config.document if isinstance(config, SchedulerConfiguration) else config
    plain = json.loads(json.dumps(document))
    return yaml.safe_dump(plain, sort_keys=False, default_flow_style=False, allow_unicode=True)
