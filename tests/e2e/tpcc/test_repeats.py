"""``--repeat N``: N runs recorded as one group, summarised with mean, 95% CI and CV."""

from __future__ import annotations

from ..conftest import oltplab, saved_runs


def test_tpcc_repeat_records_one_group_and_its_summary(scratch_w1, tmp_path):
    results = tmp_path / "results"
    p = oltplab("tpcc", "run", "--dsn", scratch_w1, "--users", "1", "--rampup", "0s",
                "--duration", "2s", "--workers", "1", "--sample-interval", "0",
                "--name", "rep", "--repeat", "2", "--results-dir", str(results), check_rc=0)
    runs = saved_runs(results)
    assert [r["status"] for r in runs] == ["completed", "completed"]
    groups = [r["group"] for r in runs]
    assert groups[0]["id"] == groups[1]["id"] and groups[0]["id"].count("-rep-") == 1
    assert [(g["index"], g["of"]) for g in groups] == [(1, 2), (2, 2)]
    assert "2 repeats, group " + groups[0]["id"] in p.stdout
    assert all(r["steps"][0]["nopm"] > 0 for r in runs)
    assert "NOPM at 1 user: mean " in p.stdout and "TPM at 1 user: mean " in p.stdout, p.stdout
    assert "(95% CI, n = 2), CV " in p.stdout


def test_single_run_has_no_group(scratch_w1, tmp_path):
    results = tmp_path / "results"
    p = oltplab("tpcc", "run", "--dsn", scratch_w1, "--users", "1", "--rampup", "0s",
                "--duration", "1s", "--workers", "1", "--sample-interval", "0",
                "--results-dir", str(results), check_rc=0)
    [run] = saved_runs(results)
    assert "group" not in run and "repeats" not in p.stdout


def test_repeat_zero_is_refused_in_one_line(tmp_path):
    p = oltplab("tpcc", "run", "--dsn", "postgresql://nowhere/x", "--repeat", "0",
                "--results-dir", str(tmp_path))
    assert p.returncode == 2 and "--repeat" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "results").exists()
