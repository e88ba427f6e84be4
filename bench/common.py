"""Shared set-up for the benchmarks: a managed PostgreSQL and a built schema."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from collections.abc import Callable
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from oltplab import engines  # noqa: E402
from oltplab.config import BuildSpec, DbSpec, parse_size  # noqa: E402
from oltplab.engines.postgres.tpcc.loader import build  # noqa: E402
from oltplab.engines.postgres.tpcc.schema import schema_info  # noqa: E402
from oltplab.errors import SchemaError  # noqa: E402

DEFAULT_DATADIR = Path("oltplab-data/bench-postgres")


def db_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--datadir", type=Path, default=DEFAULT_DATADIR)
    p.add_argument("--port", type=int, default=5440)
    p.add_argument("--db-memory", default="2GiB")
    p.add_argument("--dsn", default=None, help="an existing server instead of a managed one")


def run_args(p: argparse.ArgumentParser, duration: float) -> None:
    """The options every A B B A benchmark takes: the database, the run's shape, the rounds."""
    db_args(p)
    p.add_argument("--warehouses", type=int, default=4)
    p.add_argument("--users", type=int, default=4)
    p.add_argument("--rampup", type=float, default=10)
    p.add_argument("--duration", type=float, default=duration)
    p.add_argument("--rounds", type=int, default=1, help="A B B A per round")
    p.add_argument("--seed", type=int, default=20261121)


def db_spec(a: argparse.Namespace, dbname: str = "tpcc", engine: str = "postgres") -> DbSpec:
    datadir, port = a.datadir, a.port
    if engine != "postgres" and datadir == DEFAULT_DATADIR:  # each engine its own server
        datadir, port = Path(f"oltplab-data/bench-{engine}"), port + 1
    return DbSpec(datadir=datadir, port=port, db_memory=parse_size(a.db_memory), dsn=a.dsn,
                  dbname=dbname, engine=engine)


@contextlib.contextmanager
def bench_database(a: argparse.Namespace, dbname: str = "tpcc", connections: int = 100,
                   engine: str = "postgres"):
    spec = db_spec(a, dbname, engine)
    with engines.get(engine).database(spec, need_connections=connections) as target:
        yield target


def ensure_schema(dsn: str, warehouses: int, build_users: int | None = None):
    """Reuse a schema of the right size, otherwise build one."""
    try:
        info = schema_info(dsn)
        if info.warehouses == warehouses:
            return info
    except SchemaError:
        pass
    print(f"building {warehouses} warehouses ...", file=sys.stderr)
    build(dsn, BuildSpec(warehouses=warehouses, build_users=build_users or os.cpu_count() or 1,
                         force=True))
    return schema_info(dsn)


def fetchval(dsn: str, sql: str):
    """The first value of ``sql``'s first row, on PostgreSQL or (a mariadb:// DSN) MariaDB."""
    if dsn.startswith(("mariadb:", "mysql:")):
        from oltplab.engines.mariadb import client
        conn = client.connect(dsn)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                row = cur.fetchone()
            return row[0] if row else None
        finally:
            conn.close()

    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            return await conn.fetchval(sql)
        finally:
            await conn.close()
    return asyncio.run(go())


def sum_next_o_id(dsn: str) -> int:
    return int(fetchval(dsn, "SELECT sum(d_next_o_id) FROM district"))


def ratio_with_noise(a: list[float], b: list[float]) -> tuple[float, str]:
    """mean(a) / mean(b), and its run-to-run noise as text: the standard error of each mean,
    carried into the ratio (2 standard errors; empty with fewer than two runs a side)."""
    import math

    ma, mb = statistics.fmean(a), statistics.fmean(b)
    ratio = ma / mb
    if len(a) < 2 or len(b) < 2:
        return ratio, ""
    rel = [statistics.stdev(v) / math.sqrt(len(v)) / m for v, m in ((a, ma), (b, mb))]
    return ratio, f"  +/- {2 * ratio * math.sqrt(sum(r * r for r in rel)):.3f} (2 standard errors)"


# ---------------------------------------------------------------------------------------------
# The shop's driver benchmarks (dvds_driver.py against pgbench, dvds_mariadb_driver.py against
# mariadb-slap): the options, the database, oltplab's side, the measured window, A B B A and
# the summary.

OLTPLAB = Path(sys.executable).parent / "oltplab"
PCT_NEW_CUSTOMERS = 20  # the driver's default, which both sides use
ORDERS_SQL = "SELECT count(*) FROM orders WHERE orderid > {base}"
BASE_SQL = "SELECT coalesce(max(orderid), 0) FROM orders"


def children_cpu() -> float:
    """CPU seconds (user + system) of the child processes waited for so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def server_args(p: argparse.ArgumentParser, port: int, db_memory: str) -> None:
    """The managed server's options of the driver benchmarks (or --dsn)."""
    p.add_argument("--datadir", type=Path, default=None,
                   help="the managed server's data directory [default: a scratch directory, "
                        "removed afterwards]")
    p.add_argument("--port", type=int, default=port)
    p.add_argument("--db-memory", default=db_memory)
    p.add_argument("--dsn", default=None, help="an existing server instead of a managed one")
    p.add_argument("-c", dest="setting", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of the managed server (repeatable), as oltplab's -c takes it")


def scratch_datadir(a: argparse.Namespace, prefix: str, engine_dir: str) -> Path:
    """A scratch directory (the caller removes it), and in it the managed server's data
    directory ``engine_dir`` unless --datadir named one."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    scratch.chmod(0o755)  # the server may run as its own system user
    if a.datadir is None:
        a.datadir = scratch / engine_dir
    return scratch


def run_recorded(cmd: list[str], a: argparse.Namespace, out: Path) -> tuple[dict, float]:
    """Run an `oltplab ... run` command (``--workers`` added when given) that records into
    ``out``: its first step and the CPU seconds of its process tree."""
    if a.workers:
        cmd = [*cmd, "--workers", str(a.workers)]
    cpu0 = children_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    cpu = children_cpu() - cpu0
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd[1:3])} failed ({proc.returncode}): "
                 f"{(proc.stderr or proc.stdout).strip()[-2000:]}")
    return json.loads(next(out.rglob("run.json")).read_text())["steps"][0], cpu


def dvds_args(p: argparse.ArgumentParser, port: int, db_memory: str) -> None:
    """The options of the shop's driver benchmarks."""
    server_args(p, port, db_memory)
    p.add_argument("--size", default="10MB", help="the shop's size (10MB, 1GB ...)")
    p.add_argument("--build-users", type=int, default=os.cpu_count() or 1)
    p.add_argument("--users", default="2,1", help="user counts, each measured A B B A")
    p.add_argument("--rampup", type=float, default=5)
    p.add_argument("--duration", type=float, default=20)
    p.add_argument("--rounds", type=int, default=1, help="A B B A per round")
    p.add_argument("--seed", type=int, default=20261201, help="oltplab's first run's seed (the "
                   "next runs add 1, 2 ...)")
    p.add_argument("--workers", type=int, default=None,
                   help="oltplab driver processes [default: oltplab's own choice]")
    p.add_argument("--telemetry", action="store_true",
                   help="keep oltplab's 1 s telemetry sampler on (off by default)")


def dvds_database(a: argparse.Namespace, engine: str, connections: int):
    """The managed server of ``engine`` (or --dsn) with the server settings given by -c."""
    settings = tuple(tuple(kv.split("=", 1)) for kv in a.setting)
    spec = DbSpec(datadir=a.datadir, port=a.port, db_memory=parse_size(a.db_memory),
                  settings=settings, dsn=a.dsn, dbname="dvds", engine=engine)
    return engines.get(engine).database(spec, need_connections=connections)


def ensure_dvds_schema(engine: str, dsn: str, size_name: str, build_users: int):
    """Reuse a DS2 shop of the right size (a DS3 one would run DVD Store 3's steps too),
    otherwise build one."""
    from oltplab.workloads.dvds.build import DvdsBuildSpec
    from oltplab.workloads.dvds.sizes import parse_size as parse_shop_size
    eng = engines.get(engine)
    try:
        info = eng.schema_info(dsn, "dvds")
        if info.size == size_name and not info.ds3:
            return info
    except SchemaError:
        pass
    print(f"building the {size_name} shop ...", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    eng.dialect_for("dvds").build(dsn, DvdsBuildSpec(size=parse_shop_size(size_name),
                                                     build_users=build_users, force=True))
    print(f"built in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
    return eng.schema_info(dsn, "dvds")


def run_oltplab_dvds(dsn: str, a: argparse.Namespace, users: int, results: Path,
                     seed: int) -> dict:
    """One `oltplab dvds run` step: OPM from its record, CPU of the CLI's process tree. Each
    run gets its own seed: with one seed, every run after the first would draw the new
    customers' names the first one inserted, and draw them again (the names are taken)."""
    out = results / f"run-{time.monotonic_ns()}"
    cmd = [str(OLTPLAB), "dvds", "run", "--dsn", dsn, "--users", str(users),
           "--rampup", f"{a.rampup:g}s", "--duration", f"{a.duration:g}s",
           "--pct-new-customers", str(PCT_NEW_CUSTOMERS), "--seed", str(seed),
           "--results-dir", str(out), "--name", "bench-dvds-driver", "--power", "none",
           "--io-latency", "off", "--sample-interval", "1s" if a.telemetry else "0"]
    step, cpu = run_recorded(cmd, a, out)
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


def orders_window(dsn: str, a: argparse.Namespace, base: int,
                  t0: float) -> tuple[threading.Thread, list]:
    """A thread that counts the ORDERS rows above ``base`` at the measured window's two ends
    (``a.rampup`` and ``a.rampup + a.duration`` seconds after ``t0``), as oltplab's run record
    does, into the list it returns with it: (monotonic time, count) twice."""
    marks: list[tuple[float, int]] = []

    def snapshots() -> None:
        for at in (t0 + a.rampup, t0 + a.rampup + a.duration):
            time.sleep(max(0.0, at - time.monotonic()))
            marks.append((time.monotonic(), int(fetchval(dsn, ORDERS_SQL.format(base=base)))))

    th = threading.Thread(target=snapshots)
    th.start()
    return th, marks


def window_opm(marks: list[tuple[float, int]]) -> float:
    (ta, na), (tb, nb) = marks
    return (nb - na) * 60.0 / (tb - ta)


def slap_command(slap: str, dsn: str, path: Path, count: int) -> list[str]:
    """One mariadb-slap client (concurrency 1) running the ``count`` statements of ``path``
    (each ended by '|') once, connected as ``dsn`` says, with InnoDB's snapshot isolation off
    where the server has it (as oltplab's connections)."""
    from oltplab.engines.mariadb import client
    args = client.connect_args(dsn)
    cmd = [slap, f"--defaults-file={args['read_default_file']}"
           if "read_default_file" in args else "--no-defaults", f"--user={args['user']}"]
    if "unix_socket" in args:
        cmd.append(f"--socket={args['unix_socket']}")
    else:
        cmd += [f"--host={args['host']}", f"--port={args['port']}", "--protocol=tcp"]
    if "password" in args:
        cmd.append(f"--password={args['password']}")
    cmd += [f"--create-schema={args['database']}", "--no-drop", "--concurrency=1",
            "--iterations=1", f"--number-of-queries={count}", f"--query={path}",
            "--delimiter=|", "--silent"]
    if fetchval(dsn, "SELECT count(*) FROM information_schema.global_variables"
                     " WHERE variable_name = 'innodb_snapshot_isolation'"):
        cmd.append("--init-command=SET SESSION innodb_snapshot_isolation = OFF")
    return cmd


def run_slaps(commands: list[list[str]],
              window: Callable[[float], threading.Thread]) -> tuple[float, str]:
    """Start the mariadb-slap commands, then ``window(t0)`` (a started thread that reads the
    server at the measured window's ends); when it has ended, stop the clients still running.
    Their CPU seconds (user + system), and a problem when one ended before the window did."""
    cpu0 = children_cpu()
    t0 = time.monotonic()
    procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for cmd in commands]
    window(t0).join()
    early = [p for p in procs if p.poll() is not None]
    for p in procs:
        if p.poll() is None:
            p.terminate()
    problem = ""
    for p in procs:
        _, err = p.communicate()
        if p in early:
            problem = (f"a mariadb-slap client ended before the window did (exit "
                       f"{p.returncode}): {err.strip().splitlines()[-1:] or 'its file ran out'}")
    return children_cpu() - cpu0, problem


#: MariaDB's transactions so far (a procedure's own COMMIT counts one).
COMMITS_SQL = ("SELECT sum(variable_value) FROM information_schema.global_status"
               " WHERE variable_name IN ('COM_COMMIT', 'COM_ROLLBACK')")


def slaps_counted(commands: list[list[str]], dsn: str,
                  start_window: Callable[[float], tuple[threading.Thread, list]]
                  ) -> tuple[float, str, int, list]:
    """run_slaps with ``start_window(t0)`` (a started thread that reads the server at the
    measured window's ends and the list it fills): the clients' CPU seconds, a problem, the
    transactions the server counted over their whole run (COMMITS_SQL) and the window's
    marks."""
    marks: list = []

    def window(t0: float) -> threading.Thread:
        th, got = start_window(t0)
        marks.append(got)
        return th

    commits0 = int(fetchval(dsn, COMMITS_SQL))
    cpu, problem = run_slaps(commands, window)
    return cpu, problem, int(fetchval(dsn, COMMITS_SQL)) - commits0, marks[0]


def slap_binary(a: argparse.Namespace) -> str:
    """mariadb-slap: --slap, else the one on PATH (exits when there is none)."""
    slap = a.slap or shutil.which("mariadb-slap")
    if slap is None:
        sys.exit("mariadb-slap is not installed (Debian package mariadb-client)")
    return slap


def pgbench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pgbench-jobs", type=int, default=1,
                   help="pgbench threads (-j) [default: 1, as oltplab's one worker process "
                        "on a host of 2 CPUs that also runs the server]")
    p.add_argument("--pgbench", default=None, help="pgbench binary [default: the embedded one]")


def load_average() -> str:
    """The host's load average over 1, 5 and 15 minutes (other work on the host shows there)."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def dvds_abba(a: argparse.Namespace, dsn: str, user_counts: list[int], results_dir: Path,
              reference: str, run_reference: Callable[[int, dict], dict],
              before_run: Callable[[], None]) -> dict[int, dict[str, list[dict]]]:
    """A B B A (oltplab, the reference, the reference, oltplab) ``a.rounds`` times per user
    count, ``before_run`` before each run, a line per run; the runs' figures by user count and
    side. ``run_reference(users, so_far)`` returns at least opm, cpu and orders (and a note);
    ``so_far`` holds this user count's runs until then, by side."""
    results: dict[int, dict[str, list[dict]]] = {}
    runs = 0
    print(f"load average at the start: {load_average()}", flush=True)
    for users in user_counts:
        res = results.setdefault(users, {"oltplab": [], reference: []})
        for who in ["oltplab", reference, reference, "oltplab"] * a.rounds:
            before_run()
            if who == "oltplab":
                runs += 1
                r = run_oltplab_dvds(dsn, a, users, results_dir, a.seed + runs)
                extra = (f"  ({r['workers']} worker(s) {1e6 * r['driver_cpu'] / r['orders']:.0f}"
                         f" us; {r['calls_per_order']:.2f} calls/order, client OPM "
                         f"{r['client_opm']:,.0f})")
            else:
                r = run_reference(users, res)
                extra = f"  ({r['note']})" if r.get("note") else ""
            res[who].append(r)
            print(f"users {users}  {who:>12}: OPM {r['opm']:>9,.0f}  client CPU "
                  f"{r['cpu']:6.1f} s = {1e6 * r['cpu'] / r['orders']:4.0f} us/order "
                  f"({r['orders']:,.0f} orders){extra}", flush=True)
    return results


def print_dvds_summary(a: argparse.Namespace, results: dict[int, dict[str, list[dict]]],
                       reference: str, target: float, differences: str) -> None:
    """Per user count: mean OPM of each side, their ratio with its noise, client CPU per
    order; then what differs between the two clients."""
    print(f"\n{a.size}, rampup {a.rampup:g} s, duration {a.duration:g} s, "
          f"{a.rounds} round(s) of A B B A per user count"
          + "".join(f", -c {kv}" for kv in a.setting) + f"; load average at the end: "
          f"{load_average()}")
    for users, res in results.items():
        opm = {k: [r["opm"] for r in v] for k, v in res.items()}
        ratio, noise = ratio_with_noise(opm["oltplab"], opm[reference])
        per = {k: statistics.fmean(1e6 * r["cpu"] / r["orders"] for r in v)
               for k, v in res.items()}
        workers = statistics.fmean(1e6 * r["driver_cpu"] / r["orders"] for r in res["oltplab"])
        print(f"users {users}: OPM oltplab {statistics.fmean(opm['oltplab']):,.0f}  {reference} "
              f"{statistics.fmean(opm[reference]):,.0f}  ratio {ratio:.3f}{noise}  "
              f"(target >= {target:g})")
        print(f"         client CPU per order: oltplab {per['oltplab']:.0f} us (its workers "
              f"{workers:.0f} us), {reference} {per[reference]:.0f} us")
    print()
    print(differences)
