"""examples/grafana/oltplab.json: a valid Grafana dashboard whose every query names a metric
the live endpoint's collector gives (telemetry/openmetrics.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from oltplab.loadgen.step import Tick
from oltplab.telemetry.openmetrics import LiveFigures, exposition

DASHBOARD = Path(__file__).resolve().parents[3] / "examples" / "grafana" / "oltplab.json"
METRIC = re.compile(r"\boltplab_[a-z0-9_]+")


class Everything:
    """A sampler whose latest sample has every column the collector reads."""

    def latest(self):
        return 1, {**{f"cpu.{m}": 20.0 for m in ("user", "system", "idle", "iowait", "steal")},
                   **{f"disk.vda.{m}": 1.0 for m in ("r_s", "w_s", "rMB_s", "wMB_s", "r_await",
                                                     "w_await", "util")},
                   "mem.used_bytes": 1.0, "mem.cached_bytes": 1.0, "mem.dirty_bytes": 1.0,
                   "power.watts": 40.0}


def _collected() -> set[str]:
    figures = LiveFigures("h")
    figures.begin("r", "nopm", Everything())
    figures.tick(Tick(1, 2, 2, "measure", 1.0, 5.0, 600, 260, 5.0))
    figures.step_done(0, {"transactions": {"new_order": {"p50": 1.0, "p95": 2.0, "p99": 3.0,
                                                         "max": 4.0}}})
    return {f.name for f in text_string_to_metric_families(exposition(figures).decode())}


def _queries(dashboard: dict) -> list[str]:
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    for v in dashboard["templating"]["list"]:
        q = v.get("query")
        if v.get("type") == "query":
            exprs.append(q["query"] if isinstance(q, dict) else q)
    return exprs


def test_the_dashboard_is_json_with_panels_for_the_figures():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["title"] and dashboard["panels"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    named = {m for q in _queries(dashboard) for m in METRIC.findall(q)}
    for wanted in ("oltplab_throughput_per_minute", "oltplab_transaction_latency_seconds",
                   "oltplab_cpu_busy_ratio", "oltplab_device_iops",
                   "oltplab_device_latency_seconds", "oltplab_power_watts"):
        assert wanted in named, wanted


def test_every_metric_the_dashboard_queries_is_collected():
    dashboard = json.loads(DASHBOARD.read_text())
    collected = _collected()
    for query in _queries(dashboard):
        names = METRIC.findall(query)
        assert names, query
        assert set(names) <= collected, (query, sorted(collected))
