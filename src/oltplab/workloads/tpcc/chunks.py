"""The rows of a build as a sequence of chunks, the same for every engine [TPC-C 4.3].

A build splits the warehouses into contiguous ranges, one per loading process (``chunk_bounds``);
each process loads the chunks of its range (``chunks``: COPY text of population.py, which is
also MariaDB's LOAD DATA format), produced by a thread ahead of the loader (``produce``), so
that generator and server work at the same time. A seeded build yields the same rows on any
engine.
"""

from __future__ import annotations

import os
import queue
import ssl
import threading
from dataclasses import dataclass

from .. import chunks as shared
from . import population as pop
from .random import Strings

#: Chunks made ahead of the one being sent (workloads/chunks.py), as the loaders import it.
READ_AHEAD = shared.READ_AHEAD

ROWS_PER_WAREHOUSE = 1 + 10 + pop.ITEMS + 10 * (3 * pop.CUSTOMERS + 900 + 10 * pop.ORDERS)


@dataclass(frozen=True)
class LoadJob:
    """What one worker process loads."""

    dsn: str
    worker: int
    first_w: int
    last_w: int
    load_item: bool
    seed: int
    reproducible: bool  # False: random characters from ssl.RAND_bytes (much faster)
    c_last_load: int
    now: str  # load time, as COPY text of a timestamp
    parent_pid: int


def load_jobs(dsn: str, warehouses: int, build_users: int, seed: int, reproducible: bool,
              c_last_load: int, now: str) -> list[LoadJob]:
    """One job per loading process: contiguous warehouse ranges (``chunk_bounds``), ITEM to the
    last one (the one with the fewest warehouses when they do not divide), or to a spare
    process of its own when there are more build users than warehouses."""
    bounds = chunk_bounds(warehouses, build_users)
    if build_users > len(bounds):
        bounds.append((1, 0))
    return [LoadJob(dsn=dsn, worker=k, first_w=a, last_w=b, load_item=(k == len(bounds) - 1),
                    seed=seed, reproducible=reproducible, c_last_load=c_last_load, now=now,
                    parent_pid=os.getpid())
            for k, (a, b) in enumerate(bounds)]


def chunks(job: LoadJob):
    """(table, COPY text as str or UTF-8 bytes, rows) in load order; ("", "", w_id) marks a
    finished warehouse."""
    randbytes = None if job.reproducible else ssl.RAND_bytes
    if job.load_item:
        yield "item", pop.item_rows(pop.warehouse_rng(job.seed, 0), randbytes), pop.ITEMS
    for w in range(job.first_w, job.last_w + 1):
        rng = pop.warehouse_rng(job.seed, w)
        s = Strings(rng, randbytes)
        yield "warehouse", pop.warehouse_row(w, rng, s), 1
        yield "district", pop.district_rows(w, rng, s), pop.DISTRICTS
        originals = pop.originals(rng, pop.ITEMS)
        for first in range(1, pop.ITEMS + 1, pop.STOCK_BATCH):
            yield "stock", pop.stock_rows(w, rng, s, first, pop.STOCK_BATCH, originals), \
                pop.STOCK_BATCH
        history = []
        for d in range(1, pop.DISTRICTS + 1):
            cust, hist = pop.customer_rows(w, d, rng, s, job.c_last_load, job.now)
            history.append(hist)
            yield "customer", cust, pop.CUSTOMERS
        yield "history", "".join(history), pop.DISTRICTS * pop.CUSTOMERS
        orders, new_orders = [], []
        for d in range(1, pop.DISTRICTS + 1):
            o, no, lines, n_lines = pop.order_rows(w, d, rng, s, job.now)
            orders.append(o)
            new_orders.append(no)
            yield "order_line", lines, n_lines
        yield "orders", "".join(orders), pop.DISTRICTS * pop.ORDERS
        yield "new_order", "".join(new_orders), \
            pop.DISTRICTS * (pop.ORDERS - pop.FIRST_NEW_ORDER + 1)
        yield "", "", w


def produce(job: LoadJob, out: queue.Queue, stop: threading.Event) -> None:
    """Generator thread: encoded chunks into ``out``, then None (or the exception raised)."""
    shared.feed(((table, text.encode("utf-8") if isinstance(text, str) else text, rows)
          for table, text, rows in chunks(job)), out, stop)


def chunk_bounds(warehouses: int, users: int) -> list[tuple[int, int]]:
    """Contiguous warehouse ranges, as even as possible: 10 over 3 -> (1,4) (5,7) (8,10)."""
    users = min(users, warehouses)
    base, extra = divmod(warehouses, users)
    bounds, first = [], 1
    for k in range(users):
        n = base + (1 if k < extra else 0)
        bounds.append((first, first + n - 1))
        first += n
    return bounds
