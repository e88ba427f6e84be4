"""CC1-CC12 [TPC-C 3.3.2] on PostgreSQL: the conditions of workloads/tpcc/checks.py, run in
one REPEATABLE READ READ ONLY transaction."""

from __future__ import annotations

import asyncio

import asyncpg

from ....errors import DatabaseError
from ....workloads.tpcc.checks import CONDITIONS, SAMPLE_ROWS, CheckResult
from ....workloads.tpcc.schema import no_schema


def _row_text(row: asyncpg.Record) -> str:
    return " ".join(f"{k}={v}" for k, v in row.items() if k != "_violations")


async def _run(dsn: str, after_run: bool) -> list[CheckResult]:
    try:
        conn = await asyncpg.connect(dsn)
    except (OSError, asyncpg.PostgresError) as exc:
        raise DatabaseError(f"cannot connect to the database: {exc}") from exc
    try:
        if not await conn.fetchval("SELECT to_regclass('tpcc_meta') IS NOT NULL"):
            raise no_schema(await conn.fetchval("SELECT current_database()"))
        results = []
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            for cond in CONDITIONS:
                if after_run and cond.name == "CC11":
                    continue
                rows = await conn.fetch(
                    f"SELECT count(*) OVER () AS _violations, v.* FROM ({cond.sql}) v"
                    f" LIMIT {SAMPLE_ROWS}")
                violations = rows[0]["_violations"] if rows else 0
                results.append(CheckResult(
                    name=cond.name, clause=cond.clause, description=cond.description,
                    ok=violations == 0, violations=violations,
                    sample=[_row_text(r) for r in rows]))
        return results
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"consistency checks failed to run: {exc}") from exc
    finally:
        await conn.close()


def run_checks(dsn: str, after_run: bool = False) -> list[CheckResult]:
    """CC1-CC12 in one snapshot; with ``after_run`` CC11 is left out (it fails after any
    Delivery). Raises SchemaError when the database has no TPC-C schema."""
    return asyncio.run(_run(dsn, after_run))
