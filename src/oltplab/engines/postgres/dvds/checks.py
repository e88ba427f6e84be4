"""The consistency conditions of workloads/dvds/checks.py on PostgreSQL, run in one
REPEATABLE READ READ ONLY transaction (engines/postgres/checks.py)."""

from __future__ import annotations

import asyncio

from ....errors import DatabaseError
from ....workloads.checks import CheckResult
from ....workloads.dvds.checks import conditions
from ....workloads.dvds.schema import META_TABLE, no_schema
from ..catalog import ask, present
from ..checks import run_conditions


async def _built(conn) -> bool:
    """The build's record is there (it is written last)."""
    return bool(await present(conn, [META_TABLE])) and \
        await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {META_TABLE})")


def _is_ds3(dsn: str) -> bool:
    """A DS3 build (an older build's record has no ds3; no record at all is for
    run_conditions to report)."""
    try:
        return ask(dsn, f"SELECT coalesce((SELECT (to_jsonb(m) ->> 'ds3')::boolean"
                        f" FROM {META_TABLE} m LIMIT 1), false)", "the build's record")
    except DatabaseError:
        return False


def run_checks(dsn: str, after_run: bool = False) -> list[CheckResult]:
    """DS1-DS6 (and DS7-DS10 on a DS3 build) in one snapshot; they hold after the build and after
    any run, so ``after_run`` changes nothing. Raises SchemaError when the database has no complete
    DVD-Store-derived schema."""
    return asyncio.run(run_conditions(dsn, conditions(_is_ds3(dsn)), _built, no_schema))
