"""The consistency conditions of workloads/dvds/checks.py on PostgreSQL, run in one
REPEATABLE READ READ ONLY transaction (engines/postgres/checks.py)."""

from __future__ import annotations

import asyncio

from ....workloads.checks import CheckResult
from ....workloads.dvds.checks import CONDITIONS
from ....workloads.dvds.schema import META_TABLE, no_schema
from ..catalog import present
from ..checks import run_conditions


async def _built(conn) -> bool:
    """The build's record is there (it is written last)."""
    return bool(await present(conn, [META_TABLE])) and \
        await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {META_TABLE})")


def run_checks(dsn: str, after_run: bool = False) -> list[CheckResult]:
    """DS1-DS6 in one snapshot; they hold after the build and after any run, so
    ``after_run`` changes nothing. Raises SchemaError when the database has no complete
    DVD-Store-derived schema."""
    return asyncio.run(run_conditions(dsn, CONDITIONS, _built, no_schema))
