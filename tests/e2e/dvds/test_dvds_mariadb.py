"""The shop end to end on a managed MariaDB, as a user runs it: build 10MB, run two user counts
with the checks, read the record; the same figures as on PostgreSQL (test_dvds_cli.py)."""

from __future__ import annotations

import json

import pytest

from oltplab.engines.mariadb.instance import find_binary

from ..conftest import oltplab, saved_runs
from .steps import (check_ds3_steps, check_sql_mode_steps, check_steps, mariadb_shop,
                    sql_mode_run)

needs_mariadb = pytest.mark.skipif(
    find_binary("mariadbd") is None,
    reason="mariadbd is not installed (Debian: mariadb-server-core)")


@needs_mariadb
def test_build_run_check_and_the_record_on_mariadb_in_both_modes(server_tmp):
    results = server_tmp / "results"
    with mariadb_shop(server_tmp) as (flags, built):
        assert "built the 10MB shop (20,000 customers, 12,000 orders, 10,000 products)" in \
            built.stdout
        p = oltplab("dvds", "run", *flags, "--users", "1,2", "--rampup", "1s", "--duration",
                    "6s", "--check", "--sample-interval", "0", "--power", "none", "--seed", "5",
                    "--results-dir", str(results), cwd=server_tmp, check_rc=0)
        assert "OPM" in p.stdout and "Traceback" not in p.stderr
        # --mode sql: the calls' statements from the client, the same figures
        sql = sql_mode_run(flags, server_tmp / "sql", server_tmp, "6")
        checked = oltplab("dvds", "check", *flags, cwd=server_tmp, check_rc=0).stdout
        # the TPC-C side names what the database holds instead
        tpcc = oltplab("tpcc", "run", *flags, "--dbname", "dvds", "--duration", "1s",
                       "--results-dir", str(server_tmp / "none"), cwd=server_tmp)
    [run] = saved_runs(results)
    assert run["kind"] == "dvds" and run["workload"] == "dvds" and run["status"] == "completed"
    assert run["engine"] == "mariadb"
    assert run["schema"]["size"] == "10MB" and run["schema"]["customers"] == 20_000
    assert run["check"]["ok"], run["check"]
    shown = json.loads(oltplab("results", "show", "latest", "--json", "--results-dir",
                               str(results), cwd=server_tmp, check_rc=0).stdout)
    check_steps(shown, [1, 2])
    for step in shown["steps"]:
        calls = {k: v for k, v in step["transactions"].items() if k != "order"}
        assert sum(t["errors"] for t in calls.values()) == 0, calls
    assert checked.count("ok") >= 6, checked
    check_sql_mode_steps(sql)
    assert tpcc.returncode == 1 and "DVD-Store-derived" in tpcc.stderr, tpcc.stderr
    assert len(tpcc.stderr.strip().splitlines()) == 1


@needs_mariadb
def test_ds3_build_run_and_check_on_mariadb(server_tmp):
    results = server_tmp / "results"
    with mariadb_shop(server_tmp, "--ds3") as (flags, built):
        assert "DS3: 2,000 members, 50,000 reviews, 100,000 ratings" in built.stdout
        p = oltplab("dvds", "run", *flags, "--ds3", "--users", "2", "--rampup", "1s",
                    "--duration", "10s", "--check", "--sample-interval", "0", "--power", "none",
                    "--seed", "5", "--results-dir", str(results), cwd=server_tmp, check_rc=0)
        assert "OPM" in p.stdout and "Traceback" not in p.stderr
        # --mode sql: DVD Store 3's calls too as their statements from the client
        sql = sql_mode_run(flags, server_tmp / "sql", server_tmp, "5", duration="10s")
        checked = oltplab("dvds", "check", *flags, cwd=server_tmp, check_rc=0).stdout
    [run] = saved_runs(results)
    assert run["status"] == "completed" and run["engine"] == "mariadb"
    assert run["check"]["ok"], run["check"]
    assert run["schema"]["ds3"] is True
    shown = json.loads(oltplab("results", "show", "latest", "--json", "--results-dir",
                               str(results), cwd=server_tmp, check_rc=0).stdout)
    check_ds3_steps(shown, [2])
    check_ds3_steps(sql, [2])
    assert "DS10" in checked, checked
