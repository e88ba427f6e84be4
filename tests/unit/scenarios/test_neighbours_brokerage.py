"""Neighbours running the TPC-E-derived brokerage: the spec's scale, database, template and
build, its refusals in one line, and trps as each instance's headline and the average's."""

from __future__ import annotations

import pytest

from oltplab.errors import UsageError
from oltplab.scenarios.neighbours import Member, averages, instance_entry
from oltplab.scenarios.neighbours_spec import NeighboursSpec
from oltplab.report.units import headline_unit


def test_a_brokerage_spec_has_its_scale_database_and_build(tmp_path):
    spec = NeighboursSpec(instances=2, workload="brokerage", customers=2000, days=5,
                          users=3, root=tmp_path, seed=9)
    assert (spec.scale.customers, spec.scale.days) == (2000, 5)
    assert spec.schema == {"workload": "brokerage", "customers": 2000, "days": 5}
    assert spec.schema_name == "the brokerage of 2,000 customers x 5 days"
    one = NeighboursSpec(workload="brokerage", customers=1000, days=1)
    assert one.schema_name == "the brokerage of 1,000 customers x 1 day"
    assert spec.db(tmp_path / "pg1", 5441).dbname == "brokerage"
    build = spec.build_spec()
    assert (build.scale, build.seed, build.force) == (spec.scale, 9, False)
    # the market emulator's actors need connections beside the 3 users and the monitor's 21
    assert spec.connections > 3 + 21
    assert NeighboursSpec(users=3).connections == 3 + 21
    assert NeighboursSpec().scale is None and NeighboursSpec().db(tmp_path, 1).dbname == "tpcc"


@pytest.mark.parametrize("kw, words", [
    ({"workload": "brokerage"}, ("--workload brokerage needs --customers",)),
    ({"workload": "brokerage", "customers": 1500}, ("--customers 1500", "multiple of 1,000")),
    ({"workload": "brokerage", "customers": 1000, "days": 0}, ("--days 0",)),
    ({"customers": 1000}, ("--customers is the brokerage workload's",)),
    ({"workload": "brokerage", "customers": 1000, "mode": "sql"}, ("--mode sql",)),
])
def test_bad_brokerage_specs_are_one_line(kw, words):
    with pytest.raises(UsageError) as e:
        NeighboursSpec(instances=2, **kw)
    assert "\n" not in str(e.value)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_trps_is_the_brokerages_headline_in_each_entry_and_the_average(tmp_path):
    assert headline_unit("brokerage") == ("trps", "trps")
    assert headline_unit("tpcc") == ("nopm", "NOPM") and headline_unit("dvds") == ("opm", "OPM")
    spec = NeighboursSpec(workload="brokerage", customers=1000)
    step = {"tpm": 3000, "trpm": 600, "trps": 10.25, "client_trps": 10.3, "workload_tpm": 2990,
            "client_tpm": 2995, "measured_s": 4.0, "partial": False, "warnings": [],
            "transactions": {"trade_result": {"count": 41, "errors": 0, "mean": 3.0}}}
    entries = []
    for i, trps in ((1, 10.25), (2, 12.5)):
        run = {"_path": str(tmp_path / "instances" / f"x-pg{i}"), "workload": "brokerage",
               "steps": [{**step, "trps": trps}]}
        m = Member(i, "brokerage", spec.db(tmp_path / f"pg{i}", 5440 + i))
        entries.append({"role": "brokerage", **instance_entry(m, run, "completed", None, None,
                                                              tmp_path)})
    assert entries[0]["trps"] == 10.25 and entries[0]["client_trps"] == 10.3
    assert entries[0]["trpm"] == 600 and entries[0]["tpm"] == 3000
    entries.append({"role": "backup", "trps": None})
    avg = averages(entries, headline_unit("brokerage")[0])
    assert avg == {"tpm": 3000, "total_tpm": 6000, "trps": 11.375, "total_trps": 22.75,
                   "instances": 2}


def test_the_reports_headline_and_chart_of_a_brokerage_neighbours_run_are_trps():
    from oltplab.report.neighbours import charts, headline, unit
    from oltplab.report.runs import Group, RunData
    record = {"kind": "neighbours", "workload": "brokerage", "id": "n", "name": "n",
              "instances": [{"name": "pg1", "role": "brokerage", "trps": 10.25, "tpm": 3000},
                            {"name": "pg2", "role": "brokerage", "trps": 12.5, "tpm": 3100},
                            {"name": "pg3", "role": "backup", "cycles": [{"cycle": 1}]}],
              "average": {"trps": 11.375, "tpm": 3050, "instances": 2}}
    assert unit(record) == ("trps", "trps")
    assert headline(record) == "trps 11.38 per workload instance (2 of 3); 1 backup"
    [first, *_] = charts([Group("n", [RunData(record=record, label="n")], "#000")])
    assert first.key == "neighbours_trps" and "Trade results per second" in first.caption
