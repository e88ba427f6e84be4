"""Calling the five MariaDB procedures (procedures mode) on an open session.

Each call is ``CALL NAME(inputs..., @out)`` then ``SELECT @out``: two round trips, as
HammerDB makes them. A failed call has rolled its transaction back and raises the client's
error; ``engines.mariadb.client.classify`` tells a driver whether to retry it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence


def _call(conn, name: str, args: Sequence) -> int:
    marks = ", ".join(["%s"] * len(args))
    with conn.cursor() as cur:
        cur.execute(f"CALL {name}({marks}, @oltplab_out)", tuple(args))
        cur.execute("SELECT @oltplab_out")
        return cur.fetchone()[0]


def neword(conn, w_id: int, d_id: int, c_id: int,
           lines: Sequence[tuple[int, int, int]]) -> int:
    """New-Order [2.4] with ``lines`` of (item id, supply warehouse, quantity): O_ID, or -O_ID
    when an unused item rolled the order back."""
    return _call(conn, "NEWORD", (w_id, d_id, c_id, json.dumps([list(ln) for ln in lines])))


def payment(conn, w_id: int, d_id: int, c_w_id: int, c_d_id: int, c_id: int,
            c_last_num: int, amount) -> int:
    """Payment [2.5] by C_ID, or by last name when ``c_last_num`` >= 0: the customer's C_ID."""
    return _call(conn, "PAYMENT", (w_id, d_id, c_w_id, c_d_id, c_id, c_last_num, amount))


def ostat(conn, w_id: int, d_id: int, c_id: int, c_last_num: int) -> int:
    """Order-Status [2.6]: the O_ID of the customer's last order, 0 when none."""
    return _call(conn, "OSTAT", (w_id, d_id, c_id, c_last_num))


def delivery(conn, w_id: int, carrier_id: int) -> int:
    """Delivery [2.7]: the number of districts delivered (0..10)."""
    return _call(conn, "DELIVERY", (w_id, carrier_id))


def slev(conn, w_id: int, d_id: int, threshold: int) -> int:
    """Stock-Level [2.8]: distinct items of the last 20 orders below ``threshold``."""
    return _call(conn, "SLEV", (w_id, d_id, threshold))
