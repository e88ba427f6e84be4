"""The options a plan takes and its step kinds.

``KEYS`` is every option ``[defaults]`` and ``[matrix]`` may set (long options of ``db start``,
``tpcc build``, ``tpcc run`` and ``neighbours run``, ``-`` written as ``_``), each with the TOML
types it takes and how it becomes a spec value. ``STEP_KINDS`` is the table of ``[[step]]``
kinds: adding a kind is one ``StepKind`` entry with its option table, how its spec is made
from the cell and the step's options, and which service runs it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..config import parse_duration, parse_host_memory, parse_inject, parse_size, parse_user_option
from ..engines import ENGINES
from ..errors import UsageError

if TYPE_CHECKING:
    from .model import Cell, Item

# --------------------------------------------------------------------------- the option table

@dataclass(frozen=True)
class Key:
    """One option a plan may set: the TOML types it takes and how it becomes a spec value."""

    name: str
    part: str  # "db", "build", "run", "plan", or the step kind that takes it
    types: tuple[type, ...]
    convert: Callable[[Any, str], Any]
    help: str


def _same(value, what):
    return value


def _path(value, what):
    return Path(value)


def _size(value, what):
    return parse_size(str(value), what)


def _host_memory(value, what):
    try:
        return parse_host_memory(str(value))
    except UsageError as e:
        raise UsageError(f"{what}: {str(e).removeprefix('--host-memory: ')}") from None


def _duration(value, what):
    return parse_duration(str(value), what)


def _users(value, what):
    """RunSpec's user fields: a list, a number, "1,2,4" or "auto[:MAX]"."""
    if isinstance(value, list):
        if not value or not all(isinstance(u, int) and not isinstance(u, bool) for u in value):
            raise UsageError(f"{what}: give a list of whole numbers, such as [1, 2, 4]")
        value = ",".join(str(u) for u in value)
    try:
        return parse_user_option(str(value))
    except UsageError as e:
        raise UsageError(f"{what}: {str(e).removeprefix('--users: ')}") from None


def _positive(value, what):
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


def _choice(*choices):
    def convert(value, what):
        if value not in choices:
            raise UsageError(f"{what}: {value!r} is not one of {', '.join(choices)}")
        return value
    return convert


NUM = (int, float, str)
KEYS = {k.name: k for k in (
    Key("engine", "db", (str,), _choice(*ENGINES), "database engine (with dsn: its scheme's)"),
    Key("datadir", "db", (str,), _path, "data directory of the managed server"),
    Key("waldir", "db", (str,), _path, "WAL directory (initdb --waldir)"),
    Key("port", "db", (int,), _same, "port of the managed server"),
    Key("listen", "db", (str,), _same, "TCP listen addresses"),
    Key("db_memory", "db", (int, str), _size, "shared_buffers and derived settings"),
    Key("host_memory", "db", (int, str), _host_memory,
        "memory limit of the server's process tree, page cache included ('none': no limit)"),
    Key("pg_bin", "db", (str,), _path, "PostgreSQL binaries"),
    Key("settings", "db", (dict,), _settings, "server settings, as a table"),
    Key("dsn", "db", (str,), _same, "an existing server instead of a managed one"),
    Key("dbname", "db", (str,), _same, "database that holds the schema"),
    Key("warehouses", "build", (int,), _positive, "warehouses built and driven"),
    Key("build_users", "build", (int,), _positive, "parallel loaders"),
    Key("users", "run", (int, str, list), _users, "user sequence, or auto[:MAX]"),
    Key("rampup", "run", NUM, _duration, "ramp-up per step"),
    Key("duration", "run", NUM, _duration, "measured time per step"),
    Key("mode", "run", (str,), _choice("procedures", "sql"), "procedures or sql"),
    Key("keying_thinking", "run", (bool,), _same, "spec keying and think times"),
    Key("all_warehouses", "run", (bool,), _same, "spread users over all warehouses"),
    Key("workers", "run", (int,), _positive, "driver processes"),
    Key("seed", "run", (int,), _same, "seed of the drivers' inputs"),
    Key("check", "run", (bool,), _same, "consistency checks after the last step"),
    Key("cold", "run", (bool,), _same, "drop the page cache before each step (root)"),
    Key("inject", "run", (list, str), _inject, "faults during the run (tpcc run --inject)"),
    Key("sample_interval", "run", NUM, _duration, "telemetry sampling interval"),
    Key("power", "run", (str,), _same, "power meter"),
    Key("target", "plan", (str,), _same, "a target named under [targets]"),
    Key("instances", "neighbours", (int,), _positive, "managed instances of a neighbours step"),
    Key("backup", "neighbours", (int,), _same, "of them, how many back up (0: the baseline)"),
    Key("backup_interval", "neighbours", NUM, _duration,
        "time between the starts of a backup instance's cycles"),
    Key("backup_cycles", "neighbours", (int,), _positive, "most backups per backup instance"),
    Key("root", "neighbours", (str,), _path,
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
    (``options``: converted, by key); ``run(item, progress, labels)`` runs it through the
    services and returns the saved record (``progress``: what ``PlanProgress.run_progress``
    gave for the kind)."""

    name: str
    keys: dict[str, Key]
    scope: str
    needs_db: bool  # the cell's server is up and its schema built before the step runs
    make: Callable[[Cell, dict, str, Path], Any]
    run: Callable[[Item, Any, dict], dict]
    help: str
    connections: Callable[[Any], int] = lambda spec: 0  # the server connections its spec needs


def checked_run(db, run):
    """``run``, after the checks ``tpcc run`` makes of its options before anything starts."""
    if run.inject:
        from ..faults.inject import preflight
        preflight(db, run)
    return run


def _tpcc_make(cell: Cell, opts: dict, label: str, results_dir: Path):
    import dataclasses
    opts = dict(opts)
    opts.update(opts.pop("users", {}))  # the user sequence and users_auto, as a cell has them
    return checked_run(cell.db, dataclasses.replace(cell.run, name=label, **opts))


def _tpcc_run(item: Item, progress, labels: dict) -> dict:
    from ..runs.lifecycle import run_tpcc_recorded
    return run_tpcc_recorded(item.cell.db, item.spec, progress, labels)


def _backup_make(cell: Cell, opts: dict, label: str, results_dir: Path):
    from ..scenarios.backup import BackupSpec
    if cell.db.dsn and "to" not in opts:
        raise UsageError("a backup of a server given by dsn needs 'to' (where backups go)")
    return BackupSpec(name=label, results_dir=results_dir, **opts,
                      sample_interval=cell.run.sample_interval, power=cell.run.power)


def _backup_run(item: Item, progress, labels: dict) -> dict:
    from ..scenarios.backup import run_backup
    on_progress, on_cycle = progress or (None, None)
    return run_backup(item.cell.db, item.spec, progress=on_progress, on_cycle=on_cycle,
                      labels=labels)


def fio_path(cell: Cell, opts: dict) -> Path:
    """Where a fio step measures: its ``path``, else the folder that holds the cell's data
    directory (the datastore the data lives on, not the server's own folder)."""
    if "path" in opts:
        return Path(opts["path"])
    if cell.db.dsn:
        raise UsageError("a fio step against a server given by dsn needs 'path'")
    return Path(os.path.abspath(cell.db.datadir)).parent


def _fio_make(cell: Cell, opts: dict, label: str, results_dir: Path):
    from ..fio.spec import spec_from_options
    from ..fio.target import target_kind
    if "path" in opts:  # refused when missing, as fio run refuses it: nothing makes it
        target_kind(Path(os.path.abspath(opts["path"])))
    raw = {k: (v if isinstance(v, bool) else str(v)) for k, v in opts.items()
           if k not in ("path", "profile")}
    profiles = opts.get("profile")
    raw["profiles"] = tuple(profiles) if isinstance(profiles, list) else (
        (profiles,) if profiles else None)
    raw.update(target=str(fio_path(cell, opts)), name=label, results_dir=str(results_dir))
    return spec_from_options(raw)


def _fio_run(item: Item, progress, labels: dict) -> dict:
    from ..runs.lifecycle import run_fio_recorded
    if "path" not in dict(item.step.options) and not Path(item.spec.target).exists():
        Path(item.spec.target).mkdir(parents=True)  # the folder the cell's datadir goes in
    return run_fio_recorded(item.spec, item.cell.run.sample_interval, item.cell.run.power,
                            progress, labels)


def _profiles(value, what):
    if isinstance(value, list) and not (value and all(isinstance(v, str) for v in value)):
        raise UsageError(f"{what}: give a profile name or a list of them")
    return value


def _fio_keys() -> dict[str, Key]:
    from ..fio.spec import OPTIONS
    keys = [Key("profile", "fio", (str, list), _profiles,
                "named profiles, groups or job files, run in order"),
            Key("path", "fio", (str,), _path, "directory or block device under test "
                "[default: the folder holding the cell's data directory]")]
    keys += [Key(o.name, "fio", (bool,) if o.is_flag else NUM, _same, o.help)
             for o in OPTIONS if o.name not in ("target", "profiles", "name", "results_dir")]
    return {k.name: k for k in keys}


def _backup_keys() -> dict[str, Key]:
    from ..scenarios.backup import COMPRESSIONS, METHODS
    return {k.name: k for k in (
        Key("cycles", "backup", (int,), _positive, "backup and restore cycles"),
        Key("method", "backup", (str,), _choice(*METHODS), "pg_basebackup, or pg_dump -Fd"),
        Key("to", "backup", (str,), _path, "folder for the backups"),
        Key("interval", "backup", NUM, _duration, "time between cycle starts"),
        Key("compress", "backup", (str,), _choice(*COMPRESSIONS), "pg_basebackup -Z"),
        Key("max_rate", "backup", (int, str), _size, "pg_basebackup -r, bytes per second"),
        Key("restore", "backup", (bool,), _same, "restore and check each backup"),
        Key("jobs", "backup", (int,), _positive, "pg_dump / pg_restore parallel jobs"),
    )}


def _one_user(value, what):
    """A neighbours step's users: one count (``[n]`` and ``"n"`` as well)."""
    users = _users(value, what)
    if users.get("users_auto") or len(users["users"]) != 1:
        raise UsageError(f"{what}: a neighbours step runs one user count per workload instance; "
                         "give one whole number")
    return users["users"][0]


# the options of ``neighbours run`` a neighbours step takes, from its cell or its own table
NEIGHBOURS_SHARED = ("warehouses", "rampup", "duration", "db_memory", "port", "pg_bin",
                     "settings", "mode", "seed", "sample_interval", "power")


def _neighbours_keys() -> dict[str, Key]:
    keys = {n: k for n, k in KEYS.items() if k.part == "neighbours" or n in NEIGHBOURS_SHARED}
    keys["users"] = Key("users", "neighbours", (int, str, list), _one_user,
                        "virtual users of each workload instance")
    return keys


def _neighbours_make(cell: Cell, opts: dict, label: str, results_dir: Path):
    """The cell's options a neighbours run takes (as the plan gives them: [defaults], [matrix],
    the target), then the step's own."""
    from ..scenarios.neighbours import NeighboursSpec
    keys = STEP_KINDS["neighbours"].keys
    given = {k: typed("cell", k, v, keys) for k, v in cell.values if k in keys and k not in opts}
    return NeighboursSpec(**{**given, **opts}, name=label, results_dir=results_dir)


def _neighbours_run(item: Item, progress, labels: dict) -> dict:
    from ..scenarios.neighbours import run_neighbours
    return run_neighbours(item.spec, progress, labels=labels)


STEP_KINDS: dict[str, StepKind] = {k.name: k for k in (
    StepKind("tpcc", {k.name: k for k in KEYS.values() if k.part == "run"}, "cell", True,
             _tpcc_make, _tpcc_run, "the user sequence; its options override the cell's",
             lambda spec: max(spec.users) + 21),
    StepKind("fio", _fio_keys(), "target", False, _fio_make, _fio_run,
             "storage profiles on the cell's datastore, once per datastore"),
    StepKind("backup", _backup_keys(), "cell", True, _backup_make, _backup_run,
             "backup and restore cycles of the cell's database", lambda spec: 100),
    StepKind("neighbours", _neighbours_keys(), "cell", False, _neighbours_make,
             _neighbours_run, "several managed servers on one datastore, some backing up "
             "while the others run the workload (neighbours run)"),
)}
