"""Server-side counters behind HammerDB's TPM and NOPM on MariaDB, and the workload's own.

- transactions: ``Com_commit + Com_rollback`` of ``SHOW GLOBAL STATUS``: COMMIT and ROLLBACK
  statements of every session, those inside stored procedures included (the TPC-C and the
  shop's procedures end each transaction with one). Autocommitted statements do not count, so
  TPM depends on where an implementation places its commits; HammerDB's maintainers compare
  NOPM only.
- the headline's units: the workload dialect's ``unit_sql`` (TPC-C: ``sum(d_next_o_id)`` over
  DISTRICT, which only committed New-Orders advance; the shop: the orders added since the run
  began), in ``ServerCounters.new_orders``.

Both are read in one round trip. Unlike PostgreSQL's statistics, the status counters are
exact at the moment they are read.

Between a build and a run, or between runs, ``wait_for_purge`` waits until InnoDB's purge has
caught up (the history list length stops falling or falls below a bound), so that runs start
from the same state, as HammerDB's CI does.
"""

from __future__ import annotations

import time

from ..base import ServerCounters

_SNAPSHOT = """
SELECT (SELECT SUM(variable_value) FROM information_schema.global_status
         WHERE variable_name IN ('COM_COMMIT', 'COM_ROLLBACK')),
       {unit}"""


def snapshot_sql(unit_sql: str) -> str:
    """The snapshot's statement with the workload's count of its unit."""
    return _SNAPSHOT.format(unit=unit_sql)


#: TPC-C's unit, committed New-Orders, and its snapshot.
DISTRICT_SUM = "(SELECT SUM(d_next_o_id) FROM district)"
SNAPSHOT_SQL = snapshot_sql(DISTRICT_SUM)


def snapshot(conn, sql: str = SNAPSHOT_SQL) -> ServerCounters:
    """The counters on an open PyMySQL connection to the workload's database (``sql``:
    ``snapshot_sql`` of its unit; TPC-C's by default)."""
    with conn.cursor() as cur:
        cur.execute(sql)
        xacts, new_orders = cur.fetchone()
    return ServerCounters(t_ns=time.monotonic_ns(), xacts=int(xacts or 0),
                          new_orders=int(new_orders or 0))


HISTORY_SQL = ("SELECT count FROM information_schema.innodb_metrics"
               " WHERE name = 'trx_rseg_history_len'")


def history_length(conn) -> int:
    """InnoDB's history list length: undo records that purge has yet to remove."""
    with conn.cursor() as cur:
        cur.execute(HISTORY_SQL)
        row = cur.fetchone()
    return int(row[0]) if row else 0


def wait_for_purge(conn, below: int = 1000, timeout_s: float = 300.0,
                   poll_s: float = 0.5) -> int:
    """Wait until the history list length is below ``below``, or stops falling for 10 polls,
    or ``timeout_s`` passes; returns the last length read."""
    deadline = time.monotonic() + timeout_s
    length = history_length(conn)
    best, stalled = length, 0
    while length >= below and stalled < 10 and time.monotonic() < deadline:
        time.sleep(poll_s)
        length = history_length(conn)
        stalled = stalled + 1 if length >= best else 0
        best = min(best, length)
    return length


def delta(start: ServerCounters, end: ServerCounters) -> dict:
    """The counters' changes between two snapshots."""
    return {"xacts_delta": end.xacts - start.xacts,
            "d_next_o_id_delta": end.new_orders - start.new_orders}


def snapshot_of(dsn: str) -> ServerCounters:
    """``snapshot`` on a session of its own, closed after."""
    from . import client

    conn = client.connect(dsn)
    try:
        return snapshot(conn)
    finally:
        conn.close()
