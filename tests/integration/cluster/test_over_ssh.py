"""``cluster up`` over ssh, against an sshd the test starts on a loopback port with keys only:
a host reached over ssh gets its certificate and key in its folder, runs its worker there,
takes work placed on it, and down stops it and takes its key away. ssh that cannot reach a
host, or meets a host key it does not know, is one line, and leaves no process."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from clusters import UP_TIMEOUT, cluster_processes, sshd, wait_until, write_hosts
from conftest import free_port
from interrupts import INTERRUPTIBLE, ctrl_c

from oltplab.cluster import connect, load_hosts, submit_on, where_am_i
from oltplab.cluster import service
from oltplab.errors import OltplabError


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with sshd(tmp_path_factory.mktemp("sshd"), free_port()) as s:
        yield s


def test_up_over_ssh_places_work_there_and_down_takes_the_key_away(server, tmp_path):
    far_dir = tmp_path / "far-host"
    far_dir.mkdir()
    (far_dir / "mine.pem").write_text("a certificate of the host's own\n")  # not ours
    hosts = write_hosts(tmp_path / "hosts.toml", [
        {"name": "near", "address": "127.0.0.1"},
        {"name": "far", "address": "127.0.0.3", "datastores": ["remote"], "dir": str(far_dir),
         "ssh": server.ssh_table()}])
    steps: list[str] = []
    state = service.up(load_hosts(hosts), tmp_path / "cluster", timeout=UP_TIMEOUT,
                       on_step=steps.append)
    try:
        assert f"far: starting its worker over ssh ({server.user}@127.0.0.1, port " \
               f"{server.port}), on 127.0.0.3" in steps
        far = state.worker("far")
        assert far.via == "ssh" and far.address.startswith("tls://127.0.0.3:")
        assert sorted(p.name for p in far_dir.glob("*.pem")) == [
            "ca.pem", "mine.pem", "worker-far-key.pem", "worker-far.pem"]  # no other's key
        assert stat.S_IMODE((far_dir / "worker-far-key.pem").stat().st_mode) == 0o600
        assert [h.alive for h in service.status(state).hosts] == [True, True]
        with connect(tmp_path / "cluster") as client:
            seen = submit_on(client, state.host_with("remote"), where_am_i).result(30)
        assert seen == {"host": "far", "address": far.address, "pid": far.process.pid}
    finally:
        service.down(tmp_path / "cluster")
    # down takes away what up sent, and only that
    assert [p.name for p in far_dir.glob("*.pem")] == ["mine.pem"]
    assert cluster_processes(tmp_path / "cluster", far_dir) == []


def _up_fails(tmp_path: Path, ssh: dict, needle: str) -> None:
    hosts = write_hosts(tmp_path / "hosts.toml", [
        {"name": "near", "address": "127.0.0.1"},
        {"name": "far", "address": "127.0.0.3", "dir": str(tmp_path / "far"), "ssh": ssh}])
    with pytest.raises(OltplabError) as e:
        service.up(load_hosts(hosts), tmp_path / "cluster", timeout=UP_TIMEOUT)
    assert "\n" not in str(e.value) and str(e.value).startswith("far: ssh ")
    assert needle in str(e.value)
    assert cluster_processes(tmp_path / "cluster") == []
    assert not (tmp_path / "cluster" / "state.json").exists()


def test_an_unreachable_host_is_one_line_and_leaves_no_process(server, tmp_path):
    _up_fails(tmp_path, server.ssh_table(port=free_port()), "Connection refused")


def test_a_host_key_ssh_does_not_know_is_refused(server, tmp_path):
    strangers = tmp_path / "known_hosts"
    strangers.write_text("")
    _up_fails(tmp_path, server.ssh_table(known_hosts=str(strangers)), "Host key verification")


def test_ctrl_c_while_ssh_starts_a_worker_leaves_no_process_there(server, tmp_path):
    """Ctrl-C while ssh runs, its worker's pid not known yet: up lets ssh finish and records
    the worker, then stops it and removes its key and certificates there."""
    far_dir = tmp_path / "far-host"
    hosts = write_hosts(tmp_path / "hosts.toml", [
        {"name": "far", "address": "127.0.0.3", "dir": str(far_dir), "ssh": server.ssh_table()}])
    state = tmp_path / "oltplab-cluster" / "state.json"
    p = subprocess.Popen([sys.executable, "-m", "oltplab", "cluster", "up", str(hosts)],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         **INTERRUPTIBLE)

    def ssh_runs() -> bool:
        try:
            return any(c.name() == "ssh" for c in psutil.Process(p.pid).children())
        except psutil.Error:
            return False

    try:
        assert wait_until(ssh_runs, timeout=UP_TIMEOUT, every=0.001)
        out, err = ctrl_c(p)
    finally:
        if p.poll() is None:
            p.kill()
    assert (far_dir / "worker.log").exists()  # ssh did start it
    # the worker was stopped; a child it had (Python's resource tracker) follows it in a moment
    assert wait_until(lambda: cluster_processes(tmp_path / "oltplab-cluster", far_dir) == [],
                      timeout=5)
    assert not list(far_dir.glob("*.pem")) and not state.exists()
