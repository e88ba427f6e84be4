"""Driver efficiency: NOPM of `oltplab tpcc run --mode procedures` against pgbench.

Both clients call the same PL/pgSQL functions with the same 45/43/4/4/4 mix, the same input
rules and the same number of users, on one database, in one run, alternating A B B A so that
database growth and caches favour neither. pgbench is the zero-overhead reference.
NOPM for both is HammerDB's: the change of sum(d_next_o_id) over the measured window.
A CHECKPOINT precedes every run: at this rate the WAL reaches max_wal_size every few minutes,
and a checkpoint's first minutes (full-page writes) would otherwise land in some runs only.

    .venv/bin/python bench/driver_efficiency.py --warehouses 4 --users 4 --duration 60
    .venv/bin/python bench/driver_efficiency.py ... --pin   # server on CPU 0, clients on CPU 1

With --pin the server and the clients get a CPU each (as on any host where the load generator
has cores of its own), so the ratio shows whether the driver keeps the server as busy as
pgbench does; without it both share every CPU and the driver's own CPU use counts against it.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from common import (bench_database, ensure_schema, fetchval, ratio_with_noise, run_args,
                    sum_next_o_id)

from oltplab.config import RunSpec
from oltplab.loadgen.manager import run_workload
from oltplab.workloads.tpcc.inputs import assign_terminals, draw_constants

SCRIPTS = Path(__file__).resolve().parent / "pgbench"
WEIGHTS = {"neword": 45, "payment": 43, "ostat": 4, "delivery": 4, "slev": 4}


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def oltplab_plan(seed: int, c_last_load: int, users: int, warehouses: int):
    """The C constants and terminals oltplab's manager draws for the first step of a run with
    this seed (loadgen/manager.py: constants first; loadgen/step.py: then the step's own
    generator)."""
    rng = random.Random(seed)
    constants = draw_constants(rng, c_last_load)
    terminals = assign_terminals(random.Random(rng.getrandbits(63)), users, warehouses)
    return constants, terminals


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_oltplab(dsn: str, a, seed: int) -> tuple[float, float, int]:
    """NOPM, the whole driver's CPU and every transaction it ran. The CPU is counted as for
    pgbench's process: the manager (this process; no telemetry sampler runs here) and the
    worker processes from spawn to exit, connection set-up included."""
    cpu0 = own_cpu() + children_cpu()
    outcome = run_workload(dsn, RunSpec(users=(a.users,), rampup=a.rampup, duration=a.duration,
                                        seed=seed, workers=a.workers, name="bench",
                                        results_dir=Path("/tmp")))
    cpu = own_cpu() + children_cpu() - cpu0
    if outcome.status != "completed":
        sys.exit(f"oltplab run {outcome.status}: {outcome.error}")
    step = outcome.steps[0]
    driver = step["driver"]  # the workers' CPU while driving, over every transaction they ran
    count = round(driver["cpu_s"] * 1e6 / driver["cpu_us_per_transaction"])
    return step["nopm"], cpu, count


def run_pgbench(dsn: str, pgbench: Path, info, a, seed: int, scripts: Path = SCRIPTS,
                options: str | None = None) -> tuple[float, float, int]:
    """pgbench with the scripts in ``scripts`` (server ``options`` through PGOPTIONS):
    (NOPM of the window, pgbench's CPU seconds, transactions)."""
    constants, terminals = oltplab_plan(seed, info.c_last_load, a.users, info.warehouses)
    consts = {"W": info.warehouses, "c_id_c": constants.c_id, "c_ol_i_id": constants.c_ol_i_id,
              "c_last_run": constants.c_last}
    for i in range(16):
        t = terminals[i] if i < len(terminals) else terminals[0]
        consts[f"h{i}"], consts[f"s{i}"] = t.w_id, t.stock_d_id
    cmd = [str(pgbench), "-n", "-M", "prepared", "-c", str(a.users), "-j", str(a.pgbench_jobs),
           "-T", str(int(a.rampup + a.duration + 2))]
    for k, v in consts.items():
        cmd += ["-D", f"{k}={v}"]
    for name, w in WEIGHTS.items():
        cmd += ["-f", f"{scripts / name}.sql@{w}"]
    cmd.append(dsn)
    marks: list[tuple[float, int]] = []

    def snapshots(t0: float) -> None:
        for at in (t0 + a.rampup, t0 + a.rampup + a.duration):
            time.sleep(max(0.0, at - time.monotonic()))
            marks.append((time.monotonic(), sum_next_o_id(dsn)))

    cpu0 = children_cpu()
    t0 = time.monotonic()
    env = dict(os.environ, PGOPTIONS=options) if options else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    th = threading.Thread(target=snapshots, args=(t0,))
    th.start()
    out, err = proc.communicate()
    th.join()
    if proc.returncode != 0:
        sys.exit(f"pgbench failed: {err.strip().splitlines()[-1:]}")
    (ta, na), (tb, nb) = marks
    count = 0
    for line in out.splitlines():
        if line.startswith("number of transactions actually processed"):
            count = int(line.split(":")[1].split("/")[0])
    return (nb - na) * 60.0 / (tb - ta), children_cpu() - cpu0, count


def pin(target) -> None:
    """The managed server (postmaster and every process it has) on CPU 0; us and our children
    (oltplab's workers, pgbench) on CPU 1. New backends inherit the postmaster's CPU."""
    import psutil
    if target.instance is None or len(os.sched_getaffinity(0)) < 2:
        sys.exit("--pin needs a managed server and at least 2 CPUs")
    postmaster = psutil.Process(target.instance.status()["pid"])
    for proc in [postmaster, *postmaster.children(recursive=True)]:
        proc.cpu_affinity([0])
    os.sched_setaffinity(0, {1})
    print("pinned: server on CPU 0, clients on CPU 1")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    run_args(p, duration=60)
    p.add_argument("--workers", type=int, default=None, help="oltplab driver processes")
    p.add_argument("--pgbench-jobs", type=int, default=1, help="pgbench threads (-j)")
    p.add_argument("--pin", action="store_true",
                   help="server processes on CPU 0, this process and its clients on CPU 1")
    a = p.parse_args()
    if a.users > 16:
        sys.exit("the pgbench scripts hold home warehouses for up to 16 users")
    with bench_database(a, connections=a.users + 20) as target:
        info = ensure_schema(target.dsn, a.warehouses)
        if a.pin:
            pin(target)
        pgbench = (target.instance.bin_dir if target.instance else Path("/usr/bin")) / "pgbench"
        res = {"oltplab": [], "pgbench": []}
        order = ["oltplab", "pgbench", "pgbench", "oltplab"] * a.rounds
        for who in order:
            fetchval(target.dsn, "CHECKPOINT")
            if who == "oltplab":
                nopm, cpu, n = run_oltplab(target.dsn, a, a.seed)
            else:
                nopm, cpu, n = run_pgbench(target.dsn, pgbench, info, a, a.seed)
            res[who].append((nopm, cpu, n))
            print(f"{who:>8}: NOPM {nopm:>10,.0f}  client CPU {cpu:6.1f} s "
                  f"({1e6 * cpu / max(n, 1):.0f} us/transaction, {n:,} transactions)", flush=True)
    mean = {k: statistics.fmean(x[0] for x in v) for k, v in res.items()}
    ratio, noise = ratio_with_noise([x[0] for x in res["oltplab"]], [x[0] for x in res["pgbench"]])
    print(f"\nwarehouses {a.warehouses}, users {a.users}, rampup {a.rampup:.0f} s, "
          f"duration {a.duration:.0f} s, {len(order)} runs")
    print(f"NOPM oltplab {mean['oltplab']:,.0f}  pgbench {mean['pgbench']:,.0f}  "
          f"ratio {ratio:.3f}{noise}  (target >= 0.97)")


if __name__ == "__main__":
    main()
