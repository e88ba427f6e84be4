"""sql mode against procedures mode: NOPM and the driver's CPU per transaction of each.

Both modes run on one database in one session, alternating A B B A so that database growth,
caches and the shared machine's noise favour neither. NOPM is oltplab's own figure (HammerDB's:
the change of sum(d_next_o_id) over the measured window). The driver's CPU is counted the same
way on both sides: the worker processes' CPU while driving over every transaction they ran (the
step's ``driver`` record), and the workers' whole life (connecting and preparing included,
from the reaped children's rusage) over the same transactions. A CHECKPOINT precedes every run.

    .venv/bin/python bench/sql_mode.py --warehouses 4 --users 4
    .venv/bin/python bench/sql_mode.py --warehouses 4 --users 4 --rampup 10 --duration 30
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
from pathlib import Path

from common import bench_database, ensure_schema, fetchval, ratio_with_noise, run_args

from oltplab.config import RunSpec
from oltplab.loadgen.manager import run_workload

MODES = ("sql", "procedures")


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_mode(dsn: str, mode: str, a) -> tuple[float, float, float, int]:
    """(NOPM, driving CPU s, whole-life CPU s, transactions) of one run."""
    cpu0 = children_cpu()
    outcome = run_workload(dsn, RunSpec(users=(a.users,), rampup=a.rampup, duration=a.duration,
                                        seed=a.seed, workers=a.workers, mode=mode, name="bench",
                                        results_dir=Path("/tmp")))
    life = children_cpu() - cpu0
    if outcome.status != "completed":
        sys.exit(f"{mode} run {outcome.status}: {outcome.error}")
    step = outcome.steps[0]
    driver = step["driver"]  # the workers' CPU while driving, over every transaction they ran
    count = round(driver["cpu_s"] * 1e6 / driver["cpu_us_per_transaction"])
    return step["nopm"], driver["cpu_s"], life, count


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    run_args(p, duration=30)
    p.add_argument("--workers", type=int, default=None, help="oltplab driver processes")
    a = p.parse_args()
    with bench_database(a, connections=a.users + 20) as target:
        ensure_schema(target.dsn, a.warehouses)
        res: dict[str, list] = {m: [] for m in MODES}
        order = ["sql", "procedures", "procedures", "sql"] * a.rounds
        for mode in order:
            fetchval(target.dsn, "CHECKPOINT")
            nopm, cpu, life, n = run_mode(target.dsn, mode, a)
            res[mode].append((nopm, cpu, life, n))
            print(f"{mode:>10}: NOPM {nopm:>10,.0f}  driver CPU {1e6 * cpu / max(n, 1):6.1f} us"
                  f"/transaction while driving, {1e6 * life / max(n, 1):6.1f} us with set-up "
                  f"({n:,} transactions)", flush=True)
    mean = {m: statistics.fmean(x[0] for x in v) for m, v in res.items()}
    per_txn = {m: 1e6 * sum(x[1] for x in v) / max(sum(x[3] for x in v), 1)
               for m, v in res.items()}
    ratio, noise = ratio_with_noise([x[0] for x in res["sql"]], [x[0] for x in res["procedures"]])
    print(f"\nwarehouses {a.warehouses}, users {a.users}, rampup {a.rampup:.0f} s, "
          f"duration {a.duration:.0f} s, {len(order)} runs")
    print(f"driver CPU per transaction: sql {per_txn['sql']:.1f} us (target <= 100), "
          f"procedures {per_txn['procedures']:.1f} us")
    print(f"NOPM sql {mean['sql']:,.0f}  procedures {mean['procedures']:,.0f}  "
          f"sql/procedures ratio {ratio:.3f}{noise}  (target >= 0.5)")


if __name__ == "__main__":
    main()
