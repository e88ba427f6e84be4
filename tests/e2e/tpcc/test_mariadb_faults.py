"""--inject on a managed MariaDB through the CLI, as on PostgreSQL (test_inject.py): a killed
server restarted by oltplab (InnoDB crash recovery), one of the run's sessions ended (KILL
CONNECTION), a throttled device, a device removed from a raid1 datastore under load, and the
shop with a killed server. Each run completes, its users go on after the fault and its
consistency checks pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oltplab.engines.mariadb.instance import find_binary
from oltplab.errors import UsageError
from oltplab.faults.throttle import io_root

from ..conftest import datastore as ds
from ..conftest import free_port, oltplab, saved_runs
from ..dvds.steps import mariadb_shop

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")

RUN = ("--users", "2", "--rampup", "1s", "--duration", "12s", "--power", "none", "--check")


def _flags(datadir: Path) -> list[str]:
    return ["--engine", "mariadb", "--datadir", str(datadir), "--port", str(free_port()),
            "--db-memory", "256MiB"]


def _run(flags: list[str], cwd: Path, *inject: str, workload: str = "tpcc") -> tuple:
    """One run with ``inject``; (its record, its output). The server is stopped after."""
    try:
        p = oltplab(workload, "run", *flags, *RUN, *(x for e in inject for x in ("--inject", e)),
                    "--results-dir", str(cwd / "results"), cwd=cwd, check_rc=0)
    finally:
        oltplab("db", "stop", *flags, cwd=cwd)
    assert "Traceback" not in p.stderr
    return saved_runs(cwd / "results")[-1], p.stdout


def _one_fault(cwd: Path, built_w1, inject: str) -> tuple:
    """A run of a copy of the W=1 server with the fault ``inject``: (the record, its one
    event, its step, the run's output), once the run is seen to go on after it."""
    run, out = _run(_flags(built_w1("mariadb", cwd / "my")), cwd, inject)
    [event] = run["events"]
    return run, event, _went_on(run, event), out


def _went_on(run: dict, event: dict) -> dict:
    """The run completed, its check passed, and the users completed transactions after the
    fault was over; the step."""
    assert run["status"] == "completed", run.get("error")
    assert run["engine"] == "mariadb" and run["check"]["ok"], run["check"]
    assert "error" not in event, event
    step = run["steps"][0]
    per_s = step["throughput"]["per_s"]
    over = int(event["at_s"] + (event.get("for_s") or event.get("recovery_s") or 0)) + 1
    assert sum(per_s[over:]) > 0, f"nothing completed after the fault: {per_s}"
    return step


def test_kill_server_mariadb_restarts_recovers_and_the_users_reconnect(server_tmp, built_w1):
    run, event, step, out = _one_fault(server_tmp, built_w1, "at=3s,kill-server")
    assert event["kind"] == "kill-server" and event["crash_recovery"] is True
    assert 0 < event["orphans_s"] <= event["restarted_s"] <= event["recovery_s"] < 60, event
    assert event["orphans_killed"] == 0  # mariadbd has no children
    assert step["driver"]["lost_connections"] == 2  # every user lost its session, came back
    # Com_commit started again at the restart: the server-side TPM is left out, said so
    assert step["tpm"] is None and any("crash recovery" in w for w in step["warnings"])
    assert step["client_tpm"] > 0 and step["nopm"] > 0  # NOPM from the districts' rows
    log = (sorted((server_tmp / "results").iterdir())[-1] / "server.log").read_text()
    assert "crash recovery" in log, log[-2000:]  # InnoDB's own word, in the run's server log
    assert f"event at=3s,kill-server: at 3.0 s, recovery {event['recovery_s']:.1f} s" in out


def test_kill_backend_mariadb_ends_one_session_whose_user_reconnects(server_tmp, built_w1):
    run, event, step, out = _one_fault(server_tmp, built_w1, "at=3s,kill-backend")
    assert event["kind"] == "kill-backend" and event["crash_recovery"] is False
    assert event["session"] > 0 and event["session_command"] in ("Query", "Sleep")
    assert event["sessions"] == 2  # the run's two users, not the sampler's or the monitor's
    assert 0 <= event["recovery_s"] <= event["reconnected_s"] < 10, event
    assert step["driver"]["lost_connections"] == 1  # that user only
    errors = sum(t["errors"] for t in step["transactions"].values())
    assert errors <= 1, step["transactions"]  # its transaction in flight, if it had one
    # no crash: the server's counters hold, and agree with the client's
    assert step["tpm"] is not None and not any("crash" in w for w in step["warnings"])
    assert abs(step["client_tpm"] - step["tpm"]) <= 0.02 * step["tpm"] + 60 / 12, step
    assert "event at=3s,kill-backend: at 3.0 s" in out


def test_throttle_mariadb_holds_every_thread_then_lets_go(server_tmp, built_w1):
    try:
        io_root()
    except UsageError as e:
        pytest.skip(str(e))
    _, event, step, _ = _one_fault(server_tmp, built_w1, "at=3s,for=3s,throttle=write-iops:3")
    assert event["kind"] == "throttle" and event["processes"] == 1  # mariadbd alone
    assert event["threads"] > 5, event  # with all its threads
    if event["file"] == "io.max":  # cgroup v2
        assert "wiops=3" in event["limit_set"] and "wiops=3" not in event["limit_after"]
    else:
        assert event["limit_set"] == f"{event['device']} 3" and event["limit_after"] == ""
    assert not Path(event["cgroup"]).exists() and 5.5 <= event["ended_at_s"] < 8
    # every commit waits for its redo log write, which the group now limits to 3 a second: a
    # second of the window completes next to nothing (the mean over the dip also holds the
    # burst after the limit goes: 13, 1, 0, then 248 a second against 67 before)
    assert event["dip_max_pct"] > 80, (event, step["throughput"]["per_s"])
    assert step["tpm"] is not None  # no crash: the server's counts hold


def test_remove_a_device_under_load_on_mariadb(datastore_root, built_w1):
    root = datastore_root
    ds(root, "create", "r1", "--raid", "raid1", "--metadata", "raid1", "--loop", "3x2GiB")
    doc = json.loads(ds(root, "show", "r1", "--json").stdout)
    flags = _flags(built_w1("mariadb", Path(doc["mount"]) / "my"))
    run, _ = _run(flags, root.parent, "at=3s,remove-device=1")
    [event] = run["events"]
    _went_on(run, event)
    assert event["kind"] == "remove-device" and event["devices_before"] == 3
    assert event["device"] == doc["devices"][0]["path"]
    assert event["bytes_moved"] > 0 and event["seconds"] > 0
    after = json.loads(ds(root, "show", "r1", "--json").stdout)
    assert [d["path"] for d in after["devices"]] == [d["path"] for d in doc["devices"][1:]]
    assert run["datastores"]["datadir"]["space_after"]["data_ratio"] > 1.5
    ds(root, "destroy", "r1")


def test_the_shop_on_mariadb_survives_a_killed_server(server_tmp):
    with mariadb_shop(server_tmp) as (flags, _):
        oltplab("db", "stop", *flags, cwd=server_tmp, check_rc=0)
        run, out = _run(flags, server_tmp, "at=3s,kill-server", workload="dvds")
    [event] = run["events"]
    step = _went_on(run, event)
    assert run["workload"] == "dvds" and event["crash_recovery"] is True
    assert event["recovery_s"] > 0 and step["driver"]["lost_connections"] == 2
    assert step["opm"] > 0 and step["client_opm"] > 0  # ORDERS' rows survive the crash
    assert step["tpm"] is None and any("crash recovery" in w for w in step["warnings"])
    assert "event at=3s,kill-server: at 3.0 s" in out and "OPM before" in out
