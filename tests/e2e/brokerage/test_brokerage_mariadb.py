"""The brokerage on a managed MariaDB as a user builds and runs it, with the paper's 8 KiB
pages: a new data directory made with them (kept at the next start without the option,
recorded by the build, named in its line, checked, run); the option on an existing 16 KiB data directory refused
in one line, stopped or running, with the directory as it was."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from oltplab.config import DbSpec
from oltplab.engines.mariadb import client
from oltplab.engines.mariadb.instance import MariaDBInstance, find_binary

from ..conftest import oltplab
from .test_brokerage_cli import _run_record, assert_a_measured_brokerage_run

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")


def _flags(datadir: Path) -> list[str]:
    return ["--engine", "mariadb", "--datadir", str(datadir), "--db-memory", "256MiB"]


def _files(datadir: Path) -> dict[str, tuple[int, int]]:
    """Every file of the data directory: (size, modification time in ns)."""
    found = {}
    for folder, _, names in os.walk(datadir):
        for name in names:
            st = os.stat(os.path.join(folder, name))
            found[os.path.relpath(os.path.join(folder, name), datadir)] = \
                (st.st_size, st.st_mtime_ns)
    return found


def test_8k_pages_on_a_new_data_directory_are_kept_and_recorded(server_tmp):
    datadir = server_tmp / "my8"
    flags = _flags(datadir)
    p = oltplab("brokerage", "build", *flags, "--customers", "1000", "--days", "1",
                "--build-users", "2", "--seed", "5", "--innodb-page-size", "8k",
                cwd=server_tmp, check_rc=0)
    assert re.search(r"built the TPC-E-derived brokerage \(1,000 customers, 1 day\(s\) of "
                     r"trading, [\d,]+ trades loaded, [\d,]+ rows\) in [\d.]+ s, [\d,]+ rows/s,"
                     r" 8 KiB pages$", p.stdout.strip()), p.stdout
    try:
        # started again without the option: the directory's own 8 KiB pages
        oltplab("db", "start", *flags, "--dbname", "brokerage", cwd=server_tmp, check_rc=0)
        inst = MariaDBInstance(DbSpec.of(engine="mariadb", datadir=datadir))
        conn = client.connect(inst.dsn("brokerage"))
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT @@innodb_page_size, page_kib, days FROM brokerage_meta")
                assert cur.fetchone() == (8192, 8, 1)
        finally:
            conn.close()
        assert "innodb-page-size = 8k" in (datadir / "oltplab.cnf").read_text()
        p = oltplab("brokerage", "check", *flags, cwd=server_tmp, check_rc=0)
        assert [ln.split()[:2] for ln in p.stdout.splitlines()] == \
            [["ok", f"BK{n}"] for n in range(1, 8)], p.stdout
        # a run on the 8 KiB pages: the procedures' result sets, the market emulator's actors
        results = server_tmp / "r"
        p = oltplab("brokerage", "run", *flags, "--users", "2", "--rampup", "1s",
                    "--duration", "4s", "--check", "--results-dir", str(results),
                    cwd=server_tmp, check_rc=0)
        data = _run_record(results)
        assert_a_measured_brokerage_run(data, [2])
        assert data["schema"]["page_kib"] == 8
    finally:
        oltplab("db", "stop", *flags, cwd=server_tmp)


def _refused(p) -> None:
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "innodb_page_size 8k: the data directory" in lines[0]
    assert "was created with 16 KiB pages" in lines[0], lines[0]


def test_8k_pages_on_an_existing_16k_data_directory_are_refused(server_tmp):
    datadir = server_tmp / "my16"
    flags = _flags(datadir)
    build = ("brokerage", "build", *flags, "--customers", "1000", "--days", "5",
             "--innodb-page-size", "8k")
    oltplab("db", "start", *flags, cwd=server_tmp, check_rc=0)
    oltplab("db", "stop", *flags, cwd=server_tmp, check_rc=0)
    before = _files(datadir)
    assert before
    _refused(oltplab(*build, cwd=server_tmp))
    assert _files(datadir) == before
    # a running server is neither restarted nor changed
    try:
        oltplab("db", "start", *flags, cwd=server_tmp, check_rc=0)
        inst = MariaDBInstance(DbSpec.of(engine="mariadb", datadir=datadir))
        pid, settings = inst.status()["pid"], (datadir / "oltplab.cnf").read_text()
        _refused(oltplab(*build, cwd=server_tmp))
        assert inst.status()["pid"] == pid and (datadir / "oltplab.cnf").read_text() == settings
        assert "innodb-page-size" not in settings
    finally:
        oltplab("db", "stop", *flags, cwd=server_tmp)
