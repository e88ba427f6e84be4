"""``oltplab cluster up | status | down`` as a user runs them: two "hosts" on 127.0.0.1 and
127.0.0.2; bad input is one line and exit 2 (usage) or 1 (runtime); Ctrl-C during up leaves
no process."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from clusters import UP_TIMEOUT, cluster_processes, wait_until, write_hosts
from interrupts import INTERRUPTIBLE, ctrl_c

from ..conftest import free_port, oltplab

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "cluster" / "loopback.toml"
TWO = [{"name": "h1", "address": "127.0.0.1", "datastores": ["fast"]},
       {"name": "h2", "address": "127.0.0.2", "devices": ["loop7"]}]


def _one_line(p, rc: int, needle: str) -> None:
    assert p.returncode == rc, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("cluster: ")]
    assert len(lines) == 1, p.stderr
    assert needle in lines[0], lines[0]


def test_up_status_down_of_the_example(tmp_path):
    p = oltplab("cluster", "up", str(EXAMPLE), "--timeout", f"{UP_TIMEOUT:g}s", cwd=tmp_path,
                check_rc=0)
    assert "cluster: starting the scheduler on 127.0.0.1" in p.stderr
    assert "cluster: h2: up at tls://127.0.0.2:" in p.stderr
    try:
        p = oltplab("cluster", "status", cwd=tmp_path, check_rc=0)
        rows = [line.split("\t") for line in p.stdout.splitlines()]
        assert [r[0] for r in rows] == ["scheduler", "h1", "h2"]
        assert rows[1][2:5] == ["alive", "local", "host-h1=1 datastore-fast=1"]
        assert rows[2][1].startswith("tls://127.0.0.2:")
        assert rows[2][2:5] == ["alive", "local", "host-h2=1 device-loop7=1"]
        for row in rows[1:]:  # each host's clock against this machine's: the same one here
            assert re.fullmatch(r"clock [+-]\d+\.\d{3} ms ±\d+\.\d{3} ms", row[5]), row
            offset, bound = (float(x) for x in re.findall(r"\d+\.\d+", row[5]))
            assert offset <= bound + 1
        assert "warning" not in p.stdout
        doc = json.loads(oltplab("cluster", "status", "--json", cwd=tmp_path, check_rc=0).stdout)
        assert doc["scheduler"]["alive"] and [h["alive"] for h in doc["hosts"]] == [True, True]
        for h in doc["hosts"]:
            clock = h["clock"]
            assert clock["probes"] == 5
            assert abs(clock["wall_offset_ns"]) <= clock["bound_ns"] + 10**6
            assert clock["warning"] is None and clock["error_bound_ms"] < 100
        assert (tmp_path / "oltplab-cluster" / "certs" / "client-key.pem").is_file()
    finally:
        p = oltplab("cluster", "down", cwd=tmp_path, check_rc=0)
    assert "cluster: scheduler stopped" in p.stderr
    assert cluster_processes(tmp_path / "oltplab-cluster") == []


def test_bad_input_is_one_line(tmp_path):
    d = ["--dir", str(tmp_path / "c")]
    _one_line(oltplab("cluster", "up", "none.toml", *d, cwd=tmp_path), 2, "no such hosts file")
    (tmp_path / "bad.toml").write_text("[[hosts]\n")
    _one_line(oltplab("cluster", "up", "bad.toml", *d, cwd=tmp_path), 2, "not valid TOML")
    write_hosts(tmp_path / "dup.toml", [TWO[0], TWO[0]])
    _one_line(oltplab("cluster", "up", "dup.toml", *d, cwd=tmp_path), 2, "names two hosts")
    write_hosts(tmp_path / "key.toml", [{**TWO[0], "colour": "red"}])
    _one_line(oltplab("cluster", "up", "key.toml", *d, cwd=tmp_path), 2, "unknown key")
    _one_line(oltplab("cluster", "up", "key.toml", "--timeout", "0", *d, cwd=tmp_path), 2,
              "--timeout")
    _one_line(oltplab("cluster", "down", *d, cwd=tmp_path), 1, "no cluster is up")
    _one_line(oltplab("cluster", "status", *d, cwd=tmp_path), 1, "no cluster is up")


def test_a_port_in_use_and_an_unreachable_host_are_one_line(tmp_path):
    d = ["--dir", str(tmp_path / "c"), "--timeout", f"{UP_TIMEOUT:g}s"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        write_hosts(tmp_path / "port.toml", TWO[:1],
                    scheduler={"port": taken.getsockname()[1]})
        _one_line(oltplab("cluster", "up", "port.toml", *d, cwd=tmp_path), 1, "is in use")
    write_hosts(tmp_path / "far.toml", [TWO[0], {
        "name": "far", "address": "127.0.0.3", "dir": str(tmp_path / "far"),
        "ssh": {"address": "127.0.0.1", "port": free_port()}}])
    _one_line(oltplab("cluster", "up", "far.toml", *d, cwd=tmp_path), 1, "far: ssh 127.0.0.1")
    assert cluster_processes(tmp_path / "c") == []
    assert not (tmp_path / "c" / "state.json").exists()


def _started(state_file, what: str) -> bool:
    try:
        doc = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return False
    if what == "scheduler":
        return doc["scheduler"]["pid"] > 0
    return any(w["process"]["pid"] > 0 for w in doc["workers"])


@pytest.mark.parametrize("moment", ["scheduler", "workers"])
def test_ctrl_c_during_up_leaves_no_process(tmp_path, moment):
    hosts = write_hosts(tmp_path / "hosts.toml", TWO)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-m", "oltplab", "cluster", "up", str(hosts)],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, **INTERRUPTIBLE)
    state = tmp_path / "oltplab-cluster" / "state.json"
    try:
        assert wait_until(lambda: _started(state, moment), timeout=60, every=0.01)
        out, err = ctrl_c(p)
    finally:
        if p.poll() is None:
            p.kill()
    assert "oltplab: interrupted" in err
    assert cluster_processes(tmp_path / "oltplab-cluster") == []
    assert not state.exists()
