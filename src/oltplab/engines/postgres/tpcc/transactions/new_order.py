"""New-Order (TPC-C clause 2.4): enter a customer's order of 5 to 15 lines.

The client draws every input, the order lines included (the virtual user's Terminal, clause
2.4.1.5), so both modes enter the same orders for the same seed. Procedures mode calls
``neword`` once with the lines as three arrays; it returns the new O_ID, or -O_ID when the 1%
invalid item rolled it back.

``--mode sql`` runs the profile of clause 2.4.2.2 from the client in one explicit
transaction under READ COMMITTED. The district row is locked by ``UPDATE ... RETURNING``
(the old D_NEXT_O_ID is the new order's id), every stock row by ``SELECT ... FOR UPDATE``.
The lines are processed in (supply warehouse, item) order, so that concurrent New-Orders lock
stock rows in one order and do not deadlock; each keeps its OL_NUMBER (clause 2.4.2.2 leaves
the order of operations free). When the last line carries the unused item id, all valid lines
are processed first, then the transaction is rolled back (clause 2.4.2.3): this is a
completed New-Order, not an error.

Round trips of ``--mode sql`` on the C loop (native/tpcc/sqlloop.c, libpq's pipeline mode): 2.
First BEGIN, W_TAX, the district, the customer, every item and every stock row FOR UPDATE;
then the order, NEW_ORDER, the stock updates, the order lines and COMMIT (or, when an item
was not found, the stock updates of the valid lines and ROLLBACK). ``run`` below is the same
transaction on asyncpg, statement by statement: the reference the C path is tested against.
"""

from __future__ import annotations

from .....workloads.tpcc.inputs import ITEMS

NAME = "new_order"

PROCEDURE = "SELECT neword($1, $2, $3, $4, $5, $6)"
SIGNATURE = "neword(int, int, int, int[], int[], int[])"  # the function of sql/functions.sql

SELECT_W_TAX = "SELECT w_tax FROM warehouse WHERE w_id = $1"

# 2.4.2.2: read D_TAX and D_NEXT_O_ID, increment D_NEXT_O_ID (PG: the row lock is the UPDATE's).
UPDATE_DISTRICT = """
UPDATE district SET d_next_o_id = d_next_o_id + 1
 WHERE d_w_id = $1 AND d_id = $2
RETURNING d_next_o_id - 1, d_tax"""

SELECT_CUSTOMER = """
SELECT c_discount, c_last, c_credit FROM customer
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"""

INSERT_ORDER = """
INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
VALUES ($1, $2, $3, $4, now(), NULL, $5, $6)"""

INSERT_NEW_ORDER = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)"

# 2.4.2.2: 0 rows means the unused item of the 1% rule.
SELECT_ITEM = "SELECT i_price, i_name, i_data FROM item WHERE i_id = $1"

# The supply warehouse's stock row, locked; S_DIST_xx for the order's district (xx = d_id).
SELECT_STOCK = """
SELECT s_quantity, s_data,
       (ARRAY[s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05,
              s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10])[$3]
  FROM stock WHERE s_w_id = $1 AND s_i_id = $2
   FOR UPDATE"""

UPDATE_STOCK = """
UPDATE stock SET s_quantity = $3, s_ytd = s_ytd + $4, s_order_cnt = s_order_cnt + 1,
                 s_remote_cnt = s_remote_cnt + $5
 WHERE s_w_id = $1 AND s_i_id = $2"""

INSERT_ORDER_LINE = """
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9)"""

STATEMENTS = {
    "w_tax": SELECT_W_TAX,
    "district": UPDATE_DISTRICT,
    "customer": SELECT_CUSTOMER,
    "order": INSERT_ORDER,
    "new_order": INSERT_NEW_ORDER,
    "item": SELECT_ITEM,
    "stock": SELECT_STOCK,
    "stock_update": UPDATE_STOCK,
    "order_line": INSERT_ORDER_LINE,
}


def new_quantity(s_quantity: int, qty: int) -> int:
    """S_QUANTITY after ordering qty: minus qty, plus 91 when fewer than 10 would remain
    (clause 2.4.2.2)."""
    q = s_quantity - qty
    return q if q >= 10 else q + 91


async def run(conn, ps: dict, args: tuple) -> int:
    """One New-Order from the client: O_ID, or -O_ID when rolled back by the 1% rule.

    ``args`` is the ``neword`` argument tuple: (w_id, d_id, c_id, ol_i_id's, ol_supply_w_id's,
    ol_quantity's), one entry per line in each of the three.
    """
    w_id, d_id, c_id, items, supplies, quantities = args
    lines = list(zip(items, supplies, quantities))
    ol_cnt = len(lines)
    all_local = 0 if any(supply != w_id for supply in supplies) else 1
    await conn.execute("BEGIN")
    w_tax = await ps["w_tax"].fetchval(w_id)
    o_id, d_tax = await ps["district"].fetchrow(w_id, d_id)
    c_discount, _c_last, _c_credit = await ps["customer"].fetchrow(w_id, d_id, c_id)
    await ps["order"].fetchval(o_id, d_id, w_id, c_id, ol_cnt, all_local)
    await ps["new_order"].fetchval(o_id, d_id, w_id)
    item, stock, stock_update = ps["item"], ps["stock"], ps["stock_update"]
    rows = []
    total = 0
    ordered = sorted((i_id > ITEMS, supply, i_id, number, qty)
                     for number, (i_id, supply, qty) in enumerate(lines, 1))
    for _last, supply, i_id, number, qty in ordered:
        it = await item.fetchrow(i_id)
        if it is None:  # the unused item of the 1% rule [2.4.2.3]
            await conn.execute("ROLLBACK")
            return -o_id
        price, _name, i_data = it
        s_quantity, s_data, dist_info = await stock.fetchrow(supply, i_id, d_id)
        await stock_update.fetchval(supply, i_id, new_quantity(s_quantity, qty), qty,
                                   0 if supply == w_id else 1)
        amount = qty * price  # OL_AMOUNT = OL_QUANTITY * I_PRICE [2.4.2.2]
        total += amount
        _brand = "B" if ("ORIGINAL" in i_data and "ORIGINAL" in s_data) else "G"
        rows.append((o_id, d_id, w_id, number, i_id, supply, qty, amount, dist_info))
    await ps["order_line"].executemany(rows)
    await conn.execute("COMMIT")
    _total_amount = total * (1 - c_discount) * (1 + w_tax + d_tax)  # displayed only
    return o_id
