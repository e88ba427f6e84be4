"""The TPC-C-derived workload: five transaction types, NOPM as its headline, the input shares
of clause 5.5 as its rigor checks (rigor.py), its schema, loaders and checks in
``engines/<engine>/tpcc/``."""

from __future__ import annotations

from ..base import Workload
from . import inputs, mix, rigor

CAVEAT = ("TPC-C-derived workload: TPM and NOPM follow HammerDB's server-side method; the "
          "results are not comparable with audited TPC-C results.")

WORKLOAD = Workload(
    name="tpcc",
    label="TPC-C-derived",
    transactions=tuple(mix.NAMES),
    unit="NOPM",
    unit_transaction="new_order",
    input_keys=rigor.INPUT_KEYS,
    share_keys=rigor.SHARE_KEYS,
    step_rigor=rigor.step_rigor,
    caveat=CAVEAT,
    draw_constants=lambda rng, schema, spec=None: inputs.draw_constants(rng, schema.c_last_load),
    assign_users=inputs.assign_terminals,
    terminal=inputs.terminal,
    schema_record=lambda info, database=False: (
        {"warehouses": info.warehouses} if database else
        {"warehouses": info.warehouses, "c_last_load": info.c_last_load}),
)
