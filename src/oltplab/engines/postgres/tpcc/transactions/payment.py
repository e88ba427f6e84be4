"""Payment (TPC-C clause 2.5): record a customer's payment at a warehouse and district.

Procedures mode calls ``payment`` once and gets the paying customer's C_ID.

``--mode sql`` runs the profile of clause 2.5.2.2 from the client in one explicit transaction
under READ COMMITTED: the warehouse and district rows are updated (and read back) first,
the customer row is read ``FOR UPDATE``; by last name, the customers sorted by C_FIRST are
listed and the one at position ceil(n/2) is taken (the middle-customer rule, 2.5.2.2).
Bad-credit customers get the payment prepended to C_DATA, kept to 500 characters, in the
same text as procedures mode writes.

Round trips of ``--mode sql`` on the C loop (native/tpcc/sqlloop.c, pipelined): 2 by C_ID, 3 by
last name. BEGIN, the warehouse and district updates [and the name's customers]; the customer
FOR UPDATE; its update, the history row and COMMIT. ``run`` below is the asyncpg reference.
"""

from __future__ import annotations

from .....workloads.tpcc.random import last_name, middle_index

NAME = "payment"

PROCEDURE = "SELECT payment($1, $2, $3, $4, $5, $6, $7)"

UPDATE_WAREHOUSE = """
UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1
RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip"""

UPDATE_DISTRICT = """
UPDATE district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2
RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip"""

SELECT_BY_NAME = """
SELECT c_id FROM customer
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3
 ORDER BY c_first, c_id"""

SELECT_CUSTOMER = """
SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
       c_since, c_credit, c_credit_lim, c_discount, c_balance
  FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3
   FOR UPDATE"""

UPDATE_CUSTOMER = """
UPDATE customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4,
                    c_payment_cnt = c_payment_cnt + 1
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"""

# 2.5.2.2: for C_CREDIT = 'BC' the payment's ids and amount go in front of C_DATA
# (c_data_entry: the same text as the ``payment`` function writes).
UPDATE_CUSTOMER_BC = """
UPDATE customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4,
                    c_payment_cnt = c_payment_cnt + 1,
                    c_data = left($5::text || c_data, 500)
 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3
RETURNING left(c_data, 200)"""

# H_DATA = W_NAME, four spaces, D_NAME; H_DATE from the server's clock.
INSERT_HISTORY = """
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES ($1, $2, $3, $4, $5, now(), $6, $7)"""

STATEMENTS = {
    "warehouse": UPDATE_WAREHOUSE,
    "district": UPDATE_DISTRICT,
    "by_name": SELECT_BY_NAME,
    "customer": SELECT_CUSTOMER,
    "customer_update": UPDATE_CUSTOMER,
    "customer_update_bc": UPDATE_CUSTOMER_BC,
    "history": INSERT_HISTORY,
}


def c_data_entry(c_id: int, c_d_id: int, c_w_id: int, d_id: int, w_id: int,
                 h_amount: str) -> str:
    """What a payment puts in front of a BC customer's C_DATA [2.5.2.2], as ``payment`` in
    sql/functions.sql writes it: the ids and H_AMOUNT separated by spaces, then " | "."""
    return f"{c_id} {c_d_id} {c_w_id} {d_id} {w_id} {h_amount} | "


async def run(conn, ps: dict, args: tuple) -> int:
    """One Payment from the client; returns the paying customer's C_ID."""
    w_id, d_id, c_w_id, c_d_id, c_id, c_last_num, h_amount = args
    await conn.execute("BEGIN")
    w = await ps["warehouse"].fetchrow(w_id, h_amount)
    d = await ps["district"].fetchrow(w_id, d_id, h_amount)
    if c_last_num >= 0:
        ids = await ps["by_name"].fetch(c_w_id, c_d_id, last_name(c_last_num))
        c_id = ids[middle_index(len(ids))][0]
    c = await ps["customer"].fetchrow(c_w_id, c_d_id, c_id)
    if c["c_credit"] == "BC":
        data = c_data_entry(c_id, c_d_id, c_w_id, d_id, w_id, h_amount)
        await ps["customer_update_bc"].fetchval(c_w_id, c_d_id, c_id, h_amount, data)
    else:
        await ps["customer_update"].fetchval(c_w_id, c_d_id, c_id, h_amount)
    await ps["history"].fetchval(c_id, c_d_id, c_w_id, d_id, w_id, h_amount,
                                f"{w[0]}    {d[0]}")
    await conn.execute("COMMIT")
    return c_id
