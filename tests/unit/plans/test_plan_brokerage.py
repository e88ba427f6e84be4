"""Plans whose cells run the TPC-E-derived brokerage: the cells' scale, database and run spec,
the keys of the other workloads refused in one line, the example plan, and the plan report's
table of trps and the datastore's IO per cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from oltplab.errors import UsageError
from oltplab.plans.model import load_plan
from oltplab.plans.run import fingerprint
from oltplab.report.plancharts import brokerage_charts, brokerage_table
from oltplab.report.runs import Group, RunData

from .test_plans import plan_of

EXAMPLE = Path(__file__).parents[3] / "examples" / "plans" / "e7-brokerage-policies.toml"
PLAN = """
[plan]
name = "bk"
[defaults]
workload = "brokerage"
customers = 2000
users = [1, 2]
duration = "5s"
[matrix]
days = [5, 10]
[targets.a]
datadir = "/tmp/a"
"""


def test_a_brokerage_cell_has_its_scale_database_and_run(tmp_path):
    p = plan_of(tmp_path, PLAN)
    assert [c.name for c in p.cells] == ["days=5", "days=10"]
    five, ten = p.cells
    assert (five.scale.customers, five.scale.days, ten.scale.days) == (2000, 5, 10)
    assert five.size is None and five.warehouses is None
    assert five.db.dbname == "brokerage" and five.run.workload == "brokerage"
    assert five.run.mode == "procedures" and five.run.users == (1, 2)
    assert five.schema_name == "the brokerage of 2,000 customers x 5 days"
    assert [i.what for i in p.items] == ["brokerage", "brokerage"]
    assert p.step_name(p.steps[0]) == "brokerage"
    # the scale is part of what a run measures: another days is another configuration
    assert fingerprint(p.items[0]) != fingerprint(p.items[1])
    # the run's connections count the market emulator's actors beside the users
    assert p.items[0].kind.connections(p.items[0].spec) > 2 + 21


def test_days_default_to_300_and_a_named_database_is_kept(tmp_path):
    p = plan_of(tmp_path, PLAN.replace("days = [5, 10]", 'dbname = ["bk1"]'))
    assert p.cells[0].scale.days == 300 and p.cells[0].db.dbname == "bk1"


@pytest.mark.parametrize("extra, words", [
    ("warehouses = 2", ("warehouses is a TPC-C option", "brokerage")),
    ("keying_thinking = true", ("keying_thinking is a TPC-C option",)),
    ('size = "10MB"', ("size is an option of the dvds workload",)),
    ('think_time = "1s"', ("think_time is an option of the dvds workload",)),
    ('mode = "sql"', ("mode 'sql'", "procedures")),
    ("customers = 1500", ("customers 1500", "multiple of 1,000")),
    ("customers = 0", ("customers: must be at least 1",)),
])
def test_another_workloads_key_or_a_bad_scale_is_one_line(tmp_path, extra, words):
    text = PLAN.replace("[matrix]\ndays = [5, 10]", "").replace(
        "customers = 2000", "customers = 2000\n" + extra if "customers" not in extra else extra)
    with pytest.raises(UsageError) as e:
        plan_of(tmp_path, text)
    message = str(e.value)
    assert "\n" not in message and message.startswith(str(tmp_path / "plan.toml")), message
    for w in words:
        assert w in message, message


@pytest.mark.parametrize("workload", ['workload = "tpcc"', 'workload = "dvds"\nsize = "1MB"'])
def test_the_brokerages_keys_in_another_workloads_cell_are_one_line(tmp_path, workload):
    text = PLAN.replace('workload = "brokerage"', workload)
    with pytest.raises(UsageError, match='customers is an option of the brokerage workload; '
                                         'give workload = "brokerage"'):
        plan_of(tmp_path, text)


def test_a_brokerage_without_customers_is_one_line(tmp_path):
    with pytest.raises(UsageError, match='workload = "brokerage" needs customers'):
        plan_of(tmp_path, PLAN.replace("customers = 2000", ""))


def test_the_example_plan_runs_the_brokerage_on_four_datastores(tmp_path, monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    p = load_plan(EXAMPLE, tmp_path)
    assert [c.datastore.name for c in p.cells] == ["r1", "r5", "r5-zstd", "xfs"]
    assert {(c.scale.customers, c.scale.days, c.run.workload, c.build_users) for c in p.cells} \
        == {(1000, 5, "brokerage", 2)}
    assert str(p.cells[0].db.datadir).endswith("datastores/r1/mnt/postgres")
    assert p.baseline == p.cells[0].label


def _run(name: str, store: str, steps: list[dict]) -> RunData:
    return RunData(record={"kind": "brokerage", "workload": "brokerage", "id": name,
                           "name": name, "datastores": {"datadir": {"name": store}},
                           "steps": steps})


def _step(users: int, trps: float, reads: float, writes: float, **more) -> dict:
    io = {"read_iops": reads, "write_iops": writes,
          "reads_per_write": reads / writes if writes else None, "read_kib": 8.0,
          "write_kib": 16.0, "await_ms": 0.5}
    return {"users": users, "trps": trps, "io": io, **more}


def test_the_policy_table_has_trps_and_the_datastores_io_per_cell_and_user_count():
    a = _run("a", "r1", [_step(1, 10.0, 900.0, 100.0), _step(2, 18.0, 1000.0, 200.0)])
    b = _run("b", "r1", [_step(1, 12.0, 1100.0, 100.0),
                         _step(2, 99.0, 1.0, 1.0, partial=True)])
    r1 = Group("bk.datastore-r1", [a, b], "#000")
    z = Group("bk.datastore-z", [_run("c", "z", [_step(1, 5.0, 50.0, 0.0)])], "#111")
    table = brokerage_table([r1, z])
    assert table.columns[:4] == ("datastore or cell", "users", "runs", "trps")
    rows = {(r[0], r[1]): dict(zip(table.columns, r)) for r in table.rows}
    assert list(rows) == [("r1", 1), ("r1", 2), ("z", 1)]
    one = rows[("r1", 1)]  # the mean of the two repeats
    assert (one["runs"], one["trps"], one["read IOPS"], one["write IOPS"]) == (2, 11.0, 1000, 100)
    assert one["reads per write"] == 10.0 and one["KiB per read"] == 8.0
    two = rows[("r1", 2)]  # the step cut short is left out
    assert (two["trps"], two["reads per write"]) == (18.0, 5.0)
    assert rows[("z", 1)]["reads per write"] is None  # no write to divide by
    charts = {c.key: c for c in brokerage_charts([r1, z])}
    trps = charts["plan_trps"]
    assert [s.name for s in trps.series] == ["bk.datastore-r1", "bk.datastore-z"]
    assert trps.series[0].y == (11.0, 18.0)
    iops = charts["plan_brokerage_iops"]
    names = [s.name for s in iops.series]
    assert names[:2] == ["bk.datastore-r1: reads", "bk.datastore-r1: writes"], names


def test_a_neighbours_step_takes_the_cells_brokerage(tmp_path):
    p = plan_of(tmp_path, PLAN.replace("[matrix]\ndays = [5, 10]", "days = 3") + """
[[step]]
kind = "neighbours"
instances = 2
backup = 1
users = 2
""")
    [item] = p.items
    spec = item.spec
    assert (spec.workload, spec.customers, spec.days, spec.users) == ("brokerage", 2000, 3, 2)
    assert spec.schema == {"workload": "brokerage", "customers": 2000, "days": 3}
