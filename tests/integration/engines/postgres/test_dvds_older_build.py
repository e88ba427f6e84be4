"""A shop built before DVD Store 3's parts holds DS2's six functions alone, and reads as DS2:
a procedures-mode run prepares and checks the functions it calls, and runs on it (every
connection used to prepare all twelve, and failed at connect)."""

from __future__ import annotations

from oltplab.config import RunSpec
from oltplab.engines.postgres.dvds.loader import build
from oltplab.engines.postgres.dvds.schema import schema_info
from oltplab.loadgen.manager import run_workload
from oltplab.workloads.dvds.build import DvdsBuildSpec
from oltplab.workloads.dvds.params import DvdsParams
from oltplab.workloads.dvds.schema import DS3_FUNCTIONS
from oltplab.workloads.dvds.sizes import parse_size

from .test_dvds_build import q


def test_a_ds2_shop_without_ds3s_functions_runs_in_procedures_mode(pg):
    dsn = pg.create_db("dvdsold")
    build(dsn, DvdsBuildSpec(size=parse_size("1MB"), build_users=1, seed=11))
    q(dsn, *(f"DROP FUNCTION {name}" for name in DS3_FUNCTIONS))
    info = schema_info(dsn)
    assert not info.ds3 and not info.functions_installed
    spec = RunSpec(users=(2,), rampup=0.5, duration=2.0, workload="dvds", name="older",
                   params=DvdsParams(), seed=5, sample_interval=0, power="none",
                   io_latency="off")
    outcome = run_workload(dsn, spec, engine="postgres")
    assert outcome.status == "completed", outcome.error
    [step] = outcome.steps
    assert step["transactions"]["order"]["committed"] > 0
    assert sum(v.get("errors", 0) for v in step["transactions"].values()) == 0
