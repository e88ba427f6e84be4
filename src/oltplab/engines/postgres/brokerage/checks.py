"""The consistency conditions of workloads/brokerage/checks.py on PostgreSQL, run in one
REPEATABLE READ READ ONLY transaction (engines/postgres/checks.py), on a database whose build
completed (schema.schema_info says what else it holds)."""

from __future__ import annotations

import asyncio

from ....workloads.brokerage.checks import CONDITIONS
from ....workloads.brokerage.schema import META_TABLE, no_schema
from ....workloads.checks import CheckResult
from ..catalog import present
from ..checks import run_conditions
from .schema import refused, schema_info


async def _built(conn) -> bool:
    """The build's record is there (it is written last)."""
    return bool(await present(conn, [META_TABLE])) and \
        await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {META_TABLE})")


def run_checks(dsn: str, after_run: bool = False) -> list[CheckResult]:
    """BK1-BK7 in one snapshot; they hold after the build and after any run, so ``after_run``
    changes nothing. Raises UsageError when the database holds no brokerage schema (or
    another workload's), SchemaError when its build did not finish."""
    schema_info(dsn)
    return asyncio.run(run_conditions(dsn, CONDITIONS, _built,
                                      lambda name: refused(no_schema(name))))
