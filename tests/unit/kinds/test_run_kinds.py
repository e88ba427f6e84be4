"""A run kind is registered once and every command knows it: a toy kind, made here and nowhere
else, is run, recorded, listed, shown, exported, reported and compared with no line of cli/ or
report/ naming it.

The toy measures something real: how fast the kernel hands out random bytes, per block size."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from oltplab import kinds
from oltplab.cli.main import cli
from oltplab.report.charts import bar_chart, entries
from oltplab.report.model import Table
from oltplab.runs.kind import Metric, RunKind
from oltplab.runs.lifecycle import new_record, recording
from oltplab.runs.timeline import make_sampler

BLOCKS = (4096, 65536)


def run_toy(results_dir: Path, name: str) -> dict:
    record = new_record(results_dir, "urandom", name, {"datadir": results_dir})
    with recording(record, make_sampler(0.1, {"datadir": results_dir}, "none")) as end:
        for block in BLOCKS:
            n, t0 = 0, time.monotonic()
            while time.monotonic() - t0 < 0.2:
                n += len(os.urandom(block))
            seconds = time.monotonic() - t0
            record.add_step({"block": block, "mb_per_s": round(n / 1e6 / seconds, 3)})
        end.status = "completed"
    return {**record.data, "_path": str(record.path)}


def _values(group) -> dict:
    out: dict = {}
    for r in group.runs:
        for s in r.steps:
            out.setdefault(s["block"], []).append(s["mb_per_s"])
    return out


def _headline(record: dict) -> str:
    steps = record.get("steps") or []
    if not steps:
        return "-"
    best = max(steps, key=lambda s: s["mb_per_s"])
    return f"urandom {best['mb_per_s']:,.0f} MB/s at {best['block']} bytes"


def _tables(run) -> list[Table]:
    return [Table("urandom", "Random bytes per block size", ("block", "MB/s"),
                  tuple((s["block"], s["mb_per_s"]) for s in run.steps))]


def _charts(groups) -> list:
    return [bar_chart("urandom_rate", "Random bytes per second per block size", "block",
                      "MB/s", entries(groups, [("MB/s", _values)]), why="no block measured")]


TOY = RunKind(name="urandom", help="the kernel's random bytes per block size",
              headline=_headline, tables=_tables, charts=_charts,
              metrics=(Metric("MB/s", _values, lambda b: f"{b} bytes"),))


@pytest.fixture
def toy():
    kinds.register(TOY)
    yield TOY
    kinds.unregister(TOY.name)


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_toy_kind_is_recorded_listed_shown_exported_reported_and_compared(toy, tmp_path):
    results = tmp_path / "results"
    a, b = run_toy(results, "one"), run_toy(results, "two")
    assert a["kind"] == "urandom" and a["status"] == "completed" and len(a["steps"]) == 2
    assert (Path(a["_path"]) / "timeline.json").is_file()

    listed = invoke("results", "list", "--results-dir", str(results))
    assert listed.count("urandom") >= 2 and "MB/s at" in listed

    shown = invoke("results", "show", a["id"], "--results-dir", str(results))
    assert "Random bytes per block size" in shown and "65536" in shown
    assert f"folder: {a['_path']}" in shown

    csv_dir = tmp_path / "csv"
    invoke("results", "export", a["id"], "--csv", "--out", str(csv_dir),
           "--results-dir", str(results))
    rows = (csv_dir / "urandom.csv").read_text().splitlines()
    assert rows[0] == "block,MB/s" and len(rows) == 3

    one = tmp_path / "report-one"
    invoke("report", a["id"], "--out", str(one), "--results-dir", str(results))
    html = (one / "report.html").read_text()
    assert "Random bytes per second per block size" in html
    assert "No charts are drawn" not in html
    assert (one / "urandom_rate.png").is_file()

    both = tmp_path / "report-both"
    invoke("report", a["id"], b["id"], "--out", str(both), "--results-dir", str(results))
    html = (both / "report.html").read_text()
    assert "MB/s at 4096 bytes" in html and "Comparison with the first run" in html


def test_an_unknown_kind_is_refused_in_one_line():
    with pytest.raises(Exception, match="unknown run kind 'nope'"):
        kinds.get("nope")
    assert "urandom" not in kinds.names()


def test_a_kind_is_registered_once(toy):
    with pytest.raises(Exception, match="already registered"):
        kinds.register(TOY)
