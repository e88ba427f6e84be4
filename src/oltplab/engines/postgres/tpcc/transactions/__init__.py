"""The five transactions, one module each, indexed like the mix (mix.NEW_ORDER ... STOCK_LEVEL).

Each module has NAME, PROCEDURE (the one-round-trip call of procedures mode), STATEMENTS (the
client-side SQL of ``--mode sql``, prepared per connection) and ``run`` (that client-side
transaction on asyncpg). The C loop runs the same statements, prepared under the names
``statement_text`` resolves (``_native.SQL_STATEMENTS``), in a few pipelined round trips per
transaction (native/tpcc/sqlloop.c lists them).
"""

from . import delivery, new_order, order_status, payment, stock_level

MODULES = (new_order, payment, order_status, delivery, stock_level)

# asyncpg prepares with Parse/Describe/Flush, leaving the server in an implicit transaction
# until the next Sync; a simple query ends it (else a later BEGIN ISOLATION LEVEL fails).
SYNC = "SELECT 1"

# The transaction control statements of --mode sql, prepared like the others.
CONTROL = {"begin": "BEGIN", "commit": "COMMIT", "rollback": "ROLLBACK"}


def statement_text(name: str) -> str:
    """The SQL of a statement of --mode sql by its prepared name: ``commit``,
    ``new_order.district``, ``order_status.begin`` (the module's BEGIN)."""
    if name in CONTROL:
        return CONTROL[name]
    module_name, _, key = name.partition(".")
    for m in MODULES:
        if m.NAME == module_name:
            if key == "begin":
                return m.BEGIN
            return m.STATEMENTS[key]
    raise KeyError(name)


#: The loop's name of each kind's call, in the kinds' order.
KIND_NAMES = tuple(m.NAME for m in MODULES)


def prepared(mode: str, constants=None) -> list[tuple[str, str]]:
    """What a virtual user's libpq connection prepares, as (name, SQL): the procedure call of
    each transaction, or for ``--mode sql`` the statements the C loop sends (the same for every
    run: ``constants`` are not read)."""
    if mode == "sql":
        from ..... import _native
        return [(name, statement_text(name)) for name in _native.SQL_STATEMENTS]
    return [(m.NAME, m.PROCEDURE) for m in MODULES]


async def prepare(conn, statements: dict[str, str]) -> dict:
    """Prepare named statements on an asyncpg connection and end the implicit transaction."""
    prepared = {name: await conn.prepare(sql) for name, sql in statements.items()}
    await conn.execute(SYNC)
    return prepared
