"""Cheap virtual users: 1,000 users with keying and thinking on, and the driver's memory.

Samples the resident memory (USS where readable, else RSS) of the driver: this process plus
every worker process, once a second, and prints the peak.

    .venv/bin/python bench/virtual_users.py --users 1000 --duration 60
"""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path

import psutil
from common import bench_database, db_args, ensure_schema

from oltplab.config import RunSpec
from oltplab.loadgen.manager import run_workload


def driver_memory() -> tuple[int, int]:
    """(RSS, USS) in bytes of this process and all of its descendants except PostgreSQL."""
    me = psutil.Process()
    rss = uss = 0
    for p in [me, *me.children(recursive=True)]:
        try:
            if p.name() == "postgres":
                continue
            info = p.memory_full_info()
            rss += info.rss
            uss += info.uss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return rss, uss


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    db_args(p)
    p.add_argument("--warehouses", type=int, default=4)
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--rampup", type=float, default=20)
    p.add_argument("--duration", type=float, default=60)
    a = p.parse_args()
    peak = [0, 0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            rss, uss = driver_memory()
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], uss)
            time.sleep(1)

    with bench_database(a, connections=a.users + 30) as target:
        ensure_schema(target.dsn, a.warehouses)
        th = threading.Thread(target=sample, daemon=True)
        th.start()
        t0 = time.monotonic()
        outcome = run_workload(target.dsn, RunSpec(users=(a.users,), rampup=a.rampup,
                                                   duration=a.duration, keying_thinking=True,
                                                   name="vu-bench", results_dir=Path("/tmp")))
        stop.set()
        th.join()
    step = outcome.steps[0] if outcome.steps else {}
    print(f"status {outcome.status}, {a.users} users with keying and thinking, "
          f"{time.monotonic() - t0:.0f} s, workers {outcome.workers}")
    print(f"NOPM {step.get('nopm', 0):,.0f}  TPM {step.get('tpm', 0):,.0f}  "
          f"(ceiling with these waits: {12.86 * a.users / 10:,.0f} tpmC-like)")
    print(f"driver memory peak: RSS {peak[0] / 2**20:,.0f} MiB, USS {peak[1] / 2**20:,.0f} MiB "
          f"(target < 1024 MiB)")


if __name__ == "__main__":
    main()
