"""The figures that say whether a step of the brokerage can be trusted, and the fields its
record adds: pure functions with known answers.

- ``trps`` (the server's trade results per second: its brokers' ``b_num_trades`` moved by
  each committed Trade-Result) and ``client_trps`` (the Trade-Results the actors saw commit),
  with a warning when they differ by more than ``TRPS_BOUND``;
- the measured mix of the users' transactions (their shares in %) against the deck's, with
  a warning for a share more than ``MIX_BOUND`` points off;
- Trade-Order's deliberate rollbacks as a share of the orders (``rollback_pct``), retries and
  errors, transactions per 10 s and their coefficient of variation;
- the users' drawn inputs (customer tiers, limit orders, rollbacks) as shares.
"""

from __future__ import annotations

from ...metrics.throughput import INTERVAL_S, per_interval, variation
from .scale import MEANINGFUL_DAYS

#: The users' transactions and their cards in the deck of 890 (TPC-E's mix, in %: 19,
#: 18, 14, 13, 10.1, 8, 4.9, 2), in the C loop's order; the market emulator's after them.
CARDS = {"broker_volume": 49, "customer_position": 130, "market_watch": 180,
         "security_detail": 140, "trade_lookup": 80, "trade_order": 101, "trade_status": 190,
         "trade_update": 20}
DECK = sum(CARDS.values())
USER_CALLS = tuple(CARDS)
MARKET_CALLS = ("trade_result", "market_feed", "data_maintenance")
TRANSACTIONS = USER_CALLS + MARKET_CALLS

INPUT_KEYS = (
    "tier1", "tier2", "tier3", "tl_frame1", "tl_frame2", "tl_frame3", "tl_frame4",
    "tu_frame1", "tu_frame2", "tu_frame3", "mw_watch_list", "mw_holdings", "mw_industry",
    "cp_tax_id", "cp_history", "sd_lob", "to_limit", "to_sell", "to_stop_loss", "to_margin",
    "to_lifo", "to_by_other", "to_by_company", "to_rolled_back",
    # the market emulators' at the step's end, summed over the workers: limit orders not yet
    # sent in a Market-Feed, work the emulator refused (a store at its cap), triggered trades
    # an actor had no room for, Data-Maintenances drawn
    "pending_limits", "market_refused", "lost_triggers", "data_maintenance_drawn")
SHARE_KEYS = ("tier1", "tier2", "tier3", "to_limit", "to_rolled_back")
MIX_BOUND = 1.0  # points of %, each way
TRPS_BOUND = 0.005  # client against server trade results per second
FAILURE_BOUND = 0.01
CV_BOUND = 0.10


def deck_mix() -> dict[str, float]:
    """The deck's shares in %, by transaction."""
    return {k: round(100 * n / DECK, 3) for k, n in CARDS.items()}


def measured_mix(counts: dict) -> dict[str, float]:
    """The users' completed transactions' shares in %, by transaction (empty without any)."""
    total = sum(counts[k].count for k in USER_CALLS if k in counts)
    if not total:
        return {}
    return {k: round(100 * counts[k].count / total, 3) for k in USER_CALLS}


def mix_warnings(mix: dict[str, float]) -> list[str]:
    deck = deck_mix()
    return [f"{k} is {share:.2f}% of the users' transactions, the deck's {deck[k]:.2f}% "
            f"(bound +/- {MIX_BOUND:g} point)"
            for k, share in mix.items() if abs(share - deck[k]) > MIX_BOUND]


def input_shares(inputs: dict, orders: int) -> dict[str, float | None]:
    """Customer tiers among the customers drawn, limit orders and deliberate rollbacks among
    the ``orders`` Trade-Orders, as fractions."""
    tiers = sum(inputs.get(k, 0) for k in ("tier1", "tier2", "tier3"))

    def share(n, of):
        return round(n / of, 4) if of else None

    return {"tier1": share(inputs.get("tier1", 0), tiers),
            "tier2": share(inputs.get("tier2", 0), tiers),
            "tier3": share(inputs.get("tier3", 0), tiers),
            "to_limit": share(inputs.get("to_limit", 0), orders),
            "to_rolled_back": share(inputs.get("to_rolled_back", 0), orders)}


def step_rigor(counts: dict, inputs: dict, *, series: list = (), start_ns: int = 0,
               end_ns: int = 0, per_second: bool = False, server_unit: int | None = None,
               params=None, **_) -> dict:
    """A step's trps, mix, rollbacks, retries, transactions per 10 s (per second with
    ``per_second``) and warnings. ``server_unit``: the server's trade results per minute;
    ``series``: each worker's (t_ns, completed) points."""
    measured_s = max(1e-9, (end_ns - start_ns) / 1e9)
    done = counts.get("trade_result")
    client_trps = done.committed / measured_s if done is not None else 0.0
    trps = None if server_unit is None else server_unit / 60
    warnings = []
    if trps:
        d = abs(client_trps - trps) / trps
        if d > TRPS_BOUND:
            warnings.append(f"client trps {client_trps:,.2f} and server trps {trps:,.2f} "
                            f"differ by {100 * d:.2f}% (bound {100 * TRPS_BOUND:.1f}%)")
    days = getattr(params, "days", None)
    if days is not None and days < MEANINGFUL_DAYS:
        warnings.append(f"the build has {days} day(s) of initial trading: Trade-Lookup's and "
                        f"Trade-Update's time windows are not meaningful below "
                        f"{MEANINGFUL_DAYS} days")
    mix = measured_mix(counts)
    warnings += mix_warnings(mix)
    warnings += [f"no {k} completed in the window" for k in TRANSACTIONS
                 if k in counts and not counts[k].count and k != "data_maintenance"]
    if inputs.get("market_refused") or inputs.get("lost_triggers"):
        warnings.append(f"the market emulator refused {inputs.get('market_refused', 0):,} "
                        f"trades and had no room for {inputs.get('lost_triggers', 0):,} "
                        f"triggered ones: they never get their Trade-Result")
    orders = counts.get("trade_order")
    errors = sum(c.errors for c in counts.values())
    retries = sum(c.retries for c in counts.values())
    attempts = sum(c.count for c in counts.values()) + errors
    if attempts and errors / attempts > FAILURE_BOUND:
        warnings.append(f"errors {100 * errors / attempts:.2f}% ({errors:,} of {attempts:,} "
                        f"transactions) above {100 * FAILURE_BOUND:.0f}%")
    per_10s = per_interval(list(series), start_ns, end_ns) if series else []
    cv = variation(per_10s)
    if cv is not None and cv > CV_BOUND:
        warnings.append(f"transactions per {INTERVAL_S:g} s vary by {100 * cv:.2f}% "
                        f"(coefficient of variation over {len(per_10s)} intervals) above "
                        f"{100 * CV_BOUND:.0f}%")
    throughput = {"interval_s": INTERVAL_S, "completed": per_10s,
                  "cv": None if cv is None else round(cv, 4), "unit": "transactions"}
    if per_second and series:
        throughput["per_s"] = per_interval(list(series), start_ns, end_ns, 10**9)
    return {
        "trps": None if trps is None else round(trps, 3),
        "client_trps": round(client_trps, 3),
        "mix": mix,
        "deck_mix": deck_mix(),
        "rollback_pct": (round(100 * orders.rolled_back / orders.count, 3)
                         if orders is not None and orders.count else None),
        "retries": retries,
        "errors": errors,
        "pending_limits": inputs.get("pending_limits"),
        "inputs": input_shares(inputs, orders.count if orders is not None else 0),
        "input_counts": dict(inputs),
        "throughput": throughput,
        "warnings": warnings,
    }
