"""Runs of several managed servers on one datastore, some backing up while the others run the
workload: NOPM and TPM per workload instance and of the average one."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..plans.keys import KEYS, Key, StepKind, typed, user_counts
from ..report import neighbours as report
from ..report.backup import phase_bands
from ..report import plancharts
from ..runs.kind import Metric, RunKind


def _one_user(value, what):
    """A neighbours step's users: one count (``[n]`` and ``"n"`` as well)."""
    users = user_counts(value, what)
    if users.get("users_auto") or len(users["users"]) != 1:
        raise UsageError(f"{what}: a neighbours step runs one user count per workload instance; "
                         "give one whole number")
    return users["users"][0]


# the options of ``neighbours run`` a neighbours step takes, from its cell or its own table
NEIGHBOURS_SHARED = ("warehouses", "rampup", "duration", "db_memory", "port", "pg_bin",
                     "settings", "mode", "seed", "sample_interval", "power")


def _keys() -> dict[str, Key]:
    keys = {n: k for n, k in KEYS.items() if k.part == "neighbours" or n in NEIGHBOURS_SHARED}
    keys["users"] = Key("users", "neighbours", (int, str, list), _one_user,
                        "virtual users of each workload instance")
    return keys


def _make(cell, opts: dict, label: str, results_dir: Path):
    """The cell's options a neighbours run takes (as the plan gives them: [defaults], [matrix],
    the target), then the step's own."""
    from ..scenarios.neighbours import NeighboursSpec
    keys = STEP.keys
    given = {k: typed("cell", k, v, keys) for k, v in cell.values if k in keys and k not in opts}
    return NeighboursSpec(**{**given, **opts}, name=label, results_dir=results_dir)


def _run(item, progress, labels: dict) -> dict:
    from ..scenarios.neighbours import run_neighbours
    return run_neighbours(item.spec, progress, labels=labels)


STEP = StepKind("neighbours", _keys(), "cell", False, _make, _run,
                "several managed servers on one datastore, some backing up while the others "
                "run the workload (neighbours run)", own_servers=True)


KIND = RunKind(
    name="neighbours",
    help="several managed servers on one datastore, some backing up while the others run "
         "the workload",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    metrics=(Metric("NOPM", lambda g: report.per_instance(g, "nopm"), report.at),
             Metric("TPM", lambda g: report.per_instance(g, "tpm"), report.at)),
    plan_charts=lambda groups: (plancharts.neighbours_charts(groups),
                                [plancharts.neighbours_table(groups)]),
    bands=phase_bands,
    database=True,
    step=STEP,
    describe="oltplab.cli.neighbours:describe_step",
    show="oltplab.cli.neighbours:show_run",
    done="oltplab.cli.neighbours:print_done",
    live="oltplab.cli.neighbours:plan_lines",
)
