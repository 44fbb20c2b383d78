"""Batch placement simulation with an equivalence-class cache, and what-if comparisons.

Modules: ``equivalence`` (pod classes), ``journal`` (per-node change log), ``cache`` (filter and
score results per class and plugin), ``workload`` (controllers expanded into pods),
``simulator`` (placing pods one after another), ``metrics`` (utilization after placement) and
``compare`` (two configurations side by side, and the ``simulate`` JSON).
"""
