"""The TPC-E-derived brokerage workload: customers trading securities through brokers, trade
results per second (``trps``) its headline. Its scale, reference data and row generators
here, its schema, loader, frames and checks in ``engines/<engine>/brokerage/``.

Results are TPC-E-derived: not comparable with audited TPC-E results, and never called tpsE.
"""

from __future__ import annotations

from ..base import Workload, assign_users
from . import inputs, rigor

CAVEAT = ("TPC-E-derived workload: trps counts the trade results the server committed in the "
          "window; the results are not comparable with audited TPC-E results.")


def _schema_record(info, database: bool = False) -> dict:
    if database:
        return {"customers": info.customers}
    return {"customers": info.customers, "days": info.days, "scale_factor": info.scale_factor,
            "trades": info.trades, "max_t_id": info.max_t_id, "page_kib": info.page_kib}


WORKLOAD = Workload(
    name="brokerage",
    label="TPC-E-derived brokerage",
    transactions=rigor.TRANSACTIONS,
    unit="TRPM",
    unit_transaction="trade_result",
    input_keys=rigor.INPUT_KEYS,
    share_keys=rigor.SHARE_KEYS,
    step_rigor=rigor.step_rigor,
    caveat=CAVEAT,
    draw_constants=inputs.draw_constants,
    assign_users=assign_users,
    terminal=inputs.terminal,
    actors=rigor.MARKET_CALLS,
    unit_key="trpm",
    server_unit_key="trade_results_delta",
    schema_record=_schema_record,
    market=inputs.bind_market,
    actors_for=inputs.actors_for,
    market_counts=inputs.market_counts,
)
