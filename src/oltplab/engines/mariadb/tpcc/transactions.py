"""``--mode sql`` on MariaDB, statement by statement: the reference the C path is tested against.

The statements are those of native/tpcc/mytxn.c (``_native.MARIADB_SQL``: printf formats of
integers, decimals as d.dd and generated last names, the only values ever written into a
statement's text), which sends them in a few multi-statement round trips per transaction;
here each is sent alone, on a PyMySQL session (client.connect: autocommit on), with the same
logic: the same transaction boundaries, lock order and values read. The five functions take
the inputs a Terminal draws (workloads/tpcc/inputs.py ``Terminal.inputs``) and return what
the procedures return.
"""

from __future__ import annotations

from decimal import Decimal

from .... import _native
from ....workloads.tpcc.inputs import ITEMS
from ....workloads.tpcc.random import last_name

SQL = _native.MARIADB_SQL


def _run(cur, name: str, *args) -> tuple:
    cur.execute(SQL[name] % args if args else SQL[name])
    return cur.fetchall()


def _one(cur, name: str, *args) -> tuple:
    rows = _run(cur, name, *args)
    if not rows:
        raise LookupError(f"{name} found no row")
    return rows[0]


def _money(value) -> str:
    return f"{Decimal(value):.2f}"


def new_order(conn, w_id: int, d_id: int, c_id: int, items, supplies, quantities) -> int:
    """New-Order [2.4.2.2]: O_ID, or -O_ID when the unused item rolled it back [2.4.2.3]."""
    lines = list(zip(items, supplies, quantities))
    order = sorted(range(len(lines)), key=lambda n: (lines[n][0] > ITEMS, lines[n][1],
                                                    lines[n][0], n))
    with conn.cursor() as cur:
        _run(cur, "start")
        _one(cur, "new_order.w_tax", w_id)
        o_id, _d_tax = _one(cur, "new_order.district", w_id, d_id)
        _run(cur, "new_order.next_o_id", w_id, d_id)
        _one(cur, "new_order.customer", w_id, d_id, c_id)
        ids = ",".join(str(lines[n][0]) for n in order)
        prices = {i_id: price for i_id, price, _name, _data in
                  _run(cur, "new_order.items", ids)}
        quantity = {}
        for n in order:
            i_id, supply, _qty = lines[n]
            row = _run(cur, "new_order.stock", d_id, supply, i_id)
            if row:
                quantity[n] = row[0][0]
        all_local = int(all(supply == w_id for _i, supply, _q in lines))
        _run(cur, "new_order.order", o_id, d_id, w_id, c_id, len(lines), all_local)
        _run(cur, "new_order.new_order", o_id, d_id, w_id)
        found = [n for n in order if lines[n][0] in prices]
        stock: dict[tuple[int, int], int] = {}
        for n in found:
            i_id, supply, qty = lines[n]
            q = stock.get((supply, i_id), quantity[n]) - qty  # an item twice: the first's update
            q = q if q >= 10 else q + 91
            stock[(supply, i_id)] = q
            _run(cur, "new_order.stock_update", q, qty, int(supply != w_id), supply, i_id)
        if found:
            rows = ", ".join(
                SQL["new_order.order_line_row"] % (
                    o_id, d_id, w_id, n + 1, lines[n][0], lines[n][1], lines[n][2],
                    _money(lines[n][2] * prices[lines[n][0]]), d_id, lines[n][1], lines[n][0])
                for n in found)
            cur.execute(SQL["new_order.order_lines"] + rows)
        if len(found) < len(lines):
            _run(cur, "rollback")
            return -o_id
        _run(cur, "commit")
        return o_id


def _middle(cur, w_id: int, d_id: int, c_last_num: int) -> int:
    """The customer of the name at position ceil(n / 2) by C_FIRST [2.5.2.2, 2.6.2.2]."""
    ids = _run(cur, "by_name", w_id, d_id, last_name(c_last_num))
    if not ids:
        raise LookupError("no customer of the last name")
    return ids[(len(ids) + 1) // 2 - 1][0]


def payment(conn, w_id: int, d_id: int, c_w_id: int, c_d_id: int, c_id: int,
            c_last_num: int, amount) -> int:
    """Payment [2.5.2.2], by last name when ``c_last_num`` >= 0: the customer's C_ID."""
    amount = _money(amount)
    with conn.cursor() as cur:
        _run(cur, "start")
        _run(cur, "payment.warehouse", amount, w_id)
        _one(cur, "payment.warehouse_read", w_id)
        _run(cur, "payment.district", amount, w_id, d_id)
        _one(cur, "payment.district_read", w_id, d_id)
        if c_last_num >= 0:
            c_id = _middle(cur, c_w_id, c_d_id, c_last_num)
        _one(cur, "payment.customer", c_w_id, c_d_id, c_id)
        _run(cur, "payment.customer_update", amount, amount, d_id, w_id, amount, c_w_id,
             c_d_id, c_id)
        _run(cur, "payment.history", c_id, c_d_id, c_w_id, d_id, w_id, amount, w_id, w_id, d_id)
        _run(cur, "commit")
    return c_id


def order_status(conn, w_id: int, d_id: int, c_id: int, c_last_num: int) -> int:
    """Order-Status [2.6.2.2]: the O_ID of the customer's last order, 0 when none."""
    with conn.cursor() as cur:
        _run(cur, "start_snapshot")
        if c_last_num >= 0:
            c_id = _middle(cur, w_id, d_id, c_last_num)
        _one(cur, "order_status.customer", w_id, d_id, c_id)
        last = _run(cur, "order_status.last_order", w_id, d_id, c_id)
        o_id = last[0][0] if last else 0
        if last:
            _run(cur, "order_status.lines", w_id, d_id, o_id)
        _run(cur, "commit")
    return o_id


def delivery(conn, w_id: int, carrier_id: int) -> int:
    """Delivery [2.7.4.2] of the ten districts in one transaction: the districts delivered
    (a district without a NEW_ORDER row is skipped)."""
    with conn.cursor() as cur:
        _run(cur, "start")
        claimed = {}
        for d in range(1, 11):
            row = _run(cur, "delivery.claim", w_id, d)
            if row:
                claimed[d] = row[0][0]
        due = {}
        for d, o_id in claimed.items():
            (c_id,) = _one(cur, "delivery.order", w_id, d, o_id)
            _run(cur, "delivery.carrier", carrier_id, w_id, d, o_id)
            _run(cur, "delivery.lines", w_id, d, o_id)
            (amount,) = _one(cur, "delivery.amount", w_id, d, o_id)
            due[d] = (c_id, amount)
        for d, (c_id, amount) in due.items():
            _run(cur, "delivery.customer", _money(amount), w_id, d, c_id)
        _run(cur, "commit")
    return len(claimed)


def stock_level(conn, w_id: int, d_id: int, threshold: int) -> int:
    """Stock-Level [2.8.2.2]: distinct items of the last 20 orders below ``threshold``."""
    with conn.cursor() as cur:
        _run(cur, "start_read_only")
        (next_o_id,) = _one(cur, "stock_level.next_o_id", w_id, d_id)
        (count,) = _one(cur, "stock_level.low_stock", w_id, w_id, d_id, next_o_id - 20,
                        next_o_id, threshold)
        _run(cur, "commit")
    return count


#: By transaction type, as the mix numbers them (NEW_ORDER ... STOCK_LEVEL).
RUN = (new_order, payment, order_status, delivery, stock_level)
