"""The brokerage in a plan: cells that run it on two datastores (the example e7 plan at one
day of trading) record trps and the datastore's IO per cell and the report shows them; a key
of another workload in such a plan is refused in one line (neighbours: in
test_brokerage_neighbours.py)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import free_port

from oltplab.report.charts import fmt

from ..conftest import oltplab, saved_runs

EXAMPLE = Path(__file__).parents[3] / "examples" / "plans" / "e7-brokerage-policies.toml"
# one day of trading, short steps: the smallest brokerage a run measures
SMALL = ("--set", "days=1", "--set", "users=[1]", "--set", "rampup=1s", "--set",
         "duration=3s", "--set", "host_memory=none")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mkfs.btrfs") is None,
                    reason="datastores need root and btrfs-progs")
def test_the_e7_brokerage_plan_runs_on_two_datastores_and_reports_trps(tmp_path):
    p = oltplab("plan", "run", str(EXAMPLE), "--set", f"port={free_port()}", "--set",
                'matrix.datastore=["r1", "r5-zstd"]', *SMALL, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "building the brokerage of 1,000 customers x 1 day for cell datastore=r1" in p.stderr
    runs = saved_runs(tmp_path / "results")
    assert [r["datastores"]["datadir"]["name"] for r in runs] == ["r1", "r5-zstd"]
    for r in runs:
        [step] = r["steps"]
        assert r["kind"] == "brokerage" and r["status"] == "completed", r.get("error")
        assert (r["schema"]["customers"], r["schema"]["days"]) == (1000, 1)
        assert step["users"] == 1 and step["trps"] > 0 and step["io"]["write_iops"] > 0, step
    report = tmp_path / "reports" / "plan-e7-brokerage-policies"
    html = (report / "report.html").read_text()
    assert "trps (best step)" in html and "Storage policies" in html
    assert (report / "plan_trps.png").is_file() and (report / "plan_brokerage_iops.png").is_file()
    rows = _table(html, "IO per cell and user count")
    assert rows[0][:7] == ["datastore or cell", "users", "runs", "trps", "read IOPS",
                           "write IOPS", "reads per write"], rows[0]
    assert [(r[0], r[1]) for r in rows[1:]] == [("r1", "1"), ("r5-zstd", "1")], rows
    for row, r in zip(rows[1:], runs):
        step = r["steps"][0]
        assert row[3] == fmt(round(step["trps"], 2)), (row, step)
        assert row[5] == fmt(round(step["io"]["write_iops"])), (row, step)
    stores = tmp_path / "oltplab-data" / "datastores"
    assert not stores.exists() or not any(stores.iterdir()), "each is destroyed after its cell"


def _table(html: str, title: str) -> list[list[str]]:
    """The cells of the report's table of that title, row by row (its header first)."""
    text = html[html.index(title):]
    text = text[:text.index("</table>")]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in
             re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", text, re.S)]


@pytest.mark.parametrize("key, words", [
    ("warehouses=2", ("warehouses is a TPC-C option",)),
    ("size=10MB", ("size is an option of the dvds workload",)),
    ("think_time=1s", ("think_time is an option of the dvds workload",)),
])
def test_a_key_of_another_workload_in_a_brokerage_plan_is_one_line(tmp_path, key, words):
    p = oltplab("plan", "run", str(EXAMPLE), "--set", key, cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
    [line] = p.stderr.strip().splitlines()
    assert line.startswith("oltplab: error: ") and str(EXAMPLE) in line, line
    for w in words:
        assert w in line, line
    assert not any(tmp_path.iterdir()), "nothing is made"
