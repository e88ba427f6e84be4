"""``plan run --metrics-port``: one endpoint from the plan's first run to its last, serving each
run in turn under its own ``run`` label; closed when the plan ends."""

from __future__ import annotations

import socket

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ..conftest import free_port, saved_runs, scraped


def test_a_plan_serves_each_run_in_turn_on_one_endpoint(scratch_w1, tmp_path):
    plan = tmp_path / "p.toml"
    plan.write_text(f'[plan]\nname = "p"\n[defaults]\ndsn = "{scratch_w1}"\nwarehouses = 1\n'
                    'users = [1]\nrampup = "0s"\nduration = "5s"\nworkers = 1\n'
                    'io_latency = "off"\n[matrix]\nmode = ["procedures", "sql"]\n')
    port = free_port()
    p, pages = scraped("plan", "run", str(plan), "--metrics-port", str(port), port=port,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    runs = saved_runs(tmp_path / "results")
    assert len(runs) == 2 and all(r["status"] == "completed" for r in runs)
    assert {r["metrics"]["port"] for r in runs} == {port}
    seen = {s.labels["run"] for _, text in pages for f in text_string_to_metric_families(text)
            if f.name == "oltplab_throughput_per_minute" for s in f.samples if s.value > 0}
    assert seen == {r["id"] for r in runs}
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
