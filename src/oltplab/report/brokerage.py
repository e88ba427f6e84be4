"""Charts and tables of TPC-E-derived brokerage runs, per user count: trade results per
second (trps, the trade results the server committed in the window), each transaction's
response time, the measured mix against the deck, and the host's telemetry."""

from __future__ import annotations

from . import tpcc as common
from .charts import bar_chart, entries, per_step
from .model import Chart, Table
from .runs import Group, RunData

USERS = common.USERS
#: The transactions whose p95 the latency chart draws, the users' first.
TRANSACTIONS = ("trade_order", "trade_result", "trade_status", "trade_lookup", "trade_update",
                "market_feed", "market_watch", "security_detail", "customer_position",
                "broker_volume")


def _tx(s: dict, name: str, key: str):
    return ((s.get("transactions") or {}).get(name) or {}).get(key)


def charts(groups: list[Group], section: str = "") -> list[Chart]:
    """trps and trps per user, each transaction's p95 per user count, then the host's
    telemetry."""
    def step_value(key):
        return lambda g: per_step(g, lambda r, i, s: s.get(key))

    rates = [("trps", step_value("trps")), ("client trps", step_value("client_trps"))]
    return [
        bar_chart(
            "trps", "Trade results per second per user count", USERS,
            "trade results per second", entries(groups, rates), why="no step has trps",
            section=section,
            caption="trps: trade results the server committed in the measured interval (its "
                    "brokers' trade counts), per second; client trps: Trade-Results the "
                    "market emulator saw commit. Ramp-up excluded."),
        bar_chart(
            "transaction_latency", "Response time per transaction (p95)", USERS,
            "p95 response time (ms)",
            entries(groups, [(t.replace("_", " "), lambda g, t=t: per_step(
                g, lambda r, i, s: _tx(s, t, "p95"))) for t in TRANSACTIONS]),
            why="no step has response times", section=section,
            caption="The 95th percentile of each transaction's response time: HDR histograms "
                    "at microsecond resolution, measured interval only."),
    ] + common.telemetry_charts(groups, section, orders_per_watt=False)


def steps_table(run: RunData) -> Table:
    rows = []
    for s in run.steps:
        tx = s.get("transactions") or {}
        rows.append((s.get("users"), s.get("trps"), s.get("client_trps"),
                     common._per_user(s, "trps"), s.get("rollback_pct"),
                     _tx(s, "trade_result", "mean"), _tx(s, "trade_result", "p95"),
                     _tx(s, "trade_order", "p95"), s.get("measured_s"),
                     sum((v or {}).get("errors") or 0 for v in tx.values()),
                     sum((v or {}).get("retries") or 0 for v in tx.values()),
                     bool(s.get("partial"))))
    return Table("steps", "Steps", ("users", "trps", "client trps", "trps per user",
                                    "rollbacks (%)", "trade result mean (ms)",
                                    "trade result p95 (ms)", "trade order p95 (ms)",
                                    "measured (s)", "errors", "retries", "partial"), tuple(rows),
                 caption="trps: trade results the server committed in the measured interval, "
                         "per second; client trps: those the market emulator saw commit; "
                         "rollbacks: Trade-Orders rolled back by design, of all orders.")


def mix_table(run: RunData) -> Table:
    rows = tuple((s.get("users"), name, share, (s.get("deck_mix") or {}).get(name))
                 for s in run.steps for name, share in (s.get("mix") or {}).items())
    return Table("mix", "Measured mix (%)", ("users", "transaction", "measured", "deck"), rows,
                 caption="Each user transaction's share of the users' completed transactions "
                         "against the deck's (a warning beyond +/- 1 point).")


def tables(run: RunData) -> list[Table]:
    io = common.io_latency_table(run)
    return [steps_table(run), mix_table(run), common.warnings_table(run),
            common.transactions_table(run), common.host_steps_table(run),
            common.devices_table(run), *([io] if io else [])]


def headline(run: dict) -> str:
    """The step with the highest trps: "trps 123 at 4 users"."""
    return common.best_step_line(run, "trps", "trps")
