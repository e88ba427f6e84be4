"""A real cluster on this machine: a TLS scheduler and two "hosts", workers on 127.0.0.1 and
127.0.0.2. The tests run in order on one cluster: placement, refusal of a client without the
certificate, what listens where, attaching, a worker killed, and down."""

from __future__ import annotations

import socket
import ssl
import time
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from clusters import (UP_TIMEOUT, children_of_workers, cluster_processes, listening, running,
                      wait_until, write_hosts)

from oltplab.cluster import connect, load_hosts, load_state, submit_on, where_am_i
from oltplab.cluster import service
from oltplab.cluster.certs import ensure_certs
from oltplab.cluster.clocks import Offset, Reading, host_clocks, measure
from oltplab.cluster.sampling import HostSamplers
from oltplab.telemetry.openmetrics import LiveFigures, exposition
from oltplab.telemetry.sampler import Timeline
from oltplab.telemetry.stream import with_hosts

HOSTS = [{"name": "h1", "address": "127.0.0.1", "datastores": ["fast"], "devices": ["loop7"]},
         {"name": "h2", "address": "127.0.0.2", "datastores": ["slow"]}]


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("two-hosts")
    spec = load_hosts(write_hosts(root / "hosts.toml", HOSTS))
    steps: list[str] = []
    state = service.up(spec, root / "cluster", timeout=UP_TIMEOUT, on_step=steps.append)
    assert steps[0] == "starting the scheduler on 127.0.0.1"
    assert {s for s in steps if ": up at tls://" in s} == {
        f"{w.name}: up at {w.address}" for w in state.workers}
    yield root / "cluster"
    if (root / "cluster" / "state.json").exists():
        service.down(root / "cluster")


@pytest.fixture(scope="module")
def client(cluster_dir):
    with connect(cluster_dir) as c:
        yield c


def test_status_shows_both_hosts_alive_with_their_resources(cluster_dir):
    status = service.status(load_state(cluster_dir))
    assert status.scheduler_alive and status.scheduler_address.startswith("tls://127.0.0.1:")
    h1, h2 = status.hosts
    assert (h1.name, h1.alive, h1.via) == ("h1", True, "local")
    assert h1.address.startswith("tls://127.0.0.1:") and h2.address.startswith("tls://127.0.0.2:")
    assert h1.resources == {"host-h1": 1, "datastore-fast": 1, "device-loop7": 1}
    assert h2.resources == {"host-h2": 1, "datastore-slow": 1} and h2.alive


def test_status_measures_each_hosts_clock_and_a_shifted_clock_is_put_back(cluster_dir, client):
    status = service.status(load_state(cluster_dir))
    for h in status.hosts:  # one machine: the same clocks, within the round trip's bound
        assert isinstance(h.clock, Offset) and h.clock.probes == 5, h.clock
        assert abs(h.clock.wall_offset_ns) <= h.clock.bound_ns + 1_000_000
        assert abs(h.clock.mono_offset_ns) <= h.clock.bound_ns + 1_000_000
        assert 0 < h.clock.bound_ns < 100_000_000 and h.clock.warning() is None

    shift = 1_500_000_000  # a host whose clocks run 1.5 s ahead: an injected clock

    def ahead() -> Reading:
        r = host_clocks()
        return Reading(r.unix_ns + shift, r.mono_ns + shift)

    off = measure("h2", lambda: client.submit(ahead, workers=["h2"], allow_other_workers=False,
                                              pure=False).result(timeout=30))
    assert abs(off.wall_offset_ns - shift) <= off.bound_ns
    assert abs(off.mono_offset_ns - shift) <= off.bound_ns
    # an instant the host stamps lands on this host's timeline within the bound
    before = time.monotonic_ns()
    there = client.submit(ahead, workers=["h2"], allow_other_workers=False, pure=False)
    stamped = there.result(timeout=30).mono_ns
    placed = off.to_coordinator(stamped)
    assert before - off.bound_ns <= placed <= time.monotonic_ns() + off.bound_ns


def test_each_hosts_sampler_streams_and_its_timeline_is_placed_here(cluster_dir, client):
    busy = submit_on(client, "h2", time.sleep, 4)  # a placed task holds h2 meanwhile
    start = time.monotonic_ns()
    figures = LiveFigures(host="here")
    with HostSamplers(client, ["h1", "h2"], interval=0.25, power="none") as samplers:
        time.sleep(1.5)
        live = samplers.latest()
        figures.begin("run-1", "nopm", None, samplers)
        page = exposition(figures).decode()
        assert len(_samplers(cluster_dir)) == 2  # one per host, each a child of its worker
    end = time.monotonic_ns()
    assert set(live) == {"h1", "h2"} and start < live["h2"][0] < end
    assert "cpu.idle" in live["h1"][1]
    # the live endpoint serves each host's figures, labelled with its name
    cpu = {(m.labels["host"], m.labels["mode"]): m.value
           for family in text_string_to_metric_families(page)
           if family.name == "oltplab_cpu_ratio" for m in family.samples}
    assert {h for h, _ in cpu} == {"h1", "h2"} and 0 <= cpu["h2", "idle"] <= 1
    parts = samplers.parts
    for h in ("h1", "h2"):
        part = parts[h]
        assert "error" not in part, part
        tl, clock = part["timeline"], part["clock"]
        t = tl.columns["t_ns"]
        assert len(t) >= 5 and start < t[0] and t[-1] < end + clock["bound_ns"]
        assert abs(clock["mono_offset_ns"]) <= clock["bound_ns"] < 100_000_000
        assert tl.column("cpu.idle")[1] is not None
    merged = with_hosts(Timeline(interval_s=0.25), parts)
    placed = parts["h2"]["timeline"].columns["t_ns"]
    assert merged.hosts["h2"]["timeline"]["columns"]["t_ns"] == placed
    busy.result(timeout=30)
    # no sampler is left behind on either host (only this cluster's workers' children count:
    # other tests running beside this one have samplers of their own)
    assert not _samplers(cluster_dir)


def test_a_slow_clock_probe_drops_the_hosts_samples_with_a_warning(cluster_dir, client,
                                                                    monkeypatch):
    from oltplab.cluster import sampling
    monkeypatch.setattr(sampling, "PROBE_TIMEOUT_S", 0.0)  # no clock answer is ever in time
    samplers = HostSamplers(client, ["h1"], interval=0.25, power="none")
    samplers.start()  # a probe's queue.Empty escaped from here before
    try:
        assert samplers._samples["h1"]  # it ran: start waits for its first sample
        assert samplers.latest() == {}  # nothing of the host is placed on this clock
    finally:
        part = samplers.stop()["h1"]
    assert "clock probe" in part["error"] and "left out" in part["warning"]
    assert part["timeline"] is None and part["clock"] is None
    assert wait_until(lambda: not _samplers(cluster_dir))


def _samplers(cluster_dir) -> dict[int, str]:
    """The samplers that run on the hosts now (children of their Dask workers): pid -> host."""
    return children_of_workers(cluster_dir, "oltplab.telemetry.stream")


def test_a_placed_task_runs_on_its_host_and_nowhere_else(cluster_dir, client):
    state = load_state(cluster_dir)
    hosts = ["h1", "h2", "h2", "h1", "h2", "h1"]
    seen = [f.result(timeout=30) for f in [submit_on(client, h, where_am_i) for h in hosts]]
    assert [s["host"] for s in seen] == hosts
    for s in seen:
        assert s["address"] == state.worker(s["host"]).address
        assert s["pid"] == state.worker(s["host"]).process.pid
    assert submit_on(client, state.host_with("slow"), where_am_i).result(30)["host"] == "h2"


def _tasks():
    """The tests' tasks, made inside a function so that they travel by value (the workers
    cannot import this module)."""
    def span(seconds: float) -> tuple[float, float]:
        start = time.time()
        time.sleep(seconds)
        return start, time.time()

    def mark_and_wait(folder: str, seconds: float) -> None:
        Path(folder, where_am_i()["host"]).touch()
        time.sleep(seconds)

    return span, mark_and_wait


_span, _mark_and_wait = _tasks()


def test_a_host_runs_one_placed_task_at_a_time(client):
    first, second = [submit_on(client, "h1", _span, 0.5) for _ in range(2)]
    (a0, a1), (b0, b1) = sorted([first.result(30), second.result(30)])
    assert b0 >= a1 - 0.01


def test_the_scheduler_steals_no_work_and_retries_nothing(client):
    got = client.run_on_scheduler(lambda dask_scheduler: (
        "stealing" in dask_scheduler.extensions, dask_scheduler.allowed_failures))
    assert got == (False, 0)


def _tls_talk(address: str, cert: tuple[Path, Path] | None, ca: Path) -> bytes:
    """What the server at ``address`` sends a TLS client with (or without) ``cert``."""
    host, port = address.removeprefix("tls://").rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=str(ca))
    ctx.check_hostname = False
    if cert is not None:
        ctx.load_cert_chain(*cert)
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        with ctx.wrap_socket(raw) as s:
            try:
                return s.recv(64)
            except (ssl.SSLError, ConnectionResetError):
                return b""


def test_a_client_without_the_certificate_is_refused(cluster_dir, tmp_path):
    from distributed import Client, Security
    state = load_state(cluster_dir)
    certs = ensure_certs(cluster_dir / "certs", "127.0.0.1", {})
    mine = certs.pair("client")
    for address in [state.scheduler_address] + [w.address for w in state.workers]:
        assert _tls_talk(address, (mine.cert, mine.key), certs.ca) != b""  # the control
        assert _tls_talk(address, None, certs.ca) == b""
    other = ensure_certs(tmp_path / "other", "127.0.0.1", {})  # another cluster's CA
    stranger = Security(tls_ca_file=str(other.ca), tls_client_cert=str(other.pair("client").cert),
                        tls_client_key=str(other.pair("client").key), require_encryption=True)
    with pytest.raises((OSError, TimeoutError)):
        Client(state.scheduler_address, security=stranger, timeout=3, set_as_default=False)
    plain = state.scheduler_address.replace("tls://", "tcp://")
    with pytest.raises((OSError, TimeoutError)):
        Client(plain, timeout=3, set_as_default=False)


def test_nothing_listens_beyond_the_loopback(cluster_dir):
    state = load_state(cluster_dir)
    pids = [state.scheduler.pid] + [w.process.pid for w in state.workers]
    addresses = listening(pids)
    assert {"127.0.0.1", "127.0.0.2"} <= set(addresses)
    assert all(a.startswith("127.") for a in addresses), addresses


def test_up_again_attaches_to_the_running_workers(cluster_dir):
    before = load_state(cluster_dir)
    steps: list[str] = []
    after = service.up(load_hosts(Path(before.hosts_file)), cluster_dir, on_step=steps.append)
    assert [w.process.pid for w in after.workers] == [w.process.pid for w in before.workers]
    assert after.scheduler == before.scheduler
    assert steps == [f"{w.name}: attached to its worker at {w.address}" for w in before.workers]


def test_up_with_a_host_changed_is_refused_and_changes_nothing(cluster_dir, tmp_path):
    from oltplab.errors import OltplabError
    before = load_state(cluster_dir)
    changed = write_hosts(tmp_path / "hosts.toml", [HOSTS[0], {**HOSTS[1], "devices": ["sdb"]}])
    with pytest.raises(OltplabError, match="h2's worker runs with other settings"):
        service.up(load_hosts(changed), cluster_dir)
    moved = write_hosts(tmp_path / "moved.toml", HOSTS, scheduler={"port": 1})
    with pytest.raises(OltplabError, match="the scheduler runs at tls://127.0.0.1:"):
        service.up(load_hosts(moved), cluster_dir)
    assert load_state(cluster_dir) == before
    assert all(h.alive for h in service.status(before).hosts)


def test_up_stops_a_recorded_worker_the_scheduler_lost_before_starting_another(cluster_dir):
    """A worker the scheduler no longer knows (here: frozen, then dropped by the scheduler) is
    stopped by ``up``, not left running beside the one that replaces it."""
    import os
    import signal

    import psutil
    state = load_state(cluster_dir)
    old = state.worker("h2")

    async def forget(address, dask_scheduler=None):  # a closure: sent by value, not by name
        await dask_scheduler.remove_worker(address, stimulus_id="forget-worker", close=False)

    os.kill(old.process.pid, signal.SIGSTOP)
    with connect(cluster_dir) as c:
        c.run_on_scheduler(forget, old.address)
        assert wait_until(lambda: "h2" not in {
            w["name"] for w in c.scheduler_info()["workers"].values()})
    steps: list[str] = []
    after = service.up(load_hosts(Path(state.hosts_file)), cluster_dir, timeout=UP_TIMEOUT,
                       on_step=steps.append)
    assert "h2: worker stopped" in steps and "h1: attached to its worker at " \
        f"{state.worker('h1').address}" in steps, steps
    assert not psutil.pid_exists(old.process.pid) or \
        psutil.Process(old.process.pid).status() == psutil.STATUS_ZOMBIE
    assert after.worker("h2").process.pid != old.process.pid
    assert after.worker("h1").process.pid == state.worker("h1").process.pid
    assert all(h.alive for h in service.status(after).hosts)


def test_a_killed_worker_shows_dead_and_its_task_fails_not_moved(cluster_dir, client,
                                                                 tmp_path):
    import psutil
    state = load_state(cluster_dir)
    future = submit_on(client, "h2", _mark_and_wait, str(tmp_path), 60)
    assert wait_until(lambda: (tmp_path / "h2").exists())
    samplers = HostSamplers(client, ["h2"], interval=0.25, power="none")
    samplers.start()
    time.sleep(1.0)
    sampler = [pid for pid, host in _samplers(cluster_dir).items() if host == "h2"]
    assert len(sampler) == 1
    psutil.Process(state.worker("h2").process.pid).kill()
    from distributed.scheduler import KilledWorker
    with pytest.raises(KilledWorker):
        future.result(timeout=30)
    time.sleep(0.5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h2"]  # never re-run on h1
    status = service.status(load_state(cluster_dir))
    assert [(h.name, h.alive) for h in status.hosts] == [("h1", True), ("h2", False)]
    # its sampler's part: failed, with what it streamed before, and no process left behind
    began = time.monotonic()
    part = samplers.stop()["h2"]
    assert time.monotonic() - began < 30 and "lost" in part["error"]
    assert len(part["timeline"].columns["t_ns"]) >= 3 and part["clock"] is not None
    assert wait_until(lambda: not running(sampler))


def test_down_leaves_no_process(cluster_dir, client):
    client.close()
    steps: list[str] = []
    service.down(cluster_dir, on_step=steps.append)
    assert steps == ["h1: worker stopped", "scheduler stopped"]  # h2's was killed
    assert cluster_processes(cluster_dir) == []
    assert not (cluster_dir / "state.json").exists()
