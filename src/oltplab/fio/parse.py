"""fio's ``json+`` output and per-second IOPS logs, summarised: pure functions, no IO.

Latency percentiles are pooled: the completion-latency bins (``clat_ns.bins``, a map of
latency in ns -> count) of every job are added up, and percentiles are read from the pooled
bins with fio's own rule, so they are those of all IOs together, never a mean of per-job
percentiles (HCIBench's habit). The bins of both directions are pooled separately.

Rates: a group's wall time is its longest job's runtime (per direction, in ms; per-job
``job_runtime`` is summed under ``group_reporting`` and is not used); IOPS and MB/s are all IOs
and bytes over the sum of the groups' wall times. MB/s is 10^6 bytes per second.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, Iterable, Mapping

from ..errors import OltplabError
from .profiles import parse_fio_size

PERCENTILES: tuple[tuple[str, Fraction], ...] = (
    ("p50", Fraction(50)), ("p95", Fraction(95)), ("p99", Fraction(99)),
    ("p99_9", Fraction(999, 10)),
)
LAT_KEYS = ("min", "mean", "p50", "p95", "p99", "p99_9", "max")
DIRECTIONS = ("read", "write")


def load_output(text: str) -> dict[str, Any]:
    """The JSON document in fio's output (fio may print notes before it)."""
    start = text.find("{")
    if start < 0:
        raise OltplabError("fio wrote no JSON result")
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError as e:
        raise OltplabError(f"fio's JSON result is unreadable: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise OltplabError("fio's JSON result holds no jobs")
    return doc


def pool_bins(maps: Iterable[Mapping[Any, int]]) -> dict[int, int]:
    """Add latency bins (value in ns -> count) from several jobs; keys may be strings."""
    pooled: dict[int, int] = {}
    for m in maps:
        for value, count in (m or {}).items():
            if count:
                key = int(value)
                pooled[key] = pooled.get(key, 0) + int(count)
    return pooled


def percentile(bins: Mapping[int, int], pct: Fraction | float | int) -> int | None:
    """fio's rule: the smallest bin value whose cumulative count reaches ``pct`` % of all.

    None when the bins are empty.
    """
    total = sum(bins.values())
    if total <= 0:
        return None
    need = Fraction(pct) * total / 100
    running = 0
    last = None
    for value in sorted(bins):
        running += bins[value]
        last = value
        if running >= need:
            return value
    return last


def latency_ms(clats: list[Mapping[str, Any]]) -> dict[str, float | None]:
    """Min, mean, pooled percentiles and max in ms from several jobs' ``clat_ns`` objects.

    The mean is weighted by each job's count (exact, from fio's means); percentiles come from the
    pooled bins (json+ only); min and max are the extremes over the jobs.
    """
    used = [c for c in clats if c and int(c.get("N") or 0) > 0]
    out: dict[str, float | None] = dict.fromkeys(LAT_KEYS)
    if not used:
        return out
    n = sum(int(c["N"]) for c in used)
    out["mean"] = sum(float(c["mean"]) * int(c["N"]) for c in used) / n / 1e6
    out["min"] = min(int(c["min"]) for c in used) / 1e6
    out["max"] = max(int(c["max"]) for c in used) / 1e6
    bins = pool_bins(c.get("bins") or {} for c in used)
    for key, pct in PERCENTILES:
        value = percentile(bins, pct)
        out[key] = None if value is None else value / 1e6
    return out


def wall_seconds(jobs: list[Mapping[str, Any]]) -> float:
    """Sum over groups of the longest job's runtime, in seconds."""
    longest: dict[Any, int] = {}
    for j in jobs:
        ms = max(int((j.get(d) or {}).get("runtime") or 0) for d in DIRECTIONS)
        g = j.get("groupid", 0)
        longest[g] = max(longest.get(g, 0), ms)
    return sum(longest.values()) / 1000.0


def direction(jobs: list[Mapping[str, Any]], ddir: str, seconds: float) -> dict[str, Any]:
    """IOs, bytes, IOPS, MB/s and latencies of one direction over all jobs."""
    parts = [j.get(ddir) or {} for j in jobs]
    ios = sum(int(p.get("total_ios") or 0) for p in parts)
    nbytes = sum(int(p.get("io_bytes") or 0) for p in parts)
    return {
        "ios": ios,
        "bytes": nbytes,
        "iops": ios / seconds if seconds > 0 else 0.0,
        "mbps": nbytes / seconds / 1e6 if seconds > 0 else 0.0,
        "lat_ms": latency_ms([p.get("clat_ns") or {} for p in parts]),
    }


def series(log_texts: list[str]) -> dict[str, list]:
    """Per-second IOPS from fio's per-job IOPS logs (``log_avg_msec=1000``), summed over jobs.

    A log line is ``time_ms, value, direction, bs, offset[, prio]``; a sample at ~k*1000 ms is
    second k after the ramp. Only seconds that every job logged are kept (the last, partial
    second of a job is often missing).
    """
    per_log: list[dict[tuple[int, int], float]] = []
    for text in log_texts:
        samples: dict[tuple[int, int], float] = {}
        for line in text.splitlines():
            f = [x.strip() for x in line.split(",")]
            if len(f) < 3 or not f[0].lstrip("-").isdigit():
                continue
            t, value, ddir = int(f[0]), float(f[1]), int(f[2])
            if ddir in (0, 1):
                key = (int(round(t / 1000.0)), ddir)
                samples[key] = samples.get(key, 0.0) + value
        if samples:
            per_log.append(samples)
    if not per_log:
        return {"t_s": [], "read_iops": [], "write_iops": []}
    seconds = set.intersection(*({s for s, _ in log} for log in per_log))
    t_s = sorted(s for s in seconds if s > 0)
    read = [sum(log.get((s, 0), 0.0) for log in per_log) for s in t_s]
    write = [sum(log.get((s, 1), 0.0) for log in per_log) for s in t_s]
    return {"t_s": t_s, "read_iops": read, "write_iops": write}


def steady_state(jobs: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    """fio's steady-state verdicts; ``attained`` only when every job attained it."""
    verdicts = [j["steadystate"] for j in jobs if isinstance(j.get("steadystate"), dict)]
    if not verdicts:
        return None
    per_job = [{"attained": bool(v.get("attained")), "criterion": v.get("criterion"),
                "max_deviation": v.get("max_deviation"), "slope": v.get("slope")}
               for v in verdicts]
    return {
        "criterion": verdicts[0].get("ss"),
        "window_s": verdicts[0].get("duration"),
        "attained": all(v["attained"] for v in per_job),
        "jobs_attained": sum(v["attained"] for v in per_job),
        "jobs": len(per_job),
        "per_job": per_job,
    }


def options(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The options fio echoes: ``global`` and each distinct job's own."""
    jobs: dict[str, Any] = {}
    for j in doc.get("jobs", []):
        jobs.setdefault(j.get("jobname", "?"), dict(j.get("job options") or {}))
    return {"global": dict(doc.get("global options") or {}), "jobs": jobs}


def _effective(doc: Mapping[str, Any], key: str) -> list[str | None]:
    glob = doc.get("global options") or {}
    return [(j.get("job options") or {}).get(key, glob.get(key)) for j in doc.get("jobs", [])]


def uniform(doc: Mapping[str, Any], key: str, default: str | None = None) -> str | None:
    """A job option's value when every job has the same one (fio's default when none sets it)."""
    values = {default if v is None else v for v in _effective(doc, key)}
    return values.pop() if len(values) == 1 else None


def read_share(rw: str | None, rwmixread: str | None, rwmixwrite: str | None) -> int | None:
    """Percentage of reads for an fio ``rw`` value and its mix options."""
    if rw is None:
        return None
    base = rw.split(":")[0]
    if base in ("read", "randread"):
        return 100
    if base in ("write", "randwrite"):
        return 0
    if base in ("rw", "readwrite", "randrw"):
        if rwmixread is not None and rwmixread.isdigit():
            return int(rwmixread)
        if rwmixwrite is not None and rwmixwrite.isdigit():
            return 100 - int(rwmixwrite)
        return 50
    return None


def summarize(doc: Mapping[str, Any], log_texts: list[str]) -> dict[str, Any]:
    """The measured part of a step: rates, pooled latencies, series, steady state, options."""
    jobs = list(doc.get("jobs", []))
    seconds = wall_seconds(jobs)
    dirs = {d: direction(jobs, d, seconds) for d in DIRECTIONS}
    rw = uniform(doc, "rw", "read")
    bs = uniform(doc, "bs", "4k")
    depth = uniform(doc, "iodepth", "1")
    return {
        "bs": parse_fio_size(bs) if bs and "," not in bs else None,
        "rw": rw,
        "rwmixread": read_share(rw, uniform(doc, "rwmixread"), uniform(doc, "rwmixwrite")),
        "iodepth": int(depth) if depth and depth.isdigit() else None,
        "jobs": len(jobs),
        "runtime_s": seconds,
        **dirs,
        "total_iops": dirs["read"]["iops"] + dirs["write"]["iops"],
        "total_mbps": dirs["read"]["mbps"] + dirs["write"]["mbps"],
        "series": series(log_texts),
        "steady_state": steady_state(jobs),
        "errors": sum(1 for j in jobs if j.get("error")),
        "fio_version": doc.get("fio version"),
        "options": options(doc),
    }
