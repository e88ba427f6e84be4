"""Plans: an experiment as a TOML file, expanded into cells and run through the services.

A plan names itself and its repeats, gives defaults for any option of ``db start``,
``tpcc build`` and ``tpcc run`` (long name, ``-`` written as ``_``), a matrix whose every
combination is a cell, and named targets (where the data lives)::

    [plan]
    name = "modes"
    repeat = 2
    [defaults]
    warehouses = 1
    users = [1, 2]
    duration = "30s"
    [matrix]
    mode = ["procedures", "sql"]
    target = ["nvme"]
    [targets.nvme]
    datadir = "oltplab-data/nvme"

The whole file is validated before anything runs; every error is one ``UsageError`` line
naming the file and the key. A cell's runs carry ``plan: {name, cell, repeat}`` and
``group: {id, index, of}``; what is done, failed or pending is read back from the results
store, so ``--resume`` runs only what is missing and an interrupted plan loses nothing.
"""

from __future__ import annotations

import itertools
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .config import (DbSpec, RunSpec, parse_duration, parse_inject, parse_size,
                     parse_users)
from .errors import Interrupted, OltplabError, UsageError

PLAN_KEYS = {"name": str, "repeat": int}
TOP_KEYS = ("plan", "defaults", "matrix", "targets")
LABEL = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


# --------------------------------------------------------------------------- the option table

@dataclass(frozen=True)
class Key:
    """One option a plan may set: the TOML types it takes and how it becomes a spec value."""

    name: str
    part: str  # "db", "build" or "run"
    types: tuple[type, ...]
    convert: Callable[[Any, str], Any]
    help: str


def _same(value, what):
    return value


def _path(value, what):
    return Path(value)


def _size(value, what):
    return parse_size(str(value), what)


def _duration(value, what):
    return parse_duration(str(value), what)


def _users(value, what):
    if isinstance(value, list):
        if not value or not all(isinstance(u, int) and not isinstance(u, bool) for u in value):
            raise UsageError(f"{what}: give a list of whole numbers, such as [1, 2, 4]")
        value = ",".join(str(u) for u in value)
    try:
        return parse_users(str(value))
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
    Key("pg_bin", "db", (str,), _path, "PostgreSQL binaries"),
    Key("settings", "db", (dict,), _settings, "server settings, as a table"),
    Key("dsn", "db", (str,), _same, "an existing server instead of a managed one"),
    Key("dbname", "db", (str,), _same, "database that holds the schema"),
    Key("warehouses", "build", (int,), _positive, "warehouses built and driven"),
    Key("build_users", "build", (int,), _positive, "parallel loaders"),
    Key("users", "run", (int, str, list), _users, "user sequence"),
    Key("rampup", "run", NUM, _duration, "ramp-up per step"),
    Key("duration", "run", NUM, _duration, "measured time per step"),
    Key("mode", "run", (str,), _choice("procedures", "sql"), "procedures or sql"),
    Key("keying_thinking", "run", (bool,), _same, "spec keying and think times"),
    Key("all_warehouses", "run", (bool,), _same, "spread users over all warehouses"),
    Key("workers", "run", (int,), _positive, "driver processes"),
    Key("seed", "run", (int,), _same, "seed of the drivers' inputs"),
    Key("check", "run", (bool,), _same, "consistency checks after the last step"),
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


@dataclass(frozen=True)
class Plan:
    path: Path
    name: str
    repeat: int
    varied: tuple[str, ...]  # the matrix keys, in the file's order
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class CellState:
    cell: Cell
    repeats: int  # runs the cell needs
    done: tuple[int, ...]  # repeats with a completed run
    failed: tuple[int, ...]  # repeats that failed (an interrupted run is still pending)
    runs: tuple[dict, ...]  # the completed runs, in repeat order

    @property
    def todo(self) -> tuple[int, ...]:
        return tuple(r for r in range(1, self.repeats + 1) if r not in self.done)

    @property
    def state(self) -> str:
        if not self.todo:
            return "done"
        return "failed" if self.failed else "pending"


# --------------------------------------------------------------------------- loading

def load_plan(path: Path, results_dir: Path) -> Plan:
    """Read and validate the whole plan; raise one UsageError line naming file and key."""
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
        return _plan(path, doc, Path(results_dir))
    except UsageError as e:
        raise UsageError(f"{path}: {e}") from None


def _table(doc: dict, key: str, required: bool = False) -> dict:
    value = doc.get(key, None)
    if value is None:
        if required:
            raise UsageError(f"[{key}] is missing")
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{key} must be a table ([{key}])")
    return value


def _typed(where: str, key: str, value: Any) -> Any:
    """Check one option's TOML type and convert it; errors name ``where.key``."""
    spec = KEYS.get(key)
    what = f"{where}.{key}"
    if spec is None:
        raise UsageError(f"unknown key {what} (plans take: {', '.join(KEYS)})")
    if isinstance(value, bool) and bool not in spec.types or not isinstance(value, spec.types):
        names = " or ".join({str: "a string", int: "a whole number", float: "a number",
                             bool: "true or false", list: "a list", dict: "a table"}[t]
                            for t in spec.types)
        raise UsageError(f"{what}: {value!r} is the wrong type; give {names}")
    return spec.convert(value, what)


def _plan(path: Path, doc: dict, results_dir: Path) -> Plan:
    for key in doc:
        if key not in TOP_KEYS:
            hint = " ([[step]]s of other kinds are not supported yet)" if key == "step" else ""
            raise UsageError(f"unknown key {key!r}{hint} (a plan has: {', '.join(TOP_KEYS)})")
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
                if t not in targets:
                    known = ", ".join(targets) or "none"
                    raise UsageError(f"{where}.target: unknown target {t!r} (known: {known})")

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
    if len({c.label for c in cells}) != len(cells):  # labels cut to 64 characters may collide
        cells = [_relabel(c, f"{name}.c{c.index + 1}") for c in cells]
    return Plan(path=path, name=name, repeat=repeat, varied=tuple(matrix), cells=tuple(cells))


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
    run = {k: v for k, v in conv.items() if KEYS[k].part == "run"}
    rspec = RunSpec(name=label, results_dir=results_dir, **run)
    if rspec.inject:
        from .scenarios.inject import preflight
        preflight(db, rspec)
    return Cell(index=index, name=name, label=label, values=tuple(values.items()), db=db,
                warehouses=conv.get("warehouses"),
                build_users=conv.get("build_users") or max(1, os.cpu_count() or 1), run=rspec)


# --------------------------------------------------------------------------- status

def plan_runs(plan: Plan, results_dir: Path) -> list[dict]:
    """Every run of this plan in the results store, oldest first."""
    from .results.store import list_runs
    return [r for r in list_runs(results_dir)
            if isinstance(r.get("plan"), dict) and r["plan"].get("name") == plan.name]


def plan_status(plan: Plan, results_dir: Path) -> list[CellState]:
    """Each cell's done, failed and pending repeats, as the results store has them."""
    runs = plan_runs(plan, results_dir)
    out = []
    for cell in plan.cells:
        mine = [r for r in runs if r["plan"].get("cell") == cell.name]
        done, failed, kept = [], [], []
        for rep in range(1, plan.repeat + 1):
            of_rep = [r for r in mine if r["plan"].get("repeat") == rep]
            completed = [r for r in of_rep if r.get("status") == "completed"]
            if completed:
                done.append(rep)
                kept.append(completed[-1])
            elif any(r.get("status") != "interrupted" for r in of_rep):
                failed.append(rep)
        out.append(CellState(cell, plan.repeat, tuple(done), tuple(failed), tuple(kept)))
    return out


# --------------------------------------------------------------------------- running

class PlanProgress:
    """Hooks a plan calls while it goes; every one does nothing here."""

    def cell(self, cell: Cell, todo: tuple[int, ...], of: int) -> None:
        """A cell is about to run these repeats."""

    def building(self, cell: Cell, warehouses: int):
        """The cell's schema is missing or of another size and is about to be built; returns
        the loader's progress callback ``(event, done, total)``, or None."""
        return None

    def run_progress(self, cell: Cell, repeat: int):
        """The ``services.TpccProgress`` for one run of the cell (None: silent)."""
        return None

    def run_done(self, cell: Cell, run: dict) -> None:
        """One run of the cell ended (in any way) and is saved."""

    def cell_failed(self, cell: Cell, error: str) -> None:
        """The cell failed; the plan goes on with the next cell."""


def run_plan(plan: Plan, results_dir: Path, resume: bool = False,
             progress: PlanProgress | None = None) -> list[CellState]:
    """Run every repeat of every cell that is not done; return the status at the end.

    Without ``resume`` a plan that already has runs in ``results_dir`` is refused. A cell that
    fails is recorded (a failed run) and the plan goes on; Ctrl-C keeps the runs so far and
    raises ``Interrupted``."""
    progress = progress or PlanProgress()
    if not resume and plan_runs(plan, results_dir):
        raise UsageError(f"plan {plan.name!r} already has runs in {results_dir}: "
                         "add --resume to run only what is not done, or use another "
                         "--results-dir")
    for state in plan_status(plan, results_dir):
        if state.todo:
            _run_cell(plan, state.cell, state.todo, progress)
    return plan_status(plan, results_dir)


def _labels(plan: Plan, cell: Cell, repeat: int) -> dict:
    return {"plan": {"name": plan.name, "cell": cell.name, "repeat": repeat,
                     "file": str(plan.path)},
            "group": {"id": f"{plan.name}:{cell.name}", "index": repeat, "of": plan.repeat}}


def _run_cell(plan: Plan, cell: Cell, todo: tuple[int, ...], progress: PlanProgress) -> None:
    from .engines.postgres.session import database
    from .services import run_tpcc_recorded

    progress.cell(cell, todo, plan.repeat)
    need = max(max(cell.run.users) + 21, cell.build_users + 10)
    repeat = todo[0]
    try:
        with database(cell.db, need_connections=need) as target:
            _ensure_schema(target.dsn, cell, progress)
            for repeat in todo:
                run = run_tpcc_recorded(cell.db, cell.run, progress.run_progress(cell, repeat),
                                        _labels(plan, cell, repeat))
                progress.run_done(cell, run)
                if run.get("status") == "interrupted":
                    raise Interrupted(f"plan {plan.name} interrupted in cell {cell.name}; "
                                      "--resume goes on from there")
                if run.get("status") != "completed":
                    progress.cell_failed(cell, run.get("error") or run.get("status"))
                    return
    except KeyboardInterrupt:
        raise Interrupted(f"plan {plan.name} interrupted in cell {cell.name}; "
                          "--resume goes on from there") from None
    except Interrupted:
        raise
    except OltplabError as e:  # before a run could start: record the cell as failed
        _failed_record(plan, cell, repeat, str(e))
        progress.cell_failed(cell, str(e))


def _ensure_schema(dsn: str, cell: Cell, progress: PlanProgress) -> None:
    """Reuse the schema when it has the cell's warehouses; build it (again) otherwise."""
    from .config import BuildSpec
    from .errors import SchemaError
    from .workloads.tpcc.loader import build
    from .workloads.tpcc.schema import schema_info
    try:
        info = schema_info(dsn)
    except SchemaError:
        if cell.warehouses is None:
            raise
        info = None
    if cell.warehouses is None or (info is not None and info.warehouses == cell.warehouses):
        return
    if cell.db.dsn:
        raise SchemaError(f"the schema at dsn has {info.warehouses if info else 'no'} "
                          f"warehouses, not {cell.warehouses}; a plan rebuilds only managed "
                          "servers")
    on_build = progress.building(cell, cell.warehouses)
    build(dsn, BuildSpec(warehouses=cell.warehouses, build_users=cell.build_users, force=True),
          progress=on_build)


def _failed_record(plan: Plan, cell: Cell, repeat: int, error: str) -> None:
    from . import __version__
    from .results.store import RunRecord
    from .services import spec_dict
    record = RunRecord.create(cell.run.results_dir, "tpcc", cell.label,
                              oltplab_version=__version__,
                              config={"db": spec_dict(cell.db), "run": spec_dict(cell.run)},
                              **_labels(plan, cell, repeat))
    record.finish("failed", error)


def write_plan_report(plan: Plan, results_dir: Path, out_dir: Path | None = None):
    """The report of every cell side by side (the comparison report over the completed
    runs, in cell order); None when no run completed."""
    from .report.build import write_report
    runs = [r for s in plan_status(plan, results_dir) for r in s.runs]
    if not runs:
        return None
    return write_report(runs, out_dir or Path("reports") / f"plan-{plan.name}")
