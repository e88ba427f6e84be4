"""Driver efficiency of the brokerage on MariaDB: trade results per second of `oltplab
brokerage run --engine mariadb` against mariadb-slap calling the same procedures with the
same CALL text.

One managed MariaDB database (1,000 customers x 5 days by default), A B B A (oltplab,
mariadb-slap, mariadb-slap, oltplab) per user count, InnoDB's purge let catch up before every
run. Both sides count the same thing on the server: the change of sum(b_num_trades) over the
measured window (oltplab's run record; for mariadb-slap the same query at the same two
instants after its processes start).

mariadb-slap's side: one process per user (concurrency 1, its own connection), each running a
file of statements fixed in advance. The file holds the calls of the C terminal oltplab's
user of the same index runs (``_native.BrokerageTerminal``, the seed oltplab's first step
gives that user for --seed), in the terminal's order (the deck's), as the CALL text MariaDB's
loop sends (``mariadb_call``): each procedure sets its isolation level and commits, one round
trip a transaction on both sides. Between them come the market emulator's calls at the share
of the users' calls they had in the first oltplab run of the user count: Trade-Results of a
pool of submitted market orders made just before the run (Trade-Cleanup, then the orders'
CALL trade_order, then oltplab's market emulator on a simulated clock for their Trade-Results'
prices and its Market-Feed batches: bench/brokerage_driver.py ``deliver``), each trade once.
mariadb-slap has no retries: a deadlock ends its client, which the run's line reports (the
window then counts fewer clients). No Data-Maintenance.

Client CPU per transaction: mariadb-slap's processes (user + system) over their calls
(Com_commit + Com_rollback over their whole run: one per call); oltplab's process tree over
every transaction its workers ran, and its workers' own (run.json steps[0].driver).

It starts its own managed MariaDB in a scratch directory (removed afterwards unless --datadir
is given) and always stops it.

    .venv/bin/python bench/brokerage_mariadb_driver.py              # 4 and 1 users, ~8 min
    .venv/bin/python bench/brokerage_mariadb_driver.py --users 4 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import time

from brokerage_driver import (abba, client_seeds, database, deliver, driver_args, ensure_schema,
                              market_orders, money, summary, window)
from common import COMMITS_SQL, scratch_datadir, slap_binary, slap_command, slaps_counted
from dvds_mariadb_driver import purge_caught_up

from oltplab import _native, engines
from oltplab.engines.mariadb import client
from oltplab.workloads.brokerage import inputs, rigor

POOL_SEED, FEED_SEED = 0xB007, 0x5EED_3A4B  # as bench/brokerage_driver.py's pool

DIFFERENCES = """\
mariadb-slap files against oltplab's C loop (same procedures, same CALL text, same terminals):
  - each user's calls are the ones oltplab's user of that index draws for --seed, in order;
  - its Trade-Results complete a pool of market orders made before the run, at the prices
    and in the order oltplab's market emulator gives them, and its Market-Feeds are the
    emulator's batches for them, both placed among the user's calls at the first oltplab
    run's share (oltplab's actors run them on connections of their own, as they come due);
  - one mariadb-slap process per user; no retries (a deadlock ends a client: reported);
  - no Data-Maintenance (one call a minute in oltplab's run)."""


def make_pool(dsn: str, kwargs: dict, seeds: list[int], per_client: int,
              rate: float) -> list[tuple[list, list]]:
    """Trade-Cleanup, ``per_client`` market orders a client through CALL trade_order, and
    oltplab's market emulator's calls for them: per client (Trade-Result CALLs, Market-Feed
    CALLs)."""
    info = engines.get("mariadb").schema_info(dsn, "brokerage")
    conn = client.connect(dsn)
    made = []
    try:
        with conn.cursor() as cur:
            cur.execute(f"CALL trade_cleanup({int(info.max_t_id)})")
            while cur.nextset():
                pass
            for s in seeds:
                trades = []
                for call in market_orders(kwargs, s ^ POOL_SEED, per_client, call=True):
                    cur.execute(call)
                    row = cur.fetchone()
                    while cur.nextset():
                        pass
                    if row and int(row[0]):  # trade_id, status, symbol, type, price, qty
                        trades.append((int(row[0]), row[2], row[3], int(row[5])))
                made.append(trades)
    finally:
        conn.close()
    out = []
    for k, s in enumerate(seeds):
        results, feeds = deliver(made[k], kwargs["securities"], s ^ FEED_SEED,
                                 int(1e9 / max(rate, 0.1)))
        out.append(([f"CALL trade_result({t}, {money(p)})" for t, p in results],
                    [f"CALL market_feed('{json.dumps([e[0] for e in f])}', "
                     f"'[{','.join(money(e[1]) for e in f)}]', "
                     f"'{json.dumps([e[2] for e in f])}')" for f in feeds]))
    return out


def user_file(kwargs: dict, seed: int, calls: int, market: tuple[list, list],
              shares: tuple[float, float]) -> tuple[str, int]:
    """``calls`` calls of the terminal of ``seed`` as mariadb-slap statements (each ended by
    '|'), the market's Trade-Results and Market-Feeds placed among them at ``shares`` (of the
    users' calls): the text and its statements."""
    t = _native.BrokerageTerminal(seed, **kwargs)
    lines: list[str] = []
    owed = [0.0, 0.0]
    taken = [0, 0]
    for _ in range(calls):
        t.next_call()
        lines.append(t.mariadb_call() + "|\n")
        t.complete(1)
        for k in (0, 1):
            owed[k] += shares[k]
            while owed[k] >= 1 and taken[k] < len(market[k]):
                lines.append(market[k][taken[k]] + "|\n")
                owed[k] -= 1
                taken[k] += 1
    return "".join(lines), len(lines)


def run_slap(slap: str, dsn: str, a, users: int, env: dict, so_far: dict) -> dict:
    """The pool, then one mariadb-slap process per user: trps and transactions per second
    over the window, the processes' CPU and the calls they ran."""
    counts = so_far["oltplab"][0]["counts"]
    user_calls = sum(counts.get(k, 0) for k in rigor.USER_CALLS)
    shares = (counts.get("trade_result", 0) / user_calls,
              counts.get("market_feed", 0) / user_calls)
    best = max(r["tps"] for runs in so_far.values() for r in runs) / users
    calls = math.ceil(a.pool_margin * best * (a.rampup + a.duration + 10)) + 500  # a user
    rate = max(r["trps"] for runs in so_far.values() for r in runs) / users
    t0 = time.monotonic()
    market = make_pool(dsn, env["kwargs"], env["seeds"][:users],
                       math.ceil(calls * shares[0]) + 20, rate)
    made = time.monotonic() - t0
    commands = []
    for user in range(users):
        text, n = user_file(env["kwargs"], env["seeds"][user], calls, market[user], shares)
        path = env["folder"] / f"slap-{user}.sql"
        path.write_text(text)
        commands.append(slap_command(slap, dsn, path, n))
    purge_caught_up(dsn)
    cpu, problem, txns, marks = slaps_counted(commands, dsn,
                                              lambda t0: window(dsn, a, t0, COMMITS_SQL))
    (ta, ka, xa), (tb, kb, xb) = marks
    return {"trps": (kb - ka) / (tb - ta), "tps": (xb - xa) / (tb - ta), "cpu": cpu,
            "txns": txns, "note": problem or f"{users} process(es); pool of "
            f"{len(market[0][0]):,} Trade-Results a user made in {made:.0f} s; Trade-Result "
            f"{100 * shares[0]:.2f}%, Market-Feed {100 * shares[1]:.2f}% of the users' calls"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    driver_args(p, 41631)
    p.add_argument("--pool-margin", type=float, default=2.0,
                   help="a user's calls in its file over the most a user made a second in a "
                        "run of the user count so far, times the run's seconds [default: 2]")
    p.add_argument("--slap", default=None, help="mariadb-slap binary [default: on PATH]")
    a = p.parse_args()
    slap = slap_binary(a)
    user_counts = [int(u) for u in a.users.split(",")]
    scratch = scratch_datadir(a, "oltplab-bench-brokerage-slap-", "mariadb")
    most = max(user_counts)
    try:
        with database(a, "mariadb", most) as target:
            info = ensure_schema(target.dsn, a, "mariadb")
            env = {"kwargs": inputs.terminal_kwargs(inputs.draw_constants(None, info)),
                   "seeds": client_seeds(a.seed, most), "folder": scratch}
            results = abba(a, target.dsn, user_counts, scratch, "mariadb-slap",
                           lambda users, so_far, dsn: run_slap(slap, dsn, a, users, env,
                                                               so_far),
                           lambda dsn: purge_caught_up(dsn))
    finally:  # the server has stopped: its scratch data directory goes too
        shutil.rmtree(scratch, ignore_errors=True)
    summary(a, results, "mariadb-slap", 0.95, DIFFERENCES, a.setting)


if __name__ == "__main__":
    main()
