"""What the PostgreSQL dialects (engines/postgres/<workload>/) ask a database over asyncpg,
whatever the workload: a connection that names the database when it cannot be made, server
errors turned into DatabaseError, which of some tables and functions exist, a yes-or-no
question."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager

import asyncpg

from ...errors import DatabaseError


def dbname(dsn: str) -> str:
    """The database a DSN names, as messages name it ("(default)" when it names none)."""
    tail = dsn.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return tail if tail and "@" not in tail and ":" not in tail else "(default)"


async def connect(dsn: str) -> asyncpg.Connection:
    """A connection, or DatabaseError naming the database."""
    try:
        return await asyncpg.connect(dsn)
    except (OSError, asyncpg.PostgresError) as exc:
        raise DatabaseError(f"cannot connect to {dbname(dsn)}: {exc}") from exc


@asynccontextmanager
async def connection(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """``connect(dsn)``, closed when the block ends."""
    conn = await connect(dsn)
    try:
        yield conn
    finally:
        await conn.close()


@contextmanager
def failing(what: str) -> Iterator[None]:
    """A server error in the block becomes DatabaseError("<what>: <error>")."""
    try:
        yield
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"{what}: {exc}") from exc


async def present(conn: asyncpg.Connection, names: Iterable[str]) -> list[str]:
    """Which of the tables ``names`` exist in the current schema, sorted."""
    rows = await conn.fetch(
        "SELECT relname FROM pg_class WHERE relname = ANY($1::text[]) AND relkind IN ('r', 'p')"
        " AND relnamespace = current_schema()::regnamespace ORDER BY relname", list(names))
    return [r[0] for r in rows]


async def functions_present(conn: asyncpg.Connection, names: Iterable[str]) -> list[str]:
    """Which of the functions ``names`` exist in the current schema (with any arguments),
    sorted."""
    rows = await conn.fetch(
        "SELECT DISTINCT proname FROM pg_proc WHERE proname = ANY($1::text[])"
        " AND pronamespace = current_schema()::regnamespace ORDER BY proname", list(names))
    return [r[0] for r in rows]


async def recorded_build(conn: asyncpg.Connection, meta_table: str, own_tables: Iterable[str],
                         incomplete: Callable[[str], Exception]
                         ) -> tuple[str, asyncpg.Record | None]:
    """The database's name and its build's record (the row of ``meta_table``, which a build
    writes last), None when there is none; ``incomplete(name)`` is raised when the record's
    table or one of ``own_tables`` is there without it (a build that did not finish)."""
    name = await conn.fetchval("SELECT current_database()")
    meta = await present(conn, [meta_table])
    row = await conn.fetchrow(f"SELECT * FROM {meta_table} LIMIT 1") if meta else None
    if row is None and (meta or await present(conn, own_tables)):
        raise incomplete(name)
    return name, row


async def _fetch_flag(dsn: str, query: str):
    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        return await conn.fetchval(query)
    finally:
        await conn.close()


def ask(dsn: str, query: str, what: str) -> bool:
    """The answer of ``query`` (one value, taken as true or false) on a connection of its own;
    DatabaseError("cannot read <what>: ...") when it cannot be had."""
    try:
        return bool(asyncio.run(_fetch_flag(dsn, query)))
    except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as exc:
        raise DatabaseError(f"cannot read {what}: {exc}") from exc
