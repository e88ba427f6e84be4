"""Server cost of the transaction functions: NOPM of today's functions against the previous ones.

On a host where client and server share the CPUs, the server's CPU per transaction bounds
NOPM. Both sides are driven by pgbench with the same mix, input rules, C constants and home
warehouses (bench/driver_efficiency.py's set-up), on one database, alternating A B B A with a
CHECKPOINT before every run:
- before: bench/before/functions.sql (order lines drawn inside neword with the server's
  random(), a statement per order line), installed in the schema tpcc_before and called by
  bench/before/pgbench/*.sql with search_path = tpcc_before, public;
- after: the functions oltplab installs (sql/functions.sql: the client's order lines as
  arrays, set-based statements), called by bench/pgbench/*.sql.

    .venv/bin/python bench/server_functions.py --warehouses 4 --users 4 --rampup 10 --duration 30

Besides NOPM it prints the server's CPU per New-Order over the window (every process of the
managed server, user and system time, per order entered): the cost the change is about, and
a figure that other load on a shared host disturbs far less than throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path

import asyncpg
from common import bench_database, ensure_schema, fetchval, run_args
from driver_efficiency import run_pgbench

from oltplab.engines.postgres.tpcc.schema import sql_text

HERE = Path(__file__).resolve().parent
BEFORE_SCHEMA = "tpcc_before"
SIDES = {"before": (HERE / "before" / "pgbench", f"-c search_path={BEFORE_SCHEMA},public"),
         "after": (HERE / "pgbench", None)}


def install(dsn: str) -> None:
    """Today's functions in the default schema, the previous ones in their own."""
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(sql_text("functions"))
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {BEFORE_SCHEMA}")
            await conn.execute(f"SET search_path = {BEFORE_SCHEMA}, public")
            await conn.execute((HERE / "before" / "functions.sql").read_text("utf-8"))
        finally:
            await conn.close()
    asyncio.run(go())


def server_cpu(postmaster_pid: int) -> dict[int, float]:
    """CPU seconds (user + system) of the server's processes, by pid."""
    import psutil
    pm = psutil.Process(postmaster_pid)
    out = {}
    for proc in [pm, *pm.children(recursive=True)]:
        try:
            t = proc.cpu_times()
            out[proc.pid] = t.user + t.system
        except psutil.Error:
            pass
    return out


def window_cpu(postmaster_pid: int, rampup: float, duration: float) -> list[dict[int, float]]:
    """Start sampling the server's CPU at the window's two boundaries (as run_pgbench marks
    them, from now); the list fills in the background."""
    marks: list[dict[int, float]] = []

    def sample(t0: float) -> None:
        for at in (t0 + rampup, t0 + rampup + duration):
            time.sleep(max(0.0, at - time.monotonic()))
            marks.append(server_cpu(postmaster_pid))

    threading.Thread(target=sample, args=(time.monotonic(),), daemon=True).start()
    return marks


def cpu_between(a: dict[int, float], b: dict[int, float]) -> float:
    return sum(v - a.get(pid, 0.0) for pid, v in b.items())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    run_args(p, duration=30)
    p.add_argument("--pgbench-jobs", type=int, default=1, help="pgbench threads (-j)")
    a = p.parse_args()
    if a.users > 16:
        sys.exit("the pgbench scripts hold home warehouses for up to 16 users")
    with bench_database(a, connections=a.users + 20) as target:
        info = ensure_schema(target.dsn, a.warehouses)
        install(target.dsn)
        pgbench = (target.instance.bin_dir if target.instance else Path("/usr/bin")) / "pgbench"
        pid = target.instance.status()["pid"] if target.instance else None
        res: dict[str, list[float]] = {"before": [], "after": []}
        cpu: dict[str, list[float]] = {"before": [], "after": []}
        for who in ["before", "after", "after", "before"] * a.rounds:
            fetchval(target.dsn, "CHECKPOINT")
            scripts, options = SIDES[who]
            marks = window_cpu(pid, a.rampup, a.duration) if pid else []
            nopm, _cpu, n = run_pgbench(target.dsn, pgbench, info, a, a.seed, scripts, options)
            res[who].append(nopm)
            line = f"{who:>6}: NOPM {nopm:>10,.0f}  ({n:,} transactions)"
            if len(marks) == 2 and nopm > 0:
                per_order = cpu_between(*marks) / (nopm * a.duration / 60)
                cpu[who].append(per_order)
                line += f"  server CPU {1e6 * per_order:,.0f} us per New-Order"
            print(line, flush=True)
    mean = {k: statistics.fmean(v) for k, v in res.items()}
    print(f"\nwarehouses {a.warehouses}, users {a.users}, rampup {a.rampup:.0f} s, "
          f"duration {a.duration:.0f} s, {4 * a.rounds} runs")
    print(f"NOPM before {mean['before']:,.0f}  after {mean['after']:,.0f}  "
          f"ratio {mean['after'] / mean['before']:.3f}  (target >= 1.05)")
    if cpu["before"] and cpu["after"]:
        before, after = statistics.fmean(cpu["before"]), statistics.fmean(cpu["after"])
        print(f"server CPU per New-Order before {1e6 * before:,.0f} us  "
              f"after {1e6 * after:,.0f} us  ratio {after / before:.3f}")


if __name__ == "__main__":
    main()
