"""Delivery (TPC-C clause 2.7): deliver the oldest undelivered order of each of 10 districts.

Delivery runs inside the virtual user, not deferred: the user waits for all ten districts,
as HammerDB does, and its response time is the whole batch. The spec's deferred mode
(queue, then a background worker, clause 2.7.2) is not modelled.

Procedures mode calls ``delivery`` once; it returns the number of districts delivered.

``--mode sql`` runs the ten districts (2.7.4.2) in one explicit transaction under READ
COMMITTED. Both modes follow one policy for a district's oldest NEW_ORDER row: it is looked
up, then deleted; when the DELETE finds nothing, a concurrent Delivery took that row first
(PostgreSQL's READ COMMITTED re-checks the row after waiting for its lock and skips it), and
the district is looked at again. A district counts as skipped only when a look finds no
NEW_ORDER row at all (2.7.4.2, 5.4.5). Every lost race means another Delivery delivered an
order, so the re-looks end.

Round trips of ``--mode sql`` on the C loop (native/tpcc/sqlloop.c, pipelined): 4, plus one per
re-look. BEGIN and the ten districts' oldest rows; their deletes (one that deletes nothing
means a concurrent Delivery took the row: the district is looked at again); the order and
line updates; the customer updates and COMMIT. ``run`` below is the asyncpg reference.
"""

from __future__ import annotations

NAME = "delivery"

PROCEDURE = "SELECT delivery($1, $2)"

DISTRICTS = 10

SELECT_OLDEST = """
SELECT no_o_id FROM new_order
 WHERE no_w_id = $1 AND no_d_id = $2
 ORDER BY no_o_id LIMIT 1"""

# the row lock is the DELETE's; no row back means a concurrent Delivery took it
DELETE_NEW_ORDER = """
DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3
RETURNING no_o_id"""

UPDATE_ORDER = """
UPDATE orders SET o_carrier_id = $4
 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3
RETURNING o_c_id"""

# OL_DELIVERY_D from the server's clock; the sum of OL_AMOUNT of the delivered lines.
UPDATE_LINES = """
WITH delivered AS (
  UPDATE order_line SET ol_delivery_d = now()
   WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3
  RETURNING ol_amount)
SELECT coalesce(sum(ol_amount), 0) FROM delivered"""

UPDATE_CUSTOMER = """
UPDATE customer SET c_balance = c_balance + $4, c_delivery_cnt = c_delivery_cnt + 1
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"""

STATEMENTS = {
    "oldest": SELECT_OLDEST,
    "delete": DELETE_NEW_ORDER,
    "order": UPDATE_ORDER,
    "lines": UPDATE_LINES,
    "customer": UPDATE_CUSTOMER,
}


async def run(conn, ps: dict, args: tuple) -> int:
    """One Delivery from the client; returns the number of districts delivered."""
    w_id, carrier = args
    oldest, delete, order, lines, customer = (
        ps["oldest"], ps["delete"], ps["order"], ps["lines"], ps["customer"])
    delivered = 0
    await conn.execute("BEGIN")
    for d_id in range(1, DISTRICTS + 1):
        while True:
            o_id = await oldest.fetchval(w_id, d_id)
            if o_id is None or await delete.fetchval(w_id, d_id, o_id) is not None:
                break
        if o_id is None:
            continue  # skipped district: no undelivered order
        c_id = await order.fetchval(w_id, d_id, o_id, carrier)
        amount = await lines.fetchval(w_id, d_id, o_id)
        await customer.fetchval(w_id, d_id, c_id, amount)
        delivered += 1
    await conn.execute("COMMIT")
    return delivered
