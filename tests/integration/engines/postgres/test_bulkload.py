"""engines/postgres/bulkload.py as both dialects' builds use it: replacing a schema."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from oltplab.engines.postgres import bulkload
from oltplab.engines.postgres.dvds.schema import SCHEMA as DVDS
from oltplab.engines.postgres.tpcc.schema import SCHEMA as TPCC
from oltplab.errors import SchemaError


def _replace(dsn: str, schema: bulkload.Schema, force: bool, before: str = "") -> list[str]:
    """Run ``before``, then replace the schema: the routines of its names left after."""
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            if before:
                await conn.execute(before)
            await bulkload.replace_schema(conn, schema, force)
            return [r[0] for r in await conn.fetch(
                "SELECT oid::regprocedure::text FROM pg_proc WHERE proname = ANY($1::text[])",
                [*schema.functions, *schema.helpers])]
        finally:
            await conn.close()

    return asyncio.run(go())


@pytest.mark.parametrize("schema", [TPCC, DVDS], ids=["tpcc", "dvds"])
def test_force_drops_the_tables_and_routines_of_its_names_whatever_their_arguments(pg, schema):
    dsn = pg.create_db("bulk")
    other_kit = "; ".join(  # a routine of each name, with arguments no build of oltplab makes
        f"CREATE FUNCTION {name}(x numeric, y numeric) RETURNS int LANGUAGE sql AS 'SELECT 1'"
        for name in [*schema.functions, *schema.helpers])
    with pytest.raises(SchemaError, match=f"already holds a {schema.label} schema "
                                          rf"\({len(schema.functions)} of its functions\)"):
        _replace(dsn, schema, force=False, before=other_kit)
    assert _replace(dsn, schema, force=True) == []
    tables = len(schema.tables) + 1  # and the build's record
    with pytest.raises(SchemaError, match=rf"\({tables} of its tables\): pass --force"):
        _replace(dsn, schema, force=False)
    assert _replace(dsn, schema, force=True) == []
