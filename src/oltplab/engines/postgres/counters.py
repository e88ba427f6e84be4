"""Server-side counters behind HammerDB's TPM and NOPM on PostgreSQL.

- transactions: ``sum(xact_commit + xact_rollback)`` over ALL ``pg_stat_database`` rows, so
  other databases and monitoring count too (as in HammerDB);
- new orders: ``sum(d_next_o_id)`` over DISTRICT, which only committed New-Orders advance.

Both are read in one statement. The district sum is transactional and exact at that instant.
The transaction counts are not: since PostgreSQL 15 a backend publishes them to shared memory
when a transaction ends at least a second after its previous publication, or after 10 s idle,
and only together with pending table statistics. A plain snapshot would miss up to a second
of every busy backend's transactions, and short windows would be off by several percent.

The driver makes the snapshots exact instead (runner/vuser.py): at ramp_end and at
measure_end each virtual user whose backend may hold unpublished counts runs
``SELECT pg_stat_force_next_flush() FROM warehouse LIMIT 1`` between two transactions, and
the manager snapshots once every user has crossed (at most BOUNDARY_WAIT_S later). Reading a
table matters: without pending table statistics PostgreSQL publishes nothing, not even that
statement's own transaction; with it the flush publishes exactly one transaction of its own,
and the manager subtracts those that fall inside the window. On PostgreSQL 14 and older
(no such function) the snapshots are taken at the boundaries with up to a second of lag.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

SNAPSHOT_SQL = """
SELECT (SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database)::bigint,
       (SELECT sum(d_next_o_id) FROM district)::bigint"""


@dataclass(frozen=True)
class ServerCounters:
    t_ns: int  # time.monotonic_ns() when the answer arrived
    xacts: int
    d_next_o_id: int


async def snapshot(conn, timeout: float | None = 10.0) -> ServerCounters:
    """Both counters in one round trip on an asyncpg connection to the TPC-C database."""
    row = await conn.fetchrow(SNAPSHOT_SQL, timeout=timeout)
    return ServerCounters(t_ns=time.monotonic_ns(), xacts=int(row[0] or 0),
                          d_next_o_id=int(row[1] or 0))


def delta(start: ServerCounters, end: ServerCounters) -> dict:
    """{xacts_delta, d_next_o_id_delta} between two snapshots."""
    return {"xacts_delta": end.xacts - start.xacts,
            "d_next_o_id_delta": end.d_next_o_id - start.d_next_o_id}
