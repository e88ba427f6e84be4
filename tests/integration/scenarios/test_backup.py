"""Backup and restore cycles against the suite's real PostgreSQL (pg_dump / pg_restore at W=1)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from oltplab.config import DbSpec
from oltplab.errors import DatabaseError, UsageError
from oltplab.scenarios.backup import BackupSpec, run_backup, run_watched


def _spec(tmp: Path, **kw) -> BackupSpec:
    return BackupSpec(**{"method": "dump", "to": tmp / "bk", "results_dir": tmp / "results",
                         "sample_interval": 0, "power": "none", **kw})


def test_dump_cycle_restores_a_copy_that_passes_the_checks(loaded_w1, server_tmp):
    run = run_backup(DbSpec(dsn=loaded_w1), _spec(server_tmp, cycles=1))
    assert run["status"] == "completed", run["error"]
    (cycle,) = run["cycles"]
    assert cycle["backup"]["bytes"] > 1_000_000 and cycle["backup"]["seconds"] > 0
    assert cycle["backup"]["mb_per_s"] > 0
    assert cycle["restore"]["check_ok"] is True and cycle["restore"]["check_failed"] == []
    assert cycle["restore"]["seconds"] > 0 and cycle["restore"]["mb_per_s"] > 0
    saved = json.loads((Path(run["_path"]) / "run.json").read_text())
    assert saved["kind"] == "backup" and saved["cycles"] == run["cycles"]
    leftovers = [p.name for p in server_tmp.iterdir() if "restore" in p.name]
    assert not leftovers, "the scratch copy, its socket and password file must be removed"


def test_restore_check_fails_on_an_inconsistent_database(scratch_w1, pg, server_tmp):
    dbname = scratch_w1.split("?")[0].rsplit("/", 1)[1]
    pg.sql("DELETE FROM order_line WHERE ol_o_id = 2000 AND ol_d_id = 1", dbname=dbname)
    run = run_backup(DbSpec(dsn=scratch_w1), _spec(server_tmp, cycles=1))
    restore = run["cycles"][0]["restore"]
    assert restore["check_ok"] is False and restore["check_failed"], restore


@pytest.mark.parametrize("kw, word", [
    ({"cycles": 0}, "--cycles"),
    ({"method": "tape"}, "--method"),
    ({"compress": "zstd"}, "--compress"),  # with --method dump
    ({"interval": -1.0}, "--interval"),
    ({"jobs": 0}, "--jobs"),
])
def test_bad_backup_spec_is_refused(tmp_path, kw, word):
    with pytest.raises(UsageError, match=word):
        _spec(tmp_path, **kw)


def test_max_rate_outside_pg_basebackup_range_is_refused(tmp_path):
    with pytest.raises(UsageError, match="--max-rate"):
        BackupSpec(max_rate=1024, results_dir=tmp_path)


def test_pipeline_whose_second_tool_dies_reports_its_message_promptly(tmp_path):
    """A real zstd writing to a full device (/dev/full) dies while the first tool still has
    data for it: the run ends at once with zstd's own message, not a time-out."""
    t0 = time.monotonic()
    with pytest.raises(DatabaseError) as failure:
        run_watched([["head", "-c", "1G", "/dev/urandom"], ["zstd", "-q", "-c"]], tmp_path,
                    lambda n, t: None, "stream", stdout=Path("/dev/full"))
    assert time.monotonic() - t0 < 5
    message = str(failure.value)
    assert message.startswith("stream failed: zstd: ") and "\n" not in message, message
    assert "No space left on device" in message, message
