"""Terminal assignment, the run's C constants, and the input data of each transaction.

Input generation follows clauses 2.4.1 (New-Order), 2.5.1 (Payment), 2.6.1 (Order-Status),
2.7.1 (Delivery) and 2.8.1 (Stock-Level). The argument tuples match the PL/pgSQL functions
(docs/design.md), so procedures mode passes them unchanged and ``--mode sql`` unpacks them.

Home warehouses are assigned as HammerDB's timed driver does: each virtual user draws its
home W_ID uniformly from 1..W once (``RandomNumber 1 $w_id_input``), so several users may
share a warehouse and some warehouses may have none. The home warehouse stays fixed for the
run (clause 2.4.1.1). With "use all warehouses" HammerDB deals the warehouses to the users
in turn, user i (0-based) of N getting ``((i + k*N) mod W) + 1`` for k = 0..ceil(W/N)-1,
and picks one of the dealt warehouses uniformly before every transaction.

Stock-Level uses the terminal's fixed district (clause 2.8.1.1): the users sharing a home
warehouse are its terminals 1, 2, ... in order of user number, and terminal t uses
D_ID = ((t - 1) mod 10) + 1. (HammerDB draws this district at random per user.)
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass

from .random import A_C_ID, A_C_LAST, A_OL_I_ID, cents, pick_c_run

DISTRICTS = 10
CUSTOMERS = 3000
ITEMS = 100_000
NOT_AN_ITEM = ITEMS + 1  # the unused item id of the 1% rolled-back New-Orders [2.4.1.5]


@dataclass(frozen=True)
class RunConstants:
    """The NURand constants C of one run [2.1.6], shared by every terminal.

    ``c_last`` is C_RUN for C_LAST, drawn from ``c_load`` by the C-delta rule [2.1.6.1];
    ``c_id`` and ``c_ol_i_id`` are uniform on [0..1023] and [0..8191].
    """

    c_load: int
    c_last: int
    c_id: int
    c_ol_i_id: int

    def as_dict(self) -> dict:
        return asdict(self)


def draw_constants(rng: random.Random, c_load: int) -> RunConstants:
    return RunConstants(c_load=c_load, c_last=pick_c_run(rng, c_load),
                        c_id=rng.randint(0, A_C_ID), c_ol_i_id=rng.randint(0, A_OL_I_ID))


@dataclass(frozen=True)
class Terminal:
    """One virtual user: its home warehouse, Stock-Level district and dealt warehouses."""

    index: int  # 0-based user number within the step
    w_id: int
    stock_d_id: int
    warehouses: tuple[int, ...]  # where it works: (w_id,) unless all warehouses are used


def dealt_warehouses(index: int, users: int, warehouses: int) -> tuple[int, ...]:
    """HammerDB's "use all warehouses" deal for user ``index`` (0-based) of ``users``."""
    count = math.ceil(warehouses / users)
    return tuple(((index + k * users) % warehouses) + 1 for k in range(count))


def assign_terminals(rng: random.Random, users: int, warehouses: int,
                     all_warehouses: bool = False) -> tuple[Terminal, ...]:
    """Home warehouse, Stock-Level district and working warehouses of each virtual user."""
    if users < 1 or warehouses < 1:
        raise ValueError("need at least one user and one warehouse")
    homes = [rng.randint(1, warehouses) for _ in range(users)]
    per_home: dict[int, int] = {}
    out = []
    for i, w in enumerate(homes):
        t = per_home.get(w, 0)
        per_home[w] = t + 1
        dealt = dealt_warehouses(i, users, warehouses) if all_warehouses else (w,)
        out.append(Terminal(index=i, w_id=w, stock_d_id=(t % DISTRICTS) + 1, warehouses=dealt))
    return tuple(out)


def nurand_fast(random01, A: int, x: int, y: int, C: int) -> int:
    """NURand(A, x, y) [2.1.6] drawn from ``random.random``: the same formula and order of
    draws as ``random.nurand``, with each uniform draw made as ``lo + int(r * n)``."""
    return (((int(random01() * (A + 1)) | (x + int(random01() * (y - x + 1)))) + C)
            % (y - x + 1)) + x


class Inputs:
    """Draws the inputs of each transaction for one terminal from its own generator.

    Methods return the argument tuples of the PL/pgSQL functions:
    - new_order:    (w_id, w_max, d_id, c_id, ol_cnt, rbk, c_ol_i_id)
    - payment:      (w_id, d_id, c_w_id, c_d_id, c_id, c_last_num, h_amount)
    - order_status: (w_id, d_id, c_id, c_last_num)
    - delivery:     (w_id, o_carrier_id)
    - stock_level:  (w_id, d_id, threshold)
    ``c_last_num`` >= 0 selects the customer by last name (its C_LAST number), -1 by C_ID.

    Every "random within [x..y]" is ``x + int(r * (y - x + 1))`` with r = ``random.random()``:
    uniform over the whole closed range (to within 2**-53), and about three times cheaper than
    ``randint`` in the virtual users' hot loop.
    """

    __slots__ = ("rng", "w_max", "stock_d_id", "c", "_r")

    def __init__(self, rng: random.Random, w_max: int, stock_d_id: int, constants: RunConstants):
        self.rng = rng
        self.w_max = w_max
        self.stock_d_id = stock_d_id
        self.c = constants
        self._r = rng.random

    def other_warehouse(self, w_id: int) -> int:
        """A uniform pick among the other warehouses; w_id itself when W = 1 [2.4.1.5, 2.5.1.2]."""
        if self.w_max == 1:
            return w_id
        w = 1 + int(self._r() * (self.w_max - 1))
        return w + 1 if w >= w_id else w

    def new_order(self, w_id: int) -> tuple:
        """d_id uniform, c_id NURand(1023), ol_cnt 5..15, rbk 1..100 (1 = invalid item) [2.4.1]."""
        r = self._r
        return (w_id, self.w_max, 1 + int(r() * DISTRICTS),
                nurand_fast(r, A_C_ID, 1, CUSTOMERS, self.c.c_id),
                5 + int(r() * 11), 1 + int(r() * 100), self.c.c_ol_i_id)

    def order_lines(self, w_id: int, ol_cnt: int, rbk: int) -> list[tuple[int, int, int]]:
        """(ol_i_id, ol_supply_w_id, ol_quantity) per line for client-side New-Order [2.4.1.5].

        OL_I_ID = NURand(8191, 1, 100000), the last line's an unused id when rbk = 1; the
        supply warehouse is remote with 1% probability per line; quantity uniform 1..10.
        """
        r, c = self._r, self.c.c_ol_i_id
        lines = []
        for n in range(1, ol_cnt + 1):
            i_id = NOT_AN_ITEM if (rbk == 1 and n == ol_cnt) else nurand_fast(r, A_OL_I_ID, 1, ITEMS, c)
            supply = self.other_warehouse(w_id) if int(r() * 100) == 0 else w_id
            lines.append((i_id, supply, 1 + int(r() * 10)))
        return lines

    def payment(self, w_id: int) -> tuple:
        """85% home customer, else a remote warehouse and any district; 60% by last name;
        H_AMOUNT uniform 1.00..5000.00 [2.5.1]."""
        r = self._r
        d_id = 1 + int(r() * DISTRICTS)
        if int(r() * 100) < 85:
            c_w_id, c_d_id = w_id, d_id
        else:
            c_w_id, c_d_id = self.other_warehouse(w_id), 1 + int(r() * DISTRICTS)
        if int(r() * 100) < 60:
            c_id, c_last_num = 0, nurand_fast(r, A_C_LAST, 0, 999, self.c.c_last)
        else:
            c_id, c_last_num = nurand_fast(r, A_C_ID, 1, CUSTOMERS, self.c.c_id), -1
        return (w_id, d_id, c_w_id, c_d_id, c_id, c_last_num, cents(100 + int(r() * 499_901)))

    def order_status(self, w_id: int) -> tuple:
        """Home warehouse, d_id uniform, 60% by last name [2.6.1]."""
        r = self._r
        d_id = 1 + int(r() * DISTRICTS)
        if int(r() * 100) < 60:
            return (w_id, d_id, 0, nurand_fast(r, A_C_LAST, 0, 999, self.c.c_last))
        return (w_id, d_id, nurand_fast(r, A_C_ID, 1, CUSTOMERS, self.c.c_id), -1)

    def delivery(self, w_id: int) -> tuple:
        """O_CARRIER_ID uniform 1..10 [2.7.1]."""
        return (w_id, 1 + int(self._r() * 10))

    def stock_level(self, w_id: int) -> tuple:
        """The terminal's fixed district and a threshold uniform 10..20 [2.8.1]."""
        return (w_id, self.stock_d_id, 10 + int(self._r() * 11))

    def by_type(self) -> tuple:
        """The five methods indexed by the mix's transaction numbers."""
        return (self.new_order, self.payment, self.order_status, self.delivery, self.stock_level)
