"""One table per command drives its click options and the keys a plan may set (options.py):
every row is a click option of its commands and, when plans take it, a plan key - the same
row, so the same help, types and converters; no command has an option outside its tables but
the few it lists here."""

from __future__ import annotations

import click
import pytest

from oltplab import kinds
from oltplab.cli.main import cli
from oltplab.fio.spec import OPTIONS as FIO
from oltplab.options import (BACKUP, BROKERAGE_BUILD, BUILD, CLUSTER, CLUSTER_UP, DB,
                             DVDS_BUILD, DVDS_DB,
                             DVDS_RUN, LOADGEN, METRICS, NEIGHBOURS, NEIGHBOURS_HOSTS, PLAN,
                             QUICKSTART, RUN,
                             TELEMETRY, Option)
from oltplab.plans.keys import KEYS

# command: (its tables, the options it has outside them)
COMMANDS = {
    ("db", "start"): ((DB,), ()),
    ("db", "stop"): ((DB,), ()),
    ("db", "status"): ((DB,), ("as_json",)),
    ("tpcc", "build"): ((DB, BUILD), ()),
    ("tpcc", "run"): ((DB, RUN, TELEMETRY, METRICS, LOADGEN), ("repeat",)),
    ("tpcc", "check"): ((DB,), ("after_run",)),
    ("quickstart",): ((DB, QUICKSTART, TELEMETRY), ()),
    ("backup", "run"): ((DB, BACKUP, TELEMETRY), ()),
    ("neighbours", "run"): ((NEIGHBOURS, TELEMETRY, METRICS, NEIGHBOURS_HOSTS), ()),
    ("dvds", "build"): ((DVDS_DB, DVDS_BUILD), ()),
    ("dvds", "run"): ((DVDS_DB, DVDS_RUN, TELEMETRY, METRICS, LOADGEN), ("repeat",)),
    ("plan", "run"): ((METRICS,), ("plan_file", "overrides", "results_dir", "resume",
                                   "report_dir", "pdf")),
    ("dvds", "check"): ((DVDS_DB,), ()),
    ("cluster", "up"): ((CLUSTER, CLUSTER_UP), ("hosts_file",)),
    ("cluster", "status"): ((CLUSTER,), ("as_json",)),
    ("cluster", "down"): ((CLUSTER,), ()),
}
TABLES = {"DB": DB, "BUILD": BUILD, "RUN": RUN, "TELEMETRY": TELEMETRY, "BACKUP": BACKUP,
          "NEIGHBOURS": NEIGHBOURS, "QUICKSTART": QUICKSTART, "DVDS_BUILD": DVDS_BUILD,
          "DVDS_RUN": DVDS_RUN, "METRICS": METRICS, "BROKERAGE_BUILD": BROKERAGE_BUILD}


def _command(path: tuple[str, ...]) -> click.Command:
    cmd = cli
    for name in path:
        cmd = cmd.get_command(None, name)
    return cmd


def _params(cmd: click.Command) -> dict[str, click.Parameter]:
    return {p.name: p for p in cmd.params if p.name != "help"}


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_a_command_has_the_rows_of_its_tables_and_its_own_options_only(path):
    tables, own = COMMANDS[path]
    rows = [o for table in tables for o in table if o.flags]
    params = _params(_command(path))
    assert sorted(params) == sorted([o.name for o in rows] + list(own))
    for o in rows:
        p = params[o.name]
        assert set(p.opts) | set(p.secondary_opts) == set(o.flags), o.name
        assert p.help == o.help, o.name
        assert p.required == o.required, o.name
        assert p.multiple == o.multiple, o.name


def test_fio_run_has_its_table_and_the_telemetry_rows():
    params = _params(_command(("fio", "run")))
    assert sorted(params) == sorted([o.name for o in FIO + TELEMETRY] + ["repeat"])
    keys = kinds.steps()["fio"].keys
    for o in FIO:
        assert (keys.get(o.name) is o) == bool(o.toml), o.name


def test_every_row_a_plan_takes_is_a_plan_key_and_the_others_are_not():
    steps = kinds.steps()
    places = {"DB": [KEYS], "BUILD": [KEYS], "RUN": [KEYS, steps["tpcc"].keys],
              "TELEMETRY": [KEYS, steps["tpcc"].keys, steps["neighbours"].keys],
              "BACKUP": [steps["backup"].keys], "NEIGHBOURS": [steps["neighbours"].keys],
              "QUICKSTART": [], "DVDS_BUILD": [KEYS], "DVDS_RUN": [KEYS],
              "BROKERAGE_BUILD": [KEYS],
              "METRICS": [steps["tpcc"].keys, steps["neighbours"].keys]}
    for name, table in TABLES.items():
        for o in table:
            for keys in places[name]:
                if o.toml:
                    assert o.name in keys, (name, o.name)
                    if keys is not KEYS or o.part in ("db", "build", "run", "dvds_run"):
                        assert keys[o.name] is o, (name, o.name)  # the same help, converters
                elif keys is not KEYS:
                    assert o.name not in keys, (name, o.name)
    assert not any(o.toml for o in METRICS)  # where it listens is the host's, not the plan's
    assert not set(KEYS) & {o.name for o in METRICS}
    assert not any(o.toml for o in LOADGEN)  # --loadgen: the command line's, not yet a plan's
    assert not set(KEYS) & {o.name for o in LOADGEN}
    for o in RUN + BUILD + DB:
        if not o.toml:  # a plan's key of that name, if any, is another command's row
            assert o.name not in KEYS or KEYS[o.name].part != o.part, o.name


def test_the_plan_keys_are_rows_of_the_tables():
    rows = [o for table in (*TABLES.values(), PLAN) for o in table]
    assert all(any(k is o for o in rows) for k in KEYS.values())
    for name in ("tpcc", "backup", "neighbours"):
        keys = kinds.steps()[name].keys
        assert all(any(k is o for o in rows) for k in keys.values()), name


def test_a_shared_name_takes_the_same_toml_types_in_the_cell_and_the_step():
    """A neighbours step converts the cell's values with its own rows."""
    for n, o in kinds.steps()["neighbours"].keys.items():
        if n in KEYS:
            assert set(KEYS[n].toml) <= set(o.toml), n


def test_command_line_only_rows_and_plan_only_rows():
    names = {o.name for o in RUN + BACKUP + NEIGHBOURS if not o.toml}
    assert {"name", "results_dir", "no_restore"} <= names
    assert "force" in {o.name for o in BUILD if not o.toml}
    assert all(not o.flags for o in PLAN)
    restore = next(o for o in BACKUP if o.name == "restore")
    assert not restore.flags and restore.toml == (bool,)


def test_a_row_parses_command_line_text_and_converts_toml():
    settings = next(o for o in DB if o.name == "settings")
    assert settings.from_text(("work_mem=4MB",)) == (("work_mem", "4MB"),)
    assert settings.from_toml({"fsync": False}, "defaults.settings") == (("fsync", "off"),)
    mode = Option("mode", "run", flags=("--mode",), choices=("a", "b"), toml=(str,))
    assert mode.from_toml("a", "defaults.mode") == "a"
    with pytest.raises(Exception, match="defaults.mode: 'c' is not one of a, b"):
        mode.from_toml("c", "defaults.mode")
