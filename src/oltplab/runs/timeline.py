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
                   io_latency=io_latency, spares=datastore_spares(paths))


def datastore_spares(paths: dict) -> dict[str, list[str]]:
    """{role: the device names of the spares of the datastore under the role's path}: a
    replacement during the run makes a spare a member, so the sampler measures them too."""
    import os
    from pathlib import Path

    from ..datastores.service import holding
    out = {}
    for role, path in paths.items():
        try:
            doc = holding(Path(path)) if path is not None else None
        except Exception:  # metadata: a run is not refused over it
            doc = None
        if doc and doc.get("spares"):
            out[str(role)] = [os.path.basename(os.path.realpath(d)) for d in doc["spares"]]
    return out


def save_timeline(sampler, record, hosts=None) -> None:
    """timeline.json beside run.json, and each step's derived telemetry figures (``telemetry``)
    with its front end beside its back end (``io``: telemetry.derive.io_figures); ``hosts``
    (cluster.sampling.HostSamplers) adds the other hosts' timelines, placed on this one's
    clocks, and their figures per step (``telemetry.hosts``)."""
    if sampler is None or not sampler.started:
        return
    from ..results.store import atomic_write
    from ..telemetry.derive import derive_steps, io_figures
    timeline = sampler.stop()
    parts = hosts.stop() if hosts is not None else {}
    if parts:
        from ..telemetry.stream import with_hosts
        timeline = with_hosts(timeline, parts)
    data = timeline.to_dict()
    atomic_write(record.path / "timeline.json", json.dumps(data) + "\n")
    steps = record.data["steps"]
    for figures in derive_steps(timeline, steps):
        k = figures.get("step")
        if isinstance(k, int) and 0 <= k < len(steps):
            steps[k]["telemetry"] = figures
            steps[k]["io"] = io_figures(figures, issued(steps[k]))
    record.data["telemetry"] = {"file": "timeline.json", "interval_s": timeline.interval_s,
                                "power": data.get("power")}
    if parts:
        record.data["telemetry"]["hosts"] = _host_figures(timeline, parts, steps)


def issued(step: dict) -> dict | None:
    """The I/Os a fio step issued, by fio's own count (the front end where no database issued
    them): {"read_iops", "write_iops", "write_mib_s"}, or None for another step."""
    read, write = step.get("read"), step.get("write")
    if not (isinstance(read, dict) and isinstance(write, dict) and "iops" in write):
        return None
    return {"read_iops": read.get("iops"), "write_iops": write["iops"],
            "write_mib_s": (write["mbps"] * 1e6 / 2**20
                            if write.get("mbps") is not None else None)}


def _host_figures(timeline, parts: dict, steps: list[dict]) -> dict:
    """Each other host's figures per step (its samples within this host's step marks) in the
    step's ``telemetry.hosts``; what the run's record says of each host's timeline. A host
    whose clock is known to 100 ms or worse has its warning in every step's ``warnings``:
    its samples may be misplaced by as much."""
    import dataclasses

    from ..telemetry.derive import derive_steps
    out = {}
    for name, part in parts.items():
        tl = part.get("timeline")
        out[name] = {"clock": part.get("clock"), "samples": len(tl) if tl is not None else 0,
                     **{k: part[k] for k in ("error", "warning") if part.get(k)}}
        if part.get("warning"):
            for step in steps:
                step.setdefault("warnings", []).append(part["warning"])
        if tl is None:
            continue
        for figures in derive_steps(dataclasses.replace(tl, marks=list(timeline.marks)), steps):
            k = figures.get("step")
            if isinstance(k, int) and 0 <= k < len(steps) and "telemetry" in steps[k]:
                steps[k]["telemetry"].setdefault("hosts", {})[name] = figures
    return out
