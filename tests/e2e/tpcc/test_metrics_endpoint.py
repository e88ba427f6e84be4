"""``tpcc run --metrics-port``: the live OpenMetrics endpoint scraped over HTTP while a real run
goes, parsed with prometheus_client's OpenMetrics parser; closed when the run ends; a port in
use or an address that is not this host's refused in one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ..conftest import free_port, oltplab, saved_runs


def _scrape(port: int) -> tuple[str, dict] | None:
    """The page's content type and its families by name (None while nothing listens)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            kind, text = r.headers["Content-Type"], r.read().decode()
    except (urllib.error.URLError, ConnectionError, OSError):
        return None
    return kind, {f.name: f for f in text_string_to_metric_families(text)}


def _samples(families: dict, name: str, **labels) -> list:
    f = families.get(name)
    return [s for s in (f.samples if f else ())
            if all(s.labels.get(k) == v for k, v in labels.items())]


def _values(families: dict, name: str, **labels) -> list[float]:
    return [s.value for s in _samples(families, name, **labels)]


def test_the_endpoint_serves_the_runs_figures_while_it_runs(scratch_w1, tmp_path):
    port = free_port()
    results = tmp_path / "results"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("OLTPLAB_DSN", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "tpcc", "run", "--dsn", scratch_w1, "--users", "1,2",
         "--rampup", "1s", "--duration", "6s", "--workers", "1", "--io-latency", "off",
         "--metrics-port", str(port), "--results-dir", str(results)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pages = []
    try:
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:
            page = _scrape(port)
            if page is not None:
                pages.append(page)
            time.sleep(0.5)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    [run] = saved_runs(results)
    assert run["metrics"] == {"address": "127.0.0.1", "port": port, "format": "openmetrics"}

    assert {kind for kind, _ in pages} == {"application/openmetrics-text; version=1.0.0; "
                                           "charset=utf-8"}
    live = [f for _, f in pages if "oltplab_throughput_per_minute" in f]
    assert len(live) >= 3, f"{len(pages)} pages, {len(live)} with throughput"
    for families in live:  # every sample names the run, the step and the host
        for f in families.values():
            for s in f.samples:
                assert s.labels["run"] == run["id"] and s.labels["step"] in ("1", "2"), s
                assert s.labels["host"] == socket.gethostname(), s
    measuring = [f for f in live if _values(f, "oltplab_run_phase", oltplab_run_phase="measure")
                 == [1.0]]
    assert any(_values(f, "oltplab_throughput_per_minute", kind="tpm")[0] > 0 for f in measuring)
    assert any(_values(f, "oltplab_throughput_per_minute", kind="nopm")[0] > 0 for f in measuring)
    assert all(0 <= v <= 1 for f in live for v in _values(f, "oltplab_cpu_busy_ratio"))
    assert any(_values(f, "oltplab_cpu_busy_ratio") for f in live)
    assert any(_values(f, "oltplab_device_iops", direction="write") for f in live)
    assert any(_values(f, "oltplab_device_throughput_bytes_per_second") for f in live)
    # the first step's percentiles, once it has ended, while the second runs
    second = [f for f in live if _values(f, "oltplab_users") == [2.0]]
    assert second, "no page of the second step"
    lat = [s for f in second for s in _samples(f, "oltplab_transaction_latency_seconds")]
    assert lat and {s.labels["step"] for s in lat} == {"1"}
    assert {s.labels["transaction"] for s in lat} >= {"new_order", "payment"}
    assert all(s.value > 0 for s in lat)

    assert _scrape(port) is None  # closed with the run
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_a_port_in_use_is_refused_in_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        p = oltplab("tpcc", "run", "--dsn", "postgresql://nowhere/x", "--metrics-port", str(port),
                    "--results-dir", str(tmp_path / "results"))
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f"--metrics-port {port}" in p.stderr and "in use" in p.stderr
    assert not (tmp_path / "results").exists()


def test_an_address_of_another_host_is_refused_in_one_line(tmp_path):
    p = oltplab("tpcc", "run", "--dsn", "postgresql://nowhere/x", "--metrics-port", "1",
                "--metrics-listen", "192.0.2.1", "--results-dir", str(tmp_path / "results"))
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "--metrics-listen 192.0.2.1" in p.stderr
