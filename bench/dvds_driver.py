"""Driver efficiency of the DVD-Store-derived workload: OPM of `oltplab dvds run` against pgbench.

Both clients call the same PL/pgSQL functions (dvds_login, dvds_new_customer,
dvds_browse_category/actor/title, dvds_purchase) with the same order mix, at the same number of
users, on one database, alternating A B B A (oltplab, pgbench, pgbench, oltplab) per user count
so that database growth and caches favour neither. pgbench is the zero-overhead reference: one
script execution is one order (bench/pgbench/dvds_order.sql), drawn as the C terminal draws it
(a new customer in 20% of the orders, else a login; 1..5 browses of 1..9 rows, one third each
by category, actor and title; a cart of 1..9 items, every 10,000th product ten times as likely,
quantity 1..3); pgbench's \\if blocks reproduce the distributions, not only their means.

OPM is counted the same way for both: the rows added to ORDERS per minute of the measured
window, read from the server (oltplab's run record: count(*) of orders above the highest
orderid at its start, at the window's two ends; for pgbench the same query at the same two
instants after its start). Client CPU per order: for pgbench its process (user + system) over
every order it ran; for oltplab the CLI's whole process tree (interpreter start, workers,
recording) over every order its workers ran, and, beside it, the workers' own CPU while they
drove (run.json steps[0].driver.cpu_s) over the same orders.

It starts its own managed PostgreSQL in a scratch directory (removed afterwards unless
--datadir is given) and always stops it. A CHECKPOINT precedes every run.

    .venv/bin/python bench/dvds_driver.py                       # 10MB, 2 and 1 users, ~4 min
    .venv/bin/python bench/dvds_driver.py --users 2 --rampup 10 --duration 60 --rounds 2
    .venv/bin/python bench/dvds_driver.py --size 1GB --users 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import fetchval, ratio_with_noise

from oltplab import engines
from oltplab.config import DbSpec, parse_size as parse_bytes
from oltplab.errors import SchemaError
from oltplab.workloads.dvds import words
from oltplab.workloads.dvds.build import DvdsBuildSpec
from oltplab.workloads.dvds.sizes import parse_size

TEMPLATE = Path(__file__).resolve().parent / "pgbench" / "dvds_order.sql"
OLTPLAB = Path(sys.executable).parent / "oltplab"
PCT_NEW_CUSTOMERS = 20  # the driver's default, which both sides use
ORDERS_SQL = "SELECT count(*) FROM orders WHERE orderid > {base}"

#: What differs between the pgbench script and the C terminal, printed with the figures.
DIFFERENCES = """\
pgbench script against the C terminal (same functions, same mix and distributions):
  - pgbench has no strings: user names are built on the server ('user' || n, 'newuser' || n),
    title words, actor names, states and countries are picked from array literals by index on
    the server, and a cart goes as ARRAY[$1..$n]::int[] (the terminal sends '{..}' text);
  - a new customer's letters (first and last name, street, city) are fixed strings of the
    terminal's lengths, the card's expiry is 'YYYYMM' (the terminal's 'YYYY/MM'), house
    numbers 1000..9999 and zips 10000..99999 (the terminal's 0000..9999 and 00000..99999);
  - a new customer whose name is taken (returns 0, about 1 in 50,000 at 10MB) ends the order
    where the terminal draws another name; errors abort a pgbench client, none are expected."""


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def array_literal(items) -> str:
    return ", ".join(f"'{w}'" for w in items)


def write_script(folder: Path) -> Path:
    """The pgbench script with the word lists of workloads/dvds/words.py filled in."""
    text = TEMPLATE.read_text()
    for key, items in (("TITLE_WORDS", words.TITLE_WORDS), ("ACTOR_FIRST", words.ACTOR_FIRST),
                       ("ACTOR_LAST", words.ACTOR_LAST), ("STATES", words.STATES),
                       ("COUNTRIES", words.COUNTRIES)):
        if not all(w.isalnum() for w in items):
            sys.exit(f"a word of {key} is not alphanumeric: it cannot go in a literal as it is")
        text = text.replace(f"@{key}@", array_literal(items))
    path = folder / "dvds_order.sql"
    path.write_text(text)
    return path


def ensure_schema(dsn: str, size_name: str, build_users: int):
    """Reuse a dvds schema of the right size, otherwise build one."""
    eng = engines.get("postgres")
    try:
        info = eng.schema_info(dsn, "dvds")
        if info.size == size_name:
            return info
    except SchemaError:
        pass
    print(f"building the {size_name} shop ...", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    eng.dialect_for("dvds").build(dsn, DvdsBuildSpec(size=parse_size(size_name),
                                                     build_users=build_users, force=True))
    print(f"built in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
    return eng.schema_info(dsn, "dvds")


def run_oltplab(dsn: str, a, users: int, results: Path, seed: int) -> dict:
    """One `oltplab dvds run` step: OPM from its record, CPU of the CLI's process tree. Each
    run gets its own seed: with one seed, every run after the first would draw the new
    customers' names the first one inserted, and draw them again (the names are taken)."""
    out = results / f"run-{time.monotonic_ns()}"
    cmd = [str(OLTPLAB), "dvds", "run", "--dsn", dsn, "--users", str(users),
           "--rampup", f"{a.rampup:g}s", "--duration", f"{a.duration:g}s",
           "--pct-new-customers", str(PCT_NEW_CUSTOMERS), "--seed", str(seed),
           "--results-dir", str(out), "--name", "bench-dvds-driver", "--power", "none",
           "--io-latency", "off", "--sample-interval", "1s" if a.telemetry else "0"]
    if a.workers:
        cmd += ["--workers", str(a.workers)]
    cpu0 = children_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    cpu = children_cpu() - cpu0
    if proc.returncode != 0:
        sys.exit(f"oltplab dvds run failed ({proc.returncode}): "
                 f"{(proc.stderr or proc.stdout).strip()[-2000:]}")
    record = json.loads(next(out.rglob("run.json")).read_text())
    step = record["steps"][0]
    tx = step["transactions"]
    calls = sum(v.get("committed", 0) + v.get("rolled_back", 0)
                for k, v in tx.items() if k != "order")
    orders_window = tx["order"].get("committed", 0) + tx["order"].get("rolled_back", 0)
    driver = step["driver"]
    completed = driver["cpu_s"] * 1e6 / driver["cpu_us_per_transaction"]  # calls, ramp included
    orders = completed * orders_window / calls  # every order the workers ran
    return {"opm": step["opm"], "client_opm": step.get("client_opm"), "cpu": cpu,
            "driver_cpu": driver["cpu_s"], "orders": orders,
            "calls_per_order": calls / orders_window, "workers": driver["workers"],
            "rollback_pct": step.get("rollback_pct")}


def run_pgbench(dsn: str, a, users: int, script: Path, info) -> dict:
    """pgbench running the order script: OPM over the same window, its process's CPU."""
    pgbench = Path(a.pgbench)
    base = int(fetchval(dsn, "SELECT coalesce(max(orderid), 0) FROM orders"))
    cmd = [str(pgbench), "-n", "-M", "prepared", "-c", str(users), "-j", str(a.pgbench_jobs),
           "-T", str(int(a.rampup + a.duration + 2)), "-D", f"C={info.customers}",
           "-D", f"P={info.products}", "-D", f"POP={info.products // 10000}",
           "-D", f"NEWPCT={PCT_NEW_CUSTOMERS * 100}", "-f", str(script), dsn]
    marks: list[tuple[float, int]] = []

    def snapshots(t0: float) -> None:
        for at in (t0 + a.rampup, t0 + a.rampup + a.duration):
            time.sleep(max(0.0, at - time.monotonic()))
            marks.append((time.monotonic(), int(fetchval(dsn, ORDERS_SQL.format(base=base)))))

    cpu0 = children_cpu()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    th = threading.Thread(target=snapshots, args=(t0,))
    th.start()
    out, err = proc.communicate()
    th.join()
    cpu = children_cpu() - cpu0
    if proc.returncode != 0:
        sys.exit(f"pgbench failed ({proc.returncode}): {err.strip()[-2000:]}")
    (ta, na), (tb, nb) = marks
    n = failed = 0
    for line in out.splitlines():
        if line.startswith("number of transactions actually processed"):
            n = int(line.split(":")[1].split("/")[0])
        elif line.startswith("number of failed transactions"):
            failed = int(line.split(":")[1].split("(")[0])
    if failed:
        sys.exit(f"pgbench: {failed} failed orders")
    return {"opm": (nb - na) * 60.0 / (tb - ta), "cpu": cpu, "orders": n}


def database(a, connections: int):
    """The managed server (or --dsn) with the server settings given by -c."""
    settings = tuple(tuple(kv.split("=", 1)) for kv in a.setting)
    spec = DbSpec(datadir=a.datadir, port=a.port, db_memory=parse_bytes(a.db_memory),
                  settings=settings, dsn=a.dsn, dbname="dvds")
    return engines.get("postgres").database(spec, need_connections=connections)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datadir", type=Path, default=None,
                   help="the managed server's data directory [default: a scratch directory, "
                        "removed afterwards]")
    p.add_argument("--port", type=int, default=41520)
    p.add_argument("--db-memory", default="2GiB")
    p.add_argument("--dsn", default=None, help="an existing server instead of a managed one")
    p.add_argument("-c", dest="setting", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of the managed server (repeatable), as postgres -c takes it")
    p.add_argument("--size", default="10MB", help="the shop's size (10MB, 1GB ...)")
    p.add_argument("--build-users", type=int, default=os.cpu_count() or 1)
    p.add_argument("--users", default="2,1", help="user counts, each measured A B B A")
    p.add_argument("--rampup", type=float, default=5)
    p.add_argument("--duration", type=float, default=20)
    p.add_argument("--rounds", type=int, default=1, help="A B B A per round")
    p.add_argument("--seed", type=int, default=20261201, help="oltplab's first run's seed (the "
                   "next runs add 1, 2 ...)")
    p.add_argument("--workers", type=int, default=None,
                   help="oltplab driver processes [default: oltplab's, one on 2 CPUs]")
    p.add_argument("--pgbench-jobs", type=int, default=1,
                   help="pgbench threads (-j) [default: 1, as oltplab's one worker process "
                        "on a host of 2 CPUs that also runs the server]")
    p.add_argument("--pgbench", default=None, help="pgbench binary [default: the embedded one]")
    p.add_argument("--telemetry", action="store_true",
                   help="keep oltplab's 1 s telemetry sampler on (off by default)")
    a = p.parse_args()
    user_counts = [int(u) for u in a.users.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="oltplab-bench-dvds-driver-"))
    scratch.chmod(0o755)  # the server may run as its own system user
    own_datadir = a.datadir is None
    if own_datadir:
        a.datadir = scratch / "pg"
    results: dict[int, dict[str, list[dict]]] = {}
    runs = 0
    try:
        script = write_script(scratch)
        with database(a, max(user_counts) + 20) as target:
            if a.pgbench is None:
                bin_dir = target.instance.bin_dir if target.instance else None
                a.pgbench = str(bin_dir / "pgbench") if bin_dir else shutil.which("pgbench")
            info = ensure_schema(target.dsn, parse_size(a.size).name, a.build_users)
            print(f"{info.size} shop: {info.customers:,} customers, {info.products:,} "
                  f"products; rampup {a.rampup:g} s, duration {a.duration:g} s", flush=True)
            for users in user_counts:
                res = results.setdefault(users, {"oltplab": [], "pgbench": []})
                for who in ["oltplab", "pgbench", "pgbench", "oltplab"] * a.rounds:
                    fetchval(target.dsn, "CHECKPOINT")
                    if who == "oltplab":
                        runs += 1
                        r = run_oltplab(target.dsn, a, users, scratch, a.seed + runs)
                        extra = (f"  ({r['workers']} worker(s) "
                                 f"{1e6 * r['driver_cpu'] / r['orders']:.0f} us; "
                                 f"{r['calls_per_order']:.2f} calls/order, client OPM "
                                 f"{r['client_opm']:,.0f})")
                    else:
                        r = run_pgbench(target.dsn, a, users, script, info)
                        extra = f"  ({a.pgbench_jobs} thread(s))"
                    res[who].append(r)
                    print(f"users {users}  {who:>8}: OPM {r['opm']:>9,.0f}  client CPU "
                          f"{r['cpu']:6.1f} s = {1e6 * r['cpu'] / r['orders']:4.0f} us/order "
                          f"({r['orders']:,.0f} orders){extra}", flush=True)
    finally:  # the server has stopped: its scratch data directory goes too
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"\n{a.size}, rampup {a.rampup:g} s, duration {a.duration:g} s, "
          f"{a.rounds} round(s) of A B B A per user count"
          + "".join(f", -c {kv}" for kv in a.setting))
    for users, res in results.items():
        opm = {k: [r["opm"] for r in v] for k, v in res.items()}
        ratio, noise = ratio_with_noise(opm["oltplab"], opm["pgbench"])
        per = {k: statistics.fmean(1e6 * r["cpu"] / r["orders"] for r in v)
               for k, v in res.items()}
        workers = statistics.fmean(1e6 * r["driver_cpu"] / r["orders"] for r in res["oltplab"])
        print(f"users {users}: OPM oltplab {statistics.fmean(opm['oltplab']):,.0f}  pgbench "
              f"{statistics.fmean(opm['pgbench']):,.0f}  ratio {ratio:.3f}{noise}  "
              f"(target >= 0.97)")
        print(f"         client CPU per order: oltplab {per['oltplab']:.0f} us (its workers "
              f"{workers:.0f} us), pgbench {per['pgbench']:.0f} us")
    print()
    print(DIFFERENCES)


if __name__ == "__main__":
    main()
