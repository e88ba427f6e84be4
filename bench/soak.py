"""Driver memory over a long step: the RSS of the manager and of its worker processes.

    .venv/bin/python bench/soak.py --warehouses 1 --users 8 --duration 300 --interval 10

One recorded `tpcc run` step (runs.lifecycle.run_workload_recorded, as the CLI runs it: the
manager is this process, with its telemetry sampler) on the managed server of bench/common.py.
Every --interval seconds it prints the RSS of the manager and of each worker; at the end, for
each process, the least-squares slope of its RSS after the first minute of the run, in MiB per
minute, in % per minute and as the change over the rest of the run relative to the fitted RSS
at the first minute, beside the first and the last RSS read. A driver whose memory does not
grow with the run's length stays within 5%. Each process's anonymous RSS is fitted beside
it (the pages of files come and go as the host reclaims them). ``--arenas`` adds the
manager's resident memory per malloc arena, named by the thread that allocates there (the
sampler, the per-IO latencies' reader, this watcher; telemetry/arenas.py), and
``--sample-interval`` and ``--io-latency`` run it with one source or the other off.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import psutil
from common import db_spec, ensure_schema, run_args

from oltplab import engines
from oltplab.config import RunSpec
from oltplab.runs.lifecycle import WorkloadProgress, run_workload_recorded
from oltplab.telemetry import arenas

MiB = 1024 * 1024
SETTLE_S = 60.0  # RSS before this (connections, ramp-up, first buffers) is not in the slope


def workers() -> list[psutil.Process]:
    """This process's worker processes (loadgen/worker.py)."""
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if "oltplab.loadgen.worker" in " ".join(p.cmdline()):
                found.append(p)
        except psutil.Error:
            pass
    return found


def rss_mib(p: psutil.Process) -> tuple[float, float] | None:
    """(RSS, its anonymous part) in MiB: the rest, the pages of files (the interpreter, the
    libraries), comes and goes as the host reclaims them under other work."""
    try:
        rss = p.memory_info().rss
        with open(f"/proc/{p.pid}/status") as f:
            anon = next(int(x.split()[1]) for x in f if x.startswith("RssAnon:"))
        return rss / MiB, anon / 1024
    except (psutil.Error, OSError, StopIteration):
        return None


class StepEnd(WorkloadProgress):
    """Sets ``ended`` when the step's measured window is over: the RSS read after it (the
    step's record, the run's record and timeline being made) is printed but not fitted."""

    def __init__(self) -> None:
        self.ended = threading.Event()

    def tick(self, tick) -> None:
        if tick.phase == "measure" and tick.phase_s and tick.elapsed_s >= tick.phase_s:
            self.ended.set()

    def step(self, step: dict) -> None:
        self.ended.set()


def watch(interval: float, done: threading.Event, ended: threading.Event,
          series: dict[str, list], by_arena: bool = False, trim: bool = False) -> None:
    """Every ``interval`` seconds: (seconds since start, RSS MiB) per process, printed too;
    kept in ``series`` until ``ended`` is set. ``by_arena``: the manager's resident memory per
    malloc arena too (telemetry/arenas.py), kept as 'arena <name>'; ``trim``: then
    malloc_trim(0), and what it gave back."""
    t0 = time.monotonic()
    me = psutil.Process()
    if by_arena:
        arenas.probe("watcher")
    while not done.wait(interval):
        if by_arena:
            t = time.monotonic() - t0
            kib = arenas.resident()
            if trim:
                arenas.trim()
                after = arenas.resident()
                print(f"{t:7.0f} s  malloc_trim gave back "
                      f"{(sum(kib.values()) - sum(after.values())) / 1024:.2f} MiB", flush=True)
            for name, v in sorted(kib.items()):
                if not ended.is_set():
                    series.setdefault(f"arena {name}", []).append((t, v / 1024))
            cells = [f"{n} {v / 1024:.2f}" for n, v in sorted(kib.items())]
            print(f"{t:7.0f} s  " + "  ".join(cells) + "  (MiB per arena)", flush=True)
        t = time.monotonic() - t0
        procs = {"manager": me, **{f"worker {p.pid}": p for p in workers()}}
        line = []
        for name, p in procs.items():
            got = rss_mib(p)
            if got is not None:
                if not ended.is_set():
                    series.setdefault(name, []).append((t, got[0]))
                    series.setdefault(f"{name} (anonymous)", []).append((t, got[1]))
                line.append(f"{name} {got[0]:7.1f} ({got[1]:.1f} anonymous)")
        print(f"{t:7.0f} s  " + "  ".join(line) + "  (MiB RSS)"
              + ("  (after the step)" if ended.is_set() else ""), flush=True)


def slope(points: list[tuple[float, float]]) -> tuple[float, float, float] | None:
    """(MiB per minute, RSS fitted at the first point, change over the points in % of that)
    of the least-squares line, or None with fewer than 3 points."""
    if len(points) < 3:
        return None
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    b = sum((t - mt) * (v - mv) for t, v in points) / var
    start = mv + b * (points[0][0] - mt)
    change = b * (points[-1][0] - points[0][0])
    return b * 60, start, 100 * change / start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    run_args(p, duration=240)
    p.add_argument("--interval", type=float, default=10.0, help="seconds between RSS samples")
    p.add_argument("--mode", choices=("procedures", "sql"), default="procedures")
    p.add_argument("--sample-interval", type=float, default=1.0,
                   help="the telemetry sampler's interval, s (0: no sampler)")
    p.add_argument("--io-latency", choices=("auto", "on", "off"), default="auto",
                   help="the per-IO latency source (bpftrace)")
    p.add_argument("--arenas", action="store_true",
                   help="the manager's resident memory per malloc arena, named by thread")
    p.add_argument("--trim", action="store_true",
                   help="with --arenas: malloc_trim(0) after each reading")
    a = p.parse_args()
    if a.arenas:
        from oltplab.telemetry.iolatency import IoLatency
        from oltplab.telemetry.sampler import Sampler
        Sampler._sample = arenas.probed(Sampler._sample, "sampler")
        IoLatency.feed = arenas.probed(IoLatency.feed, "iolatency")
    spec = db_spec(a)
    with engines.get("postgres").database(spec, need_connections=a.users + 30) as target:
        ensure_schema(target.dsn, a.warehouses)
    series: dict[str, list] = {}
    done = threading.Event()
    progress = StepEnd()
    watcher = threading.Thread(target=watch, args=(a.interval, done, progress.ended, series,
                                                   a.arenas, a.trim), daemon=True)
    with tempfile.TemporaryDirectory(prefix="oltplab-soak-") as results:
        rspec = RunSpec(users=(a.users,), rampup=a.rampup, duration=a.duration, seed=a.seed,
                        mode=a.mode, name="soak", results_dir=Path(results), check=False,
                        sample_interval=a.sample_interval, io_latency=a.io_latency)
        watcher.start()
        try:
            run = run_workload_recorded(spec, rspec, progress)
        finally:
            done.set()
            watcher.join()
    step = (run.get("steps") or [{}])[0]
    print(f"\nrun {run.get('status')}: {step.get('tpm')} TPM, {step.get('nopm')} NOPM, "
          f"{a.users} users, W={a.warehouses}, {a.duration:g} s measured"
          + (f" ({run.get('error')})" if run.get("status") != "completed" else ""))
    for name, points in series.items():
        kept = [(t, v) for t, v in points if t >= SETTLE_S]
        fit = slope(kept)
        if fit is None:
            print(f"{name}: too few samples after {SETTLE_S:g} s")
            continue
        per_min, start, pct = fit
        minutes = (kept[-1][0] - kept[0][0]) / 60
        print(f"{name}: {kept[0][1]:.2f} MiB at {kept[0][0]:.0f} s, {kept[-1][1]:.2f} MiB at "
              f"{kept[-1][0]:.0f} s; fitted {start:.1f} MiB, slope {per_min:+.3f} MiB/min "
              f"({pct / minutes:+.3f}%/min), {pct:+.1f}% over {minutes:.1f} min "
              "(target within 5%)")


if __name__ == "__main__":
    main()
