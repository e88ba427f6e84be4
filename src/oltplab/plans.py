"""Plans: an experiment as a TOML file, expanded into cells and steps and run through the
services.

A plan names itself and its repeats, gives defaults for any option of ``db start``,
``tpcc build`` and ``tpcc run`` (long name, ``-`` written as ``_``), a matrix whose every
combination is a cell, named targets (where the data lives) and, optionally, ``[[step]]``s of
several kinds run in order (without them, one ``tpcc`` step)::

    [plan]
    name = "e4"
    repeat = 2
    [defaults]
    warehouses = 1
    users = [1, 2]
    duration = "30s"
    [matrix]
    target = ["nvme", "sata"]
    [targets.nvme]
    datadir = "/mnt/nvme/oltplab"
    [[step]]
    kind = "fio"
    profile = "4k-70r30w-random"
    [[step]]
    kind = "tpcc"
    [[step]]
    kind = "backup"
    cycles = 3

A step kind (``STEP_KINDS``) is one table entry: the options a step takes, whether it runs
once per cell or once per datastore, whether it needs the cell's server, how its spec is made
and which service runs it. The pair (step, cell) - or (step, datastore) - is an ``Item``; each
item runs ``repeat`` times. The whole file is validated before anything runs; every error is
one ``UsageError`` line naming the file and the key. Running, status and resume are in
``planrun``.
"""

from __future__ import annotations

import itertools
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .config import (DbSpec, RunSpec, parse_duration, parse_host_memory, parse_inject,
                     parse_size, parse_user_option)
from .errors import UsageError

PLAN_KEYS = {"name": str, "repeat": int}
TOP_KEYS = ("plan", "defaults", "matrix", "targets", "step")
LABEL = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


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
)}
TARGET_KEYS = ("datadir", "waldir", "port", "listen", "pg_bin", "dsn", "dbname")


# --------------------------------------------------------------------------- records

@dataclass(frozen=True)
class Cell:
    """One combination of the matrix, with the specs its runs use."""

    index: int
    name: str  # "mode=sql,users=2", or "all" for a plan without a matrix
    label: str  # the runs' label (--name)
    values: tuple[tuple[str, Any], ...]  # the options as the plan gives them, matrix last
    db: DbSpec
    warehouses: int | None
    build_users: int
    run: RunSpec
    target: str | None = None  # the named target the cell's data lives in


@dataclass(frozen=True)
class Step:
    """One ``[[step]]`` of the plan (index from 1) with its options as the file gives them."""

    index: int
    kind: str
    options: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Item:
    """A step of one cell (or of one datastore, for per-target kinds): what runs ``repeat``
    times. ``name`` is the ``plan.cell`` of its runs; ``spec`` the spec its service takes."""

    cell: Cell  # the cell it runs in (the first that reaches it, for per-target kinds)
    step: Step
    name: str
    label: str
    spec: Any

    @property
    def kind(self) -> "StepKind":
        return STEP_KINDS[self.step.kind]


@dataclass(frozen=True)
class Plan:
    path: Path
    name: str
    repeat: int
    varied: tuple[str, ...]  # the matrix keys, in the file's order
    cells: tuple[Cell, ...]
    steps: tuple[Step, ...] = (Step(1, "tpcc"),)
    items: tuple[Item, ...] = ()  # in running order: cell by cell, step by step


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


def _tpcc_make(cell: Cell, opts: dict, label: str, results_dir: Path):
    import dataclasses
    return dataclasses.replace(cell.run, name=label, **opts)


def _tpcc_run(item: Item, progress, labels: dict) -> dict:
    from .services import run_tpcc_recorded
    return run_tpcc_recorded(item.cell.db, item.spec, progress, labels)


def _backup_make(cell: Cell, opts: dict, label: str, results_dir: Path):
    from .scenarios.backup import BackupSpec
    if cell.db.dsn and "to" not in opts:
        raise UsageError("a backup of a server given by dsn needs 'to' (where backups go)")
    return BackupSpec(name=label, results_dir=results_dir, **opts,
                      sample_interval=cell.run.sample_interval, power=cell.run.power)


def _backup_run(item: Item, progress, labels: dict) -> dict:
    from .scenarios.backup import run_backup
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
    from .storage.spec import spec_from_options
    raw = {k: (v if isinstance(v, bool) else str(v)) for k, v in opts.items()
           if k not in ("path", "profile")}
    profiles = opts.get("profile")
    raw["profiles"] = tuple(profiles) if isinstance(profiles, list) else (
        (profiles,) if profiles else None)
    raw.update(target=str(fio_path(cell, opts)), name=label, results_dir=str(results_dir))
    return spec_from_options(raw)


def _fio_run(item: Item, progress, labels: dict) -> dict:
    from .services import run_fio_recorded
    if not Path(item.spec.target).exists():  # a datastore folder the plan will use
        Path(item.spec.target).mkdir(parents=True)
    return run_fio_recorded(item.spec, item.cell.run.sample_interval, item.cell.run.power,
                            progress, labels)


def _profiles(value, what):
    if isinstance(value, list) and not (value and all(isinstance(v, str) for v in value)):
        raise UsageError(f"{what}: give a profile name or a list of them")
    return value


def _fio_keys() -> dict[str, Key]:
    from .storage.spec import OPTIONS
    keys = [Key("profile", "fio", (str, list), _profiles,
                "named profiles, groups or job files, run in order"),
            Key("path", "fio", (str,), _path, "directory or block device under test "
                "[default: the folder holding the cell's data directory]")]
    keys += [Key(o.name, "fio", (bool,) if o.is_flag else NUM, _same, o.help)
             for o in OPTIONS if o.name not in ("target", "profiles", "name", "results_dir")]
    return {k.name: k for k in keys}


def _backup_keys() -> dict[str, Key]:
    from .scenarios.backup import COMPRESSIONS, METHODS
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


STEP_KINDS: dict[str, StepKind] = {k.name: k for k in (
    StepKind("tpcc", {k.name: k for k in KEYS.values() if k.part == "run"}, "cell", True,
             _tpcc_make, _tpcc_run, "the user sequence; its options override the cell's",
             lambda spec: max(spec.users) + 21),
    StepKind("fio", _fio_keys(), "target", False, _fio_make, _fio_run,
             "storage profiles on the cell's datastore, once per datastore"),
    StepKind("backup", _backup_keys(), "cell", True, _backup_make, _backup_run,
             "backup and restore cycles of the cell's database", lambda spec: 100),
)}


# --------------------------------------------------------------------------- loading

def load_plan(path: Path, results_dir: Path, overrides: tuple[str, ...] = ()) -> Plan:
    """Read and validate the whole plan; raise one UsageError line naming file and key.
    ``overrides`` are ``--set KEY=VALUE`` texts (see ``apply_overrides``)."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such plan file") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read it: {e.strerror}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: not valid TOML: {e}") from None
    try:
        apply_overrides(doc, overrides)
        return _plan(path, doc, Path(results_dir))
    except UsageError as e:
        raise UsageError(f"{path}: {e}") from None


def apply_overrides(doc: dict, overrides: tuple[str, ...]) -> None:
    """``KEY=VALUE``: a bare key sets ``[defaults]`` and narrows a matrix that varies it to
    that one value; ``plan.KEY``, ``matrix.KEY``, ``targets.NAME.KEY`` and ``step.N.KEY`` set
    that place. VALUE is read as TOML (``3``, ``true``, ``[1, 2]``), else taken as text."""
    for text in overrides:
        key, sep, raw = text.partition("=")
        key = key.strip()
        if not sep or not re.fullmatch(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*", key):
            raise UsageError(f"--set {text!r}: give KEY=VALUE, such as duration=10s")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        parts = key.split(".")
        if len(parts) == 1:
            _place(doc, "defaults", key)[key] = value
            if key in (doc.get("matrix") or {}):
                doc["matrix"][key] = [value]
            continue
        place = doc
        if parts[0] == "step":
            steps = doc.get("step") if isinstance(doc.get("step"), list) else []
            if len(parts) != 3 or not parts[1].isdigit() or not 1 <= int(parts[1]) <= len(steps):
                raise UsageError(f"--set {key}: give step.N.KEY with N from 1 to {len(steps)} "
                                 f"(the plan has {len(steps)} [[step]]s)")
            place, parts = steps[int(parts[1]) - 1], parts[2:]
        for p in parts[:-1]:
            place = _place(place, p, key)
        place[parts[-1]] = value


def _place(table: dict, name: str, key: str) -> dict:
    sub = table.setdefault(name, {})
    if not isinstance(sub, dict):
        raise UsageError(f"--set {key}: {name} is not a table")
    return sub


def _table(doc: dict, key: str, required: bool = False) -> dict:
    value = doc.get(key, None)
    if value is None:
        if required:
            raise UsageError(f"[{key}] is missing")
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{key} must be a table ([{key}])")
    return value


def _typed(where: str, key: str, value: Any, keys: dict[str, Key] = KEYS,
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


def _plan(path: Path, doc: dict, results_dir: Path) -> Plan:
    for key in doc:
        if key not in TOP_KEYS:
            raise UsageError(f"unknown key {key!r} (a plan has: {', '.join(TOP_KEYS)})")
    head = _table(doc, "plan", required=True)
    for key, value in head.items():
        if key not in PLAN_KEYS:
            raise UsageError(f"unknown key plan.{key} (it takes: {', '.join(PLAN_KEYS)})")
        if isinstance(value, bool) or not isinstance(value, PLAN_KEYS[key]):
            raise UsageError(f"plan.{key}: {value!r} is the wrong type")
    name = head.get("name")
    if name is None or not LABEL.fullmatch(name):
        raise UsageError("plan.name: give a name of letters, digits, '.', '_' and '-' "
                         "(at most 64)")
    repeat = head.get("repeat", 1)
    if repeat < 1:
        raise UsageError(f"plan.repeat: must be at least 1 (got {repeat})")

    targets = {}
    for tname, table in _table(doc, "targets").items():
        if not isinstance(table, dict):
            raise UsageError(f"targets.{tname} must be a table ([targets.{tname}])")
        for key, value in table.items():
            if key not in TARGET_KEYS:
                raise UsageError(f"unknown key targets.{tname}.{key} "
                                 f"(a target takes: {', '.join(TARGET_KEYS)})")
            _typed(f"targets.{tname}", key, value)
        targets[tname] = table

    defaults = _table(doc, "defaults")
    for key, value in defaults.items():
        _typed("defaults", key, value)
    matrix = _table(doc, "matrix")
    for key, values in matrix.items():
        if not isinstance(values, list):
            raise UsageError(f"matrix.{key}: give a list of values, such as [1, 2]")
        if not values:
            raise UsageError(f"matrix.{key}: the list is empty; give at least one value")
        for value in values:
            _typed("matrix", key, value)
    for where, table in (("defaults", defaults), ("matrix", matrix)):
        if "target" in table:
            for t in table["target"] if where == "matrix" else [table["target"]]:
                _known_target(where, t, targets)
    steps = _steps(doc.get("step"), targets)

    cells = []
    combos = list(itertools.product(*matrix.values())) if matrix else [()]
    for i, combo in enumerate(combos):
        chosen = dict(zip(matrix, combo))
        cname = ",".join(f"{k}={_show(v)}" for k, v in chosen.items()) or "all"
        values = {**defaults, **chosen}
        target = values.get("target")
        merged = {**(targets[target] if target else {}), **values}
        label = _label(name, chosen, i)
        try:
            cells.append(_cell(i, cname, label, merged, results_dir))
        except UsageError as e:
            raise UsageError(f"cell {cname}: {e}") from None
    if repeat > 1 and any(c.run.users_auto for c in cells):
        raise UsageError("users = \"auto\" searches for the best user count in one run; "
                         "give plan.repeat = 1")
    if len({c.label for c in cells}) != len(cells):  # labels cut to 64 characters may collide
        cells = [_relabel(c, f"{name}.c{c.index + 1}") for c in cells]
    items = _items(name, cells, steps, targets, results_dir)
    return Plan(path=path, name=name, repeat=repeat, varied=tuple(matrix), cells=tuple(cells),
                steps=steps, items=items)


def _known_target(where: str, t: str, targets: dict) -> None:
    if t not in targets:
        known = ", ".join(targets) or "none"
        raise UsageError(f"{where}.target: unknown target {t!r} (known: {known})")


def _steps(raw: Any, targets: dict) -> tuple[Step, ...]:
    """The ``[[step]]`` tables checked against their kind's option table; one tpcc step when
    the plan gives none."""
    if raw is None:
        return (Step(1, "tpcc"),)
    if not isinstance(raw, list) or not raw or not all(isinstance(t, dict) for t in raw):
        raise UsageError("step: give one or more [[step]] tables")
    steps = []
    for n, table in enumerate(raw, 1):
        where = f"step.{n}"
        kind = table.get("kind")
        if kind not in STEP_KINDS:
            raise UsageError(f"{where}.kind: {'unknown kind ' + repr(kind) if kind else 'missing'}"
                             f" (kinds: {', '.join(STEP_KINDS)})")
        keys = {**STEP_KINDS[kind].keys, "target": KEYS["target"]}
        options = []
        for key, value in table.items():
            if key == "kind":
                continue
            _typed(where, key, value, keys, f"a {kind} step takes")
            if key == "target":
                _known_target(where, value, targets)
            options.append((key, value))
        steps.append(Step(n, kind, tuple(options)))
    return tuple(steps)


def _items(plan_name: str, cells: list[Cell], steps: tuple[Step, ...], targets: dict,
           results_dir: Path) -> tuple[Item, ...]:
    """Every (step, cell) pair - (step, datastore) for per-target kinds - with its spec."""
    items: list[Item] = []
    seen: set = set()
    for cell in cells:
        for step in steps:
            kind = STEP_KINDS[step.kind]
            where = f"step.{step.index} ({step.kind}) in cell {cell.name}"
            given = dict(step.options)
            home = _retarget(cell, given.pop("target"), targets, results_dir) \
                if "target" in given else cell
            try:
                opts = {k: _typed(f"step.{step.index}", k, v, kind.keys)
                        for k, v in given.items()}
                if kind.scope == "target":
                    path = fio_path(home, opts)
                    if (step.index, path) in seen:
                        continue
                    seen.add((step.index, path))
                    name = (f"target={home.target}" if home.target and "path" not in opts
                            else f"path={path}")
                    label = _step_label(plan_name, name, step, steps)
                else:
                    name = cell.name
                    label = cell.label if step.kind == "tpcc" and sum(
                        s.kind == "tpcc" for s in steps) == 1 else _step_label(
                        cell.label, "", step, steps)
                spec = kind.make(home, opts, label, results_dir)
            except UsageError as e:
                raise UsageError(f"{where}: {e}") from None
            items.append(Item(cell=home, step=step, name=name, label=label, spec=spec))
    return tuple(items)


def _retarget(cell: Cell, target: str, targets: dict, results_dir: Path) -> Cell:
    """The cell as it would be with its data in ``target`` (a step's own ``target``)."""
    values = {k: v for k, v in cell.values if k not in TARGET_KEYS}
    values["target"] = target
    return _cell(cell.index, cell.name, cell.label, {**targets[target], **values}, results_dir)


def _step_label(base: str, name: str, step: Step, steps: tuple[Step, ...]) -> str:
    """``base[.name].kind``, with the step's number when the plan has several of its kind."""
    several = sum(s.kind == step.kind for s in steps) > 1
    tail = f"{step.kind}{step.index if several else ''}"
    label = re.sub(r"[^A-Za-z0-9_.\-]", "_", ".".join(p for p in (base, name, tail) if p))
    return label if len(label) <= 64 else f"{label[:55]}.{tail}"[-64:]


def _show(v: Any) -> str:
    if isinstance(v, list):
        return "/".join(str(x) for x in v)
    return str(v).lower() if isinstance(v, bool) else str(v)


def _label(plan: str, chosen: dict, index: int) -> str:
    if not chosen:
        return plan
    label = plan + "." + "_".join(f"{k}-{_show(v)}" for k, v in chosen.items())
    label = re.sub(r"[^A-Za-z0-9_.\-]", "_", label)
    return label if len(label) <= 64 else f"{plan}.c{index + 1}"


def _relabel(cell: Cell, label: str) -> Cell:
    import dataclasses
    return dataclasses.replace(cell, label=label, run=dataclasses.replace(cell.run, name=label))


def _cell(index: int, name: str, label: str, values: dict, results_dir: Path) -> Cell:
    conv = {k: _typed("cell", k, v) for k, v in values.items()}
    db = DbSpec(**{k: v for k, v in conv.items() if KEYS[k].part == "db"})
    if db.dsn and db.listen:
        raise UsageError("listen configures a managed server; it does not go with dsn")
    if db.dsn and db.host_memory is not None:
        raise UsageError("host_memory limits a managed server; it does not go with dsn")
    run = {k: v for k, v in conv.items() if KEYS[k].part == "run"}
    run.update(run.pop("users", {}))
    rspec = RunSpec(name=label, results_dir=results_dir, **run)
    if rspec.inject:
        from .scenarios.inject import preflight
        preflight(db, rspec)
    return Cell(index=index, name=name, label=label, values=tuple(values.items()), db=db,
                warehouses=conv.get("warehouses"),
                build_users=conv.get("build_users") or max(1, os.cpu_count() or 1), run=rspec,
                target=conv.get("target"))
