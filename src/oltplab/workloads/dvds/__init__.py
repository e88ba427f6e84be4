"""The DVD-Store-derived workload: an online DVD shop whose unit is one simulated order
(login or new customer, browses, on a DS3 build DVD Store 3's review searches, new review,
helpfulness rating and new membership, a purchase), OPM its headline; its sizes, data and word
lists here, its schema, loader, functions and checks in ``engines/<engine>/dvds/``, its
order generator in native/dvds/."""

from __future__ import annotations

from ..base import Workload, assign_users
from . import inputs, rigor

CAVEAT = ("DVD-Store-derived workload: OPM counts the orders the server committed in the "
          "window; the results are not comparable with DVD Store's own published results.")

CALLS = ("login", "new_customer", "browse_category", "browse_actor", "browse_title", "purchase",
         # DVD Store 3's, drawn by a DS3 run only
         "reviews_product", "reviews_actor", "reviews_title", "new_review", "new_helpfulness",
         "new_member")

WORKLOAD = Workload(
    name="dvds",
    label="DVD-Store-derived",
    transactions=CALLS + ("order",),
    unit="OPM",
    unit_transaction="order",
    input_keys=rigor.INPUT_KEYS,
    share_keys=rigor.SHARE_KEYS,
    step_rigor=rigor.step_rigor,
    caveat=CAVEAT,
    draw_constants=inputs.draw_constants,
    assign_users=assign_users,
    terminal=inputs.terminal,
    phases=rigor.PHASES,
    unit_row=True,
    unit_key="opm",
    server_unit_key="orders_delta",
    step_fields=rigor.step_fields,
    optional=CALLS[6:],
    schema_record=lambda info, database=False: (
        {"size": info.size} if database else
        {"size": info.size, "customers": info.customers, "products": info.products,
         "orders": info.orders, **({"ds3": True, "reviews": info.reviews} if info.ds3 else {})}),
)
