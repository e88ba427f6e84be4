"""Driver efficiency on MariaDB: NOPM of oltplab's MariaDB procedures mode against mariadb-slap.

Both clients call the same five stored procedures with the same inputs and the same query
text, ``CALL ...; SELECT @oltplab_out`` in one round trip (multi-statement): each user's
transactions are drawn by the same Terminal (same seed, deck, warehouses, C constants), for
oltplab by its C loop, for mariadb-slap into a file written beforehand (``--call-only``: the
CALL alone, to see what the SELECT costs), one mariadb-slap process per user
(concurrency 1 each, so that every user runs its own inputs; mariadb-slap gives every client
of one process the same statements). mariadb-slap is the reference: a C client with nothing
to do between two statements. One managed MariaDB, one database, A B B A in one run, so that
database growth and caches favour neither. NOPM is HammerDB's: the change of
sum(d_next_o_id) over the measured window, per minute; TPM the change of Com_commit +
Com_rollback. oltplab's side runs in this process as one worker does (driver.Users on
MariaDBLoop: every user on one thread).

    .venv/bin/python bench/mariadb_driver.py --warehouses 4 --users 4 --duration 60

mariadb-slap stops a client at its first error (no retry): the deadlocks that oltplab
retries end that client, which the run reports (use a warehouse per user).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import ratio_with_noise, run_slaps, slap_command

from oltplab.config import BuildSpec, DbSpec, parse_size
from oltplab.engines.mariadb import client, counters, driver
from oltplab.engines.mariadb.instance import MariaDBInstance
from oltplab.engines.common.loop import UserPlan, WorkerPlan
from oltplab.engines.common.recorder import Recorder
from oltplab.workloads.tpcc.inputs import assign_terminals, draw_constants, terminal
from oltplab.engines.mariadb.tpcc import DIALECT
from oltplab.workloads.tpcc.schema import META_TABLE

PROCEDURES = ("NEWORD", "PAYMENT", "OSTAT", "DELIVERY", "SLEV")
S = 1_000_000_000


def cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def ensure_schema(inst: MariaDBInstance, dbname: str, warehouses: int) -> int:
    """Reuse a build of the right size, otherwise build one; the build's C_LAST constant."""
    inst.ensure_database(dbname)
    dsn = inst.dsn(dbname)
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            try:
                cur.execute(f"SELECT warehouses, c_last_load FROM {META_TABLE}")
                row = cur.fetchone()
            except client.Error:
                row = None
    finally:
        conn.close()
    if row and row[0] == warehouses:
        return int(row[1])
    print(f"building {warehouses} warehouses ...", file=sys.stderr)
    summary = DIALECT.build(dsn, BuildSpec(warehouses=warehouses, force=True,
                                           build_users=os.cpu_count() or 1))
    return int(summary["constants"]["c_last_load"])


def worker_plan(dsn: str, seed: int, c_last_load: int, users: int, warehouses: int):
    """The constants and users oltplab's manager draws for a run with this seed (one worker)."""
    rng = random.Random(seed)
    constants = draw_constants(rng, c_last_load)
    step_rng = random.Random(rng.getrandbits(63))
    ups = tuple(UserPlan(t.index, t.w_id, t.stock_d_id, t.warehouses, step_rng.getrandbits(63))
                for t in assign_terminals(step_rng, users, warehouses))
    return WorkerPlan(0, dsn, "procedures", ups, warehouses, constants, engine="mariadb")


def calls(plan: WorkerPlan, up: UserPlan, count: int, select: bool = True) -> str:
    """``count`` transactions of one user, drawn as its C loop draws them (the card, the
    warehouse, the inputs), each the text the loop sends: ``CALL ...; SELECT @oltplab_out``
    (``select`` False: the CALL alone), ended by '|'."""
    t = terminal(up, plan.w_max, plan.constants)
    out = []
    for _ in range(count):
        kind = t.next_kind()
        args = t.inputs(kind, t.warehouse())
        if kind == 0:
            w, d, c, items, supply, qty = args
            lines = ",".join(f"[{i},{s},{q}]" for i, s, q in zip(items, supply, qty))
            text = f"{w},{d},{c},'[{lines}]'"
        else:
            text = ",".join(str(v) for v in args)
        tail = ";SELECT @oltplab_out" if select else ""
        out.append(f"CALL {PROCEDURES[kind]}({text},@oltplab_out){tail}|\n")
    return "".join(out)


def window(dsn: str, t0: float, a, marks: list) -> None:
    """Server snapshots at the window's start and end (a thread)."""
    for at in (t0 + a.rampup, t0 + a.rampup + a.duration):
        time.sleep(max(0.0, at - time.monotonic()))
        marks.append(counters.snapshot_of(dsn))


def rates(marks: list) -> tuple[float, float]:
    start, end = marks
    minutes = (end.t_ns - start.t_ns) / 60e9
    return (end.new_orders - start.new_orders) / minutes, (end.xacts - start.xacts) / minutes


def run_oltplab(plan: WorkerPlan, a) -> tuple[float, float, float, int]:
    """NOPM, TPM, this process's CPU seconds, transactions completed."""
    marks: list = []

    async def go():
        conns = [driver.connect(plan) for _ in plan.users]
        users = driver.Users(conns, list(plan.users), plan)
        t0 = time.monotonic()
        now = time.monotonic_ns()
        rec = Recorder(now + int(a.rampup * S), now + int((a.rampup + a.duration) * S),
                       users=len(conns))
        th = threading.Thread(target=window, args=(plan.dsn, t0, a, marks))
        th.start()
        try:
            await users.run(rec)
        finally:
            await users.aclose()
            th.join()
        return users.completed

    cpu0 = cpu(resource.RUSAGE_SELF)
    completed = asyncio.run(go())
    nopm, tpm = rates(marks)
    return nopm, tpm, cpu(resource.RUSAGE_SELF) - cpu0, completed


def run_slap(slap: str, inst: MariaDBInstance, dbname: str, files: list[Path], count: int,
             a) -> tuple[float, float, float, int, str]:
    """NOPM, TPM, the mariadb-slap processes' CPU seconds, their transactions (the server's
    Com_commit + Com_rollback over their whole run: no retries), and a problem if one ended
    early."""
    dsn = inst.dsn(dbname)
    commands = [slap_command(slap, dsn, f, count) for f in files]
    marks: list = []

    def start(t0: float) -> threading.Thread:
        th = threading.Thread(target=window, args=(dsn, t0, a, marks))
        th.start()
        return th

    first = counters.snapshot_of(dsn)
    secs, problem = run_slaps(commands, start)
    nopm, tpm = rates(marks)
    return nopm, tpm, secs, counters.snapshot_of(dsn).xacts - first.xacts, problem


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datadir", type=Path, default=Path("oltplab-data/bench-mariadb"))
    p.add_argument("--port", type=int, default=3340)
    p.add_argument("--db-memory", default="1GiB")
    p.add_argument("--warehouses", type=int, default=4)
    p.add_argument("--users", type=int, default=4)
    p.add_argument("--rampup", type=float, default=5)
    p.add_argument("--duration", type=float, default=60)
    p.add_argument("--rounds", type=int, default=1, help="A B B A per round")
    p.add_argument("--seed", type=int, default=20261121)
    p.add_argument("--call-only", action="store_true",
                   help="mariadb-slap sends the CALL alone, without oltplab's SELECT of the "
                        "OUT parameter (the same query text is the default)")
    a = p.parse_args()
    slap = shutil.which("mariadb-slap")
    if slap is None:
        sys.exit("mariadb-slap is not installed (Debian package mariadb-client)")
    inst = MariaDBInstance(DbSpec(datadir=a.datadir.resolve(), port=a.port,
                                  db_memory=parse_size(a.db_memory)))
    inst.start(need_connections=a.users + 20)
    tmp = Path(tempfile.mkdtemp(prefix="oltplab-slap-"))
    try:
        dbname = "tpcc"
        c_last_load = ensure_schema(inst, dbname, a.warehouses)
        plan = worker_plan(inst.dsn(dbname), a.seed, c_last_load, a.users, a.warehouses)
        res: dict[str, list] = {"oltplab": [], "mariadb-slap": []}
        files: list[Path] = []
        count = 0
        order = ["oltplab", "mariadb-slap", "mariadb-slap", "oltplab"] * a.rounds
        for who in order:
            problem = ""
            if who == "oltplab":
                nopm, tpm, secs, n = run_oltplab(plan, a)
            else:
                if not files:  # twice what oltplab's users ran, per user
                    count = 2 * res["oltplab"][0][0] // 45 * 100 // 60 // a.users
                    count = max(1000, int(count * (a.rampup + a.duration) + 1000))
                    for up in plan.users:
                        files.append(tmp / f"user{up.index}.sql")
                        files[-1].write_text(calls(plan, up, count, not a.call_only))
                nopm, tpm, secs, n, problem = run_slap(slap, inst, dbname, files, count, a)
            note = problem or f"{n:,} transactions, {1e6 * secs / max(n, 1):.0f} us CPU each"
            res[who].append((nopm, tpm))
            print(f"{who:>12}: NOPM {nopm:>9,.0f}  TPM {tpm:>9,.0f}  ({note})", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        inst.stop()
    ratio, noise = ratio_with_noise([x[0] for x in res["oltplab"]],
                                    [x[0] for x in res["mariadb-slap"]])
    tpm_ratio, _ = ratio_with_noise([x[1] for x in res["oltplab"]],
                                    [x[1] for x in res["mariadb-slap"]])
    print(f"\nwarehouses {a.warehouses}, users {a.users}, rampup {a.rampup:.0f} s, "
          f"duration {a.duration:.0f} s, {len(order)} runs")
    print(f"NOPM ratio oltplab / mariadb-slap {ratio:.3f}{noise}  (target >= 0.95); "
          f"TPM ratio {tpm_ratio:.3f}")


if __name__ == "__main__":
    sys.exit(main())
