"""Backup and restore cycles on a real managed MariaDB at W=1: mariadb-backup (plain and
streamed through zstd) and mariadb-dump, each restored copy started and checked (E4)."""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from threading import Event, Thread
from urllib.parse import quote

import pytest

from oltplab.config import BuildSpec, DbSpec
from oltplab.engines.mariadb import client
from oltplab.engines.mariadb.backup import check
from oltplab.engines.mariadb.instance import MariaDBInstance, find_binary
from oltplab.errors import UsageError
from oltplab.report.build import build_report
from oltplab.results.store import load_run
from oltplab.scenarios.backup import BackupSpec, run_backup
from oltplab.engines.mariadb.tpcc import DIALECT
from oltplab.engines.mariadb.tpcc import procedures as proc

pytestmark = pytest.mark.skipif(
    find_binary("mariadbd") is None or find_binary("mariadb-backup") is None,
    reason="mariadbd or mariadb-backup is not installed (Debian: mariadb-server-core, "
           "mariadb-backup)")

FIELDS = {"backup": ("seconds", "bytes", "mb_per_s"),
          "restore": ("seconds", "bytes", "mb_per_s", "check_ok")}


@pytest.fixture(scope="module")
def site():
    """A W=1 database on a managed MariaDB, stopped, after a few transactions (a Delivery
    among them, so the checks run as after a run)."""
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))
    db = DbSpec(datadir=root / "my", db_memory=256 * 1024**2, engine="mariadb")
    inst = MariaDBInstance(db)
    inst.start()
    try:
        inst.ensure_database(db.dbname)
        DIALECT.build(inst.dsn(), BuildSpec(warehouses=1, build_users=2, seed=11))
        conn = client.connect(inst.dsn())
        try:
            proc.neword(conn, 1, 1, 7, [(k, 1, 3) for k in range(1, 11)])
            proc.delivery(conn, 1, 4)
        finally:
            conn.close()
    finally:
        inst.stop()
    yield root, db
    MariaDBInstance(db).stop()
    shutil.rmtree(root, ignore_errors=True)


def _spec(root: Path, name: str, **kw) -> BackupSpec:
    return BackupSpec(**{"cycles": 1, "to": root / "bk", "results_dir": root / "results",
                         "name": name, "sample_interval": 0, "power": "none", **kw})


def _leftovers(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if "restore" in p.name]


def test_two_cycles_back_up_restore_and_pass_the_checks(site):
    root, db = site
    phases = []
    run = run_backup(db, _spec(root, "two", cycles=2, sample_interval=0.5),
                     progress=lambda c, phase, n, t: phases.append(phase))
    assert run["status"] == "completed", run["error"]
    assert run["engine"] == "mariadb" and run["database"]["engine"] == "mariadb"
    assert "MariaDB" in run["database"]["version"] and run["database"]["managed"] is True
    assert [c["cycle"] for c in run["cycles"]] == [1, 2]
    for c in run["cycles"]:
        for part, keys in FIELDS.items():
            assert all(c[part][k] is not None for k in keys), c
        assert c["backup"]["bytes"] > 100_000_000 and c["backup"]["method"] == "basebackup"
        assert c["restore"]["check_ok"] is True and c["restore"]["check_failed"] == []
        r = c["restore"]
        assert r["copy_seconds"] > 0 and r["replay_seconds"] > 0
        assert r["seconds"] == pytest.approx(r["copy_seconds"] + r["replay_seconds"], abs=0.002)
        # what was restored, not the redo log the restored server makes when it starts
        assert 100_000_000 < r["bytes"] < 1.2 * c["backup"]["bytes"]
    assert {"backup", "replay", "copy", "check"} <= set(phases)
    assert len(list((root / "bk").iterdir())) == 1, "only the newest backup is kept"
    assert not _leftovers(root), "the scratch copy, its socket and option file are removed"
    assert not MariaDBInstance(db).is_running(), "the server started for the run is stopped"
    folder = Path(run["_path"])
    saved = json.loads((folder / "run.json").read_text())
    assert saved["kind"] == "backup" and saved["cycles"] == run["cycles"]
    timeline = json.loads((folder / "timeline.json").read_text())
    marks = [m["name"] for m in timeline["marks"]]
    assert marks.count("backup-start") == 2 and marks.count("restore-end") == 2
    assert timeline["database"]["engine"] == "mariadb" and timeline["database"]["available"]
    assert "db.innodb_data_writes_s" in timeline["columns"], "MariaDB's source, not PostgreSQL's"
    report = build_report([load_run(root / "results", run["id"])])
    details = next(s for s in report.sections if s.title == "Run details")
    assert dict(next(t for t in details.tables if t.key == "run").rows)["engine"] == "MariaDB"
    assert "MariaDB" in report.subtitle
    charts = {c.key: c for c in report.charts}
    assert charts["db_written_time"].title == "InnoDB redo and data written over time"


def test_zstd_streams_the_backup_throttled_and_restores_it(site):
    root, db = site
    run = run_backup(db, _spec(root, "zstd", compress="zstd", to=root / "zs",
                               max_rate=1024 * 2**20, jobs=1))
    assert run["status"] == "completed", run["error"]
    (c,) = run["cycles"]
    assert c["backup"]["file"] == "backup.mbstream.zst"
    assert c["backup"]["throttle"] == 1024 and c["backup"]["parallel"] == 1
    assert list(Path(c["backup"]["path"]).iterdir()) == [
        Path(c["backup"]["path"]) / "backup.mbstream.zst"]
    assert c["backup"]["bytes"] < c["restore"]["bytes"] / 2, "the stream is compressed"
    assert c["restore"]["check_ok"] is True
    assert c["restore"]["copy_seconds"] > 0 and c["restore"]["replay_seconds"] > 0
    assert not _leftovers(root)


def test_dump_restores_through_the_client(site):
    root, db = site
    run = run_backup(db, _spec(root, "dump", method="dump", to=root / "dmp"))
    assert run["status"] == "completed", run["error"]
    (c,) = run["cycles"]
    assert c["backup"]["bytes"] > 10_000_000
    assert c["restore"]["check_ok"] is True and c["restore"]["load_seconds"] > 0
    assert not _leftovers(root)


def test_cancel_keeps_the_finished_cycle_and_removes_the_rest(site):
    root, db = site
    cancel = Event()

    def progress(cycle, phase, nbytes, seconds):
        if cycle == 2:
            cancel.set()

    run = run_backup(db, _spec(root, "cut", cycles=3, to=root / "cut"), progress=progress,
                     cancel=cancel)
    assert run["status"] == "interrupted"
    assert [c["cycle"] for c in run["cycles"]] == [1]
    assert run["cycles"][0]["restore"]["check_ok"] is True
    assert len(list((root / "cut").iterdir())) == 1, "only the newest finished backup"
    assert not _leftovers(root) and not MariaDBInstance(db).is_running()


def test_dsn_target_backs_up_the_running_server_and_leaves_it_running(site):
    root, db = site
    inst = MariaDBInstance(db)
    inst.start()
    try:
        run = run_backup(DbSpec(dsn=inst.dsn(), engine="mariadb"),
                         _spec(root, "dsn", to=root / "dsn" / "bk"))
        assert run["status"] == "completed", run["error"]
        assert run["database"]["managed"] is False
        assert run["cycles"][0]["restore"]["check_ok"] is True
        assert inst.is_running(), "a --dsn server is not ours to stop"
        assert not [p.name for p in (root / "dsn").iterdir() if "restore" in p.name]
    finally:
        inst.stop()


def _command_lines_holding(words: list[str], done: Event, seen: dict) -> None:
    """Until ``done``: for each of ``words``, the command lines of any process that hold it."""
    while not done.is_set():
        for path in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                line = path.read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            for word in words:
                if word in line:
                    seen.setdefault(word, set()).add(line)
        time.sleep(0.005)


def test_dsn_password_never_appears_on_a_command_line(site):
    """The password of a --dsn goes to mariadb-backup and mariadb-dump in an option file,
    never on their command lines (which anyone can read in /proc)."""
    root, db = site
    inst = MariaDBInstance(db)
    inst.start()
    password = f"pw #\\'\"{secrets.token_hex(12)}"  # what an option file must quote
    try:
        conn = client.connect(inst.dsn())
        try:
            with conn.cursor() as cur:
                cur.execute("CREATE OR REPLACE USER 'bk'@'localhost' IDENTIFIED BY %s",
                            (password,))
                cur.execute("GRANT ALL PRIVILEGES ON *.* TO 'bk'@'localhost'")
        finally:
            conn.close()
        socket = client.connect_args(inst.dsn())["unix_socket"]
        dsn = (f"mariadb://bk:{quote(password, safe='')}@localhost/{db.dbname}"
               f"?unix_socket={socket}")
        done, seen = Event(), {}
        watcher = Thread(target=_command_lines_holding,
                         args=([password, "mariadb-backup", "mariadb-dump"], done, seen))
        watcher.start()
        try:
            for method in ("basebackup", "dump"):
                run = run_backup(DbSpec(dsn=dsn, engine="mariadb"),
                                 _spec(root, f"pw-{method}", method=method, restore=False,
                                       to=root / "pw" / method))
                assert run["status"] == "completed", run["error"]
        finally:
            done.set()
            watcher.join()
        assert "mariadb-backup" in seen and "mariadb-dump" in seen, "the watch saw the tools"
        assert password not in seen, seen[password]
        left = list(Path(tempfile.gettempdir()).glob("oltplab-client-*.cnf"))
        assert not left, "the option files are removed"
    finally:
        inst.stop()


def test_max_rate_below_one_throttle_step_is_refused(site):
    _, db = site
    with pytest.raises(UsageError, match="--max-rate.*1MiB"):
        check(BackupSpec(max_rate=512 * 1024), db)


def test_restore_check_fails_on_an_inconsistent_database(site):
    """Runs last: it breaks the database. A missing order line fails the restored copy's
    CC checks, so the checks do look at the restored data."""
    root, db = site
    inst = MariaDBInstance(db)
    inst.start()
    try:
        conn = client.connect(inst.dsn())
        try:
            with conn.cursor() as cur:
                cur.execute("DELETE FROM order_line WHERE ol_o_id = 2000 AND ol_d_id = 1")
        finally:
            conn.close()
    finally:
        inst.stop()
    run = run_backup(db, _spec(root, "broken", to=root / "broken"))
    restore = run["cycles"][0]["restore"]
    assert restore["check_ok"] is False and {"CC4", "CC6"} <= set(restore["check_failed"]), restore
