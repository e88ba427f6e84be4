"""The live metrics endpoint (telemetry/openmetrics.py): the collector's families from known
figures, nothing where a source has nothing, and the HTTP server's life (bound, refused in
one line, closed)."""

from __future__ import annotations

import socket
import time
import urllib.request

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from oltplab.config import MetricsSpec, metrics_spec
from oltplab.errors import UsageError
from oltplab.loadgen.step import Tick
from oltplab.telemetry.openmetrics import Endpoint, LiveFigures, endpoint, exposition
from oltplab.telemetry.sampler import Sampler
from oltplab.telemetry.sources import Source

NAN = float("nan")
SAMPLE = {"cpu.user": 30.0, "cpu.system": 10.0, "cpu.idle": 55.0, "cpu.iowait": 5.0,
          "cpu.steal": NAN, "disk.sda.r_s": 12.0, "disk.sda.w_s": 300.0,
          "disk.sda.rMB_s": 0.5, "disk.sda.wMB_s": 4.0, "disk.sda.r_await": NAN,
          "disk.sda.w_await": 0.8, "disk.sda.aqu_sz": 0.3, "disk.sda.util": 25.0,
          "mem.used_bytes": 2e9, "mem.cached_bytes": NAN, "mem.dirty_bytes": 1e6,
          "power.watts": 41.5, "net.lo.rx_bytes_s": 10.0}
STEP = {"transactions": {"new_order": {"mean": 2.1, "p50": 1.5, "p95": 4.0, "p99": 8.0,
                                       "max": 20.0},
                         "delivery": {"mean": None, "p50": None, "p95": None, "p99": None,
                                      "max": None}}}


class Known:
    """A sampler whose latest sample is known."""

    def __init__(self, sample: dict | None):
        self.sample = sample

    def latest(self):
        return None if self.sample is None else (1, dict(self.sample))


def _page(figures: LiveFigures) -> dict:
    return {f.name: f for f in text_string_to_metric_families(exposition(figures).decode())}


def _by(families: dict, name: str, *keys: str) -> dict:
    return {tuple(s.labels[k] for k in keys): s.value for s in families[name].samples}


def _measuring(figures: LiveFigures, sample: dict | None = SAMPLE) -> LiveFigures:
    figures.begin("20261127T0800-tpcc-1", "nopm", Known(sample))
    figures.tick(Tick(1, 3, 4, "measure", 12.0, 60.0, 1500, 660, 5.0))
    return figures


def test_the_collector_gives_the_known_figures_with_run_step_and_host():
    page = _page(_measuring(LiveFigures("db1")))
    for f in page.values():
        for s in f.samples:
            assert (s.labels["run"], s.labels["step"], s.labels["host"]) == \
                ("20261127T0800-tpcc-1", "2", "db1"), s
    assert _by(page, "oltplab_throughput_per_minute", "kind") == {("tpm",): 1500,
                                                                  ("nopm",): 660}
    assert _by(page, "oltplab_users") == {(): 4}
    assert _by(page, "oltplab_run_phase", "oltplab_run_phase") == {
        ("connecting",): 0, ("rampup",): 0, ("measure",): 1}
    assert _by(page, "oltplab_cpu_ratio", "mode") == {("user",): 0.3, ("system",): 0.1,
                                                      ("idle",): 0.55, ("iowait",): 0.05}
    assert _by(page, "oltplab_cpu_busy_ratio") == {(): pytest.approx(0.4)}
    assert _by(page, "oltplab_device_iops", "device", "direction") == {
        ("sda", "read"): 12.0, ("sda", "write"): 300.0}
    assert _by(page, "oltplab_device_throughput_bytes_per_second", "direction") == {
        ("read",): 0.5 * 2**20, ("write",): 4.0 * 2**20}
    # no read in that second: no read latency, not a zero
    assert _by(page, "oltplab_device_latency_seconds", "direction") == {
        ("write",): pytest.approx(0.0008)}
    assert _by(page, "oltplab_device_busy_ratio", "device") == {("sda",): 0.25}
    assert _by(page, "oltplab_memory_bytes", "kind") == {("used",): 2e9, ("dirty",): 1e6}
    assert _by(page, "oltplab_power_watts") == {(): 41.5}
    assert "oltplab_transaction_latency_seconds" not in page  # no step has ended


def test_latencies_are_the_last_finished_steps():
    figures = _measuring(LiveFigures("db1"))
    figures.step_done(0, STEP)
    page = _page(figures)
    lat = {(s.labels["transaction"], s.labels["quantile"], s.labels["step"]): s.value
           for s in page["oltplab_transaction_latency_seconds"].samples}
    assert lat == {("new_order", "0.5", "1"): 0.0015, ("new_order", "0.95", "1"): 0.004,
                   ("new_order", "0.99", "1"): 0.008, ("new_order", "1", "1"): 0.02}
    assert page["oltplab_transaction_latency_seconds"].unit == "seconds"
    assert _by(page, "oltplab_users", "step") == {("2",): 4}  # the step under way


def test_what_a_run_lacks_is_absent():
    figures = LiveFigures("db1")
    assert _page(figures) == {}  # no run
    figures.begin("r", "opm", None)  # no sampler, no tick yet
    assert _page(figures) == {}
    figures.tick(Tick(0, 1, 2, "rampup", 0.0, 5.0, 0, 0))  # the first tick has no rate yet
    page = _page(figures)
    assert "oltplab_throughput_per_minute" not in page and "oltplab_users" in page
    figures.begin("r", "opm", Known({"cpu.user": NAN, "cpu.system": NAN, "power.watts": NAN,
                                     "disk.vdb.r_s": NAN, "disk.vdb.w_await": NAN}))
    assert _page(figures) == {}
    figures.tick(Tick(0, 1, 2, "measure", 3.0, 5.0, 900, 120, 4.0))
    assert _by(_page(figures), "oltplab_throughput_per_minute", "kind") == {
        ("tpm",): 900, ("opm",): 120}
    figures.end()
    assert _page(figures) == {}


def test_a_neighbours_run_sums_its_instances():
    figures = LiveFigures("db1")
    figures.begin("n", "nopm", None)
    figures.tick_sum([Tick(0, 1, 2, "measure", 3.0, 9.0, 600, 270, 5.0),
                      Tick(0, 1, 3, "measure", 2.0, 9.0, 900, 400, 4.0)])
    page = _page(figures)
    assert _by(page, "oltplab_throughput_per_minute", "kind", "step") == {
        ("tpm", ""): 1500, ("nopm", ""): 670}
    assert _by(page, "oltplab_users") == {(): 5}
    figures.tick_sum([Tick(0, 1, 2, "measure", 3.0, 9.0, 600, 270, 5.0),
                      Tick(0, 1, 3, "rampup", 0.0, 9.0, 0, 0)])
    page = _page(figures)
    assert "oltplab_throughput_per_minute" not in page and "oltplab_run_phase" not in page


class Disk(Source):
    """Known figures of one device, as the disk source names its columns."""

    name = "known"

    def __init__(self):
        super().__init__()
        self.columns = ["disk.sdz.r_s", "disk.sdz.w_s", "disk.sdz.w_await"]

    def read(self, t_ns: int) -> list[float]:
        return [0.0, 250.0, 1.5]


def test_the_collector_reads_a_real_samplers_latest_sample():
    sampler = Sampler(0.05, power="none", devices=[], interfaces=[], extra_sources=[Disk()])
    assert sampler.latest() is None
    figures = LiveFigures("db1")
    figures.begin("r", None, sampler)
    sampler.start()
    try:
        deadline = time.monotonic() + 10
        while sampler.latest() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        t_ns, values = sampler.latest()
        assert values["disk.sdz.w_s"] == 250.0 and "power.watts" not in values
        page = _page(figures)
    finally:
        sampler.stop()
    assert _by(page, "oltplab_device_iops", "device", "direction") == {
        ("sdz", "read"): 0.0, ("sdz", "write"): 250.0}
    assert _by(page, "oltplab_device_latency_seconds", "direction") == {("write",): 0.0015}
    assert "oltplab_power_watts" not in page and "oltplab_cpu_busy_ratio" in page
    assert "oltplab_throughput_per_minute" not in page  # a run without a workload


def test_the_server_serves_the_page_and_closes():
    with endpoint(MetricsSpec(0)) as ep:
        _measuring(ep.figures)
        host, port = ep.address
        assert (host, ep.record()["port"]) == ("127.0.0.1", port)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            assert r.headers["Content-Type"].startswith("application/openmetrics-text")
            text = r.read().decode()
        assert text.endswith("# EOF\n") and "oltplab_throughput_per_minute" in text
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
    running = Endpoint(MetricsSpec(0)).start()
    try:
        with endpoint(running) as ep:  # a running endpoint is its owner's to stop
            assert ep is running
        assert running.address[1] > 0
    finally:
        running.stop()
    with endpoint(None) as ep:
        assert ep is None


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_the_server_closes_on_ctrl_c_and_on_failure(error):
    with pytest.raises(error):
        with endpoint(MetricsSpec(0)) as ep:
            address = ep.address
            raise error()
    with socket.socket() as s:
        assert s.connect_ex(address) != 0


def test_a_port_in_use_and_a_foreign_address_are_usage_errors():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UsageError, match=f"--metrics-port {port}: cannot listen there: "
                                             "Address already in use"):
            Endpoint(MetricsSpec(port)).start()
    with pytest.raises(UsageError, match="--metrics-listen 192.0.2.1"):
        Endpoint(MetricsSpec(port, "192.0.2.1")).start()
    with pytest.raises(UsageError, match="--metrics-listen no-such-host.invalid"):
        Endpoint(MetricsSpec(port, "no-such-host.invalid")).start()


def test_the_spec_of_the_options():
    assert metrics_spec(None, "127.0.0.1") is None
    assert metrics_spec(9187, "127.0.0.1") == MetricsSpec(9187, "127.0.0.1")
    assert metrics_spec(9187, "::1").listen == "::1"
    with pytest.raises(UsageError, match="--metrics-listen needs --metrics-port"):
        metrics_spec(None, "0.0.0.0")
    with pytest.raises(UsageError, match="--metrics-port"):
        MetricsSpec(70000)


def test_a_second_without_an_idle_tick_is_busy_1_not_a_hair_above():
    from oltplab.telemetry.sources.cpu import cpu_percent
    # two /proc/stat readings of a saturated interval: 1 user tick and 5 system ticks
    user, system, *_ = cpu_percent((0, 0, 0, 0, 0, 0, 0, 0), (1, 0, 5, 0, 0, 0, 0, 0))
    assert (user + system) / 100 > 1  # what the floats give
    page = _page(_measuring(LiveFigures("db1"), {**SAMPLE, "cpu.user": user,
                                                 "cpu.system": system, "cpu.idle": 0.0}))
    assert _by(page, "oltplab_cpu_busy_ratio") == {(): 1.0}
