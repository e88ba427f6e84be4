"""The consistency conditions of workloads/dvds/checks.py on PostgreSQL, run in one
REPEATABLE READ READ ONLY transaction."""

from __future__ import annotations

import asyncio

import asyncpg

from ....errors import DatabaseError
from ....workloads.dvds.checks import CONDITIONS
from ....workloads.dvds.schema import META_TABLE, no_schema
from ....workloads.tpcc.checks import SAMPLE_ROWS, CheckResult
from .schema import connect, present


def _row_text(row: asyncpg.Record) -> str:
    return " ".join(f"{k}={v}" for k, v in row.items() if k != "_violations")


async def _run(dsn: str) -> list[CheckResult]:
    conn = await connect(dsn)
    try:
        if not await present(conn, [META_TABLE]) or \
                not await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {META_TABLE})"):
            raise no_schema(await conn.fetchval("SELECT current_database()"))
        results = []
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            for cond in CONDITIONS:
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
    """DS1-DS6 in one snapshot; they hold after the build and after any run, so
    ``after_run`` changes nothing. Raises SchemaError when the database has no complete
    DVD-Store-derived schema."""
    return asyncio.run(_run(dsn))
