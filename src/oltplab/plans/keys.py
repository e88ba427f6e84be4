"""The options a plan takes, and what a step kind declares (``StepKind``).

``KEYS`` is every option ``[defaults]`` and ``[matrix]`` may set (long options of ``db start``,
``tpcc build``, ``tpcc run`` and ``neighbours run``, ``-`` written as ``_``), each with the TOML
types it takes and how it becomes a spec value. The ``[[step]]`` kinds are the run kinds
that declare a ``StepKind`` (kinds/): its option table, how its spec is made from the cell and
the step's options, and which service runs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..config import parse_duration, parse_host_memory, parse_inject, parse_size, parse_user_option
from ..engines import ENGINES
from ..errors import UsageError

# --------------------------------------------------------------------------- the option table

@dataclass(frozen=True)
class Key:
    """One option a plan may set: the TOML types it takes and how it becomes a spec value."""

    name: str
    part: str  # "db", "build", "run", "plan", or the step kind that takes it
    types: tuple[type, ...]
    convert: Callable[[Any, str], Any]
    help: str


def as_given(value, what):
    return value


def a_path(value, what):
    return Path(value)


def a_size(value, what):
    return parse_size(str(value), what)


def _host_memory(value, what):
    try:
        return parse_host_memory(str(value))
    except UsageError as e:
        raise UsageError(f"{what}: {str(e).removeprefix('--host-memory: ')}") from None


def a_duration(value, what):
    return parse_duration(str(value), what)


def user_counts(value, what):
    """RunSpec's user fields: a list, a number, "1,2,4" or "auto[:MAX]"."""
    if isinstance(value, list):
        if not value or not all(isinstance(u, int) and not isinstance(u, bool) for u in value):
            raise UsageError(f"{what}: give a list of whole numbers, such as [1, 2, 4]")
        value = ",".join(str(u) for u in value)
    try:
        return parse_user_option(str(value))
    except UsageError as e:
        raise UsageError(f"{what}: {str(e).removeprefix('--users: ')}") from None


def positive(value, what):
    if value < 1:
        raise UsageError(f"{what}: must be at least 1 (got {value})")
    return value


def _settings(value, what):
    out = []
    for name, v in value.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            raise UsageError(f"{what}: {name!r} is not a setting name")
        if isinstance(v, (dict, list)):
            raise UsageError(f"{what}.{name}: give a string, number or boolean")
        out.append((name, ("on" if v else "off") if isinstance(v, bool) else str(v)))
    return tuple(out)


def _inject(value, what):
    """A list of EVENT strings (or one), as tpcc run --inject takes them."""
    items = [value] if isinstance(value, str) else value
    if not all(isinstance(v, str) for v in items):
        raise UsageError(f"{what}: give a list of events, such as [\"at=20s,kill-server\"]")
    try:
        return tuple(parse_inject(v) for v in items)
    except UsageError as e:
        raise UsageError(f"{what}: {e}") from None


def one_of(*choices):
    def convert(value, what):
        if value not in choices:
            raise UsageError(f"{what}: {value!r} is not one of {', '.join(choices)}")
        return value
    return convert


NUM = (int, float, str)
KEYS = {k.name: k for k in (
    Key("engine", "db", (str,), one_of(*ENGINES), "database engine (with dsn: its scheme's)"),
    Key("datadir", "db", (str,), a_path, "data directory of the managed server"),
    Key("waldir", "db", (str,), a_path, "WAL directory (initdb --waldir)"),
    Key("port", "db", (int,), as_given, "port of the managed server"),
    Key("listen", "db", (str,), as_given, "TCP listen addresses"),
    Key("db_memory", "db", (int, str), a_size, "shared_buffers and derived settings"),
    Key("host_memory", "db", (int, str), _host_memory,
        "memory limit of the server's process tree, page cache included ('none': no limit)"),
    Key("pg_bin", "db", (str,), a_path, "PostgreSQL binaries"),
    Key("settings", "db", (dict,), _settings, "server settings, as a table"),
    Key("dsn", "db", (str,), as_given, "an existing server instead of a managed one"),
    Key("dbname", "db", (str,), as_given, "database that holds the schema"),
    Key("warehouses", "build", (int,), positive, "warehouses built and driven"),
    Key("build_users", "build", (int,), positive, "parallel loaders"),
    Key("users", "run", (int, str, list), user_counts, "user sequence, or auto[:MAX]"),
    Key("rampup", "run", NUM, a_duration, "ramp-up per step"),
    Key("duration", "run", NUM, a_duration, "measured time per step"),
    Key("mode", "run", (str,), one_of("procedures", "sql"), "procedures or sql"),
    Key("keying_thinking", "run", (bool,), as_given, "spec keying and think times"),
    Key("all_warehouses", "run", (bool,), as_given, "spread users over all warehouses"),
    Key("workers", "run", (int,), positive, "driver processes"),
    Key("seed", "run", (int,), as_given, "seed of the drivers' inputs"),
    Key("check", "run", (bool,), as_given, "consistency checks after the last step"),
    Key("cold", "run", (bool,), as_given, "drop the page cache before each step (root)"),
    Key("inject", "run", (list, str), _inject, "faults during the run (tpcc run --inject)"),
    Key("sample_interval", "run", NUM, a_duration, "telemetry sampling interval"),
    Key("power", "run", (str,), as_given, "power meter"),
    Key("target", "plan", (str,), as_given, "a target named under [targets]"),
    Key("instances", "neighbours", (int,), positive, "managed instances of a neighbours step"),
    Key("backup", "neighbours", (int,), as_given, "of them, how many back up (0: the baseline)"),
    Key("backup_interval", "neighbours", NUM, a_duration,
        "time between the starts of a backup instance's cycles"),
    Key("backup_cycles", "neighbours", (int,), positive, "most backups per backup instance"),
    Key("root", "neighbours", (str,), a_path,
        "folder of the neighbours' template and data directories (the datastore under test)"),
)}
TARGET_KEYS = ("engine", "datadir", "waldir", "port", "listen", "pg_bin", "dsn", "dbname")

def typed(where: str, key: str, value: Any, keys: dict[str, Key] = KEYS,
          takes: str = "plans take") -> Any:
    """Check one option's TOML type and convert it; errors name ``where.key``."""
    spec = keys.get(key)
    what = f"{where}.{key}"
    if spec is None:
        raise UsageError(f"unknown key {what} ({takes}: {', '.join(keys)})")
    if isinstance(value, bool) and bool not in spec.types or not isinstance(value, spec.types):
        names = " or ".join({str: "a string", int: "a whole number", float: "a number",
                             bool: "true or false", list: "a list", dict: "a table"}[t]
                            for t in spec.types)
        raise UsageError(f"{what}: {value!r} is the wrong type; give {names}")
    return spec.convert(value, what)


# --------------------------------------------------------------------------- step kinds

@dataclass(frozen=True)
class StepKind:
    """What a ``[[step]]`` of one kind takes and does.

    ``scope`` is "cell" (once per cell and repeat, with the cell's server and options) or
    "target" (once per datastore and repeat, however many cells share it).
    ``make(cell, options, label, results_dir)`` builds and validates the spec at load time
    (``options``: converted, by key; ``cell`` a plans.model.Cell); ``run(item, progress,
    labels)`` runs it through the services and returns the saved record (``item`` a
    plans.model.Item, ``progress`` what ``PlanProgress.run_progress`` gave for the kind).
    Each kind declares its step in kinds/<name>.py."""

    name: str
    keys: dict[str, Key]
    scope: str
    needs_db: bool  # the cell's server is up and its schema built before the step runs
    make: Callable[[Any, dict, str, Path], Any]
    run: Callable[[Any, Any, dict], dict]
    help: str
    connections: Callable[[Any], int] = lambda spec: 0  # the server connections its spec needs
    # where a step of scope "target" measures, from the cell and its options
    target_path: Callable[[Any, dict], Path] | None = None
    config_key: str = ""  # its spec's key in the record's ``config`` [default: its name]
    cell_label: bool = False  # a plan's only step of the kind labels its runs as the cell
    searches: Callable[[Any], bool] = lambda spec: False  # one run searches (no repeats)
    own_servers: bool = False  # it starts servers of its own (the cell's are not used)


def checked_run(db, run):
    """``run``, after the checks ``tpcc run`` makes of its options before anything starts."""
    if run.inject:
        from ..faults.inject import preflight
        preflight(db, run)
    return run
