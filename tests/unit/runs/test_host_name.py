"""A run made on a cluster's host by a host's part (a plan's cell placed there, a neighbours
run's share) is named by that host's hosts.toml name, in its record and its report, not by
the OS host name; a run on no cluster keeps the OS host name alone."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from oltplab.report.build import build_report
from oltplab.runs.lifecycle import new_record, recording


def _made(results_dir: Path, **labels) -> dict:
    record = new_record(results_dir, "tpcc", "placed", {}, **labels)
    with recording(record, None) as end:
        record.add_step({"users": 1, "nopm": 10})
        end.status = "completed"
    return json.loads((record.path / "run.json").read_text())


def test_a_plans_run_on_a_host_is_named_by_its_hosts_toml_name(tmp_path):
    run = _made(tmp_path, plan={"name": "p", "cell": "target=b", "host": "h2"})
    assert run["host"]["name"] == "h2" and run["host"]["hostname"] == socket.gethostname()
    subtitle = build_report([run]).subtitle
    assert "host h2" in subtitle, subtitle


def test_a_neighbours_share_is_named_by_its_host_and_a_run_on_no_cluster_by_none(tmp_path):
    share = _made(tmp_path, share={"host": "h1", "instances": [1, 3]})
    assert share["host"]["name"] == "h1"
    alone = _made(tmp_path, plan={"name": "p", "cell": "target=a"})
    assert "name" not in alone["host"]
    assert f"host {socket.gethostname()}" in build_report([alone]).subtitle
