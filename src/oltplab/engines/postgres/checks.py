"""Any workload's consistency conditions (workloads/<name>/checks.py) on PostgreSQL: all of
them in one REPEATABLE READ READ ONLY transaction, so a live system gives no false failures
from snapshot skew. Each dialect's checks.py says which conditions and how to tell that its
schema is built."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

import asyncpg

from ...errors import SchemaError
from ...workloads.checks import SAMPLE_ROWS, CheckResult, Condition
from .catalog import connection, failing


def _row_text(row: asyncpg.Record) -> str:
    return " ".join(f"{k}={v}" for k, v in row.items() if k != "_violations")


async def run_conditions(dsn: str, conditions: Iterable[Condition],
                         built: Callable[[asyncpg.Connection], Awaitable[bool]],
                         no_schema: Callable[[str], SchemaError]) -> list[CheckResult]:
    """The conditions in one snapshot, on a database where ``built(conn)`` is true, else
    ``no_schema(its name)`` is raised; DatabaseError when they cannot run."""
    async with connection(dsn) as conn:
        with failing("consistency checks failed to run"):
            if not await built(conn):
                raise no_schema(await conn.fetchval("SELECT current_database()"))
            results = []
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                for cond in conditions:
                    rows = await conn.fetch(
                        f"SELECT count(*) OVER () AS _violations, v.* FROM ({cond.sql}) v"
                        f" LIMIT {SAMPLE_ROWS}")
                    violations = rows[0]["_violations"] if rows else 0
                    results.append(CheckResult(
                        name=cond.name, clause=cond.clause, description=cond.description,
                        ok=violations == 0, violations=violations,
                        sample=[_row_text(r) for r in rows]))
            return results
