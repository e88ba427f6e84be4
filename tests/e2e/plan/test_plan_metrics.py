"""``plan run --metrics-port``: one endpoint from the plan's first run to its last, serving each
run in turn under its own ``run`` label; closed when the plan ends."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ..conftest import free_port, saved_runs


def _runs_seen(port: int) -> set[str] | None:
    """The ``run`` labels of the page's throughput (None while nothing listens)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            text = r.read().decode()
    except (urllib.error.URLError, ConnectionError, OSError):
        return None
    return {s.labels["run"] for f in text_string_to_metric_families(text)
            if f.name == "oltplab_throughput_per_minute" for s in f.samples if s.value > 0}


def test_a_plan_serves_each_run_in_turn_on_one_endpoint(scratch_w1, tmp_path):
    plan = tmp_path / "p.toml"
    plan.write_text(f'[plan]\nname = "p"\n[defaults]\ndsn = "{scratch_w1}"\nwarehouses = 1\n'
                    'users = [1]\nrampup = "0s"\nduration = "5s"\nworkers = 1\n'
                    'io_latency = "off"\n[matrix]\nmode = ["procedures", "sql"]\n')
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "oltplab", "plan", "run", str(plan),
                             "--metrics-port", str(port)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    seen: set[str] = set()
    try:
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:
            seen |= _runs_seen(port) or set()
            time.sleep(0.5)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    runs = saved_runs(tmp_path / "results")
    assert len(runs) == 2 and all(r["status"] == "completed" for r in runs)
    assert {r["metrics"]["port"] for r in runs} == {port}
    assert seen == {r["id"] for r in runs}
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
