"""``--loadgen``: a step's virtual users split over two "hosts" (Dask workers on 127.0.0.1 and
127.0.0.2) against the suite's PostgreSQL. The tests run in order on one cluster: a split
step merged exactly, the shop split from the command line, bad input refused, Ctrl-C, a
coordinator killed, a host stopped (SIGSTOP: hung), a host killed (SIGKILL), and a dead host
refused."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from clusters import (UP_TIMEOUT, children_of_workers, resume_workers, running, wait_until,
                      write_hosts)
from conftest import free_port

from oltplab.cluster import load_hosts, load_state, service
from oltplab.config import DbSpec, LoadgenSpec, RunSpec
from oltplab.errors import OltplabError, UsageError
from oltplab.runs.lifecycle import WorkloadProgress, run_workload_recorded
from oltplab.telemetry.sampler import Timeline

HOSTS = [{"name": "h1", "address": "127.0.0.1"}, {"name": "h2", "address": "127.0.0.2"}]


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("loadgen")
    service.up(load_hosts(write_hosts(root / "hosts.toml", HOSTS)), root / "cluster",
               timeout=UP_TIMEOUT)
    yield root / "cluster"
    resume_workers(root / "cluster")
    service.down(root / "cluster")


def _spec(tmp_path: Path, users: int, duration: float, rampup: float = 1.0,
          sample_interval: float = 0) -> RunSpec:
    return RunSpec(users=(users,), rampup=rampup, duration=duration, seed=17,
                   sample_interval=sample_interval, power="none", io_latency="off",
                   results_dir=tmp_path / "results", name="split")


class Phases(WorkloadProgress):
    """Sets ``measuring`` once the step has measured for 3 s (its first snapshot taken)."""

    def __init__(self):
        self.measuring = threading.Event()

    def tick(self, tick) -> None:
        if tick.phase == "measure" and tick.elapsed_s >= 3:
            self.measuring.set()


def _workers_of(cluster_dir: Path) -> dict[int, str]:
    """The worker processes the hosts' Dask workers run now: pid -> host."""
    return children_of_workers(cluster_dir, "oltplab.loadgen.worker")


def test_a_split_step_merges_every_host_exactly(cluster_dir, quiet_w1, tmp_path):
    run = run_workload_recorded(DbSpec(dsn=quiet_w1), _spec(tmp_path, 4, 5.0, sample_interval=0.5),
                                loadgen=LoadgenSpec(("h1", "h2"), cluster_dir))
    assert run["status"] == "completed", run.get("error")
    assert run["config"]["loadgen"]["hosts"] == ["h1", "h2"]
    [step] = run["steps"]
    parts = step["loadgen"]
    assert [p["host"] for p in parts] == ["h1", "h2"]
    assert [p["users"] for p in parts] == [2, 2] and all(p["workers"] == 1 for p in parts)
    assert all(p["status"] == "completed" and p["reported"] == 1 for p in parts), parts
    calls = ("new_order", "payment", "order_status", "delivery", "stock_level")
    merged = sum(step["transactions"][n]["count"] for n in calls)
    assert merged > 0 and merged == sum(p["completed"] for p in parts), (merged, parts)
    assert all(p["completed"] > 0 and p["cpu_s"] > 0 for p in parts), parts
    new_orders = step["transactions"]["new_order"]["committed"]
    assert new_orders == sum(p["units"] for p in parts)
    # the server's transactions between the users' flushes at the window's boundaries (the
    # hosts' crossing times, put on this machine's clock): the client's, and at most two in
    # flight per user; its New-Orders, read at the snapshots, within 2%
    server = step["server"]
    tx = step["transactions"].values()
    extra = server["workload_xacts_delta"] - merged
    assert 0 <= extra <= 2 * 4 + sum(t["retries"] + t["errors"] for t in tx), (extra, server)
    assert abs(server["d_next_o_id_delta"] - new_orders) <= 0.02 * new_orders, server
    assert abs(step["nopm"] - step["client_nopm"]) <= 0.02 * step["client_nopm"]
    for p in parts:  # one machine: the clocks agree within the round trip
        assert 0 < p["round_trip_ms"] < 1000 and abs(p["clock_offset_ms"]) <= p["round_trip_ms"]
    assert step["driver"]["workers"] == 2
    # one timeline: this machine's samples, and each host's placed on this machine's clocks
    tl = Timeline.from_dict(json.loads((tmp_path / "results" / run["id"] / "timeline.json")
                                       .read_text()))
    marks = {m["name"]: m["t_ns"] for m in tl.marks}
    for h in ("h1", "h2"):
        host = tl.hosts[h]
        t = host["timeline"]["columns"]["t_ns"]
        bound = host["clock"]["bound_ns"]
        assert tl.t0_ns - bound <= t[0] and t[-1] <= tl.end_ns + 10**9, (h, t[0], tl.t0_ns)
        assert sum(marks["ramp_end"] <= x <= marks["measure_end"] for x in t) >= 8
        assert run["telemetry"]["hosts"][h]["samples"] == len(t)
        figures = step["telemetry"]["hosts"][h]
        assert figures["samples"] >= 8 and figures["cpu"]["cpu_idle_pct"] is not None


class Scraper(Phases):
    """Scrapes the run's live endpoint over HTTP once it has measured for 3 s and every host's
    sample is in."""

    def __init__(self, address: tuple[str, int]):
        super().__init__()
        self.url = "http://%s:%d/" % address
        self.page: dict = {}

    def tick(self, tick) -> None:
        super().tick(tick)
        if self.measuring.is_set() and not self.page:
            from urllib.request import urlopen

            from prometheus_client.openmetrics.parser import text_string_to_metric_families
            with urlopen(self.url, timeout=5) as r:
                page = {f.name: f for f in text_string_to_metric_families(r.read().decode())}
            busy = page.get("oltplab_cpu_busy_ratio")
            if busy is not None and len(busy.samples) >= 2:
                self.page = page


def test_each_host_has_one_name_its_hosts_toml_one_in_the_record_and_the_endpoint(
        cluster_dir, quiet_w1, tmp_path):
    """This machine is h1 of the cluster (its worker runs here): the live page labels its
    figures h1, as the record names it, beside h2's; never by its OS host name, and h1's own
    sampler's figures are not served a second time under the same name."""
    from oltplab.config import MetricsSpec
    from oltplab.telemetry.openmetrics import Endpoint
    endpoint = Endpoint(MetricsSpec(port=free_port())).start()
    try:
        scraper = Scraper(endpoint.address)
        run = run_workload_recorded(DbSpec(dsn=quiet_w1),
                                    _spec(tmp_path, 2, 6.0, sample_interval=0.5), scraper,
                                    metrics=endpoint, loadgen=LoadgenSpec(("h1", "h2"),
                                                                          cluster_dir))
    finally:
        endpoint.stop()
    assert run["status"] == "completed", run.get("error")
    page = scraper.page
    assert page, "no page with every host's sample was scraped"
    busy = [s.labels["host"] for s in page["oltplab_cpu_busy_ratio"].samples]
    assert sorted(busy) == ["h1", "h2"], busy  # one series per host, by its one name
    hosts = {s.labels["host"] for f in page.values() for s in f.samples}
    assert hosts == {"h1", "h2"}, hosts
    [rate] = [s for s in page["oltplab_throughput_per_minute"].samples
              if s.labels["kind"] == "nopm"]
    assert rate.labels["host"] == "h1" and rate.value > 0
    assert run["host"]["name"] == "h1"
    assert [p["host"] for p in run["steps"][0]["loadgen"]] == ["h1", "h2"]


def _oltplab(capsys, *args: str) -> tuple[int, str]:
    """The command as a user runs it, in this process: its exit code and its stderr."""
    from oltplab.cli.main import main
    held = signal.getsignal(signal.SIGTERM)
    try:
        code = main(list(args))
    finally:
        signal.signal(signal.SIGTERM, held)
    return code, capsys.readouterr().err.strip()


def test_dvds_run_splits_the_shoppers_and_prints_each_host(cluster_dir, pg, tmp_path, capsys):
    import json

    from oltplab.engines.postgres.dvds.loader import build
    from oltplab.workloads.dvds.build import DvdsBuildSpec
    from oltplab.workloads.dvds.sizes import parse_size
    dsn = pg.create_db("lgdvds")
    build(dsn, DvdsBuildSpec(size=parse_size("10MB"), build_users=2, seed=3))
    code, err = _oltplab(capsys, "dvds", "run", "--dsn", dsn, "--users", "2", "--rampup", "1s",
                         "--duration", "4s", "--sample-interval", "0", "--power", "none",
                         "--io-latency", "off", "--results-dir", str(tmp_path / "results"),
                         "--loadgen", "h1,h2", "--cluster-dir", str(cluster_dir))
    assert code == 0, err
    assert "  h1: 1 users, 1 workers, " in err and "  h2: 1 users, 1 workers, " in err, err
    [run_json] = (tmp_path / "results").glob("*/run.json")
    [step] = json.loads(run_json.read_text())["steps"]
    parts = step["loadgen"]
    calls = [n for n in step["transactions"] if n != "order"]
    assert sum(step["transactions"][n]["count"] for n in calls) == sum(
        p["completed"] for p in parts) > 0
    assert step["transactions"]["order"]["committed"] == sum(p["units"] for p in parts) > 0


def test_bad_input_is_refused_in_one_line_and_records_nothing(cluster_dir, quiet_w1,
                                                              tmp_path):
    spec = _spec(tmp_path, 2, 2.0)
    with pytest.raises(UsageError, match="no host named 'h9'"):
        run_workload_recorded(DbSpec(dsn=quiet_w1), spec, loadgen=LoadgenSpec(("h1", "h9"),
                                                                              cluster_dir))
    with pytest.raises(OltplabError, match="no cluster is up in"):
        run_workload_recorded(DbSpec(dsn=quiet_w1), spec, loadgen=LoadgenSpec(("h1",),
                                                                              tmp_path / "none"))
    from oltplab.options import a_host_list
    for text, why in (("h1,,h2", "not a list of host names"), ("h1,h1", "names h1 twice")):
        with pytest.raises(UsageError, match=why):
            a_host_list(text, "--loadgen")
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_the_commands_refuse_bad_hosts_in_one_line(cluster_dir, quiet_w1, tmp_path, capsys):
    def oltplab(*args: str) -> tuple[int, str]:
        return _oltplab(capsys, *args)

    common = ["--dsn", quiet_w1, "--users", "2", "--rampup", "0", "--duration", "2s",
              "--sample-interval", "0", "--power", "none", "--io-latency", "off",
              "--results-dir", str(tmp_path / "results"), "--cluster-dir", str(cluster_dir)]
    code, err = oltplab("tpcc", "run", *common, "--loadgen", "h1,h9")
    assert code == 2 and "no host named 'h9'" in err and len(err.splitlines()) == 1, err
    code, err = oltplab("dvds", "run", *common, "--loadgen", "h2,h2")
    assert code == 2 and "names h2 twice" in err, err
    code, err = oltplab("tpcc", "run", *common, "--loadgen", "h1",
                        "--cluster-dir", str(tmp_path / "none"))
    assert code == 1 and "no cluster is up in" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_a_managed_server_without_tcp_is_refused_before_anything_runs(cluster_dir, tmp_path):
    from oltplab.engines.base import Target
    from oltplab.loadgen.remote import hosts_dsn

    class SocketOnly:
        def remote_dsn(self):
            return None

    spec = load_state(cluster_dir)
    with pytest.raises(UsageError, match="listens on its private unix socket only"):
        hosts_dsn(Target("postgresql://postgres@/tpcc?host=/x", "", SocketOnly(), False),
                  [w.host for w in spec.workers])


def test_ctrl_c_keeps_what_every_host_measured_and_stops_them_all(cluster_dir, quiet_w1,
                                                                  tmp_path):
    progress, stop, box = Phases(), threading.Event(), {}

    def interrupt():  # what the command does on Ctrl-C, from a thread
        if progress.measuring.wait(120):
            box["pids"] = _workers_of(cluster_dir)
            stop.set()

    helper = threading.Thread(target=interrupt, daemon=True)
    helper.start()
    run = run_workload_recorded(DbSpec(dsn=quiet_w1), _spec(tmp_path, 4, 90.0), progress,
                                stop=stop, loadgen=LoadgenSpec(("h1", "h2"), cluster_dir))
    helper.join(5)
    assert run["status"] == "interrupted", run.get("error")
    [step] = run["steps"]
    assert step["partial"] and 2 < step["measured_s"] < 30
    parts = step["loadgen"]
    assert [(p["host"], p["status"], p["reported"]) for p in parts] == [
        ("h1", "completed", 1), ("h2", "completed", 1)]
    assert sum(t["count"] for t in step["transactions"].values()) == sum(
        p["completed"] for p in parts) > 0
    assert sorted(set(box["pids"].values())) == ["h1", "h2"]
    assert wait_until(lambda: not running(box["pids"]), timeout=15)


def test_a_coordinator_that_dies_leaves_no_worker_process_on_the_hosts(cluster_dir, quiet_w1,
                                                                       tmp_path):
    import subprocess
    import sys
    p = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "tpcc", "run", "--dsn", quiet_w1, "--users", "4",
         "--rampup", "1s", "--duration", "90s", "--sample-interval", "0", "--power", "none",
         "--io-latency", "off", "--results-dir", str(tmp_path / "results"), "--loadgen",
         "h1,h2", "--cluster-dir", str(cluster_dir)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: len(_workers_of(cluster_dir)) == 2, timeout=120)
        time.sleep(3)  # measuring
        pids = _workers_of(cluster_dir)
        assert sorted(pids.values()) == ["h1", "h2"]
    finally:
        p.kill()
        p.wait()
    # the relays stop hearing the coordinator (or see their tasks cancelled) and stop them
    assert wait_until(lambda: not running(pids), timeout=25), running(pids)


def _run_and(cluster_dir, dsn, tmp_path, signal_h2, duration):
    """A 4-user run over h1 and h2 whose h2 gets ``signal_h2`` once it measures: the run's
    record, how long it went on after the signal, and the worker processes it had."""
    progress = Phases()
    box: dict = {}
    h2 = load_state(cluster_dir).worker("h2").process.pid

    def hit():
        if progress.measuring.wait(120):
            box["pids"] = _workers_of(cluster_dir)
            box["t"] = time.monotonic()
            os.kill(h2, signal_h2)

    helper = threading.Thread(target=hit, daemon=True)
    helper.start()
    run = run_workload_recorded(DbSpec(dsn=dsn), _spec(tmp_path, 4, duration), progress,
                                loadgen=LoadgenSpec(("h1", "h2"), cluster_dir))
    helper.join(5)
    return run, time.monotonic() - box["t"], box["pids"]


def test_a_stopped_host_fails_the_step_as_hung_and_keeps_the_others_counts(
        cluster_dir, quiet_w1, tmp_path):
    h2 = load_state(cluster_dir).worker("h2").process.pid
    try:
        run, after, pids = _run_and(cluster_dir, quiet_w1, tmp_path, signal.SIGSTOP, 90.0)
    finally:
        os.kill(h2, signal.SIGCONT)
    assert run["status"] == "failed"
    assert "host h2: no heartbeat for 10 s" in run["error"], run["error"]
    assert 9 < after < 30, after
    assert sorted(set(pids.values())) == ["h1", "h2"]
    [step] = run["steps"]
    assert step["partial"]
    h1, h2_part = step["loadgen"]
    assert (h1["status"], h2_part["status"]) == ("completed", "failed")
    assert h1["completed"] > 0 and h1["reported"] == 1 and h2_part["reported"] == 0
    assert "no heartbeat" in h2_part["error"]
    merged = sum(t["count"] for n, t in step["transactions"].items())
    assert merged == h1["completed"]
    # h2's relay, running again, hears nothing from the coordinator and stops its workers
    assert wait_until(lambda: not running(pids), timeout=30), running(pids)


def test_a_killed_host_fails_the_step_within_30_s_and_leaves_no_process(
        cluster_dir, quiet_w1, tmp_path):
    run, after, pids = _run_and(cluster_dir, quiet_w1, tmp_path, signal.SIGKILL, 90.0)
    assert run["status"] == "failed"
    assert "host h2: its Dask worker died" in run["error"], run["error"]
    assert after < 30, after
    [step] = run["steps"]
    assert [p["status"] for p in step["loadgen"]] == ["completed", "failed"]
    assert sorted(set(pids.values())) == ["h1", "h2"]
    assert wait_until(lambda: not running(pids), timeout=15), running(pids)


def test_a_host_whose_worker_is_dead_is_refused(cluster_dir, quiet_w1, tmp_path):
    with pytest.raises(OltplabError, match="--loadgen: the worker of h2 is not alive"):
        run_workload_recorded(DbSpec(dsn=quiet_w1), _spec(tmp_path, 2, 2.0),
                              loadgen=LoadgenSpec(("h1", "h2"), cluster_dir))
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
