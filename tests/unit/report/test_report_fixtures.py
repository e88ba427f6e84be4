"""Fixture runs for the report renderer: run records and timelines built in memory, with
figures chosen so that the charts' values are known in advance. They are fixtures for the
renderer, not measurements.

Timeline (1 s samples): step k with u users has a ramp-up of RAMP_S and a measured window
of MEASURE_S; in the measured window CPU idle is 100 - 10u %, device sda does 100u reads/s
and 50u writes/s with r_await 0.5u ms and w_await u ms, sdb (the WAL) does 200u writes/s at
0.2 ms, and the power meter reads 200 + 10u W. One interval of the last step has a 50 ms
w_await on sda.
"""

from __future__ import annotations

import json
from pathlib import Path

from oltplab.report.runs import RunData, label_runs, prepare

RAMP_S, MEASURE_S, GAP_S = 2, 6, 1
T0 = 10**12
USERS = (1, 2, 4, 8)
NOPM = {1: 1000, 2: 1900, 4: 3400, 8: 5000}
SPIKE_MS = 50.0


def _phase(users, t: float, ramp_s: int, measure_s: int, gap_s: int):
    """(step, users, 'ramp' | 'measure' | None) of the instant t seconds after t0."""
    start = 0.0
    for k, u in enumerate(users):
        if start <= t < start + ramp_s:
            return k, u, "ramp"
        if start + ramp_s <= t < start + ramp_s + measure_s:
            return k, u, "measure"
        start += ramp_s + measure_s + gap_s
    return None, None, None


def timeline_dict(users=USERS, *, power: bool = True, ramp_s: int = RAMP_S,
                  measure_s: int = MEASURE_S, gap_s: int = GAP_S) -> dict:
    """The dict of Timeline.to_dict() for a run of ``users`` steps, 1 s samples (module doc)."""
    n = len(users) * (ramp_s + measure_s + gap_s)
    names = ["cpu.user", "cpu.system", "cpu.idle", "cpu.iowait", "cpu.steal"]
    for dev in ("sda", "sdb"):
        names += [f"disk.{dev}.{m}" for m in ("r_s", "w_s", "rMB_s", "wMB_s", "r_await",
                                              "w_await", "aqu_sz", "util", "f_s")]
    names += ["mem.used_bytes", "mem.cached_bytes", "mem.dirty_bytes", "power.watts"]
    cols: dict[str, list] = {"t_ns": [], "t_unix_ns": [], "dt_s": [], **{c: [] for c in names}}
    spike_done = False
    for i in range(n):
        cols["t_ns"].append(T0 + (i + 1) * 10**9)
        cols["t_unix_ns"].append(1_700_000_000 * 10**9 + (i + 1) * 10**9)
        cols["dt_s"].append(1.0)
        k, u, phase = _phase(users, i + 0.5, ramp_s, measure_s, gap_s)
        load = u if phase == "measure" else (u / 2 if phase == "ramp" else 0)
        busy = 10.0 * load
        row = {"cpu.user": busy * 0.6, "cpu.system": busy * 0.4, "cpu.idle": 100.0 - busy,
               "cpu.iowait": 0.0, "cpu.steal": 0.0}
        r, w = 100.0 * load, 50.0 * load
        w_await = float(load) if load else None
        if phase == "measure" and k == len(users) - 1 and not spike_done:
            w_await, spike_done = SPIKE_MS, True
        row.update({"disk.sda.r_s": r, "disk.sda.w_s": w, "disk.sda.rMB_s": 0.008 * r,
                    "disk.sda.wMB_s": 0.008 * w,
                    "disk.sda.r_await": 0.5 * load if load else None,
                    "disk.sda.w_await": w_await, "disk.sda.aqu_sz": 0.1 * load,
                    "disk.sda.util": min(100.0, 10.0 * load), "disk.sda.f_s": 0.0})
        row.update({"disk.sdb.r_s": 0.0, "disk.sdb.w_s": 200.0 * load, "disk.sdb.rMB_s": 0.0,
                    "disk.sdb.wMB_s": 0.016 * 200 * load, "disk.sdb.r_await": None,
                    "disk.sdb.w_await": 0.2 if load else None, "disk.sdb.aqu_sz": 0.0,
                    "disk.sdb.util": 5.0 * bool(load), "disk.sdb.f_s": 10.0 * bool(load)})
        watts = (200.0 + 10 * u if phase == "measure" else 180.0) if power else None
        row.update({"mem.used_bytes": 2.0 * 2**30, "mem.cached_bytes": 8.0 * 2**30,
                    "mem.dirty_bytes": 1e6, "power.watts": watts})
        for c in names:
            cols[c].append(row[c])
    marks, start = [], 0
    for k, u in enumerate(users):
        s = T0 + start * 10**9
        marks += [{"name": "step_start", "t_ns": s, "users": u, "step": k},
                  {"name": "ramp_end", "t_ns": s + ramp_s * 10**9, "step": k},
                  {"name": "measure_end", "t_ns": s + (ramp_s + measure_s) * 10**9, "step": k}]
        start += ramp_s + measure_s + gap_s
    units = {"t_ns": "ns (monotonic)", "t_unix_ns": "ns (wall clock, UTC)", "dt_s": "s",
             "power.watts": "W"}
    units.update({c: "%" for c in names if c.startswith("cpu.")})
    return {"format": "oltplab-timeline", "version": 1, "interval_s": 1.0,
            "t0_ns": T0, "t0_unix": 1.7e9, "end_ns": cols["t_ns"][-1], "columns": cols,
            "units": units,
            "devices": {"sda": {"roles": ["datadir"], "virtual": False, "whole_disk": True},
                        "sdb": {"roles": ["waldir"], "virtual": False, "whole_disk": True}},
            "roles": {"datadir": {"path": "/data", "device": "sda", "partition": None},
                      "waldir": {"path": "/wal", "device": "sdb", "partition": None}},
            "interfaces": [], "marks": marks,
            "power": ({"available": True, "source": "cmd", "reason": None} if power else
                      {"available": False, "source": None,
                       "reason": "no /sys/class/powercap (no RAPL energy counters)"}),
            "database": None, "errors": [], "overhead": {"samples": n}}


def _tx(scale: float) -> dict:
    out = {}
    for name, base in (("new_order", 2.0), ("payment", 1.5), ("order_status", 0.6),
                       ("delivery", 2.5), ("stock_level", 1.4)):
        out[name] = {"count": 1000, "committed": 990, "rolled_back": 10 * (name == "new_order"),
                     "errors": 0, "retries": 0, "mean": base * scale, "p50": base * scale * 0.9,
                     "p95": base * scale * 2, "p99": base * scale * 3, "max": base * scale * 6}
    return out


INPUT_SHARES = {"remote_order_lines": 0.0101, "remote_payments": 0.149,
                "payments_by_last_name": 0.6, "order_status_by_last_name": 0.61,
                "rolled_back_new_orders": 0.0099, "skipped_deliveries": 0.0,
                "order_lines_per_order": 10.02}
WARNING = "retries 1.10% (11 per 1,000 transactions) above 1.00%"


def tpcc_record(name: str = "pg18", *, run_id: str | None = None, users=USERS,
                nopm: dict | None = None, factor: float = 1.0, path: Path | None = None,
                config_extra: dict | None = None) -> dict:
    """A TPC-C-derived run record; NOPM = ``nopm[users]`` x ``factor``, TPM = 2.3 x NOPM."""
    nopm = nopm or NOPM
    steps = []
    for u in users:
        n = round(nopm.get(u, 1000 * u ** 0.7) * factor)
        steps.append({"users": u, "rampup_s": RAMP_S, "duration_s": MEASURE_S,
                      "measured_s": float(MEASURE_S), "started_at": "2026-01-01T00:00:00",
                      "ramp_end_at": "2026-01-01T00:00:02", "ended_at": "2026-01-01T00:00:08",
                      "tpm": round(n * 2.3), "workload_tpm": round(n * 2.2), "nopm": n,
                      "client_tpm": round(n * 2.2), "client_nopm": n,
                      "transactions": _tx(u / factor), "inputs": dict(INPUT_SHARES),
                      "throughput": {"interval_s": 10.0, "completed": [], "cv": None},
                      "warnings": [WARNING] if u == users[-1] else [], "partial": False})
    record = {
        "schema_version": 1, "kind": "tpcc", "id": run_id or f"20260101T000000-{name}",
        "name": name, "status": "completed", "error": None,
        "started_at": "2026-01-01T00:00:00+0000", "ended_at": "2026-01-01T00:01:00+0000",
        "oltplab_version": "0.1.0", "command": ["oltplab", "tpcc", "run"],
        "config": {"db": {"datadir": "/data", "dsn": "postgresql://bench:s3cret@db:5432/tpcc",
                          "db_memory": 2**30},
                   "run": {"users": list(users), "rampup": RAMP_S, "duration": MEASURE_S,
                           "mode": "procedures", "name": name, "results_dir": "results",
                           "seed": None, **(config_extra or {})}},
        "host": {"hostname": "bench1", "cpu": {"model": "Test CPU", "logical_cores": 8}},
        "database": {"engine": "postgresql", "version": "PostgreSQL 18.1 on x86_64",
                     "settings": {"shared_buffers": "1GB", "max_connections": "300"},
                     "warehouses": 10},
        "constants": {"c_load": 98, "c_last": 15}, "driver": {"workers": 2},
        "steps": steps,
    }
    if path is not None:
        record["_path"] = str(path)
    return record


def fio_record(name: str = "fio", *, run_id: str | None = None, factor: float = 1.0,
               mixes=(("randrw", 70),), path: Path | None = None) -> dict:
    """An fio bs-sweep record: IOPS = 40000 x factor / (bs / 4 KiB) ** 0.5."""
    steps = []
    for rw, rmix in mixes:
        for bs in (4096, 8192, 16384, 65536, 262144):
            iops = 40000 * factor / (bs / 4096) ** 0.5
            r_iops, w_iops = iops * rmix / 100, iops * (100 - rmix) / 100
            lat = 32 / iops * 1000  # ms at 32 I/Os in flight

            def side(n, x):
                return {"ios": int(n * 3), "bytes": int(n * 3 * bs), "iops": n,
                        "mbps": n * bs / 1e6, "lat_ms": {"min": x / 10, "mean": x, "p50": x * 0.9,
                                                         "p95": x * 2, "p99": x * 3,
                                                         "p99_9": x * 5, "max": x * 9}}
            steps.append({"index": len(steps), "profile": f"{bs // 1024}k-{rw}-{rmix}",
                          "bs": bs, "rw": rw, "rwmixread": rmix, "iodepth": 8, "jobs": 4,
                          "runtime_s": 3.0, "read": side(r_iops, lat),
                          "write": side(w_iops, lat * 1.5),
                          "total_iops": iops, "total_mbps": iops * bs / 1e6,
                          "series": {"t_s": [1, 2, 3], "read_iops": [r_iops] * 3,
                                     "write_iops": [w_iops] * 3},
                          "steady_state": None, "errors": 0, "partial": False})
    record = {"schema_version": 1, "kind": "fio", "id": run_id or f"20260101T000000-{name}",
              "name": name, "status": "completed", "error": None,
              "started_at": "2026-01-01T00:00:00+0000", "config": {"fio": {
                  "target": "/mnt/t", "size": 2**26, "name": name, "results_dir": "r"}},
              "host": {"hostname": "bench1"}, "target": {"path": "/mnt/t"},
              "fio": {"version": "fio-3.33"}, "steps": steps}
    if path is not None:
        record["_path"] = str(path)
    return record


def write_run(folder: Path, record: dict, timeline: dict | None = None) -> dict:
    """Save ``record`` (and ``timeline``) as a run folder; returns the record with _path."""
    folder.mkdir(parents=True, exist_ok=True)
    record = {**record, "_path": str(folder)}
    (folder / "run.json").write_text(json.dumps({k: v for k, v in record.items()
                                                 if k != "_path"}))
    if timeline is not None:
        (folder / "timeline.json").write_text(json.dumps(timeline))
    return record


def groups_of(*records: dict):
    runs = [prepare(r) for r in records]
    return runs, label_runs(runs)


def test_fixture_timeline_windows_cover_whole_samples(tmp_path):
    rec = write_run(tmp_path / "r", tpcc_record(), timeline_dict())
    run: RunData = prepare(rec)
    assert run.telemetry_from == "timeline.json"
    assert [f["samples"] for f in run.figures] == [MEASURE_S] * len(USERS)
    assert [f["users"] for f in run.figures] == list(USERS)
