"""A plan's datastores on real loop devices and btrfs: one made by hand as the README shows is
taken when it has what the plan asks and refused naming the key that differs; a device removed
in one repeat is back, with the schema built again, before the next repeat."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ..conftest import free_port, loops_over, mounts_under, oltplab, saved_runs

FIO_PLAN = """
[plan]
name = "{name}"
[defaults]
datastore = "r1two"
[[step]]
kind = "fio"
profile = "4k-70r30w-random"
size = "16MiB"
ramp = "0s"
duration = "1s"
[datastores.r1two]
raid = "raid1"
metadata = "{metadata}"
loop = "2x320MiB"
keep = true
"""


@pytest.fixture
def here(server_tmp):
    """A folder for a plan whose datastores land in its oltplab-data/datastores; whatever a
    test leaves there is destroyed after."""
    if os.geteuid() != 0 or shutil.which("mkfs.btrfs") is None:
        pytest.skip("datastores need root and btrfs-progs")
    folder = server_tmp / f"plan-ds-{free_port()}"
    folder.mkdir()
    yield folder
    root = folder / "oltplab-data" / "datastores"
    for name in (sorted(root.iterdir()) if root.is_dir() else []):
        oltplab("datastore", "destroy", name.name, cwd=folder)
    assert mounts_under(folder) == [] and loops_over(folder) == []


def _plan(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def test_a_datastore_made_as_the_readme_shows_is_taken_and_a_differing_key_named(here):
    oltplab("datastore", "create", "r1two", "--raid", "raid1", "--loop", "2x320MiB", cwd=here,
            check_rc=0)  # metadata not asked: btrfs chose raid1 over two devices
    same = _plan(here, "same", FIO_PLAN.format(name="same", metadata="raid1"))
    dup = _plan(here, "dup", FIO_PLAN.format(name="dup", metadata="dup"))
    shown = oltplab("plan", "show", str(same), cwd=here, check_rc=0).stdout
    assert "datastore r1two: btrfs raid1/raid1 on 2 loop devices of 320MiB, kept; exists, " \
           "matches" in shown, shown
    shown = oltplab("plan", "show", str(dup), cwd=here, check_rc=0).stdout
    assert "exists, differs: metadata (metadata raid1, the plan asks dup)" in shown, shown

    p = oltplab("plan", "run", str(dup), cwd=here, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "datastore 'r1two' has metadata raid1, the plan asks dup" in p.stderr, p.stderr
    [refused] = saved_runs(here / "results")
    assert refused["status"] == "failed" and "metadata raid1, the plan asks dup" in \
        refused["error"]

    p = oltplab("plan", "run", str(same), "--results-dir", "taken", cwd=here, check_rc=0,
                timeout=120)
    assert "datastore r1two: reused" in p.stderr, p.stderr
    [run] = saved_runs(here / "taken")
    assert run["status"] == "completed" and run["kind"] == "fio"
    assert run["datastores"]["target"]["name"] == "r1two", run["datastores"]

    # without keep, a plan destroys at its end only what it made: never the user's
    mine = _plan(here, "mine", FIO_PLAN.format(name="mine", metadata="raid1")
                 .replace("keep = true\n", ""))
    p = oltplab("plan", "run", str(mine), "--results-dir", "mine", cwd=here, check_rc=0,
                timeout=120)
    assert "datastore r1two: reused" in p.stderr and "datastore r1two: kept: plan mine did " \
        "not make it (made by oltplab datastore create)" in p.stderr, p.stderr
    assert oltplab("datastore", "show", "r1two", cwd=here).returncode == 0
    oltplab("datastore", "destroy", "r1two", cwd=here, check_rc=0)
    p = oltplab("plan", "run", str(mine), "--results-dir", "made", cwd=here, check_rc=0,
                timeout=120)
    assert "datastore r1two: made" in p.stderr and "datastore r1two: destroyed" in p.stderr
    assert oltplab("datastore", "show", "r1two", cwd=here).returncode == 2


REMOVAL_PLAN = """
[plan]
name = "rm"
repeat = 2
[defaults]
datastore = "r1"
warehouses = 1
build_users = 2
db_memory = "64MiB"
users = [2]
rampup = "1s"
duration = "8s"
port = {port}
inject = ["at=2s,remove-device=1"]
[datastores.r1]
raid = "raid1"
metadata = "raid1"
loop = "3x1GiB"
"""


def test_each_repeat_with_a_removal_runs_on_the_planned_devices(here):
    plan = _plan(here, "rm", REMOVAL_PLAN.format(port=free_port()))
    p = oltplab("plan", "run", str(plan), cwd=here, check_rc=0, timeout=600)
    runs = saved_runs(here / "results")
    assert [(r["plan"]["repeat"], r["status"]) for r in runs] == [(1, "completed"),
                                                                  (2, "completed")], p.stderr
    for run in runs:
        [event] = run["events"]
        assert event["kind"] == "remove-device" and "error" not in event, event.get("error")
        assert event["devices_before"] == 3
        assert len(run["datastores"]["datadir"]["devices"]) == 3
        assert not any(w for s in run["steps"] for w in s.get("warnings", [])
                       if "remove-device" in w)
    # the second repeat's datastore was made again and its schema built again, with progress
    assert ("datastore r1: making it again: changed by --inject at=2s,remove-device=1"
            in p.stderr), p.stderr
    assert "datastore r1: made again" in p.stderr
    assert p.stderr.count("building 1 warehouses for cell all") == 2, p.stderr
    assert "datastore r1: destroyed" in p.stderr
