"""The options a plan takes, and what a step kind declares (``StepKind``).

``KEYS`` is every option ``[defaults]`` and ``[matrix]`` may set: the rows of the option tables
of ``db start``, ``tpcc build``, ``tpcc run``, ``neighbours run``, ``dvds build``, ``dvds
run`` and ``brokerage build`` (options.py) that plans take, named as the long options with
``-`` written as ``_``, each with the TOML types it takes and how it becomes a spec value, and
the plan's own ``target``. The
``[[step]]`` kinds are the run kinds that declare a ``StepKind`` (kinds/): its option table, how
its spec is made from the cell and the step's options, and which service runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import UsageError
from ..options import (BROKERAGE_BUILD, BUILD, DB, DVDS_BUILD, DVDS_RUN, NEIGHBOURS, PLAN, RUN,
                       TELEMETRY, Option, rows)

# --------------------------------------------------------------------------- the option table

KEYS = rows(DB, BUILD, RUN, TELEMETRY, PLAN, DVDS_BUILD, DVDS_RUN, BROKERAGE_BUILD, NEIGHBOURS,
            plans=True)
TARGET_KEYS = ("engine", "datadir", "waldir", "port", "listen", "pg_bin", "dsn", "dbname",
               "datastore")


def typed(where: str, key: str, value: Any, keys: dict[str, Option] = KEYS,
          takes: str = "plans take") -> Any:
    """Check one option's TOML type and convert it; errors name ``where.key``."""
    spec = keys.get(key)
    what = f"{where}.{key}"
    if spec is None:
        raise UsageError(f"unknown key {what} ({takes}: {', '.join(keys)})")
    if isinstance(value, bool) and bool not in spec.toml or not isinstance(value, spec.toml):
        names = " or ".join({str: "a string", int: "a whole number", float: "a number",
                             bool: "true or false", list: "a list", dict: "a table"}[t]
                            for t in spec.toml)
        raise UsageError(f"{what}: {value!r} is the wrong type; give {names}")
    return spec.from_toml(value, what)


# --------------------------------------------------------------------------- step kinds

@dataclass(frozen=True)
class StepKind:
    """What a ``[[step]]`` of one kind takes and does.

    ``scope`` is "cell" (once per cell and repeat, with the cell's server and options) or
    "target" (once per datastore and repeat, however many cells share it).
    ``make(cell, options, label, results_dir)`` builds and validates the spec at load time
    (``options``: converted, by key; ``cell`` a plans.model.Cell); ``run(item, progress,
    labels, metrics)`` runs it through the services and returns the saved record (``item`` a
    plans.model.Item, ``progress`` what ``PlanProgress.run_progress`` gave for the kind,
    ``metrics`` the plan's running telemetry.openmetrics.Endpoint, or None).
    Each kind declares its step in kinds/<name>.py."""

    name: str
    keys: dict[str, Option]
    scope: str
    needs_db: bool  # the cell's server is up and its schema built before the step runs
    make: Callable[[Any, dict, str, Path], Any]
    run: Callable[[Any, Any, dict, Any], dict]
    help: str
    connections: Callable[[Any], int] = lambda spec: 0  # the server connections its spec needs
    # where a step of scope "target" measures, from the cell and its options
    target_path: Callable[[Any, dict], Path] | None = None
    config_key: str = ""  # its spec's key in the record's ``config`` [default: its name]
    cell_label: bool = False  # a plan's only step of the kind labels its runs as the cell
    searches: Callable[[Any], bool] = lambda spec: False  # one run searches (no repeats)
    own_servers: bool = False  # it starts servers of its own (the cell's are not used)


def checked_run(db, run, planned: dict | None = None):
    """``run``, after the checks ``tpcc run`` makes of its options before anything starts
    (``planned``: the datastore the plan will make for the data, faults/datastore.py)."""
    if run.inject:
        from ..faults.inject import preflight
        preflight(db, run, planned)
    return run


def planned_store(spec) -> dict | None:
    """What the fault checks need of the datastore a plan will make (None: no datastore)."""
    if spec is None:
        return None
    from ..faults.datastore import planned
    return planned(spec)
