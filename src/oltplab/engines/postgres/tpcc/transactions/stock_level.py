"""Stock-Level (TPC-C clause 2.8): count recently sold items whose stock is below a threshold.

Procedures mode calls ``slev`` once. ``--mode sql`` reads D_NEXT_O_ID and counts the distinct
items of the district's last 20 orders whose home-warehouse stock is strictly below the
threshold (2.8.2.2), in one read-only READ COMMITTED transaction (2.8.2.3 requires only
read-committed isolation).

Round trips of ``--mode sql`` on the C loop (native/tpcc/sqlloop.c, pipelined): 2. BEGIN READ ONLY
and D_NEXT_O_ID; the count and COMMIT. ``run`` below is the asyncpg reference.
"""

from __future__ import annotations

NAME = "stock_level"

PROCEDURE = "SELECT slev($1, $2, $3)"

BEGIN = "BEGIN READ ONLY"

SELECT_NEXT_O_ID = "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2"

COUNT_LOW_STOCK = """
SELECT count(DISTINCT s.s_i_id)
  FROM order_line ol
  JOIN stock s ON s.s_w_id = $1 AND s.s_i_id = ol.ol_i_id
 WHERE ol.ol_w_id = $1 AND ol.ol_d_id = $2
   AND ol.ol_o_id >= $3 - 20 AND ol.ol_o_id < $3
   AND s.s_quantity < $4"""

STATEMENTS = {
    "next_o_id": SELECT_NEXT_O_ID,
    "low_stock": COUNT_LOW_STOCK,
}


async def run(conn, ps: dict, args: tuple) -> int:
    """One Stock-Level from the client; returns the count of low-stock items."""
    w_id, d_id, threshold = args
    await conn.execute(BEGIN)
    next_o_id = await ps["next_o_id"].fetchval(w_id, d_id)
    low = await ps["low_stock"].fetchval(w_id, d_id, next_o_id, threshold)
    await conn.execute("COMMIT")
    return low
