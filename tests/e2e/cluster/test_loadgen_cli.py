"""``tpcc run --loadgen`` as a user runs it: ``cluster up`` on two loopback "hosts", a managed
PostgreSQL that listens on 127.0.0.1 with its password, the users split over both, one
run.json with a part per host; without --listen, refused in one line and nothing recorded."""

from __future__ import annotations

import json

from clusters import UP_TIMEOUT, write_hosts

from ..conftest import free_port, oltplab, saved_runs

HOSTS = [{"name": "h1", "address": "127.0.0.1"}, {"name": "h2", "address": "127.0.0.2"}]


def test_tpcc_run_over_two_hosts_against_a_managed_server(tmp_path, built_w1):
    datadir = built_w1("postgres", tmp_path / "pg")
    db = ["--datadir", str(datadir), "--port", str(free_port()), "--db-memory", "256MiB"]
    run = ["--users", "4", "--rampup", "1s", "--duration", "4s", "--sample-interval", "0",
           "--power", "none", "--io-latency", "off", "--loadgen", "h1,h2"]
    write_hosts(tmp_path / "hosts.toml", HOSTS)
    oltplab("cluster", "up", "hosts.toml", "--timeout", f"{UP_TIMEOUT:g}s", cwd=tmp_path,
            check_rc=0)
    try:
        p = oltplab("tpcc", "run", *db, *run, cwd=tmp_path)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert p.stderr.strip().splitlines()[-1] == (
            "oltplab: error: --loadgen: the managed server listens on its private unix socket "
            "only, which no other host can reach: start it with --listen ADDRESS (TCP, with a "
            "password)"), p.stderr
        assert saved_runs(tmp_path / "results") == []

        p = oltplab("tpcc", "run", *db, "--listen", "127.0.0.1", *run, cwd=tmp_path,
                    check_rc=0)
        assert "  h1: 2 users, 1 workers, " in p.stderr and "  h2: 2 users" in p.stderr
        # a fault during a split run: the server killed and restarted here, the users on
        # both hosts reconnect, the dip and the recovery recorded as on one machine
        p = oltplab("tpcc", "run", *db, "--listen", "127.0.0.1", *run[:5], "8s", *run[6:],
                    "--inject", "at=2s,kill-server", "--name", "fault", cwd=tmp_path,
                    check_rc=0)
    finally:
        oltplab("cluster", "down", cwd=tmp_path, check_rc=0)
    rec, fault = saved_runs(tmp_path / "results")
    [event] = fault["events"]
    assert event["event"] == "at=2s,kill-server" and not event.get("error"), event
    assert 0 < event["recovery_s"] < 60, event
    [step] = fault["steps"]
    assert [h["status"] for h in step["loadgen"]] == ["completed", "completed"], step["loadgen"]
    assert all(h["completed"] > 0 for h in step["loadgen"])
    assert rec["status"] == "completed" and rec["config"]["loadgen"]["hosts"] == ["h1", "h2"]
    [step] = rec["steps"]
    assert [(h["host"], h["users"], h["status"]) for h in step["loadgen"]] == [
        ("h1", 2, "completed"), ("h2", 2, "completed")]
    assert sum(h["completed"] for h in step["loadgen"]) == sum(
        t["count"] for t in step["transactions"].values())
    assert abs(step["nopm"] - step["client_nopm"]) <= 0.02 * step["client_nopm"]
    # the password reached the hosts, and nothing written down holds it
    password = (tmp_path / "pg.pgpass").read_text().strip().split(":", 4)[4]
    written = [p.read_text(errors="replace") for p in (tmp_path / "results").rglob("*")
               if p.is_file()] + [json.dumps(rec)]
    assert not any(password in text for text in written)
