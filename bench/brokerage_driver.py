"""Driver efficiency of the brokerage: trade results per second of `oltplab brokerage run`
against pgbench calling the same functions with the same inputs and the same mix.

One database (1,000 customers x 5 days by default), the runs alternating A B B A (oltplab,
pgbench, pgbench, oltplab) per user count after an oltplab run that is not counted (--warmup:
the first run after the build finds the server's caches cold), a CHECKPOINT before each. Each
run (the warm-ups too) starts from the same data: a fresh copy of the built database (--copy,
on by default: CREATE DATABASE ... TEMPLATE ... STRATEGY FILE_COPY), so that no run finds the
trades, history rows and dead row versions of the runs before it (on one database, each run
and each pgbench pool adds thousands of trades, and runs moved by a fifth from one to the
next). Both
sides count the same thing on the server: the Trade-Results committed in the measured window,
the change of sum(b_num_trades) (each Trade-Result adds one to its broker's) over the
window's seconds; oltplab's from its run record (steps[0].trps), pgbench's from the same query
at the same two instants after its start (ramp-up later, ramp-up + duration later).

pgbench's side. One script per transaction, each the transaction's one call of its function
(workloads/brokerage/frames.py), the ones above READ COMMITTED inside BEGIN ISOLATION LEVEL
... COMMIT sent as one pipeline (one round trip, as oltplab's client sends its
``SET TRANSACTION ...; EXECUTE ...``), prepared (-M prepared), serialization failures and
deadlocks retried up to 100 times as oltplab retries them (--max-tries). Weights: the deck's
cards (x 10) for the eight customer transactions; Trade-Result and Market-Feed at the share
of the users' transactions they had in the first oltplab run of the user count, so that both
sides run the same mix (a short run completes fewer Trade-Results than Trade-Orders: limit
orders wait for their price).

Inputs. pgbench cannot draw the brokerage's inputs, so they are drawn before the runs by the
very C terminals oltplab's users run (``_native.BrokerageTerminal``, seeded with the seeds
oltplab's first step gives its users for --seed: pgbench's client k gets the inputs oltplab's
user k draws, kind by kind in their order) and loaded into one table per transaction
(bench_in_<kind>: a row id and the call's arguments, typed as the function's parameters).
Each script advances a counter of its client (a pgbench variable, kept from one transaction
to the next) and calls the function on the row of that id, in the same statement:
``SELECT f.* FROM bench_in_x i, LATERAL x(i.a, i.b) f WHERE i.id = <client's row>``. So
pgbench's client sends one integer a transaction, the least it can send: its cost per
transaction is the smallest any client of these functions can have; the server does one
primary-key lookup in a table of a few MB more per transaction than for oltplab's calls
(counted against pgbench). Every client has --draws calls' inputs; past them it starts again
(the read-only inputs repeat; nothing depends on an input being new, but Trade-Result's).

Trade-Results. A market emulator cannot be had from pgbench, so each pgbench run gets a pool
of submitted trades made just before it (not timed): Trade-Cleanup (as oltplab's run does
before its first step), then market orders drawn by C terminals, committed by the Trade-Order
function itself, then handed to oltplab's market emulator (``_native.BrokerageMarket``) on a
simulated clock at the rate oltplab's run submitted them; the Trade-Results it delivers
(trade id and price, in its order) and its Market-Feed batches (20 ticker entries) go into
bench_tr and bench_mf, a block per client. The Trade-Result script takes its client's next
trade (never one twice: a retried transaction takes the next one, as its counter moves again).
A client's block holds --pool-margin times the Trade-Results a client made in the best run of
the user count so far; the run fails when a client's block ran out. Data-Maintenance (one
call a minute) is not run by pgbench.

Client CPU per transaction: pgbench's process (user + system) over every transaction it ran;
oltplab's whole process tree (the CLI, its workers, recording) over every transaction its
workers ran (the users' and the market emulator's), and beside it the workers' own CPU while
they drove (run.json steps[0].driver.cpu_us_per_transaction).

It starts its own managed PostgreSQL in a scratch directory (removed afterwards unless
--datadir is given), builds the brokerage there (or reuses one of the same scale) and always
stops it.

    .venv/bin/python bench/brokerage_driver.py                  # 4 and 1 users, ~7 min
    .venv/bin/python bench/brokerage_driver.py --users 4 --rampup 10 --duration 60 --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import io
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import asyncpg
from common import (OLTPLAB, children_cpu, fetchval, load_average, ratio_with_noise,
                    pgbench_args, run_recorded, scratch_datadir, server_args)

from oltplab import _native, engines
from oltplab.config import DbSpec, parse_size
from oltplab.errors import SchemaError, UsageError
from oltplab.loadgen.step import user_plans
from oltplab.workloads import brokerage
from oltplab.workloads.brokerage import frames, inputs, rigor

#: What both sides count on the server: the Trade-Results committed so far.
TRADES_SQL = "SELECT sum(b_num_trades) FROM broker"
XACTS_SQL = ("SELECT xact_commit + xact_rollback FROM pg_stat_database"
             " WHERE datname = current_database()")
MAX_TRIES = 100  # oltplab's retries of a serialization failure or deadlock, per transaction
CARD_WEIGHT = 10  # pgbench's weight of a card of the deck
POOL_SEED = 0xB007  # the pool's terminals draw other orders than the users'
FEED_SEED = 0x5EED_3A4B  # as the workers' emulators are seeded (workloads/brokerage/inputs.py)

#: The copy of the built database each run gets (--copy).
RUN_DATABASE = "brokerage_run"

BEGIN = {frames.SERIALIZABLE: "BEGIN ISOLATION LEVEL SERIALIZABLE;",
         frames.REPEATABLE_READ: "BEGIN ISOLATION LEVEL REPEATABLE READ;"}

DIFFERENCES = """\
pgbench against oltplab (same functions, same inputs, same mix):
  - pgbench's client sends a row id and the server reads the call's arguments from a table of
    inputs oltplab's terminals drew (one primary-key lookup a transaction more on the server);
  - pgbench's Trade-Results complete a pool of market orders made before the run, in the
    order and at the prices oltplab's market emulator gives them; its Market-Feeds are the
    emulator's batches for that pool (no limit order of pgbench's is ever triggered into a
    Trade-Result); a retried Trade-Result takes the next trade of the pool;
  - pgbench picks each transaction at random by weight, oltplab's users deal a shuffled deck;
    the market emulator's share of the mix is the first oltplab run's;
  - no Data-Maintenance (one call a minute in oltplab's run)."""


def copy_text(value: str | None) -> str:
    """A value as a field of COPY's text format (``\\N`` for NULL)."""
    if value is None:
        return "\\N"
    return (value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r"))


def copy_lines(rows) -> bytes:
    """Rows (an id and its text fields) as COPY text."""
    return "".join("\t".join([str(i), *(copy_text(v) for v in fields)]) + "\n"
                   for i, fields in rows).encode()


def weights(counts: dict) -> dict[str, int]:
    """pgbench's weight per transaction: the deck's cards x CARD_WEIGHT for the users' ones,
    and the market emulator's Trade-Results and Market-Feeds at their share of the users'
    transactions in ``counts`` (an oltplab step's counts by transaction)."""
    users = sum(counts.get(k, 0) for k in rigor.USER_CALLS)
    out = {k: cards * CARD_WEIGHT for k, cards in rigor.CARDS.items()}
    for k in ("trade_result", "market_feed"):
        out[k] = round(rigor.DECK * CARD_WEIGHT * counts.get(k, 0) / users) if users else 0
    return out


def script(kind: str, stride: int, wrap: bool) -> str:
    """The pgbench script of ``kind``: its client's next row of bench_in_<kind> (bench_tr for
    Trade-Result), the call on it, in a pipelined BEGIN ... COMMIT above READ COMMITTED."""
    t = frames.TRANSACTIONS[kind]
    table = {"trade_result": "bench_tr", "market_feed": "bench_mf"}.get(kind, f"bench_in_{kind}")
    row = f":n_{kind} % {stride}" if wrap else f":n_{kind} - 1"
    args = ", ".join(f"i.{name}" for name, _ in t.params)
    call = (f"SELECT f.* FROM {table} i, LATERAL {t.function}({args}) f "
            f"WHERE i.id = :client_id * {stride} + {row};")
    lines = [f"-- {kind}: client :client_id's next inputs", f"\\set n_{kind} :n_{kind} + 1"]
    if t.isolation in BEGIN:
        lines += ["\\startpipeline", BEGIN[t.isolation], call, "COMMIT;", "\\endpipeline"]
    else:
        lines.append(call)
    return "\n".join(lines) + "\n"


def table_sql(name: str, kind: str) -> str:
    cols = ", ".join(f"{n} {sql_type}" for n, sql_type in frames.TRANSACTIONS[kind].params)
    return f"DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (id int PRIMARY KEY, {cols})"


async def load_table(dsn: str, name: str, kind: str, rows) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(table_sql(name, kind))
        await conn.copy_to_table(name, source=io.BytesIO(copy_lines(rows)), format="text")
        await conn.execute(f"ANALYZE {name}")
    finally:
        await conn.close()


def client_seeds(seed: int, users: int) -> list[int]:
    """The seeds oltplab's first step gives its users for a run of ``seed`` (loadgen/manager.py:
    the step's seed is the run's generator's first draw; the brokerage draws no constants)."""
    step_seed = random.Random(seed).getrandbits(63)
    return [p.seed for p in user_plans(brokerage.WORKLOAD, step_seed, users, 0, False)]


def draw_inputs(kwargs: dict, seeds: list[int], draws: int) -> dict[str, tuple[int, list]]:
    """Each client's first ``draws`` calls, kind by kind: (rows per client, rows) per kind,
    the rows (id, args) with id = client x rows per client + its index."""
    per_client = []
    for s in seeds:
        t = _native.BrokerageTerminal(s, **kwargs)
        got: dict[str, list] = {k: [] for k in rigor.USER_CALLS}
        for _ in range(draws):
            kind, args = t.next_call()
            t.complete(1)
            got[kind].append(args)
        per_client.append(got)
    out = {}
    for kind in rigor.USER_CALLS:
        stride = min(len(c[kind]) for c in per_client)
        out[kind] = (stride, [(k * stride + j, args)
                              for k, c in enumerate(per_client) for j, args in
                              enumerate(c[kind][:stride])])
    return out


def market_orders(kwargs: dict, seed: int, count: int, call: bool = False) -> list:
    """The next ``count`` market orders (not rolled back) a terminal of ``seed`` draws: their
    arguments, or with ``call`` the CALL MariaDB's loop sends."""
    t = _native.BrokerageTerminal(seed, **kwargs)
    out = []
    while len(out) < count:
        kind, args = t.next_call()
        if kind == "trade_order" and args[7] in ("TMB", "TMS") and args[12] == "false":
            out.append(t.mariadb_call() if call else args)
        t.complete(1)
    return out


async def commit_orders(dsn: str, orders: list[tuple], sessions: int = 2) -> list[tuple]:
    """Each order through trade_order (one transaction per 200), on ``sessions`` sessions:
    (index, trade_id, symbol, type_id, qty) of those committed with a trade id."""
    await load_table(dsn, "bench_pool_in", "trade_order", list(enumerate(orders)))
    args = ", ".join(f"i.{n}" for n, _ in frames.TRADE_ORDER.params)
    sql = (f"SELECT i.id, f.trade_id, f.symbol, f.type_id, f.trade_qty FROM bench_pool_in i, "
           f"LATERAL trade_order({args}) f WHERE i.id >= $1 AND i.id < $2 ORDER BY i.id")
    chunks = [(a, min(a + 200, len(orders))) for a in range(0, len(orders), 200)]
    out: list[tuple] = []

    async def session(part):
        conn = await asyncpg.connect(dsn)
        try:
            for a, b in part:
                out.extend(tuple(r) for r in await conn.fetch(sql, a, b) if r["trade_id"])
        finally:
            await conn.close()
    await asyncio.gather(*(session(chunks[k::sessions]) for k in range(sessions)))
    return sorted(out)


def deliver(trades: list[tuple], securities: int, seed: int, gap_ns: int):
    """oltplab's market emulator on a simulated clock: the trades (trade_id, symbol, type_id,
    qty) submitted ``gap_ns`` apart, each Trade-Result completed when it is due. The
    Trade-Results' (trade_id, price in cents) and the Market-Feeds' 20 (symbol, price in
    cents, qty), in the emulator's order."""
    m = _native.BrokerageMarket(seed, securities, 1024, 1 << 22)
    results, feeds = [], []

    def take(now: int) -> None:
        while (work := m.next_due(now)[0]) is not None:
            if work[0] == "market_feed":
                feeds.append([(m.symbol(s), p, q) for s, p, q, _ in work[1]])
                continue
            results.append((work[1], work[3]))  # trade_id, price
            m.result_done(*work[2:5], now)  # its security, price and qty
    now = 0
    for trade_id, symbol, type_id, qty in trades:
        m.submit(trade_id, m.security(symbol), type_id, qty, 0, now)
        take(now)
        now += gap_ns
    while m.pending()["results"]:
        now += 10_000_000
        take(now)
    return results, feeds


def money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def feed_arrays(entries: list[tuple]) -> tuple[str, str, str]:
    """A Market-Feed's entries as PostgreSQL's array literals: symbols, prices, qtys."""
    return ("{" + ",".join(s for s, _, _ in entries) + "}",
            "{" + ",".join(money(p) for _, p, _ in entries) + "}",
            "{" + ",".join(str(q) for _, _, q in entries) + "}")


def make_pool(dsn: str, kwargs: dict, seeds: list[int], per_client: int, rate: float
              ) -> tuple[int, int]:
    """Trade-Cleanup, then ``per_client`` submitted market orders a client, their
    Trade-Results and Market-Feeds (``rate``: Trade-Results a second a client) into bench_tr
    and bench_mf: (Trade-Results, Market-Feeds) per client."""
    info = engines.get("postgres").schema_info(dsn, "brokerage")
    fetchval(dsn, f"SELECT * FROM trade_cleanup({int(info.max_t_id)})")
    orders = [o for s in seeds for o in market_orders(kwargs, s ^ POOL_SEED, per_client)]
    done = asyncio.run(commit_orders(dsn, orders))
    results, feeds = [], []
    gap = int(1e9 / max(rate, 0.1))
    for k, s in enumerate(seeds):
        mine = [(t, sym, ty, q) for i, t, sym, ty, q in done
                if k * per_client <= i < (k + 1) * per_client]
        r, f = deliver(mine, kwargs["securities"], s ^ FEED_SEED, gap)
        results.append(r)
        feeds.append(f)
    tr, mf = min(map(len, results)), max(1, min(map(len, feeds)))
    asyncio.run(load_table(dsn, "bench_tr", "trade_result",
                           [(k * tr + j, (str(t), money(p))) for k, r in enumerate(results)
                            for j, (t, p) in enumerate(r[:tr])]))
    asyncio.run(load_table(dsn, "bench_mf", "market_feed",
                           [(k * mf + j, feed_arrays(v)) for k, f in enumerate(feeds)
                            for j, v in enumerate(f[:mf])]))
    return tr, mf


def pool_left(dsn: str, users: int, tr: int) -> int:
    """The fewest trades any client's block of bench_tr still has after its highest completed
    one (0: a client ran out)."""
    sql = (f"SELECT min({tr} - 1 - coalesce(hi, -1)) FROM generate_series(0, {users - 1}) c "
           f"LEFT JOIN (SELECT b.id / {tr} AS c, max(b.id % {tr}) AS hi FROM bench_tr b "
           f"JOIN trade t ON t.t_id = b.trade_id WHERE t.t_st_id = 'CMPT' GROUP BY 1) d "
           f"USING (c)")
    return int(fetchval(dsn, sql))


def window(dsn: str, a, t0: float, xacts_sql: str = XACTS_SQL
           ) -> tuple[threading.Thread, list]:
    """A thread that reads the Trade-Results and the transactions committed (``xacts_sql``)
    at the measured window's two ends after ``t0``, into the list returned with it."""
    marks: list[tuple[float, int, int]] = []

    def snapshots() -> None:
        for at in (t0 + a.rampup, t0 + a.rampup + a.duration):
            time.sleep(max(0.0, at - time.monotonic()))
            marks.append((time.monotonic(), int(fetchval(dsn, TRADES_SQL)),
                          int(fetchval(dsn, xacts_sql))))

    th = threading.Thread(target=snapshots)
    th.start()
    return th, marks


def run_oltplab(dsn: str, a, users: int, results: Path) -> dict:
    """One `oltplab brokerage run` step: trps and the transactions per second from its record,
    the CPU of the CLI's process tree and of its workers, the step's counts by transaction."""
    out = results / f"run-{time.monotonic_ns()}"
    cmd = [str(OLTPLAB), "brokerage", "run", "--dsn", dsn, "--users", str(users),
           "--rampup", f"{a.rampup:g}s", "--duration", f"{a.duration:g}s",
           "--seed", str(a.seed), "--results-dir", str(out), "--name", "bench-brokerage-driver",
           "--power", "none", "--io-latency", "off", "--sample-interval", "0"]
    step, cpu = run_recorded(cmd, a, out)
    driver = step["driver"]
    counts = {k: v["count"] for k, v in step["transactions"].items()}
    return {"trps": step["trps"], "tps": step["workload_tpm"] / 60, "cpu": cpu,
            "txns": driver["cpu_s"] * 1e6 / driver["cpu_us_per_transaction"],
            "driver_us": driver["cpu_us_per_transaction"], "workers": driver["workers"],
            "counts": counts, "retries": step["retries"], "warnings": step["warnings"]}


def pgbench_counts(out: str) -> tuple[int, int, int]:
    """(transactions processed, failed, retried) from pgbench's report."""
    got = {}
    for line in out.splitlines():
        for key in ("number of transactions actually processed", "number of failed transactions",
                    "total number of retries"):
            if line.startswith(key + ":"):
                got[key] = int(line.split(":")[1].split("/")[0].split("(")[0])
    return (got.get("number of transactions actually processed", 0),
            got.get("number of failed transactions", 0), got.get("total number of retries", 0))


def script_counts(out: str) -> dict[str, int]:
    """{kind: transactions} of each script in pgbench's report (its per-script lines)."""
    got, kind = {}, None
    for line in out.splitlines():
        if line.startswith("SQL script "):
            kind = Path(line.split(":", 1)[1].strip()).stem
        elif kind and line.strip().startswith("- ") and " transactions (" in line:
            got[kind] = int(line.strip()[2:].split()[0])
            kind = None
    return got


def run_pgbench(dsn: str, a, users: int, env: dict, so_far: dict) -> dict:
    """The pool, then pgbench with a script per transaction at the first oltplab run's mix:
    trps and transactions per second over the same window, its process's CPU."""
    w = weights(so_far["oltplab"][0]["counts"])
    # Trade-Results a second a client: the most any run of this user count reached so far
    rate = max(r["trps"] for runs in so_far.values() for r in runs) / users
    per_client = math.ceil(a.pool_margin * rate * (a.rampup + a.duration + 2)) + 100
    t0 = time.monotonic()
    tr, mf = make_pool(dsn, env["kwargs"], env["seeds"][:users], per_client, rate)
    made = time.monotonic() - t0
    strides = {**env["strides"], "trade_result": tr, "market_feed": mf}
    cmd = [str(env["pgbench"]), "-n", "-M", "prepared", "-c", str(users), "-j",
           str(a.pgbench_jobs), "-T", str(int(a.rampup + a.duration + 2)),
           f"--max-tries={MAX_TRIES}"]
    for kind, weight in w.items():
        path = env["folder"] / f"{kind}.sql"
        path.write_text(script(kind, strides[kind], kind != "trade_result"))
        cmd += ["-D", f"n_{kind}=0"] + (["-f", f"{path}@{weight}"] if weight else [])
    cmd.append(dsn)
    fetchval(dsn, "CHECKPOINT")  # after the pool was made, as before each oltplab run
    trades0, xacts0 = int(fetchval(dsn, TRADES_SQL)), int(fetchval(dsn, XACTS_SQL))
    cpu0 = children_cpu()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    th, marks = window(dsn, a, t0)
    out, err = proc.communicate()
    elapsed = time.monotonic() - t0
    th.join()
    cpu = children_cpu() - cpu0
    if proc.returncode != 0:
        sys.exit(f"pgbench failed ({proc.returncode}): {err.strip()[-2000:]}")
    n, failed, retries = pgbench_counts(out)
    by_script = script_counts(out)
    # the whole run on the server (pgbench's sessions have ended: their counts are flushed)
    trades = int(fetchval(dsn, TRADES_SQL)) - trades0
    # less the benchmark's own 6 reads since xacts0 (itself, the window's 4, trades)
    xacts = int(fetchval(dsn, XACTS_SQL)) - xacts0 - 6
    left = pool_left(dsn, users, tr)
    if left == 0:
        sys.exit(f"a pgbench client ran out of its {tr:,} trades: raise --pool-margin")
    (ta, ka, _), (tb, kb, _) = marks
    # Transactions a second over pgbench's whole run (it has no ramp-up), not the window's:
    # its sessions report their counts to pg_stat_database at most once a second, which made
    # the window's count some 6% short of what its scripts ran (oltplab flushes its sessions'
    # counts at the window's ends: its own figure is the window's)
    return {"trps": (kb - ka) / (tb - ta), "tps": xacts / elapsed, "cpu": cpu, "txns": n,
            "retries": retries, "failed": failed,
            "whole_run": {"trade_results": trades, "transactions": xacts,
                          "pgbench": by_script},
            "note": f"whole run: {trades:,} Trade-Results on the server, "
                    f"{by_script.get('trade_result', 0):,} by pgbench's count; {xacts:,} "
                    f"transactions on the server, pgbench's {n:,} + {retries:,} retried + "
                    f"{failed} failed, so {xacts / max(trades, 1):.2f} a Trade-Result; "
                    f"{a.pgbench_jobs} thread(s), {retries:,} retries, {failed} failed; pool "
                    f"{tr:,} trades a client made in {made:.0f} s, {left:,} left; TR weight "
                    f"{w['trade_result']}, MF {w['market_feed']} of {sum(w.values()):,}"}


def abba(a, dsn: str, user_counts: list[int], folder: Path, reference: str,
         run_reference, before_run, fresh=None) -> dict[int, dict[str, list]]:
    """A B B A (oltplab, the reference, the reference, oltplab) ``a.rounds`` times per user
    count; ``before_run(dsn)`` before each oltplab run (the reference's own run calls it once
    its pool is made); ``run_reference(users, so_far, dsn)`` returns trps, tps, cpu, txns,
    note. With ``fresh``, each run (the warm-ups too) gets the database ``fresh()`` answers
    (a copy of the built one), otherwise all of them run on ``dsn``."""
    results: dict[int, dict[str, list]] = {}
    print(f"load average at the start: {load_average()}", flush=True)
    for users in user_counts:
        res = results.setdefault(users, {"oltplab": [], reference: []})
        next_dsn = fresh or (lambda: dsn)
        for _ in range(a.warmup):  # the server's caches warm up: otherwise the first A pays
            run_dsn = next_dsn()
            before_run(run_dsn)
            r = run_oltplab(run_dsn, a, users, folder)
            print(f"users {users}  warm-up (not counted): trps {r['trps']:8.2f}  load "
                  f"{load_average()}", flush=True)
        for who in ["oltplab", reference, reference, "oltplab"] * a.rounds:
            run_dsn = next_dsn()
            if who == "oltplab":
                before_run(run_dsn)
                r = run_oltplab(run_dsn, a, users, folder)
                extra = (f"{r['workers']} worker(s) {r['driver_us']:.0f} us, "
                         f"{r['retries']:,} retries; {'; '.join(r['warnings']) or 'no warning'}")
            else:
                r = run_reference(users, res, run_dsn)
                extra = r["note"]
            res[who].append(r)
            print(f"users {users}  {who:>12}: trps {r['trps']:8.2f}  tps {r['tps']:7.0f}  client "
                  f"CPU {r['cpu']:5.1f} s = {1e6 * r['cpu'] / r['txns']:4.0f} us/transaction "
                  f"({r['txns']:,.0f})  load {load_average()}\n    ({extra})", flush=True)
    return results


def summary(a, results: dict[int, dict[str, list]], reference: str, target: float,
            differences: str, settings: list[str]) -> None:
    print(f"\n{a.customers:,} customers x {a.days} days, rampup {a.rampup:g} s, duration "
          f"{a.duration:g} s, {a.rounds} round(s) of A B B A per user count after "
          f"{a.warmup} warm-up run(s)"
          + "".join(f", -c {kv}" for kv in settings)
          + f"; load average at the end: {load_average()}")
    for users, res in results.items():
        trps = {k: [r["trps"] for r in v] for k, v in res.items()}
        ratio, noise = ratio_with_noise(trps["oltplab"], trps[reference])
        tps, _ = ratio_with_noise([r["tps"] for r in res["oltplab"]],
                                  [r["tps"] for r in res[reference]])
        per = {k: statistics.fmean(1e6 * r["cpu"] / r["txns"] for r in v) for k, v in res.items()}
        workers = statistics.fmean(r["driver_us"] for r in res["oltplab"])
        pairs = [f"{x / y:.3f}" for x, y in zip(trps["oltplab"], trps[reference])]
        print(f"users {users}: trps oltplab {statistics.fmean(trps['oltplab']):.2f}  "
              f"{reference} {statistics.fmean(trps[reference]):.2f}  ratio {ratio:.3f}{noise}  "
              f"(target >= {target:g}; run by run {', '.join(pairs)}); transactions a second "
              f"{tps:.3f}")
        print(f"         client CPU per transaction: oltplab {per['oltplab']:.0f} us (its "
              f"workers {workers:.0f} us), {reference} {per[reference]:.0f} us")
    print()
    print(differences)


def ensure_schema(dsn: str, a, engine: str = "postgres") -> object:
    """Reuse a brokerage of the scale asked for, otherwise build one with the CLI."""
    eng = engines.get(engine)
    try:
        info = eng.schema_info(dsn, "brokerage")
        if (info.customers, info.days) == (a.customers, a.days):
            return info
    except (SchemaError, UsageError):
        pass
    print(f"building {a.customers:,} customers x {a.days} days ...", file=sys.stderr, flush=True)
    proc = subprocess.run([str(OLTPLAB), "brokerage", "build", "--dsn", dsn, "--customers",
                           str(a.customers), "--days", str(a.days), "--build-users",
                           str(a.build_users), "--force"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"oltplab brokerage build failed: {(proc.stderr or proc.stdout)[-2000:]}")
    return eng.schema_info(dsn, "brokerage")


def prepare(dsn: str, a, users: int, folder: Path, pgbench: str) -> dict:
    """The inputs every pgbench run shares: each client's calls in bench_in_<kind>."""
    info = ensure_schema(dsn, a)
    kwargs = inputs.terminal_kwargs(inputs.draw_constants(None, info))
    seeds = client_seeds(a.seed, users)
    drawn = draw_inputs(kwargs, seeds, a.draws)
    for kind, (_, rows) in drawn.items():
        asyncio.run(load_table(dsn, f"bench_in_{kind}", kind, rows))
    return {"kwargs": kwargs, "seeds": seeds, "folder": folder, "pgbench": pgbench,
            "strides": {k: stride for k, (stride, _) in drawn.items()}}


def with_dbname(dsn: str, name: str) -> str:
    """``dsn`` (a postgresql:// URL) naming the database ``name`` instead."""
    parts = urllib.parse.urlsplit(dsn)
    if parts.scheme not in ("postgresql", "postgres"):
        sys.exit("--copy needs a postgresql:// DSN (or --no-copy)")
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def drop_copy(dsn: str, name: str) -> None:
    """Drop the database ``name`` of ``dsn``'s server, if there is one."""
    fetchval(with_dbname(dsn, "postgres"), f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def fresh_copy(dsn: str, name: str) -> str:
    """A new copy of ``dsn``'s database (its build and the inputs' tables) named ``name``
    (any earlier one dropped), made by copying its files, and a DSN of it."""
    template = urllib.parse.urlsplit(dsn).path.lstrip("/")
    drop_copy(dsn, name)
    fetchval(with_dbname(dsn, "postgres"),
             f"CREATE DATABASE {name} TEMPLATE {template} STRATEGY FILE_COPY")
    return with_dbname(dsn, name)


def drop_tables(dsn: str) -> None:
    names = ["bench_tr", "bench_mf", "bench_pool_in", *(f"bench_in_{k}" for k in rigor.USER_CALLS)]
    fetchval(dsn, f"DROP TABLE IF EXISTS {', '.join(names)}")


def driver_args(p: argparse.ArgumentParser, port: int) -> None:
    """The options both engines' brokerage driver benchmarks take."""
    server_args(p, port, "2GiB")
    p.add_argument("--customers", type=int, default=1000)
    p.add_argument("--days", type=int, default=5)
    p.add_argument("--build-users", type=int, default=os.cpu_count() or 1)
    p.add_argument("--users", default="4,1", help="user counts, each measured A B B A")
    p.add_argument("--rampup", type=float, default=5)
    p.add_argument("--duration", type=float, default=30)
    p.add_argument("--rounds", type=int, default=1, help="A B B A per round")
    p.add_argument("--warmup", type=int, default=1,
                   help="oltplab runs before each user count's A B B A, not counted (the "
                        "first run after a build finds the server's caches cold) [default: 1]")
    p.add_argument("--seed", type=int, default=20261129, help="oltplab's runs' seed")
    p.add_argument("--workers", type=int, default=None,
                   help="oltplab driver processes [default: oltplab's own choice]")


def database(a: argparse.Namespace, engine: str, users: int):
    """The managed server of ``engine`` (or --dsn), its settings given by -c, with room for
    oltplab's users and its market emulator's actors."""
    settings = tuple(tuple(kv.split("=", 1)) for kv in a.setting)
    spec = DbSpec(datadir=a.datadir, port=a.port, db_memory=parse_size(a.db_memory),
                  settings=settings, dsn=a.dsn, dbname="brokerage", engine=engine)
    return engines.get(engine).database(spec,
                                        need_connections=users + inputs.actors_for(users) + 21)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    driver_args(p, 41530)
    p.add_argument("--draws", type=int, default=40_000,
                   help="pgbench's inputs: calls drawn per client [default: 40,000]")
    p.add_argument("--pool-margin", type=float, default=2.0,
                   help="trades in a client's pool over the most Trade-Results a client that a "
                        "run of the user count made so far [default: 2]")
    p.add_argument("--copy", action=argparse.BooleanOptionalAction, default=True,
                   help="each run on a fresh copy of the built database (CREATE DATABASE ... "
                        "TEMPLATE): no run finds the trades of the runs before it [default: "
                        "on]")
    pgbench_args(p)
    a = p.parse_args()
    user_counts = [int(u) for u in a.users.split(",")]
    scratch = scratch_datadir(a, "oltplab-bench-brokerage-driver-", "pg")
    most = max(user_counts)
    try:
        with database(a, "postgres", most) as target:
            if a.pgbench is None:
                bin_dir = target.instance.bin_dir if target.instance else None
                a.pgbench = str(bin_dir / "pgbench") if bin_dir else shutil.which("pgbench")
            try:
                env = prepare(target.dsn, a, most, scratch, a.pgbench)
                fresh = (lambda: fresh_copy(target.dsn, RUN_DATABASE)) if a.copy else None
                results = abba(a, target.dsn, user_counts, scratch, "pgbench",
                               lambda users, so_far, dsn: run_pgbench(dsn, a, users, env,
                                                                      so_far),
                               lambda dsn: fetchval(dsn, "CHECKPOINT"), fresh)
            finally:
                if a.copy:
                    drop_copy(target.dsn, RUN_DATABASE)
                drop_tables(target.dsn)
    finally:  # the server has stopped: its scratch data directory goes too
        shutil.rmtree(scratch, ignore_errors=True)
    summary(a, results, "pgbench", 0.97, DIFFERENCES, a.setting)


if __name__ == "__main__":
    main()
