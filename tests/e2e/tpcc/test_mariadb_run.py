"""A TPC-C-derived run on a managed MariaDB through the CLI, as on PostgreSQL: the mix, the
server's TPM and NOPM against the client's, the consistency check, the same record fields; and
one report that sets a PostgreSQL run beside a MariaDB run."""

from __future__ import annotations

import json

import pytest

from oltplab.engines.mariadb.instance import find_binary

from ..conftest import oltplab

needs_mariadb = pytest.mark.skipif(
    find_binary("mariadbd") is None,
    reason="mariadbd is not installed (Debian: mariadb-server-core)")

MIX = {"new_order": (0.43, 0.47), "payment": (0.41, 0.45), "order_status": (0.03, 0.05),
       "delivery": (0.03, 0.05), "stock_level": (0.03, 0.05)}
RUN = ("--users", "1,2", "--rampup", "1s", "--duration", "8s", "--seed", "11")
SHORT = ("--users", "1,2", "--rampup", "0s", "--duration", "2s", "--seed", "11")  # fields only


def _run(flags: list[str], cwd, name: str, run: tuple = RUN) -> dict:
    p = oltplab("tpcc", "run", *flags, *run, "--check", "--name", name, cwd=cwd, check_rc=0)
    assert "Traceback" not in p.stderr
    return json.loads(oltplab("results", "show", name, "--json", cwd=cwd, check_rc=0).stdout)


@needs_mariadb
def test_run_on_mariadb_counts_as_on_postgres_and_reports_side_by_side(server_tmp, built_w1):
    my_flags = ["--engine", "mariadb", "--datadir", str(built_w1("mariadb", server_tmp / "my")),
                "--db-memory", "256MiB"]
    pg_flags = ["--datadir", str(built_w1("postgres", server_tmp / "pg")),
                "--db-memory", "256MiB"]
    try:
        oltplab("db", "start", *my_flags, cwd=server_tmp, check_rc=0)
        my = _run(my_flags, server_tmp, "on-mariadb")
    finally:
        oltplab("db", "stop", *my_flags, cwd=server_tmp)
    assert oltplab("db", "status", *my_flags, cwd=server_tmp).returncode == 3  # stopped

    assert my["engine"] == "mariadb" and my["status"] == "completed" and my["check"]["ok"]
    assert [s["users"] for s in my["steps"]] == [1, 2]
    for step in my["steps"]:
        assert step["tpm"] > 0 and step["nopm"] > 0
        # Com_commit + Com_rollback moves by one per procedure call: the server's and the
        # client's counts agree within 1% (HammerDB's TPM beside the client's)
        assert abs(step["client_tpm"] - step["tpm"]) <= 0.01 * step["tpm"], step
        assert abs(step["client_nopm"] - step["nopm"]) <= 0.01 * step["nopm"], step
        tx = step["transactions"]
        total = sum(t["count"] for t in tx.values())
        for kind, (low, high) in MIX.items():
            assert low <= tx[kind]["count"] / total <= high, (kind, tx)
        # 1% of New-Orders roll back, drawn one by one: within four standard deviations
        n = tx["new_order"]["count"]
        assert abs(step["inputs"]["rolled_back_new_orders"] - 0.01) <= 4 * (0.01 * 0.99 / n) ** 0.5
        assert step["telemetry"]["db"], "the sampler read InnoDB's counters"

    pg = _run(pg_flags, server_tmp, "on-postgres", SHORT)
    assert pg["engine"] == "postgres"
    assert set(my) == set(pg)  # the same record, whatever the engine
    assert set(my["steps"][0]) == set(pg["steps"][0])
    assert set(my["steps"][0]["transactions"]["payment"]) == \
        set(pg["steps"][0]["transactions"]["payment"])

    p = oltplab("report", "on-postgres", "on-mariadb", "--out", str(server_tmp / "cmp"),
                cwd=server_tmp, check_rc=0)
    html = (server_tmp / "cmp" / "report.html").read_text()
    assert "on-postgres (PostgreSQL)" in html and "on-mariadb (MariaDB)" in html
    assert "compare them by NOPM" in html, "a cross-engine report says TPM does not compare"
    assert "NOPM at 2 users" in html, p.stdout


@needs_mariadb
def test_sql_mode_on_mariadb_through_the_cli(server_tmp, built_w1):
    """`tpcc run --engine mariadb --mode sql`: the statements from the client keep the server's
    TPM and NOPM beside the client's, and the consistency check passes."""
    flags = ["--engine", "mariadb", "--datadir", str(built_w1("mariadb", server_tmp / "my")),
             "--db-memory", "256MiB"]
    try:
        oltplab("db", "start", *flags, cwd=server_tmp, check_rc=0)
        run = _run(flags, server_tmp, "sql-on-mariadb",
                   ("--mode", "sql", "--users", "2", "--rampup", "1s", "--duration", "6s"))
    finally:
        oltplab("db", "stop", *flags, cwd=server_tmp)
    assert run["status"] == "completed" and run["check"]["ok"]
    assert run["config"]["run"]["mode"] == run["driver"]["mode"] == "sql"
    step = run["steps"][0]
    assert step["nopm"] > 0 and sum(t["errors"] for t in step["transactions"].values()) == 0
    assert abs(step["client_tpm"] - step["tpm"]) <= 0.02 * step["tpm"], step
    assert abs(step["client_nopm"] - step["nopm"]) <= 0.02 * step["nopm"], step
