"""The five transactions, one module each, indexed like the mix (mix.NEW_ORDER ... STOCK_LEVEL).

Each module has NAME, PROCEDURE (the one-round-trip call of procedures mode), STATEMENTS (the
client-side SQL of ``--mode sql``, prepared per connection) and ``run`` (that client-side
transaction).
"""

from . import delivery, new_order, order_status, payment, stock_level

MODULES = (new_order, payment, order_status, delivery, stock_level)

# asyncpg prepares with Parse/Describe/Flush, leaving the server in an implicit transaction
# until the next Sync; a simple query ends it (else a later BEGIN ISOLATION LEVEL fails).
SYNC = "SELECT 1"


async def prepare(conn, statements: dict[str, str]) -> dict:
    """Prepare named statements on an asyncpg connection and end the implicit transaction."""
    prepared = {name: await conn.prepare(sql) for name, sql in statements.items()}
    await conn.execute(SYNC)
    return prepared
