"""Presenters: pure functions turning snapshots and decisions into what the pages show.

Nothing here renders HTML except :mod:`policy.web.presenters.charts` (server-side charts);
views pick the inputs (cluster, snapshot, configuration), presenters compute, templates lay out.
"""
