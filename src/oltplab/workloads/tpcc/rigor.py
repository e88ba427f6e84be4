"""The figures that say whether a step can be trusted: pure functions with known answers.

- ``input_shares``: the input-variability shares of TPC-C clause 5.5 measured in the window
  (fractions 0..1; null when no transaction of the kind completed);
- completed transactions per 10 s and their coefficient of variation (metrics/throughput.py);
- ``step_warnings``: one line per figure outside its bound, stating the figure and the bound.

A share warns only when it lies outside the allowed range by more than sampling noise
explains: the range is widened on each side by ``NOISE_SE`` binomial standard errors,
sqrt(p (1 - p) / n) at the target share p and the observed count n (for the mean order lines
per order, sqrt(10 / n): the variance of a uniform draw from 5..15). Short runs therefore
warn only on real deviations, long runs on small ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...metrics.throughput import INTERVAL_S, per_interval, variation

# the raw counts behind the shares, counted over completed transactions in the window
INPUT_KEYS = ("new_orders", "order_lines", "remote_order_lines", "payments", "remote_payments",
              "payments_by_last_name", "order_statuses", "order_status_by_last_name",
              "deliveries", "skipped_deliveries")
DISTRICTS = 10
NOISE_SE = 3.0
TPM_BOUND = 0.01  # client against server TPM
FAILURE_BOUND = 0.01  # errors, retries: of transactions
SKIPPED_BOUND = 0.01  # clause 5.4.5: at most 1% (or one) of the districts delivered
CV_BOUND = 0.10
LINES_VARIANCE = 10.0  # of a uniform integer on 5..15: (11^2 - 1) / 12


@dataclass(frozen=True)
class Range:
    """An input share's target and allowed range over the measurement interval [5.5]."""

    key: str
    what: str
    target: float
    low: float
    high: float


SHARES = (
    Range("remote_order_lines", "remote order lines", 0.01, 0.0095, 0.0105),
    Range("remote_payments", "remote payments", 0.15, 0.14, 0.16),
    Range("payments_by_last_name", "payments by last name", 0.60, 0.57, 0.63),
    Range("order_status_by_last_name", "order-status by last name", 0.60, 0.57, 0.63),
    Range("rolled_back_new_orders", "rolled-back New-Orders", 0.01, 0.009, 0.011),
)
LINES = Range("order_lines_per_order", "order lines per order", 10.0, 9.5, 10.5)
SHARE_KEYS = tuple(r.key for r in SHARES) + ("skipped_deliveries", LINES.key)
REMOTE = ("remote_order_lines", "remote_payments")  # no other warehouse: always local


def zero_inputs() -> dict[str, int]:
    return {k: 0 for k in INPUT_KEYS}


def add_inputs(total: dict[str, int], more: dict) -> None:
    """Add the counts of ``more`` (a dict with the INPUT_KEYS) into ``total``."""
    for k in INPUT_KEYS:
        total[k] += int(more[k])


def _ratio(num: int, den: int) -> float | None:
    return None if den <= 0 else num / den


def _trials(inputs: dict, committed: int, rolled_back: int) -> dict[str, tuple[int, int]]:
    """(count, trials) behind each share."""
    return {
        "remote_order_lines": (inputs["remote_order_lines"], inputs["order_lines"]),
        "remote_payments": (inputs["remote_payments"], inputs["payments"]),
        "payments_by_last_name": (inputs["payments_by_last_name"], inputs["payments"]),
        "order_status_by_last_name": (inputs["order_status_by_last_name"],
                                      inputs["order_statuses"]),
        "rolled_back_new_orders": (rolled_back, committed + rolled_back),
        "skipped_deliveries": (inputs["skipped_deliveries"], DISTRICTS * inputs["deliveries"]),
        "order_lines_per_order": (inputs["order_lines"], inputs["new_orders"]),
    }


def input_shares(inputs: dict, committed_new_orders: int, rolled_back_new_orders: int) -> dict:
    """The shares of clause 5.5 (and the mean order lines per order), null without trials.

    ``rolled_back_new_orders`` is rolled back / (committed + rolled back) New-Orders;
    ``skipped_deliveries`` is skipped districts / (10 x deliveries)."""
    return {k: _ratio(num, den) for k, (num, den)
            in _trials(inputs, committed_new_orders, rolled_back_new_orders).items()}


def noise_range(r: Range, n: int, variance: float | None = None) -> tuple[float, float]:
    """The allowed range widened by NOISE_SE standard errors of a mean over ``n`` trials
    (binomial at the target share unless ``variance`` is given)."""
    var = r.target * (1 - r.target) if variance is None else variance
    se = math.sqrt(var / n)
    return r.low - NOISE_SE * se, r.high + NOISE_SE * se


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def step_warnings(*, client_tpm: int | None, server_tpm: int | None, completed: int,
                  errors: int, retries: int, inputs: dict, committed_new_orders: int,
                  rolled_back_new_orders: int, warehouses: int, cv: float | None,
                  intervals: int = 0, autovacuum_runs: int = 0) -> list[str]:
    """Every figure of a step outside its bound, one line each (empty when all hold).

    ``autovacuum_runs`` (on the workload's tables in the window) is named in the TPM warning:
    their transactions count on the server only."""
    out = []
    if client_tpm is not None and server_tpm:
        d = abs(client_tpm - server_tpm) / server_tpm
        if d > TPM_BOUND:
            why = (f"; {autovacuum_runs} autovacuum runs in the window count on the server"
                   if autovacuum_runs > 0 else "")
            out.append(f"client TPM {client_tpm:,} and server TPM {server_tpm:,} differ by "
                       f"{_pct(d)} (bound {_pct(TPM_BOUND)}){why}")
    trials = _trials(inputs, committed_new_orders, rolled_back_new_orders)
    for r in SHARES:
        num, n = trials[r.key]
        if n <= 0 or (warehouses < 2 and r.key in REMOTE):
            continue
        lo, hi = noise_range(r, n)
        x = num / n
        if not lo <= x <= hi:
            out.append(f"{r.what} {_pct(x)} ({num:,} of {n:,}) outside {_pct(r.low)}.."
                       f"{_pct(r.high)} (clause 5.5) beyond sampling noise "
                       f"({_pct(max(lo, 0.0))}..{_pct(hi)} at {NOISE_SE:g} standard errors)")
    lines, orders = trials[LINES.key]
    if orders > 0:
        lo, hi = noise_range(LINES, orders, LINES_VARIANCE)
        x = lines / orders
        if not lo <= x <= hi:
            out.append(f"{LINES.what} {x:.2f} over {orders:,} New-Orders outside "
                       f"{LINES.low:g}..{LINES.high:g} (clause 5.5) beyond sampling noise "
                       f"({lo:.2f}..{hi:.2f} at {NOISE_SE:g} standard errors)")
    skipped, districts = trials["skipped_deliveries"]
    if districts > 0 and skipped > max(SKIPPED_BOUND * districts, 1):
        out.append(f"skipped deliveries {_pct(skipped / districts)} ({skipped:,} of "
                   f"{districts:,} districts) above {_pct(SKIPPED_BOUND)} (clause 5.4.5)")
    attempts = completed + errors
    if attempts > 0 and errors / attempts > FAILURE_BOUND:
        out.append(f"errors {_pct(errors / attempts)} ({errors:,} of {attempts:,} transactions)"
                   f" above {_pct(FAILURE_BOUND)}")
    if attempts > 0 and retries / attempts > FAILURE_BOUND:
        out.append(f"retries {_pct(retries / attempts)} ({retries:,} per {attempts:,} "
                   f"transactions) above {_pct(FAILURE_BOUND)}")
    if cv is not None and cv > CV_BOUND:
        out.append(f"throughput per {INTERVAL_S:g} s varies by {_pct(cv)} (coefficient of "
                   f"variation over {intervals} intervals) above {_pct(CV_BOUND)}")
    return out


def step_rigor(counts: dict, inputs: dict, *, client_tpm: int | None, server_tpm: int | None,
               series: list, start_ns: int, end_ns: int, warehouses: int,
               autovacuum_runs: int = 0, per_second: bool = False, **context) -> dict:
    """A step's input shares, completions per 10 s (and per second with ``per_second``, for
    the dips of faults), warnings, and the figures the transactions' entries add: the fields a
    step's record gets. ``counts``: {transaction type: metrics.summary.TypeCounts};
    ``series``: each worker's (t_ns, completed) points; ``context``: what the step passes every
    workload (client_unit, server_unit, params) that this one does not need."""
    new_order = counts["new_order"]
    per_10s = per_interval(series, start_ns, end_ns) if series else []
    cv = variation(per_10s)
    shares = input_shares(inputs, new_order.committed, new_order.rolled_back)
    warnings = step_warnings(
        client_tpm=client_tpm, server_tpm=server_tpm,
        completed=sum(c.count for c in counts.values()),
        errors=sum(c.errors for c in counts.values()),
        retries=sum(c.retries for c in counts.values()), inputs=inputs,
        committed_new_orders=new_order.committed,
        rolled_back_new_orders=new_order.rolled_back, warehouses=warehouses,
        cv=cv, intervals=len(per_10s), autovacuum_runs=autovacuum_runs)
    throughput = {"interval_s": INTERVAL_S, "completed": per_10s,
                  "cv": None if cv is None else round(cv, 4)}
    if per_second and series:
        throughput["per_s"] = per_interval(series, start_ns, end_ns, 10**9)
    return {"inputs": {k: None if v is None else round(v, 6) for k, v in shares.items()},
            "input_counts": inputs,
            "throughput": throughput,
            "warnings": warnings,
            "transaction_fields": {"delivery": {"skipped_districts": inputs["skipped_deliveries"]
                                                if inputs["deliveries"] else None}}}
