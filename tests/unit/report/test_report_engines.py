"""The report names each run's database engine: in the run's table, the runs table and the
subtitle; a comparison of a PostgreSQL run with a MariaDB run labels each side with its
engine; MariaDB's buffer figures are labelled as InnoDB's."""

from __future__ import annotations

from oltplab.report.build import build_report
from oltplab.report.runs import engine_of
from oltplab.results.store import upgrade

from .test_report_fixtures import fio_record, timeline_dict, tpcc_record, write_run


def mariadb_record(name: str = "tpcc", **kw) -> dict:
    record = tpcc_record(name, **kw)
    record["engine"] = "mariadb"
    record["config"]["db"] = {"datadir": "/data/my", "db_memory": 2**30, "engine": "mariadb"}
    record["database"] = {"engine": "mariadb", "version": "10.11.19-MariaDB-0+deb12u1",
                          "settings": {"innodb_buffer_pool_size": "1073741824"}}
    return record


def _table(report, key: str, section: str | None = None):
    return next(t for s in report.sections for t in s.tables
                if t.key == key and (section is None or s.title == section))


def test_engine_comes_from_the_record_then_its_config_then_its_database():
    assert engine_of(mariadb_record()) == "mariadb"
    config_only = tpcc_record("x")
    config_only["config"]["db"]["engine"] = "mariadb"
    config_only["database"] = None
    assert engine_of(config_only) == "mariadb"
    assert engine_of(tpcc_record("old")) == "postgres"  # database.engine "postgresql"
    older = tpcc_record("older")
    del older["database"]
    assert engine_of(older) is None  # a record of version 2 is upgraded when it is loaded
    assert engine_of(upgrade({**older, "schema_version": 2})) == "postgres"
    assert engine_of(fio_record()) is None


def test_comparison_labels_each_side_with_its_engine(tmp_path):
    pg = write_run(tmp_path / "pg", tpcc_record("tpcc", run_id="pg1"), timeline_dict())
    my = write_run(tmp_path / "my", mariadb_record("tpcc", run_id="my1", factor=0.8),
                   timeline_dict())
    report = build_report([pg, my])
    assert report.title == "oltplab comparison: PostgreSQL vs MariaDB"  # what differs
    runs = _table(report, "runs")
    engine = runs.columns.index("engine")
    assert [(row[0], row[engine]) for row in runs.rows] == [
        ("tpcc (PostgreSQL)", "PostgreSQL"), ("tpcc (MariaDB)", "MariaDB")]
    assert {s.title for s in report.sections} >= {"Run tpcc (PostgreSQL)", "Run tpcc (MariaDB)"}
    comparison = _table(report, "comparison")
    assert any("tpcc (MariaDB)" in str(row) for row in comparison.rows), comparison.rows
    hosts = {s.title: t for s in report.sections for t in s.tables if t.key == "host_per_step"}
    assert "InnoDB buffer pool hit ratio" in hosts["Run tpcc (MariaDB)"].columns
    assert "buffer hit ratio" in hosts["Run tpcc (PostgreSQL)"].columns


def test_runs_of_one_engine_keep_their_plain_labels():
    report = build_report([tpcc_record("a", run_id="1"), tpcc_record("b", run_id="2")])
    assert report.title == "oltplab comparison: a vs b"


def test_single_run_names_its_engine_in_the_run_table_and_subtitle():
    report = build_report([mariadb_record("solo")])
    rows = dict(_table(report, "run").rows)
    assert rows["engine"] == "MariaDB"
    assert "MariaDB 10.11.19-MariaDB" not in report.subtitle  # the version names it already
    assert "10.11.19-MariaDB" in report.subtitle
    pg = build_report([tpcc_record("solo")])
    assert dict(_table(pg, "run").rows)["engine"] == "PostgreSQL"
    assert "PostgreSQL 18.1" in pg.subtitle


def _with_db(timeline: dict, innodb: bool) -> dict:
    n = len(timeline["columns"]["t_ns"])
    cols = {"db.commits_s": [None] + [50.0] * (n - 1), "db.rollbacks_s": [None] + [0.5] * (n - 1),
            "db.wal_bytes_s": [None] + [2.0 * 2**20] * (n - 1)}
    if innodb:
        cols["db.innodb_data_written_s"] = [None] + [4.0 * 2**20] * (n - 1)
    return {**timeline, "columns": {**timeline["columns"], **cols},
            "database": {"available": True, "engine": "mariadb" if innodb else None}}


def test_database_charts_over_time_name_innodb_for_mariadb(tmp_path):
    pg = write_run(tmp_path / "pg", tpcc_record("tpcc", run_id="pg1"),
                   _with_db(timeline_dict(), innodb=False))
    my = write_run(tmp_path / "my", mariadb_record("tpcc", run_id="my1"),
                   _with_db(timeline_dict(), innodb=True))
    charts = {c.key: c for c in build_report([pg, my]).charts}
    assert charts["db_written_time-1"].title == "WAL written over time"
    assert charts["db_written_time-2"].title == "InnoDB redo and data written over time"
    assert [s.name for s in charts["db_written_time-2"].series] == ["InnoDB redo",
                                                                    "InnoDB data files"]
    assert max(v for v in charts["db_written_time-2"].series[0].y if v is not None) == 2.0
    assert charts["db_xacts_time-1"].title == "PostgreSQL transactions over time"
    assert "Com_commit" in charts["db_xacts_time-2"].caption
    assert charts["db_xacts_time-2"].title == "MariaDB transactions over time"


def test_no_database_charts_without_database_telemetry(tmp_path):
    run = write_run(tmp_path / "plain", tpcc_record("plain"), timeline_dict())
    keys = {c.key for c in build_report([run]).charts}
    assert "cpu_time" in keys and not any(k.startswith("db_") for k in keys)
