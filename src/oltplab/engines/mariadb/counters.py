"""Server-side counters behind HammerDB's TPM and NOPM on MariaDB.

- transactions: ``Com_commit + Com_rollback`` of ``SHOW GLOBAL STATUS``: COMMIT and ROLLBACK
  statements of every session, those inside stored procedures included (the TPC-C procedures
  end each transaction with one). Autocommitted statements do not count, so TPM depends on
  where an implementation places its commits; HammerDB's maintainers compare NOPM only.
- new orders: ``sum(d_next_o_id)`` over DISTRICT, which only committed New-Orders advance.

Both are read in one round trip. Unlike PostgreSQL's statistics, the status counters are
exact at the moment they are read.
"""

from __future__ import annotations

import time

from ..base import ServerCounters

SNAPSHOT_SQL = """
SELECT (SELECT SUM(variable_value) FROM information_schema.global_status
         WHERE variable_name IN ('COM_COMMIT', 'COM_ROLLBACK')),
       (SELECT SUM(d_next_o_id) FROM district)"""


def snapshot(conn) -> ServerCounters:
    """The counters on an open PyMySQL connection to the TPC-C database."""
    with conn.cursor() as cur:
        cur.execute(SNAPSHOT_SQL)
        xacts, new_orders = cur.fetchone()
    return ServerCounters(t_ns=time.monotonic_ns(), xacts=int(xacts or 0),
                          new_orders=int(new_orders or 0))


def delta(start: ServerCounters, end: ServerCounters) -> dict:
    """The counters' changes between two snapshots."""
    return {"xacts_delta": end.xacts - start.xacts,
            "d_next_o_id_delta": end.new_orders - start.new_orders}
