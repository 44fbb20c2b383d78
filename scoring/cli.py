"""``python -m scoring``: the engine's command line (see the engine CLI contract).

Exit codes: 0 a decision was made (also when no node fits) or the configuration is valid
(warnings allowed); 1 the configuration is invalid (``validate``); 2 bad input, with a message on
stderr naming the file, the object and the field.

``--target flavor@version`` (``kube-scheduler``, ``koord-scheduler``, ``scheduler-plugins``,
``custom``) names the scheduler the configuration is for; without it the target is inferred from
the document (see ``docs/scheduler-targets.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from scoring.config import load_configuration
from scoring.config.loader import check_configuration
from scoring.config.targets import Target, parse_target
from scoring.engine import Engine
from scoring.errors import ConfigurationInvalid, InputError
from scoring.loading import iter_objects, load_objects, load_single, read_text
from scoring.objects import Pod, parse_pod
from scoring.report import decision_table, simulation_table, validation_table
from scoring.simulation.compare import simulation_report, what_if
from scoring.simulation.workload import expand_workload, workload_controllers
from scoring.snapshot import Snapshot
from scoring.timeutil import now as clock_now
from scoring.timeutil import parse_time


def _time(text: str) -> datetime:
    try:
        return parse_time(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--now: {exc}") from None


def _target(text: str) -> Target:
    try:
        return parse_target(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"--{exc}") from None


def _add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        type=_target,
        metavar="FLAVOR[@VERSION]",
        help="the scheduler the configuration is for, e.g. koord-scheduler@1.7 "
        "(default: inferred from the document)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scoring", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    evaluate = commands.add_parser("evaluate", help="place one pod and explain the decision")
    evaluate.add_argument("--cluster", action="append", default=[], metavar="PATH")
    evaluate.add_argument("--config", metavar="PATH")
    evaluate.add_argument("--pod", required=True, metavar="PATH")
    evaluate.add_argument("--now", type=_time, metavar="TIME")
    evaluate.add_argument("--format", choices=("table", "json"), default="table")
    _add_target(evaluate)

    simulate = commands.add_parser("simulate", help="place a workload pod by pod (what-if)")
    simulate.add_argument("--cluster", action="append", default=[], metavar="PATH")
    simulate.add_argument("--config", required=True, metavar="PATH")
    simulate.add_argument("--workload", action="append", required=True, metavar="PATH")
    simulate.add_argument("--compare-config", metavar="PATH")
    simulate.add_argument("--now", type=_time, metavar="TIME")
    simulate.add_argument("--no-cache", action="store_true", help="no equivalence-class cache")
    simulate.add_argument(
        "--seed", type=int, default=0, help="seed of generated pod-name suffixes and uids"
    )
    simulate.add_argument("--format", choices=("table", "json"), default="table")
    _add_target(simulate)

    validate = commands.add_parser("validate", help="default and validate a configuration")
    validate.add_argument("--config", required=True, metavar="PATH")
    validate.add_argument("--format", choices=("table", "json"), default="table")
    _add_target(validate)
    return parser


def _load_config(path: str | None, target: Target | None = None) -> Engine:
    """The engine for ``--config`` (warnings go to stderr; errors raise)."""
    if path is None:
        return Engine()
    config = load_configuration(read_text(path), source_name=path, target=target)
    for warning in config.warnings:
        _warn(f"warning: {path}: {warning}")
    return Engine(config)


def run_evaluate(args: argparse.Namespace) -> int:
    engine = _load_config(args.config, args.target)
    snapshot = Snapshot.from_objects(iter_objects(args.cluster))
    pod = parse_pod(load_single(args.pod, "Pod"))
    decision = engine.evaluate(pod, snapshot, args.now)
    if args.format == "json":
        json.dump(decision.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(decision_table(decision))
    return 0


def _load_compared(path: str, target: Target | None) -> Engine:
    """``--compare-config``: its errors name its own path (main() names ``--config``)."""
    try:
        return _load_config(path, target)
    except ConfigurationInvalid as exc:
        raise InputError("; ".join(f"{path}: {error}" for error in exc.errors)) from None


def _workload_pods(paths: Sequence[str], seed: int, snapshot: Snapshot) -> list[Pod]:
    """Pods of every workload file (controllers expanded); errors name the file. The
    controllers those pods belong to join the snapshot, as they exist in a cluster."""
    pods: list[Pod] = []
    for path in paths:
        objects = load_objects([path])
        try:
            pods.extend(parse_pod(obj) for obj in expand_workload(objects, seed=seed, warn=_warn))
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
        snapshot.add_cluster_objects(workload_controllers(objects))
    return pods


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


def run_simulate(args: argparse.Namespace) -> int:
    configurations = [(args.config, _load_config(args.config, args.target))]
    if args.compare_config:
        compared = _load_compared(args.compare_config, args.target)
        configurations.append((args.compare_config, compared))
    snapshot = Snapshot.from_objects(iter_objects(args.cluster))
    pods = _workload_pods(args.workload, args.seed, snapshot)
    now = args.now or clock_now()
    runs = what_if(snapshot, pods, now, configurations, use_cache=not args.no_cache)
    report = simulation_report(runs)
    if args.format == "json":
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(simulation_table(report))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    check = check_configuration(read_text(args.config), source_name=args.config, target=args.target)
    result: dict[str, Any] = check.to_dict()
    if args.format == "json":
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        table = validation_table(args.config, check.errors, check.warnings, str(check.target))
        sys.stdout.write(table)
        if not check.registry.complete:
            sys.stdout.write(
                f"note: {check.registry.description}; plugin names it lacks are warnings\n"
            )
    return 0 if check.valid else 1


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "evaluate":
            return run_evaluate(args)
        if args.command == "simulate":
            return run_simulate(args)
        return run_validate(args)
    except ConfigurationInvalid as exc:
        for error in exc.errors:
            print(f"error: {args.config}: {error}", file=sys.stderr)
        return 2
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
