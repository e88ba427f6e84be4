"""The pure parts of a neighbours run: the spec, the instances' roles and shares, the entries
and the averages, and the order of the report's categories."""

from __future__ import annotations

import pytest

from oltplab.errors import UsageError
from oltplab.report.neighbours import order
from oltplab.scenarios.neighbours import Member, NeighboursSpec, averages, instance_entry, members


def test_the_last_k_instances_back_up_and_share_memory_and_ports(tmp_path):
    spec = NeighboursSpec(instances=4, backup=1, root=tmp_path, db_memory=1024**3, port=6000)
    mems = members(spec)
    assert [(m.name, m.role) for m in mems] == \
        [("pg1", "tpcc"), ("pg2", "tpcc"), ("pg3", "tpcc"), ("pg4", "backup")]
    assert [m.db.port for m in mems] == [6001, 6002, 6003, 6004]
    assert {m.db.db_memory for m in mems} == {256 * 1024**2}
    assert mems[0].db.datadir == tmp_path / "pg1"


def test_an_uneven_memory_share_is_rounded_down_to_whole_mib():
    assert NeighboursSpec(instances=3, db_memory=100 * 1024**2).instance_memory == 33 * 1024**2


@pytest.mark.parametrize("kw, word", [
    ({"instances": 0}, "--instances"),
    ({"instances": 2, "backup": 2}, "at least one"),
    ({"instances": 2, "backup": -1}, "--backup"),
    ({"instances": 8, "db_memory": 64 * 1024**2}, "16MiB"),
    ({"instances": 2, "users": 0}, "--users"),
    ({"instances": 2, "backup_cycles": 0}, "--backup-cycles"),
    ({"instances": 3, "port": 65534}, "--port"),
    ({"instances": 2, "name": "a b"}, "--name"),
])
def test_bad_specs_are_refused_in_one_line(kw, word):
    with pytest.raises(UsageError, match=word):
        NeighboursSpec(**kw)


def test_a_workload_entry_carries_the_step_figures_and_latency(tmp_path):
    m = Member(1, "tpcc", NeighboursSpec().db(tmp_path / "pg1", 5441))
    step = {"tpm": 1200, "nopm": 530, "workload_tpm": 1190, "client_tpm": 1195,
            "client_nopm": 531, "measured_s": 6.0, "partial": False, "warnings": [],
            "transactions": {"new_order": {"count": 53, "errors": 0, "mean": 3.0, "p50": 2.0,
                                           "p95": 8.0, "p99": 9.0, "max": 12.0,
                                           "committed": 52}}}
    run = {"_path": str(tmp_path / "instances" / "x-pg1"), "steps": [step]}
    e = instance_entry(m, run, "completed", None, None, tmp_path)
    assert e["run"] == "instances/x-pg1" and e["nopm"] == 530 and e["tpm"] == 1200
    assert e["transactions"]["new_order"] == {"count": 53, "errors": 0, "mean": 3.0,
                                              "p50": 2.0, "p95": 8.0, "p99": 9.0, "max": 12.0}


def test_a_stopped_instance_says_why_and_a_backup_keeps_its_cycles(tmp_path):
    m = Member(3, "backup", NeighboursSpec().db(tmp_path / "pg3", 5443))
    cycle = {"cycle": 1, "backup": {"seconds": 2.0, "bytes": 10, "mb_per_s": 0.0,
                                    "path": "/gone"}}
    run = {"_path": str(tmp_path / "instances" / "x-pg3"), "cycles": [cycle]}
    e = instance_entry(m, run, "stopped", "interrupted by the user", "stopped after pg2 failed",
                       tmp_path)
    assert e["error"] == "stopped after pg2 failed"
    assert e["cycles"] == [{"cycle": 1, "backup": {"seconds": 2.0, "bytes": 10,
                                                   "mb_per_s": 0.0}}]
    assert instance_entry(m, None, "failed", "no socket", None, tmp_path) == \
        {"status": "failed", "error": "no socket"}


def test_averages_count_the_workload_instances_that_measured():
    entries = [{"role": "tpcc", "tpm": 100, "nopm": 40}, {"role": "tpcc", "tpm": 201, "nopm": 45},
               {"role": "tpcc", "tpm": None, "nopm": None}, {"role": "backup"}]
    assert averages(entries) == {"tpm": 150, "total_tpm": 301, "nopm": 42, "total_nopm": 85,
                                 "instances": 2}
    assert averages([{"role": "backup"}])["nopm"] is None


def test_report_categories_go_by_instance_number_then_the_average():
    assert sorted(["average", "pg10", "pg2", "pg1"], key=order) == \
        ["pg1", "pg2", "pg10", "average"]


def test_the_report_names_each_instances_host_in_a_run_over_hosts():
    from oltplab.report.neighbours import tables
    from oltplab.report.runs import RunData
    entries = [{"name": "pg1", "role": "tpcc", "status": "completed", "tpm": 10, "nopm": 4},
               {"name": "pg2", "role": "backup", "status": "completed", "cycles": []}]
    one = tables(RunData({"kind": "neighbours", "instances": entries}))[0]
    assert "host" not in one.columns
    spread = [{**e, "host": h} for e, h in zip(entries, ("h1", "h2"))]
    table = tables(RunData({"kind": "neighbours", "instances": spread}))[0]
    assert table.columns[:3] == ("instance", "host", "role")
    assert [r[:2] for r in table.rows] == [("pg1", "h1"), ("pg2", "h2")]
    assert "hosts/<host>/" in table.caption
