"""Order-Status (TPC-C clause 2.6): a customer's balance and last order with its lines.

Procedures mode calls ``ostat`` once and gets the customer's last O_ID.

``--mode sql`` reads the customer (by C_ID, or by last name with the middle-customer rule
of 2.6.2.2), the most recent order and its lines in one read-only transaction. REPEATABLE
READ gives the three reads one snapshot; a read-only transaction never fails to serialize.

Round trips of ``--mode sql`` on the C loop (native/tpcc/sqlloop.c, pipelined): 2 by C_ID, 3 by
last name. BEGIN [and the name's customers]; the customer and the last order; its lines and
COMMIT. ``run`` below is the asyncpg reference.
"""

from __future__ import annotations

from .....workloads.tpcc.random import last_name, middle_index

NAME = "order_status"

PROCEDURE = "SELECT ostat($1, $2, $3, $4)"

BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

SELECT_BY_NAME = """
SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
 ORDER BY c_first, c_id"""

SELECT_CUSTOMER = """
SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"""

SELECT_LAST_ORDER = """
SELECT o_id, o_entry_d, o_carrier_id FROM orders
 WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3
 ORDER BY o_id DESC LIMIT 1"""

SELECT_LINES = """
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3"""

STATEMENTS = {
    "by_name": SELECT_BY_NAME,
    "customer": SELECT_CUSTOMER,
    "last_order": SELECT_LAST_ORDER,
    "lines": SELECT_LINES,
}


async def run(conn, ps: dict, args: tuple) -> int:
    """One Order-Status from the client; returns the last order's O_ID (0 if none)."""
    w_id, d_id, c_id, c_last_num = args
    await conn.execute(BEGIN)
    if c_last_num >= 0:
        rows = await ps["by_name"].fetch(w_id, d_id, last_name(c_last_num))
        c_id = rows[middle_index(len(rows))][0]
    else:
        await ps["customer"].fetchrow(w_id, d_id, c_id)
    order = await ps["last_order"].fetchrow(w_id, d_id, c_id)
    o_id = 0
    if order is not None:
        o_id = order[0]
        await ps["lines"].fetch(w_id, d_id, o_id)
    await conn.execute("COMMIT")
    return o_id
