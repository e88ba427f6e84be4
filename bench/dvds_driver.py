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
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import (BASE_SQL, PCT_NEW_CUSTOMERS, children_cpu, dvds_abba, dvds_args,
                    dvds_database, ensure_dvds_schema, fetchval, orders_window,
                    pgbench_args, print_dvds_summary, scratch_datadir, window_opm)

from oltplab.workloads.dvds import words
from oltplab.workloads.dvds.sizes import parse_size

TEMPLATE = Path(__file__).resolve().parent / "pgbench" / "dvds_order.sql"

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


def run_pgbench(dsn: str, a, users: int, script: Path, info) -> dict:
    """pgbench running the order script: OPM over the same window, its process's CPU."""
    pgbench = Path(a.pgbench)
    base = int(fetchval(dsn, BASE_SQL))
    cmd = [str(pgbench), "-n", "-M", "prepared", "-c", str(users), "-j", str(a.pgbench_jobs),
           "-T", str(int(a.rampup + a.duration + 2)), "-D", f"C={info.customers}",
           "-D", f"P={info.products}", "-D", f"POP={info.products // 10000}",
           "-D", f"NEWPCT={PCT_NEW_CUSTOMERS * 100}", "-f", str(script), dsn]
    cpu0 = children_cpu()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    th, marks = orders_window(dsn, a, base, t0)
    out, err = proc.communicate()
    th.join()
    cpu = children_cpu() - cpu0
    if proc.returncode != 0:
        sys.exit(f"pgbench failed ({proc.returncode}): {err.strip()[-2000:]}")
    n = failed = 0
    for line in out.splitlines():
        if line.startswith("number of transactions actually processed"):
            n = int(line.split(":")[1].split("/")[0])
        elif line.startswith("number of failed transactions"):
            failed = int(line.split(":")[1].split("(")[0])
    if failed:
        sys.exit(f"pgbench: {failed} failed orders")
    return {"opm": window_opm(marks), "cpu": cpu, "orders": n,
            "note": f"{a.pgbench_jobs} thread(s)"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dvds_args(p, port=41520, db_memory="2GiB")
    pgbench_args(p)
    a = p.parse_args()
    user_counts = [int(u) for u in a.users.split(",")]
    scratch = scratch_datadir(a, "oltplab-bench-dvds-driver-", "pg")
    try:
        script = write_script(scratch)
        with dvds_database(a, "postgres", max(user_counts) + 20) as target:
            if a.pgbench is None:
                bin_dir = target.instance.bin_dir if target.instance else None
                a.pgbench = str(bin_dir / "pgbench") if bin_dir else shutil.which("pgbench")
            info = ensure_dvds_schema("postgres", target.dsn, parse_size(a.size).name,
                                      a.build_users)
            print(f"{info.size} shop: {info.customers:,} customers, {info.products:,} "
                  f"products; rampup {a.rampup:g} s, duration {a.duration:g} s", flush=True)
            results = dvds_abba(
                a, target.dsn, user_counts, scratch, "pgbench",
                lambda users, _: run_pgbench(target.dsn, a, users, script, info),
                lambda: fetchval(target.dsn, "CHECKPOINT"))
    finally:  # the server has stopped: its scratch data directory goes too
        shutil.rmtree(scratch, ignore_errors=True)
    print_dvds_summary(a, results, "pgbench", 0.97, DIFFERENCES)


if __name__ == "__main__":
    main()
