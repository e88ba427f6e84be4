"""The brokerage's market emulator alone, on one core: submissions and due events a second.

Drives ``_native.BrokerageMarket`` with a fake clock, as a worker's loop would: Trade-Orders
arrive at ``--rate`` a simulated second (60% market, 40% limit orders at U($20, $30), as the
customer users draw them: buys and sells half each, half the limit sells stop-losses); every
10 ms of the clock the due work is taken (``next_due`` until none), each Trade-Result is
completed at once (``result_done``), and each Market-Feed's triggered entries come back as
market orders (``submit``), as Market-Feed's triggered trades do. The figure is every call's
work (submissions, Trade-Results and Market-Feeds handed out, results completed) per CPU
second of this process, pinned to one core; it goes through Python's calls, so the C core
alone does more. The ratio compares the Trade-Results it delivers a CPU second with 500 a
second, the most the server is expected to complete on this machine (a few hundred).

    .venv/bin/python bench/brokerage_market.py --orders 2000000 --rate 2000
"""

from __future__ import annotations

import argparse
import os
import random
import time

from oltplab import _native
from oltplab.workloads.brokerage import market_emulator as me

SERVER_TRPS = 500  # Trade-Results a second: above what the server is expected to complete


def order(rng: random.Random) -> tuple[str, int]:
    """A trade type and a limit price in cents, as Trade-Order draws them."""
    buy = rng.random() < 0.5
    if rng.random() < 0.6:
        return ("TMB" if buy else "TMS"), 0
    price = rng.randint(me.LOW_CENTS, me.HIGH_CENTS)
    if buy:
        return "TLB", price
    return ("TSL" if rng.random() < 0.5 else "TLS"), price


def run(orders: int, rate: int, securities: int, seed: int) -> dict:
    rng = random.Random(seed)
    drawn = [(rng.randrange(securities), *order(rng), 100 << rng.randrange(4))
             for _ in range(min(orders, 100_000))]  # drawn before the clock starts
    m = _native.BrokerageMarket(seed, securities, max_entries=1 << 24)
    step = 10_000_000  # ns of the fake clock between takes of the due work
    per_step = rate * step / 1e9
    now, submitted, owed, results, feeds, fired, next_id = 0, 0, 0.0, 0, 0, 0, 1
    t0 = time.process_time()
    while submitted < orders:
        owed += per_step
        while owed >= 1 and submitted < orders:
            s, type_id, price, qty = drawn[submitted % len(drawn)]
            m.submit(next_id, s, type_id, qty, price, now)
            next_id, submitted, owed = next_id + 1, submitted + 1, owed - 1
        while True:
            work, _ = m.next_due(now)
            if work is None:
                break
            if work[0] == "trade_result":
                _, _, s, price, qty, _ = work
                m.result_done(s, price, qty, now)
                results += 1
                continue
            feeds += 1
            for s, _, qty, trigger in work[1]:
                if trigger:  # the feed triggered a limit order: back as a market order
                    m.submit(next_id, s, "TMB", qty, 0, now)
                    next_id, fired = next_id + 1, fired + 1
        now += step
    cpu = time.process_time() - t0
    calls = submitted + fired + 2 * results + feeds
    return dict(cpu_s=cpu, simulated_s=now / 1e9, submitted=submitted, fired=fired,
                results=results, feeds=feeds, calls=calls, pending=m.pending())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--orders", type=int, default=2_000_000)
    p.add_argument("--rate", type=int, default=2_000, help="Trade-Orders a simulated second")
    p.add_argument("--securities", type=int, default=685 * 5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cpu", type=int, default=0, help="the core to pin to")
    a = p.parse_args()
    os.sched_setaffinity(0, {a.cpu})
    r = run(a.orders, a.rate, a.securities, a.seed)
    cpu = r["cpu_s"]
    print(f"{r['submitted']:,} orders at {a.rate:,}/s over {r['simulated_s']:,.0f} simulated s, "
          f"{a.securities:,} securities, one core: {cpu:.2f} CPU s")
    print(f"  Trade-Results {r['results']:,}, Market-Feeds {r['feeds']:,}, triggered orders "
          f"fired back {r['fired']:,}; pending at the end {r['pending']}")
    print(f"  {r['calls'] / cpu:,.0f} submissions and due events a CPU second "
          f"({r['calls']:,} calls)")
    trps = r["results"] / cpu
    print(f"  {trps:,.0f} Trade-Results a CPU second: {trps / SERVER_TRPS:,.0f}x "
          f"{SERVER_TRPS}/s (the target is >= 20x)")


if __name__ == "__main__":
    main()
