"""The figures that say whether a step of the shop can be trusted, and the fields its record
adds: pure functions with known answers.

- the measured inputs: the share of orders begun by a new customer, searches per order and
  items per cart (a DS3 run: review searches per order and the shares of orders with a new
  review, a helpfulness rating, a new membership, per order that made its review
  searches), each with a warning when it lies outside its range (the run's parameter
  +/- 10%) by more than sampling noise explains (``NOISE_SE`` standard errors of the
  draw's own distribution at the observed count);
- orders per 10 s (per second with faults) and their coefficient of variation;
- client against server OPM, errors and retries.
"""

from __future__ import annotations

import math

from ...metrics.histogram import merge
from ...metrics.summary import summarize
from ...metrics.throughput import INTERVAL_S, per_interval, variation
from .params import MAX_CART, DvdsParams

# the raw counts of the users' inputs, over completed calls in the window
# (unknown_logins: a login found no such user, the order ended there; taken_usernames: a new
# customer's name existed and another was drawn)
# DVD Store 3's (a DS3 run): review_orders the orders whose review searches all returned,
# review_searches those of the three kinds, new_helpfulness the ratings, new_members the
# memberships made, taken_memberships the new_member calls of a customer who was a member)
DS2_INPUT_KEYS = ("logins", "new_customers", "searches", "browse_category", "browse_actor",
                  "browse_title", "purchases", "cart_items", "rolled_back_purchases",
                  "unknown_logins", "taken_usernames")
DS3_INPUT_KEYS = ("review_orders", "review_searches", "reviews_product", "reviews_actor",
                  "reviews_title", "new_reviews", "new_helpfulness", "new_members",
                  "taken_memberships")
INPUT_KEYS = DS2_INPUT_KEYS + DS3_INPUT_KEYS
DS2_SHARE_KEYS = ("new_customers", "searches_per_order", "items_per_cart")
DS3_SHARE_KEYS = ("reviews_per_order", "new_reviews", "new_helpfulness", "new_members")
SHARE_KEYS = DS2_SHARE_KEYS + DS3_SHARE_KEYS
PHASES = {"login": ("login",), "new_customer": ("new_customer",),
          "browse": ("browse_category", "browse_actor", "browse_title"),
          "purchase": ("purchase",),
          # DVD Store 3's calls, all together; in a step's record when it has any
          "reviews": ("reviews_product", "reviews_actor", "reviews_title", "new_review",
                      "new_helpfulness", "new_member")}
OPTIONAL_PHASES = ("reviews",)
NOISE_SE = 3.0
RANGE = 0.10  # of the parameter's expected value, each way
OPM_BOUND = 0.005  # client against server OPM
FAILURE_BOUND = 0.01
CV_BOUND = 0.10


def uniform_moments(top: int, cap: int | None = None) -> tuple[float, float]:
    """Mean and variance of a uniform integer on 1..top, each value capped at ``cap``."""
    values = [min(k, cap) if cap else k for k in range(1, top + 1)]
    mean = sum(values) / top
    return mean, sum((v - mean) ** 2 for v in values) / top


def _share(pct: float) -> tuple[float, float]:
    p = pct / 100
    return p, p * (1 - p)


def expected(params: DvdsParams) -> dict[str, tuple[float, float]]:
    """(expected value, variance of one draw) of each measured input."""
    return {"new_customers": _share(params.pct_new_customers),
            "searches_per_order": uniform_moments(2 * params.searches - 1),
            "items_per_cart": uniform_moments(2 * params.line_items - 1, MAX_CART),
            "reviews_per_order": uniform_moments(2 * params.reviews - 1),
            "new_reviews": _share(params.pct_new_reviews),
            "new_helpfulness": _share(params.pct_new_helpfulness),
            "new_members": _share(params.pct_new_members)}


def _trials(inputs: dict, ds3: bool = False) -> dict[str, tuple[int, int]]:
    """(total, trials) behind each measured input; DVD Store 3's per order that made its
    review searches."""
    out = {"new_customers": (inputs["new_customers"], inputs["logins"] + inputs["new_customers"]),
           "searches_per_order": (inputs["searches"], inputs["purchases"]),
           "items_per_cart": (inputs["cart_items"], inputs["purchases"])}
    if ds3:
        orders = inputs.get("review_orders", 0)
        out.update(reviews_per_order=(inputs.get("review_searches", 0), orders),
                   new_reviews=(inputs.get("new_reviews", 0), orders),
                   new_helpfulness=(inputs.get("new_helpfulness", 0), orders),
                   new_members=(inputs.get("new_members", 0)
                                + inputs.get("taken_memberships", 0), orders))
    return out


def measured_inputs(inputs: dict, ds3: bool = False) -> dict:
    return {k: (round(num / n, 6) if n > 0 else None)
            for k, (num, n) in _trials(inputs, ds3).items()}


WHAT = {"new_customers": "new-customer share", "searches_per_order": "searches per order",
        "items_per_cart": "items per cart", "reviews_per_order": "review searches per order",
        "new_reviews": "new-review share", "new_helpfulness": "helpfulness-rating share",
        "new_members": "new-member share"}
SHARES = ("new_customers", "new_reviews", "new_helpfulness", "new_members")


def input_warnings(inputs: dict, params: DvdsParams) -> list[str]:
    out = []
    for key, (num, n) in _trials(inputs, params.ds3).items():
        if n <= 0:
            continue
        mean, var = expected(params)[key]
        lo, hi = mean * (1 - RANGE), mean * (1 + RANGE)
        se = math.sqrt(var / n)
        x = num / n
        if not lo - NOISE_SE * se <= x <= hi + NOISE_SE * se:
            fmt = (lambda v: f"{100 * v:.2f}%") if key in SHARES else (lambda v: f"{v:.2f}")
            out.append(f"{WHAT[key]} {fmt(x)} over {n:,} outside {fmt(lo)}..{fmt(hi)} beyond "
                       f"sampling noise ({fmt(max(lo - NOISE_SE * se, 0))}.."
                       f"{fmt(hi + NOISE_SE * se)} at {NOISE_SE:g} standard errors)")
    return out


def step_rigor(counts: dict, inputs: dict, *, client_tpm: int | None, server_tpm: int | None,
               series: list, start_ns: int, end_ns: int, warehouses: int = 0,
               autovacuum_runs: int = 0, per_second: bool = False, client_unit: int | None = None,
               server_unit: int | None = None, params: DvdsParams | None = None) -> dict:
    """A step's measured inputs, orders per 10 s (and per second with ``per_second``),
    warnings: the fields a step's record gets. ``series``: each worker's (t_ns, orders)."""
    params = params or DvdsParams()
    per_10s = per_interval(series, start_ns, end_ns) if series else []
    cv = variation(per_10s)
    warnings = []
    if client_unit is not None and server_unit:
        d = abs(client_unit - server_unit) / server_unit
        if d > OPM_BOUND:
            warnings.append(f"client OPM {client_unit:,} and server OPM {server_unit:,} differ "
                            f"by {100 * d:.2f}% (bound {100 * OPM_BOUND:.1f}%)")
    if inputs.get("unknown_logins"):
        warnings.append(f"{inputs['unknown_logins']:,} logins found no such customer: the "
                        "database holds fewer customers than its build recorded")
    warnings += input_warnings(inputs, params)
    calls = {k: c for k, c in counts.items() if k != "order"}
    errors = sum(c.errors for c in calls.values())
    retries = sum(c.retries for c in calls.values())
    attempts = sum(c.count for c in calls.values()) + errors
    if attempts and errors / attempts > FAILURE_BOUND:
        warnings.append(f"errors {100 * errors / attempts:.2f}% ({errors:,} of {attempts:,} "
                        f"calls) above {100 * FAILURE_BOUND:.0f}%")
    if attempts and retries / attempts > FAILURE_BOUND:
        warnings.append(f"retries {100 * retries / attempts:.2f}% ({retries:,} per {attempts:,} "
                        f"calls) above {100 * FAILURE_BOUND:.0f}%")
    if cv is not None and cv > CV_BOUND:
        warnings.append(f"orders per {INTERVAL_S:g} s vary by {100 * cv:.2f}% (coefficient of "
                        f"variation over {len(per_10s)} intervals) above {100 * CV_BOUND:.0f}%")
    throughput = {"interval_s": INTERVAL_S, "completed": per_10s,
                  "cv": None if cv is None else round(cv, 4), "unit": "orders"}
    if per_second and series:
        throughput["per_s"] = per_interval(series, start_ns, end_ns, 10**9)
    if not params.ds3:
        inputs = {k: v for k, v in inputs.items() if k not in DS3_INPUT_KEYS}
    return {"inputs": measured_inputs(inputs, params.ds3), "input_counts": inputs,
            "throughput": throughput, "warnings": warnings}


def step_fields(counts: dict, hists: dict) -> dict:
    """The shop's own fields of a step: the rollback share of purchases, the order's response
    time (the sum of its calls) and each phase's, in ms."""
    order = counts["order"]
    purchases = counts["purchase"]
    tried = purchases.committed + purchases.rolled_back
    phases = {}
    for phase, kinds in PHASES.items():
        if phase in OPTIONAL_PHASES and not any(counts[k].count for k in kinds):
            continue
        hist = merge([hists[k] for k in kinds])
        total = sum(counts[k].total_us for k in kinds)
        exact = hist.get_total_count() == sum(counts[k].count for k in kinds)
        phases[phase] = summarize(hist, total if exact else None).as_dict() | {
            "count": hist.get_total_count()}
    exact = hists["order"].get_total_count() == order.count
    return {"rollback_pct": round(100 * purchases.rolled_back / tried, 3) if tried else None,
            "order_latency": summarize(hists["order"], order.total_us if exact else None).as_dict()
            | {"count": order.count},
            "phases": phases}
