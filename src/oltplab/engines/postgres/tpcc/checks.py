"""CC1-CC12 [TPC-C 3.3.2] on PostgreSQL: the conditions of workloads/tpcc/checks.py, run in
one REPEATABLE READ READ ONLY transaction (engines/postgres/checks.py)."""

from __future__ import annotations

import asyncio

from ....workloads.checks import CheckResult
from ....workloads.tpcc.checks import CONDITIONS
from ....workloads.tpcc.schema import no_schema
from ..checks import run_conditions


async def _built(conn) -> bool:
    return await conn.fetchval("SELECT to_regclass('tpcc_meta') IS NOT NULL")


def run_checks(dsn: str, after_run: bool = False) -> list[CheckResult]:
    """CC1-CC12 in one snapshot; with ``after_run`` CC11 is left out (it fails after any
    Delivery). Raises SchemaError when the database has no TPC-C schema."""
    conditions = [c for c in CONDITIONS if not (after_run and c.name == "CC11")]
    return asyncio.run(run_conditions(dsn, conditions, _built, no_schema))
