"""What the commands say: every fault kind in both workloads' --inject help, the shop's best
user count named with its OPM, a shop plan's step named after the shop, --repeat refused with
a fault that changes the datastore."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from oltplab.cli.main import cli, main
from oltplab.faults import FAULTS
from oltplab.loadgen.sequence import describe, summary
from oltplab.plans.model import load_plan
from oltplab.report.plan import plan_section


def _help(*args: str) -> str:
    text = CliRunner().invoke(cli, [*args, "--help"], catch_exceptions=False).output
    return re.sub(r"-\s+", "-", " ".join(text.split()))  # click wraps at hyphens too


@pytest.mark.parametrize("command", ["dvds", "tpcc"])
def test_run_help_lists_every_fault_kind(command):
    text = _help(command, "run")
    inject = text[text.index("--inject EVENT"):text.index("--results-dir")]
    missing = [kind for kind in FAULTS if kind not in inject]
    assert missing == [], inject


def test_the_shops_best_user_count_is_named_with_its_opm():
    steps = [{"users": 1, "workload_tpm": 1000.0, "opm": 100.0},
             {"users": 2, "workload_tpm": 1900.0, "opm": 190.0},
             {"users": 4, "workload_tpm": 1950.0, "opm": 196.0}]
    auto = summary(steps, 8, "gain-below-threshold", unit_key="opm")
    assert auto["peak"] == {"users": 4, "tpm": 1950.0, "opm": 196.0}
    line = describe(auto)
    assert "peak at 4 users (TPM 1,950, OPM 196)" in line and "NOPM" not in line, line
    # a TPC-C-derived run's, and a record written before the unit was kept, say NOPM
    tpcc = summary([{**s, "nopm": s["opm"] / 2} for s in steps], 8, "gain-below-threshold")
    assert "(TPM 1,950, NOPM 98)" in describe(tpcc)
    del tpcc["unit"]
    assert "(TPM 1,950, NOPM 98)" in describe(tpcc)
    assert "named with the workload's own figure (NOPM, the shop's OPM)" in _help("dvds", "run")


SHOP = """
[plan]
name = "shop"
[defaults]
workload = "dvds"
size = "10MB"
users = [1]
[targets.a]
datadir = "/tmp/a"
"""


def test_a_shop_plan_names_its_step_after_the_shop(tmp_path):
    (tmp_path / "p.toml").write_text(SHOP)
    plan = load_plan(tmp_path / "p.toml", tmp_path / "results")
    assert [plan.step_name(s) for s in plan.steps] == ["dvds"]
    assert [i.what for i in plan.items] == ["dvds"]
    [note] = plan_section(plan, []).notes
    assert "steps 1. dvds;" in note and "tpcc" not in note, note
    (tmp_path / "q.toml").write_text(SHOP + '[[step]]\nkind = "tpcc"\n[[step]]\nkind = "fio"\n'
                                     'profile = "4k-70r30w-random"\n')
    plan = load_plan(tmp_path / "q.toml", tmp_path / "results")
    assert [plan.step_name(s) for s in plan.steps] == ["dvds", "fio"]
    shown = CliRunner().invoke(cli, ["plan", "show", str(tmp_path / "q.toml")],
                               catch_exceptions=False).output
    assert "(2 steps: dvds, fio)" in shown and "step 1 dvds:" in shown, shown


@pytest.mark.parametrize("command", ["dvds", "tpcc"])
def test_repeats_with_a_fault_that_changes_the_datastore_are_refused(command, tmp_path, capsys):
    rc = main([command, "run", "--repeat", "3", "--inject", "at=5s,remove-device=1",
               "--datadir", str(tmp_path / "pg")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert ("--repeat 3 with --inject at=5s,remove-device=1: the fault changes the datastore, "
            "so repeats 2 to 3 would run on another one") in err
    assert not any(tmp_path.iterdir())
