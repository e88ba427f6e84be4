"""Charts and tables of DVD-Store-derived runs, per user count, as the shop's papers draw
them: orders per minute (OPM, the orders the server committed in the window), the order's
response time (the sum of its calls) and each phase's, and the host's telemetry."""

from __future__ import annotations

from . import tpcc as common
from .charts import bar_chart, entries, per_step
from .model import Chart, Table
from .runs import Group, RunData

USERS = common.USERS
PHASES = ("login", "new_customer", "browse", "purchase")
#: DVD Store 3's phase, charted when a run has it
DS3_PHASES = ("reviews",)


def _lat(s: dict, key: str):
    return (s.get("order_latency") or {}).get(key)


def _phase(s: dict, phase: str, key: str):
    return ((s.get("phases") or {}).get(phase) or {}).get(key)


def charts(groups: list[Group], section: str = "") -> list[Chart]:
    """OPM, OPM per user, the order's and the phases' response times per user count, then the
    host's telemetry."""
    def step_value(key):
        return lambda g: per_step(g, lambda r, i, s: s.get(key))

    phases = PHASES + tuple(p for p in DS3_PHASES if any(
        p in (s.get("phases") or {}) for g in groups for r in g.runs for s in r.steps))

    out = [bar_chart(
        "opm", "Orders per minute per user count", USERS, "orders per minute",
        entries(groups, [("OPM", step_value("opm")), ("client OPM", step_value("client_opm"))]),
        why="no step has OPM", section=section,
        caption="OPM: orders the server committed in the measured interval (rows added to "
                "ORDERS), per minute; client OPM: orders the users completed in it. Ramp-up "
                "excluded."),
        bar_chart(
            "opm_per_user", "OPM per virtual user", USERS, "OPM per virtual user",
            entries(groups, [("OPM per user", lambda g: per_step(
                g, lambda r, i, s: common._per_user(s, "opm")))]),
            why="no step has OPM", section=section,
            caption="Server OPM divided by the step's user count."),
        bar_chart(
            "order_latency", "Order response time per user count", USERS, "response time (ms)",
            entries(groups, [("mean", lambda g: per_step(g, lambda r, i, s: _lat(s, "mean"))),
                             ("p95", lambda g: per_step(g, lambda r, i, s: _lat(s, "p95"))),
                             ("p99", lambda g: per_step(g, lambda r, i, s: _lat(s, "p99")))]),
            why="no step has order response times", section=section,
            caption="An order's response time is the sum of its calls' (login or new "
                    "customer, browses, purchase), think time excluded: HDR histograms at "
                    "microsecond resolution, measured interval only."),
        bar_chart(
            "phase_latency", "Response time per phase (p95)", USERS, "p95 response time (ms)",
            entries(groups, [(p.replace("_", " "), lambda g, p=p: per_step(
                g, lambda r, i, s: _phase(s, p, "p95"))) for p in phases]),
            why="no step has phase response times", section=section,
            caption="The 95th percentile of each phase's calls (browse: by category, actor "
                    "and title together; reviews, in a DS3 run: DVD Store 3's review "
                    "searches, new reviews, helpfulness ratings and new memberships)."),
    ]
    return out + common.telemetry_charts(groups, section, orders_per_watt=False)


def steps_table(run: RunData) -> Table:
    rows = []
    for s in run.steps:
        tx = {k: v for k, v in (s.get("transactions") or {}).items() if k != "order"}
        inputs = s.get("inputs") or {}
        share = inputs.get("new_customers")
        rows.append((s.get("users"), s.get("opm"), s.get("client_opm"),
                     common._per_user(s, "opm"), s.get("rollback_pct"), _lat(s, "mean"),
                     _lat(s, "p95"), _lat(s, "p99"), None if share is None else 100 * share,
                     inputs.get("searches_per_order"), inputs.get("items_per_cart"),
                     s.get("measured_s"), sum((v or {}).get("errors") or 0 for v in tx.values()),
                     sum((v or {}).get("retries") or 0 for v in tx.values()),
                     bool(s.get("partial"))))
    return Table("steps", "Steps", ("users", "OPM", "client OPM", "OPM per user",
                                    "rollbacks (%)", "order mean (ms)", "order p95 (ms)",
                                    "order p99 (ms)", "new customers (%)", "searches per order",
                                    "items per cart", "measured (s)", "errors", "retries",
                                    "partial"), tuple(rows),
                 caption="OPM: orders the server committed in the measured interval; client "
                         "OPM: orders the users completed in it; rollbacks: purchases rolled "
                         "back on short stock, of all purchases.")


def phases_table(run: RunData) -> Table:
    rows = tuple((s.get("users"), phase, lat.get("count"), lat.get("mean"), lat.get("p50"),
                  lat.get("p95"), lat.get("p99"), lat.get("max"))
                 for s in run.steps for phase, lat in (s.get("phases") or {}).items())
    return Table("phases", "Response time per phase (ms)",
                 ("users", "phase", "count", "mean", "p50", "p95", "p99", "max"), rows,
                 caption="Client-side response times of each phase's calls, measured "
                         "interval only.")


def tables(run: RunData) -> list[Table]:
    io = common.io_latency_table(run)
    return [steps_table(run), phases_table(run), common.warnings_table(run),
            common.transactions_table(run), common.host_steps_table(run),
            common.devices_table(run), *([io] if io else [])]


def headline(run: dict) -> str:
    """The step with the highest OPM: "OPM 12,345 at 4 users"."""
    return common.best_step_line(run, "opm", "OPM")
