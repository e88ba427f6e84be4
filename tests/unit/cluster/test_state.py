"""The state file round-trips, names the host of a datastore, and knows a process by its pid
and start time; placement is the one set of submit keywords that pins a task to a host."""

from __future__ import annotations

import os

import pytest

from oltplab.cluster import placement
from oltplab.cluster.hosts import HostSpec, SshSpec
from oltplab.cluster.state import (ClusterState, Process, Worker, load_state, read_state,
                                   remove_state, write_state)
from oltplab.errors import OltplabError, UsageError


def _state(tmp_path) -> ClusterState:
    here = Worker(HostSpec("h1", "127.0.0.1", ("fast",)), Process(1, 2.0, "w.log"), "/d/h1")
    far = Worker(HostSpec("h2", "127.0.0.2", ssh=SshSpec("127.0.0.1", "bench", port=2222)),
                 Process(7, None, "x/worker.log"), "x", "tls://127.0.0.2:4000")
    return ClusterState(tmp_path, "/h.toml", "abcd1234", Process(3, 4.0, "s.log"),
                        "tls://127.0.0.1:5000", (here, far))


def test_the_state_file_round_trips(tmp_path):
    state = _state(tmp_path)
    write_state(state)
    assert read_state(tmp_path) == state
    assert [w.via for w in state.workers] == ["local", "ssh"]
    remove_state(tmp_path)
    assert read_state(tmp_path) is None
    with pytest.raises(OltplabError, match="no cluster is up"):
        load_state(tmp_path)


def test_the_host_of_a_datastore(tmp_path):
    state = _state(tmp_path)
    assert state.host_with("fast") == "h1"
    with pytest.raises(UsageError, match="datastore 'slow'"):
        state.host_with("slow")
    with pytest.raises(UsageError, match="no host named 'h9'"):
        state.worker("h9")


def test_a_process_is_its_pid_and_its_start_time():
    import psutil
    me = psutil.Process(os.getpid())
    assert Process(me.pid, me.create_time(), "").alive_here()
    assert not Process(me.pid, me.create_time() - 100, "").alive_here()  # a reused pid


def test_placement_pins_a_task_to_its_host():
    assert placement("h1", {"datastore-fast": 1}) == {
        "workers": ["h1"], "allow_other_workers": False, "retries": 0, "pure": False,
        "resources": {"host-h1": 1, "datastore-fast": 1}}


def test_one_up_or_down_at_a_time_in_a_folder(tmp_path):
    from oltplab.cluster import load_hosts, service
    from oltplab.results.store import held_lock
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("[[hosts]]\nname = 'h1'\naddress = '127.0.0.1'\n")
    with held_lock(tmp_path / "c" / service.LOCK, OltplabError):
        with pytest.raises(OltplabError, match=f"another oltplab cluster up or down \\(process "
                                               f"{os.getpid()}\\) works in"):
            service.up(load_hosts(hosts), tmp_path / "c")
    assert not (tmp_path / "c" / "state.json").exists()
