"""Driver efficiency of the DVD-Store-derived workload on MariaDB: OPM of `oltplab dvds run
--engine mariadb` against mariadb-slap.

Both clients call the same stored procedures (DVDS_LOGIN, DVDS_NEW_CUSTOMER,
DVDS_BROWSE_CATEGORY/ACTOR/TITLE, DVDS_PURCHASE) with the same query text, ``CALL ...(...,
@out); SELECT @out`` in one round trip (multi-statement), the same order mix and inputs drawn
the same way, at the same number of users, on one managed MariaDB database, alternating A B B A
(oltplab, mariadb-slap, mariadb-slap, oltplab) per user count so that database growth and
caches favour neither. mariadb-slap is the reference: a C client with nothing to do between
two statements. Its statements are fixed in advance: each user's orders are drawn by the C
terminal oltplab's loop uses (``_native.DvdsTerminal``, the run's parameters, a seed of its
own per user and run), as CALL text (``mariadb_call``), into a file per mariadb-slap process
(concurrency 1 each: one process gives all its clients the same statements). A login's
purchase passes the id of ``user<N>``, which is N (the build numbers customer N ``user<N>``);
a new customer's id comes back in a user variable that its purchase passes on; new
customers' names are made unique per run, since mariadb-slap stops a client at its first
error and the purchase of a taken name (id 0) would fail its foreign key.

OPM is counted the same way for both: the rows added to ORDERS per minute of the measured
window, read from the server (oltplab's run record: count(*) of orders above the highest
orderid at its start, at the window's two ends; for mariadb-slap the same query at the same two
instants after its processes start). Client CPU per order: for mariadb-slap its processes
(user + system) over the orders they ran (their calls, Com_commit + Com_rollback over their
whole run, one per call, divided by the files' calls per order); for oltplab the CLI's whole
process tree over every order its workers ran, and beside it the workers' own CPU while they
drove (run.json steps[0].driver.cpu_s). InnoDB's purge is let catch up before every run.

It starts its own managed MariaDB in a scratch directory (removed afterwards unless --datadir
is given) and always stops it.

    .venv/bin/python bench/dvds_mariadb_driver.py                  # 10MB, 2 and 1 users, ~4 min
    .venv/bin/python bench/dvds_mariadb_driver.py --users 2,1 --rampup 5 --duration 20 --rounds 2
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from common import (BASE_SQL, PCT_NEW_CUSTOMERS, dvds_abba, dvds_args, dvds_database,
                    ensure_dvds_schema, fetchval, orders_window, print_dvds_summary,
                    scratch_datadir, slap_binary, slap_command, slaps_counted, window_opm)

from oltplab.engines.mariadb import client, counters
from oltplab.workloads.dvds.inputs import RunConstants, terminal
from oltplab.workloads.dvds.params import DvdsParams
from oltplab.workloads.dvds.sizes import parse_size

OUT = "@oltplab_out"  # the variable oltplab's loop reads back (native/loop/myloop.c)
CUSTOMER = "@dvds_customer"  # a new customer's id, for the order's purchase
PLACEHOLDER = 2147483647  # told to the terminal as a new customer's id; becomes CUSTOMER
USERNAME_ARG = 14  # the new_customer argument that holds the username

#: What differs between the mariadb-slap files and oltplab's C loop, printed with the figures.
DIFFERENCES = """\
mariadb-slap files against oltplab's C loop (same procedures, same CALL text, same terminal):
  - the orders are drawn beforehand by the same C terminal (DvdsTerminal, the same
    parameters), from seeds of their own (per user and run), not from the oltplab runs' seeds;
  - a new customer's name is newuser<k>r<run>u<user> (unique per run), where the terminal
    draws newuser<1..10^9>: no name is ever taken, where the loop draws another name when one
    is (about 1 in 50,000);
  - a new customer's id comes back in @dvds_customer ('CALL DVDS_NEW_CUSTOMER(...,
    @dvds_customer);SELECT @dvds_customer') and its purchase passes that variable, where the
    loop reads @oltplab_out and sends the id as a literal; a login's purchase sends
    user<N>'s id N as a literal, as the loop sends what the login returned;
  - one mariadb-slap process (one connection, one thread) per user; oltplab's worker
    processes are its default's (a local MariaDB's users get one each while they fit the
    CPUs, otherwise half the CPUs serve them all) or --workers; errors end a mariadb-slap
    client (none are expected: a deadlock, which oltplab retries, would show as a client that
    ended early)."""


def order_calls(t, orders: int, tag: str) -> tuple[str, int]:
    """``orders`` orders of terminal ``t`` as mariadb-slap statements (each ``CALL ...;SELECT
    @var`` ended by '|'), new customers named newuser<k><tag>; the text and its calls."""
    out: list[str] = []
    done = new = 0
    while done < orders:
        kind, args = t.next_call()
        var = CUSTOMER if kind == "new_customer" else OUT
        call = t.mariadb_call(var)
        if kind == "login":  # user<N> is customer N
            value = int(args[0].removeprefix("user"))
        elif kind == "new_customer":
            new += 1
            drawn = f"'{args[USERNAME_ARG]}'"
            if call.count(drawn) != 1:
                sys.exit(f"cannot find the username {drawn} in {call}")
            call = call.replace(drawn, f"'newuser{new}{tag}'")
            value = PLACEHOLDER
        elif kind == "purchase":
            call = call.replace(f"DVDS_PURCHASE({PLACEHOLDER},", f"DVDS_PURCHASE({CUSTOMER},")
            value, done = 1, done + 1
        else:  # a browse: what it found does not steer the order
            value = 1
        t.complete(value)
        out.append(f"{call};SELECT {var}|\n")
    return "".join(out), len(out)


def run_slap(slap: str, dsn: str, a, users: int, info, files: Path, run: int,
             so_far: dict) -> dict:
    """One mariadb-slap process per user, each running its own orders: OPM over the window,
    the processes' CPU and the orders they ran."""
    opm = max((r["opm"] for r in so_far["oltplab"]), default=60_000.0)
    orders = 2 * math.ceil(opm / users * (a.rampup + a.duration + 10) / 60) + 500  # per user
    constants = RunConstants(info.size, info.customers, info.products,
                             DvdsParams(pct_new_customers=PCT_NEW_CUSTOMERS))
    token = f"r{run}x{time.time_ns() % 10**9}"  # never the same twice, across invocations too
    commands, calls = [], 0
    for user in range(users):
        t = terminal(SimpleNamespace(seed=a.seed * 1000 + run * 100 + user), 0, constants)
        text, n = order_calls(t, orders, f"{token}u{user}")
        path = files / f"slap-{run}-{user}.sql"
        path.write_text(text)
        commands.append(slap_command(slap, dsn, path, n))
        calls += n
    base = int(fetchval(dsn, BASE_SQL))
    cpu, problem, commits, marks = slaps_counted(
        commands, dsn, lambda t0: orders_window(dsn, a, base, t0))
    ran = commits * users * orders / calls
    for path in files.glob(f"slap-{run}-*.sql"):
        path.unlink()
    return {"opm": window_opm(marks), "cpu": cpu, "orders": ran,
            "note": problem or f"{users} process(es), {calls / users / orders:.2f} calls/order"}


def purge_caught_up(dsn: str) -> None:
    """InnoDB's purge has caught up with the previous run (as HammerDB waits between runs)."""
    conn = client.connect(dsn)
    try:
        counters.wait_for_purge(conn, timeout_s=60)
    finally:
        conn.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dvds_args(p, port=41630, db_memory="1GiB")
    p.add_argument("--slap", default=None, help="mariadb-slap binary [default: on PATH]")
    a = p.parse_args()
    slap = slap_binary(a)
    user_counts = [int(u) for u in a.users.split(",")]
    scratch = scratch_datadir(a, "oltplab-bench-dvds-slap-", "mariadb")
    runs = [0]

    def reference(users: int, so_far: dict) -> dict:
        runs[0] += 1
        return run_slap(slap, target.dsn, a, users, info, scratch, runs[0], so_far)

    try:
        with dvds_database(a, "mariadb", max(user_counts) + 20) as target:
            info = ensure_dvds_schema("mariadb", target.dsn, parse_size(a.size).name,
                                      a.build_users)
            print(f"{info.size} shop: {info.customers:,} customers, {info.products:,} "
                  f"products; rampup {a.rampup:g} s, duration {a.duration:g} s", flush=True)
            results = dvds_abba(a, target.dsn, user_counts, scratch, "mariadb-slap", reference,
                                lambda: purge_caught_up(target.dsn))
    finally:  # the server has stopped: its scratch data directory goes too
        shutil.rmtree(scratch, ignore_errors=True)
    print_dvds_summary(a, results, "mariadb-slap", 0.95, DIFFERENCES)


if __name__ == "__main__":
    main()
