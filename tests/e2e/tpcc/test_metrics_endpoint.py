"""``tpcc run --metrics-port``: the live OpenMetrics endpoint scraped over HTTP while a real run
goes, parsed with prometheus_client's OpenMetrics parser; closed when the run ends; a port in
use or an address that is not this host's refused in one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

from interrupts import INTERRUPTIBLE, ctrl_c
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ..conftest import free_port, oltplab, saved_runs, scraped

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def samples(page: dict, name: str, **labels) -> list:
    f = page.get(name)
    return [s for s in (f.samples if f else ())
            if all(s.labels.get(k) == v for k, v in labels.items())]


def values(page: dict, name: str, **labels) -> list[float]:
    return [s.value for s in samples(page, name, **labels)]


def test_the_endpoint_serves_the_runs_figures_while_it_runs(scratch_w1, tmp_path):
    port = free_port()
    results = tmp_path / "results"
    p, pages = scraped("tpcc", "run", "--dsn", scratch_w1, "--users", "1,2", "--rampup", "1s",
                       "--duration", "6s", "--workers", "1", "--io-latency", "off",
                       "--metrics-port", str(port), "--results-dir", str(results), port=port)
    assert p.returncode == 0, p.stderr
    [run] = saved_runs(results)
    assert run["metrics"] == {"address": "127.0.0.1", "port": port, "format": "openmetrics"}

    assert {kind for kind, _ in pages} == {OPENMETRICS}
    live = [f for f in (families(text) for _, text in pages)
            if "oltplab_throughput_per_minute" in f]
    assert len(live) >= 3, f"{len(pages)} pages, {len(live)} with throughput"
    for page in live:  # every sample names the run, the step and the host
        for f in page.values():
            for s in f.samples:
                assert s.labels["run"] == run["id"] and s.labels["step"] in ("1", "2"), s
                assert s.labels["host"] == socket.gethostname(), s
    measuring = [f for f in live if values(f, "oltplab_run_phase", oltplab_run_phase="measure")
                 == [1.0]]
    assert any(values(f, "oltplab_throughput_per_minute", kind="tpm")[0] > 0 for f in measuring)
    assert any(values(f, "oltplab_throughput_per_minute", kind="nopm")[0] > 0 for f in measuring)
    assert all(0 <= v <= 1 for f in live for v in values(f, "oltplab_cpu_busy_ratio"))
    assert any(values(f, "oltplab_cpu_busy_ratio") for f in live)
    assert any(values(f, "oltplab_device_iops", direction="write") for f in live)
    assert any(values(f, "oltplab_device_throughput_bytes_per_second") for f in live)
    # the first step's percentiles, once it has ended, while the second runs
    second = [f for f in live if values(f, "oltplab_users") == [2.0]]
    assert second, "no page of the second step"
    lat = [s for f in second for s in samples(f, "oltplab_transaction_latency_seconds", step="1")]
    # (a page scraped after the second step has ended may carry its percentiles too; while
    # it ramps up, only the first step's are there)
    ramping = [f for f in second if values(f, "oltplab_run_phase", oltplab_run_phase="rampup")
               == [1.0]]
    assert all({s.labels["step"] for s in samples(f, "oltplab_transaction_latency_seconds")}
               <= {"1"} for f in ramping)
    assert lat
    assert {s.labels["transaction"] for s in lat} >= {"new_order", "payment"}
    assert all(s.value > 0 for s in lat)

    with socket.socket() as s:  # closed with the run
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_ctrl_c_closes_the_endpoint(scratch_w1, tmp_path):
    port = free_port()
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "tpcc", "run", "--dsn", scratch_w1, "--rampup", "0s",
         "--duration", "60s", "--workers", "1", "--io-latency", "off", "--metrics-port",
         str(port), "--results-dir", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, **INTERRUPTIBLE)
    try:
        deadline, measuring = time.monotonic() + 120, False
        while not measuring and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    measuring = 'oltplab_run_phase="measure"' in r.read().decode()
            except OSError:
                pass
        assert measuring, proc.stderr.read() if proc.poll() is not None else "not measuring"
        out, err = ctrl_c(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert [r["status"] for r in saved_runs(results)] == ["interrupted"]
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
