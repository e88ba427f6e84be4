"""Worker processes on a local server: the headline (NOPM, or the shop's OPM) of `oltplab
tpcc|dvds run` with one worker process for all the users against one worker per user, on one
managed server on this host.

The same command runs both sides, only ``--workers`` differs, A B B A (one worker, a worker per
user, a worker per user, one worker) ``--rounds`` times, each run on a server the CLI starts
and stops itself (so neither side inherits the other's server threads). The schema is built
afresh once at the start, in a scratch data directory that goes afterwards unless --datadir is
given. Beside each run: the workers' CPU per unit (the record's ``driver.cpu_s`` over the
transactions the workers ran, ramp-up included). This is what oltplab's default number of
workers on a local server rests on (loadgen/step.py, ``default_workers``).

    .venv/bin/python bench/local_workers.py --engine mariadb --workload tpcc
    .venv/bin/python bench/local_workers.py --engine postgres --workload dvds --users 4
    .venv/bin/python bench/local_workers.py --engine postgres --workload dvds --users 4 --many 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import OLTPLAB, load_average, ratio_with_noise


def oltplab(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(OLTPLAB), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"oltplab {args[0]} {args[1]} failed ({proc.returncode}): "
                 f"{(proc.stderr or proc.stdout).strip()[-1500:]}")
    return proc


def one_run(a: argparse.Namespace, server: list[str], workers: int, out: Path,
            seed: int) -> dict:
    oltplab(a.workload, "run", *server, "--users", str(a.users), "--rampup", f"{a.rampup:g}s",
            "--duration", f"{a.duration:g}s", "--workers", str(workers), "--seed", str(seed),
            "--sample-interval", "0", "--power", "none", "--io-latency", "off",
            "--results-dir", str(out), "--name", "bench-local-workers")
    step = json.loads(next(out.rglob("run.json")).read_text())["steps"][0]
    driver = step["driver"]
    return {"headline": step["nopm" if a.workload == "tpcc" else "opm"],
            "cpu_us": driver["cpu_us_per_transaction"], "workers": driver["workers"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", choices=["postgres", "mariadb"], default="mariadb")
    p.add_argument("--workload", choices=["tpcc", "dvds"], default="tpcc")
    p.add_argument("--users", type=int, default=2)
    p.add_argument("--warehouses", type=int, default=2, help="tpcc: the schema's warehouses")
    p.add_argument("--size", default="10MB", help="dvds: the shop's size")
    p.add_argument("--rampup", type=float, default=5)
    p.add_argument("--duration", type=float, default=20)
    p.add_argument("--many", type=int, default=None, metavar="N",
                   help="the second side's workers (default: one per user)")
    p.add_argument("--rounds", type=int, default=2, help="A B B A per round")
    p.add_argument("--seed", type=int, default=20261128)
    p.add_argument("--datadir", type=Path, default=None)
    p.add_argument("--port", type=int, default=41640)
    p.add_argument("--db-memory", default="1GiB")
    p.add_argument("-c", dest="setting", action="append", default=[], metavar="NAME=VALUE",
                   help="a server setting for both sides (repeatable)")
    a = p.parse_args()
    if a.users < 2:
        sys.exit("--users must be 2 or more: with one user both sides are one worker")
    many = a.many or a.users
    if not 2 <= many <= a.users:
        sys.exit(f"--many must be 2 to {a.users} (the users)")
    scratch = Path(tempfile.mkdtemp(prefix="oltplab-bench-workers-"))
    scratch.chmod(0o755)  # a server run by root runs as its own system user
    datadir = a.datadir or scratch / a.engine
    server = ["--engine", a.engine, "--datadir", str(datadir), "--port", str(a.port),
              "--db-memory", a.db_memory]
    for kv in a.setting:
        server += ["-c", kv]
    sides = {1: [], many: []}
    try:
        t0 = time.monotonic()
        size = ["-w", str(a.warehouses)] if a.workload == "tpcc" else ["--size", a.size]
        oltplab(a.workload, "build", *server, *size, "--force")
        print(f"{a.engine} {a.workload} built in {time.monotonic() - t0:.1f} s; load average "
              f"{load_average()}", flush=True)
        run = 0
        for workers in [1, many, many, 1] * a.rounds:
            run += 1
            r = one_run(a, server, workers, scratch / f"run-{run}", a.seed + run)
            sides[workers].append(r)
            print(f"  workers {r['workers']}: {r['headline']:>9,.0f}  workers' CPU "
                  f"{r['cpu_us']:.0f} us per transaction", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    one, each = ([r["headline"] for r in sides[k]] for k in (1, many))
    side = "a worker per user" if many == a.users else f"{many} workers"
    ratio, noise = ratio_with_noise(each, one)
    unit = "NOPM" if a.workload == "tpcc" else "OPM"
    print(f"\n{a.engine} {a.workload}, {a.users} users, rampup {a.rampup:g} s, duration "
          f"{a.duration:g} s, {a.rounds} round(s)" + "".join(f", -c {kv}" for kv in a.setting)
          + f"; load average at the end: {load_average()}")
    print(f"{unit}: one worker {statistics.fmean(one):,.0f}, {side} "
          f"{statistics.fmean(each):,.0f}; {side} / one: {ratio:.3f}{noise}")
    print("workers' CPU per transaction: one worker "
          f"{statistics.fmean(r['cpu_us'] for r in sides[1]):.0f} us, {side} "
          f"{statistics.fmean(r['cpu_us'] for r in sides[many]):.0f} us")


if __name__ == "__main__":
    main()
