"""koord-descheduler's LowNodeLoad and koordlet's eviction thresholds beside LoadAware.

- :mod:`~scoring.descheduler.config`: the ``DeschedulerConfiguration`` document, kept as written.
- :mod:`~scoring.descheduler.args`: ``LowNodeLoadArgs`` decoded, defaulted, pooled, validated.
- :mod:`~scoring.descheduler.lownodeload`: one ``Balance`` round on a snapshot.
- :mod:`~scoring.descheduler.replacement`: where the engine places each evicted pod.
- :mod:`~scoring.descheduler.slo_thresholds`: ``resource-threshold-config`` per node.
- :mod:`~scoring.descheduler.coherence`: the contradictions between the three.
"""
