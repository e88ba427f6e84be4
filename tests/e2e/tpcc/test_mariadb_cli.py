"""The CLI end to end on a managed MariaDB: db start, status and stop, tpcc build and check,
each through ``--engine mariadb``; and an --engine that does not match --dsn."""

from __future__ import annotations

import pytest

from oltplab.engines.mariadb.instance import find_binary

from ..conftest import oltplab

needs_mariadb = pytest.mark.skipif(
    find_binary("mariadbd") is None,
    reason="mariadbd is not installed (Debian: mariadb-server-core)")


@needs_mariadb
def test_db_and_tpcc_commands_on_mariadb(server_tmp):
    flags = ["--engine", "mariadb", "--datadir", str(server_tmp / "data"), "--db-memory", "128MiB"]
    try:
        p = oltplab("db", "start", *flags, cwd=server_tmp, check_rc=0)
        assert p.stdout.startswith("MariaDB running:") and "mariadb://" in p.stdout
        p = oltplab("db", "status", *flags, "--json", cwd=server_tmp, check_rc=0)
        assert '"running": true' in p.stdout and "MariaDB" in p.stdout
        oltplab("tpcc", "build", *flags, "--warehouses", "1", "--build-users", "2", "--seed", "7",
                cwd=server_tmp, check_rc=0)
        p = oltplab("tpcc", "check", *flags, cwd=server_tmp, check_rc=0)
        lines = p.stdout.splitlines()
        assert len(lines) == 12 and all(line.startswith("ok ") for line in lines), p.stdout
        p = oltplab("tpcc", "build", *flags, "--warehouses", "1", cwd=server_tmp)
        assert p.returncode == 1 and "--force" in p.stderr and "Traceback" not in p.stderr
    finally:
        p = oltplab("db", "stop", *flags, cwd=server_tmp)
    assert p.returncode == 0 and p.stdout.strip() == "MariaDB stopped", p.stdout + p.stderr
    p = oltplab("db", "status", *flags, cwd=server_tmp)
    assert p.returncode == 3 and "running: False" in p.stdout


@needs_mariadb
def test_tpcc_check_on_mariadb_without_a_schema_names_the_build(server_tmp):
    flags = ["--engine", "mariadb", "--datadir", str(server_tmp / "data"), "--db-memory", "128MiB"]
    p = oltplab("tpcc", "check", *flags, cwd=server_tmp)
    assert p.returncode == 1 and "oltplab tpcc build" in p.stderr and "Traceback" not in p.stderr
    assert oltplab("db", "status", *flags, cwd=server_tmp).returncode == 3  # stopped again


@pytest.mark.parametrize("args", [
    ["tpcc", "check", "--engine", "postgres", "--dsn", "mariadb://root@localhost/tpcc"],
    ["tpcc", "build", "--engine", "mariadb", "--dsn", "postgresql://x@127.0.0.1:1/x", "-w", "1"],
    ["tpcc", "run", "--engine", "mariadb", "--dsn", "postgres://x@127.0.0.1:1/x"],
    ["backup", "run", "--engine", "postgres", "--dsn", "mysql://u@127.0.0.1:1/x"],
])
def test_an_engine_that_does_not_match_the_dsn_is_refused_in_one_line(tmp_path, args):
    p = oltplab(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "does not match --dsn" in lines[0], p.stderr
