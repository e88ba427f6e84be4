"""The telemetry of a recorded run: its sampler, and its timeline saved beside run.json with
each step's derived figures."""

from __future__ import annotations

import json


def make_sampler(interval: float, paths: dict, power: str, dsn: str | None = None,
                 engine: str | None = None, io_latency: str = "auto"):
    """A telemetry sampler for a run's timeline (not started), or None when turned off;
    ``dsn`` adds ``engine``'s database counters, ``io_latency`` the per-IO latencies."""
    if not interval:
        return None
    from ..telemetry.sampler import Sampler
    return Sampler(interval, paths=paths, db_dsn=dsn, power=power, db_engine=engine,
                   io_latency=io_latency)


def save_timeline(sampler, record) -> None:
    """timeline.json beside run.json, and each step's derived telemetry figures."""
    if sampler is None or not sampler.started:
        return
    from ..results.store import atomic_write
    from ..telemetry.derive import derive_steps
    timeline = sampler.stop()
    data = timeline.to_dict()
    atomic_write(record.path / "timeline.json", json.dumps(data) + "\n")
    steps = record.data["steps"]
    for figures in derive_steps(timeline, steps):
        k = figures.get("step")
        if isinstance(k, int) and 0 <= k < len(steps):
            steps[k]["telemetry"] = figures
    record.data["telemetry"] = {"file": "timeline.json", "interval_s": timeline.interval_s,
                                "power": data.get("power")}
