"""Plan files: expansion into cells and strict validation before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from oltplab.errors import UsageError
from oltplab.plans import load_plan

EXAMPLE = Path(__file__).parents[2] / "examples" / "plans" / "modes.toml"
BASE = """
[plan]
name = "p"
repeat = 2
[defaults]
users = [1, 2]
duration = "5s"
[matrix]
mode = ["procedures", "sql"]
db_memory = ["128MiB", "1GiB"]
[targets.a]
datadir = "/tmp/a"
"""


def plan_of(tmp_path: Path, text: str):
    f = tmp_path / "plan.toml"
    f.write_text(text)
    return load_plan(f, tmp_path / "results")


def test_every_combination_is_a_cell_with_its_specs(tmp_path):
    p = plan_of(tmp_path, BASE)
    assert (p.name, p.repeat, p.varied) == ("p", 2, ("mode", "db_memory"))
    assert [c.name for c in p.cells] == [
        "mode=procedures,db_memory=128MiB", "mode=procedures,db_memory=1GiB",
        "mode=sql,db_memory=128MiB", "mode=sql,db_memory=1GiB"]
    last = p.cells[-1]
    assert last.run.mode == "sql" and last.run.users == (1, 2) and last.run.duration == 5.0
    assert last.db.db_memory == 1024**3 and last.label == "p.mode-sql_db_memory-1GiB"
    assert last.run.name == last.label and last.run.results_dir == tmp_path / "results"


def test_the_example_plan_expands(tmp_path):
    p = load_plan(EXAMPLE, tmp_path)
    assert [c.name for c in p.cells] == ["mode=procedures", "mode=sql"] and p.repeat == 2
    assert all(c.warehouses == 1 and str(c.db.datadir) == "oltplab-data/postgres"
               for c in p.cells)


@pytest.mark.parametrize("change, needle", [
    (("[matrix]", "[matrix]\nbogus = [1]"), "unknown key matrix.bogus"),
    (("[defaults]", "[defaults]\nwarehouse = 2"), "unknown key defaults.warehouse"),
    (('duration = "5s"', "duration = true"), "defaults.duration: True is the wrong type"),
    (("users = [1, 2]", 'users = "1,x"'), "defaults.users: 'x'"),
    (('mode = ["procedures", "sql"]', "mode = []"), "matrix.mode: the list is empty"),
    (('mode = ["procedures", "sql"]', 'mode = "sql"'), "matrix.mode: give a list"),
    (("[defaults]", '[defaults]\ntarget = "b"'), "defaults.target: unknown target 'b'"),
    (("[matrix]", '[matrix]\ntarget = ["a", "c"]'), "matrix.target: unknown target 'c'"),
    (('datadir = "/tmp/a"', 'datadir = "/tmp/a"\nusers = 3'), "unknown key targets.a.users"),
    (("repeat = 2", "repeat = 0"), "plan.repeat: must be at least 1"),
    (('name = "p"', 'name = "a b"'), "plan.name"),
    (("[plan]", "[[step]]\nkind = 'fio'\n[plan]"), "unknown key 'step'"),
    (("[matrix]", "[matrix\n"), "not valid TOML"),
])
def test_malformed_plan_is_refused_naming_file_and_key(tmp_path, change, needle):
    with pytest.raises(UsageError) as e:
        plan_of(tmp_path, BASE.replace(*change, 1))
    msg = str(e.value)
    assert msg.startswith(str(tmp_path / "plan.toml") + ": ") and needle in msg, msg
    assert "\n" not in msg


def test_missing_plan_file_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="no such plan file"):
        load_plan(tmp_path / "none.toml", tmp_path)


def test_a_plan_may_inject_faults_and_a_bad_event_names_its_key(tmp_path):
    one_step = BASE.replace("users = [1, 2]", "users = [2]")
    p = plan_of(tmp_path, one_step.replace("[defaults]",
                                           '[defaults]\ninject = ["at=2s,kill-backend"]'))
    assert all(c.run.inject[0].kind == "kill-backend" for c in p.cells)
    with pytest.raises(UsageError, match=r"defaults.inject: --inject 'at=2s': give an action"):
        plan_of(tmp_path, BASE.replace("[defaults]", '[defaults]\ninject = ["at=2s"]'))
