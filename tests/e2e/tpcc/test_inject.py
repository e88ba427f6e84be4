"""tpcc run --inject end to end on a managed server: the E8 example plan (a killed server,
then a throttled device), a killed backend from the command line, and the refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from oltplab.errors import UsageError
from oltplab.faults.throttle import io_root

from ..conftest import free_port, oltplab, saved_runs

EXAMPLE = Path(__file__).parents[3] / "examples" / "plans" / "e8-failure.toml"


def _recovered(run: dict, kind: str) -> dict:
    """The run completed with one event of ``kind``, recovered, and throughput after it."""
    assert run["status"] == "completed", run.get("error")
    (event,) = run["events"]
    assert event["kind"] == kind and "error" not in event, event
    assert event["recovery_s"] > 0 and 2.5 <= event["at_s"] < 4
    for key in ("before_tpm", "dip_avg_pct", "dip_max_pct", "back_within_10pct_s"):
        assert key in event
    assert event["before_tpm"] > 0 and event["dip_max_pct"] > 0
    step = run["steps"][0]
    per_s = step["throughput"]["per_s"]
    back = int(event["at_s"] + event["recovery_s"]) + 1
    assert sum(per_s[back:]) > 0, f"nothing completed after the recovery: {per_s}"
    assert sum(t["errors"] for t in step["transactions"].values()) >= 0
    assert step["driver"]["lost_connections"] >= 1  # and every one came back: completed
    assert step["tpm"] is None and any("crash recovery" in w for w in step["warnings"])
    assert run["check"]["ok"]
    return event


def test_e8_plan_kill_server_then_throttle_recovers_and_checks_pass(tmp_path):
    try:
        io_root()
    except UsageError as e:
        pytest.skip(str(e))
    port = free_port()
    plan = tmp_path / "e8.toml"
    plan.write_text(EXAMPLE.read_text()
                    .replace('datadir = "oltplab-data/postgres"', f'datadir = "{tmp_path / "pg"}"')
                    .replace("port = 5432", f"port = {port}"))
    oltplab("plan", "run", str(plan), cwd=tmp_path, check_rc=0, timeout=240)
    by_kind = {r["events"][0]["kind"]: r for r in saved_runs(tmp_path / "results")}
    killed, throttled = by_kind["kill-server"], by_kind["throttle"]
    event = _recovered(killed, "kill-server")
    assert event["orphans_s"] <= event["restarted_s"] <= event["recovery_s"]

    assert throttled["status"] == "completed", throttled.get("error")
    (event,) = throttled["events"]
    assert event["kind"] == "throttle" and "error" not in event, event
    # the limit read back from the group while the window lasted, and after it was removed
    if event["file"] == "io.max":  # cgroup v2
        assert "wiops=50" in event["limit_set"] and "wiops=50" not in event["limit_after"]
    else:
        assert event["file"] == "blkio.throttle.write_iops_device"
        assert event["limit_set"] == f"{event['device']} 50" and event["limit_after"] == ""
    assert event["processes"] > 1 and not Path(event["cgroup"]).exists()
    assert 5.5 <= event["ended_at_s"] < 8
    assert throttled["steps"][0]["tpm"] is not None  # no crash: the server's counts hold

    checked = oltplab("tpcc", "check", "--datadir", str(tmp_path / "pg"), "--port", str(port),
                      cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_kill_backend_the_users_reconnect_and_checks_pass(server_tmp, built_w1):
    flags = ["--datadir", str(built_w1("postgres", server_tmp / "pg")), "--port",
             str(free_port()), "--db-memory", "64MiB"]
    p = oltplab("tpcc", "run", *flags, "--users", "2", "--rampup", "1s", "--duration", "12s",
                "--inject", "at=3s,kill-backend", "--check", cwd=server_tmp, check_rc=0)
    (run,) = saved_runs(server_tmp / "results")
    event = _recovered(run, "kill-backend")
    assert event["reset_s"] <= event["recovery_s"]
    assert f"event at=3s,kill-backend: at 3.0 s, recovery {event['recovery_s']:.1f} s, dip " \
        in p.stdout


@pytest.mark.parametrize("event, words", [
    ("at=3s", "give an action"),
    ("kill-server", "give at="),
    ("at=3s,kill-server,kill-backend", "give one action"),
    ("at=3s,throttle=write:10MiB/s", "needs for="),
    ("at=3s,for=2s,kill-server", "takes no for="),
    ("at=3s,for=2s,throttle=reads:5", "is not one of"),
    ("at=3s,for=2s,throttle=read-iops:lots", "whole number"),
    ("at=soon,kill-server", "not a duration"),
    ("at=3s,explode", "'explode' is not"),
    ("at=99s,kill-server", "beyond the measured window"),
])
def test_bad_event_is_refused_in_one_line(tmp_path, event, words):
    p = oltplab("tpcc", "run", "--datadir", str(tmp_path / "pg"), "--duration", "10s",
                "--inject", event, cwd=tmp_path)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert words in lines[0] and "Traceback" not in p.stderr
    assert not (tmp_path / "pg").exists(), "nothing ran"


@pytest.mark.parametrize("event", ["at=3s,kill-server", "at=3s,kill-backend",
                                   "at=3s,for=2s,throttle=write:1MiB/s"])
def test_injection_with_dsn_is_refused_in_one_line(tmp_path, event):
    p = oltplab("tpcc", "run", "--dsn", "postgresql://x@127.0.0.1:1/x", "--inject", event,
                cwd=tmp_path)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "needs a managed server" in lines[0] and "--dsn" in lines[0]
