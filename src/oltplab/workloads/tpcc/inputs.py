"""Terminal assignment, the run's C constants, and each virtual user's input generator.

Input generation follows clauses 2.4.1 (New-Order), 2.5.1 (Payment), 2.6.1 (Order-Status),
2.7.1 (Delivery) and 2.8.1 (Stock-Level). It lives in C (``oltplab._native.Terminal``), where
procedures mode draws it without the interpreter; ``--mode sql`` calls the same code, so with
one seed both modes draw the same inputs, order lines included. ``inputs(kind, w_id)``
returns the arguments of the type's PL/pgSQL function (docs/design.md):
- new_order:    (w_id, d_id, c_id, ol_i_ids, ol_supply_w_ids, ol_quantities)
- payment:      (w_id, d_id, c_w_id, c_d_id, c_id, c_last_num, h_amount)
- order_status: (w_id, d_id, c_id, c_last_num)
- delivery:     (w_id, o_carrier_id)
- stock_level:  (w_id, d_id, threshold)
New-Order's order lines are three tuples of 5..15 entries each [2.4.1.5]: OL_I_ID =
NURand(8191, 1, 100000), or the unused item id on the last line of 1% of the orders; a remote
supply warehouse with 1% probability per line, uniform among the others; quantity 1..10.
``c_last_num`` >= 0 selects the customer by last name (its C_LAST number), -1 by C_ID;
H_AMOUNT is decimal text (1.00..5000.00). Every "random within [x..y]" is uniform over the
whole closed range; NURand is clause 2.1.6's formula. ``inputs_text`` is the same draw as the
text the procedures loop sends.

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

from ... import _native
from .random import A_C_ID, A_OL_I_ID, pick_c_run

DISTRICTS = 10
ITEMS = 100_000
NOT_AN_ITEM = _native.NOT_AN_ITEM  # the unused item id of the 1% rolled-back New-Orders [2.4.1.5]


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


def terminal(plan, w_max: int, constants: RunConstants):
    """The deck and input generator of one virtual user (``plan`` has its ``seed``,
    ``stock_d_id`` and ``warehouses``), shared by both modes: ``_native.Terminal``."""
    return _native.Terminal(seed=plan.seed, w_max=w_max, stock_d_id=plan.stock_d_id,
                            c_id=constants.c_id, c_ol_i_id=constants.c_ol_i_id,
                            c_last=constants.c_last, warehouses=plan.warehouses)
