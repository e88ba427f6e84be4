"""Server-side counters behind HammerDB's TPM and NOPM on PostgreSQL, and the workload's own.

- transactions: ``sum(xact_commit + xact_rollback)`` over ALL ``pg_stat_database`` rows, so
  other databases and monitoring count too (HammerDB's TPM);
- workload transactions: ``xact_commit + xact_rollback`` of the workload's database row alone
  (``current_database()`` of the snapshot's connection);
- the headline's units: the workload dialect's ``unit_sql`` (TPC-C: ``sum(d_next_o_id)`` over
  DISTRICT, which only committed New-Orders advance; the shop: the orders added since the
  run began);
- autovacuum runs: ``sum(autovacuum_count + autoanalyze_count)`` over the workload's tables,
  whose transactions count in both transaction figures (a few per table and run).

All four are read in one statement. The district sum is transactional and exact at that
instant. The transaction counts are not: since PostgreSQL 15 a backend publishes them to
shared memory when a transaction ends at least a second after its previous publication, or
after 10 s idle, and only together with pending table statistics. A plain snapshot would miss
up to a second of every busy backend's transactions.

So at ramp_end and at measure_end each virtual user whose backend may hold unpublished counts
runs ``SELECT pg_stat_force_next_flush() FROM warehouse LIMIT 1`` between two transactions,
and the manager snapshots once every user has crossed (at most BOUNDARY_WAIT_S later), after
the same flush on its own connection (monitor.py). The unit's count is exact at that instant,
so the first transactions of the users who crossed early would fall before it: the users
wait at ramp_end until the snapshot is taken (loadgen/step.py). Reading a table matters:
without pending table statistics PostgreSQL publishes nothing, not even that statement's own
transaction; with it the flush publishes exactly one transaction of its own. The manager
subtracts its own and the users' flushes that fall inside the window from both counts.

What still counts: in the instance-wide figure, every other session of the server (the
telemetry sampler among them, one transaction per sample); in the workload's, other sessions
on the same database (autovacuum, a user's psql). The sampler connects to the maintenance
database when it can, so that it does not count in the workload's row. On PostgreSQL 14 and
older (no flush function) the snapshots are taken at the boundaries with up to a second of lag.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

SNAPSHOT_SQL = """
SELECT (SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database)::bigint,
       {unit}::bigint,
       (SELECT xact_commit + xact_rollback FROM pg_stat_database
         WHERE datname = current_database())::bigint,
       (SELECT sum(autovacuum_count + autoanalyze_count) FROM pg_stat_user_tables)::bigint"""


@dataclass(frozen=True)
class ServerCounters:
    t_ns: int  # time.monotonic_ns() when the answer arrived
    xacts: int
    d_next_o_id: int
    workload_xacts: int = 0  # the workload database's row alone
    autovacuum_runs: int = 0


def snapshot_sql(unit_sql: str) -> str:
    """The snapshot's statement with the workload's count of its unit."""
    return SNAPSHOT_SQL.format(unit=unit_sql)


async def snapshot(conn, sql: str, timeout: float | None = 10.0) -> ServerCounters:
    """The counters in one round trip on an asyncpg connection to the workload's database
    (``sql``: ``snapshot_sql`` of its unit)."""
    row = await conn.fetchrow(sql, timeout=timeout)
    return ServerCounters(t_ns=time.monotonic_ns(), xacts=int(row[0] or 0),
                          d_next_o_id=int(row[1] or 0), workload_xacts=int(row[2] or 0),
                          autovacuum_runs=int(row[3] or 0))


def delta(start: ServerCounters, end: ServerCounters) -> dict:
    """The counters' changes between two snapshots."""
    return {"xacts_delta": end.xacts - start.xacts,
            "workload_xacts_delta": end.workload_xacts - start.workload_xacts,
            "d_next_o_id_delta": end.d_next_o_id - start.d_next_o_id,
            "autovacuum_runs_delta": end.autovacuum_runs - start.autovacuum_runs}
