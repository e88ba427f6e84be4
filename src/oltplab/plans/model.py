"""Plans: an experiment as a TOML file, expanded into cells and steps and run through the
services.

A plan names itself and its repeats, gives defaults for any option of ``db start``,
``tpcc build``, ``tpcc run`` and ``neighbours run`` (long name, ``-`` written as ``_``), a
matrix whose every combination is a cell, named targets (where the data lives) and,
optionally, ``[[step]]``s of several kinds run in order (without them, one ``tpcc`` step)::

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

The options are the rows of the commands' option tables (options.py) that plans take, gathered
in plans/keys.py; the step kinds are those of the run kinds (kinds/) that declare a step. The pair
(step, cell) - or (step, datastore) - is an ``Item``; each item runs ``repeat`` times. The whole
file is validated before anything runs; every error is one ``UsageError`` line naming the file and
the key. Running, status and resume are in plans/run.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import DbSpec, RunSpec, read_toml
from ..errors import UsageError
from .. import kinds
from .keys import KEYS, TARGET_KEYS, StepKind, checked_run, planned_store, typed

PLAN_KEYS = {"name": str, "repeat": int, "baseline": str}
TOP_KEYS = ("plan", "defaults", "matrix", "targets", "datastores", "step", "hosts")
HOSTS_KEYS = {"names": list, "cluster_dir": str}
LABEL = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


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
    datastore: Any = None  # the DatastoreSpec of the plan's datastore its data lives in
    size: Any = None  # the dvds workload's database size (workloads.dvds.sizes.Size)
    scale: Any = None  # the brokerage's customers and days (workloads.brokerage.scale.Scale)

    @property
    def schema_name(self) -> str:
        """What its schema holds: "2 warehouses", "the 10MB shop", "the brokerage of 1,000
        customers x 5 days" ("the schema there": a server given by dsn, no size asked)."""
        if self.scale is not None:
            from .brokerage import scale_name
            return f"the brokerage of {scale_name(self.scale)}"
        if self.size is not None:
            return f"the {self.size.name} shop"
        return f"{self.warehouses} warehouses" if self.warehouses else "the schema there"


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
    def kind(self) -> StepKind:
        return kinds.steps()[self.step.kind]

    @property
    def what(self) -> str:
        """What the step runs, as people name it: the default step runs the cell's workload
        (tpcc, dvds), any other its kind."""
        workload = getattr(self.spec, "workload", None)
        return workload if self.step.kind == kinds.DEFAULT_STEP and workload else self.step.kind


@dataclass(frozen=True)
class Plan:
    path: Path
    name: str
    repeat: int
    varied: tuple[str, ...]  # the matrix keys, in the file's order
    cells: tuple[Cell, ...]
    steps: tuple[Step, ...] = (Step(1, kinds.DEFAULT_STEP),)
    items: tuple[Item, ...] = ()  # in running order: cell by cell, step by step
    baseline: str | None = None  # the label of the cell the report sets the others against
    datastores: tuple = ()  # (DatastoreSpec, keep) of each [datastores.NAME], in file order
    hosts: PlanHosts | None = None  # [hosts]: the cells run on the cluster's hosts
    overrides: tuple[str, ...] = ()  # the --set texts it was loaded with

    def step_name(self, step: Step) -> str:
        """What a step runs over the plan's cells (``Item.what``): "dvds" for a shop plan's
        default step, "tpcc/dvds" where its cells run both."""
        names = dict.fromkeys(i.what for i in self.items if i.step.index == step.index)
        return "/".join(names) or step.kind


@dataclass(frozen=True)
class PlanHosts:
    """``[hosts]``: the cluster's hosts the cells run on (``names``), and its folder."""

    names: tuple[str, ...]
    cluster_dir: Path


# --------------------------------------------------------------------------- loading

def load_plan(path: Path, results_dir: Path, overrides: tuple[str, ...] = ()) -> Plan:
    """Read and validate the whole plan; raise one UsageError line naming file and key.
    ``overrides`` are ``--set KEY=VALUE`` texts (see ``apply_overrides``)."""
    path = Path(path)
    doc = read_toml(path, "plan")
    try:
        apply_overrides(doc, overrides)
        plan = _plan(path, doc, Path(results_dir))
        return dataclasses.replace(plan, overrides=tuple(overrides))
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
            typed(f"targets.{tname}", key, value)
        targets[tname] = table

    stores = _datastores(_table(doc, "datastores"))
    defaults = _table(doc, "defaults")
    for key, value in defaults.items():
        typed("defaults", key, value)
    matrix = _table(doc, "matrix")
    for key, values in matrix.items():
        if not isinstance(values, list):
            raise UsageError(f"matrix.{key}: give a list of values, such as [1, 2]")
        if not values:
            raise UsageError(f"matrix.{key}: the list is empty; give at least one value")
        for value in values:
            typed("matrix", key, value)
    for where, table in (("defaults", defaults), ("matrix", matrix)):
        if "target" in table:
            for t in table["target"] if where == "matrix" else [table["target"]]:
                _known_target(where, t, targets)
    steps = _steps(doc.get("step"), targets)
    _neighbours_keys_need_a_step(steps, defaults, matrix)

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
            cells.append(_cell(i, cname, label, merged, results_dir, stores))
        except UsageError as e:
            raise UsageError(f"cell {cname}: {e}") from None
    if len({c.label for c in cells}) != len(cells):  # labels cut to 64 characters may collide
        cells = [_relabel(c, f"{name}.c{c.index + 1}") for c in cells]
    items = _items(name, cells, steps, targets, results_dir, stores)
    if repeat > 1 and (any(c.run.users_auto for c in cells) or any(
            i.kind.searches(i.spec) for i in items)):
        raise UsageError("users = \"auto\" searches for the best user count in one run; "
                         "give plan.repeat = 1")
    _unmade_stores_stay_as_made(items, repeat)
    baseline = head.get("baseline")
    if baseline is not None:
        found = [c for c in cells if baseline in (c.name, c.label) or (
            c.datastore is not None and c.datastore.name == baseline)]
        if not found:
            raise UsageError(f"plan.baseline: no cell is named {baseline!r} (cells: "
                             f"{', '.join(c.name for c in cells)})")
        baseline = found[0].label
    used = {c.datastore.name for c in cells if c.datastore} | {
        i.cell.datastore.name for i in items if i.cell.datastore}
    return Plan(path=path, name=name, repeat=repeat, varied=tuple(matrix), cells=tuple(cells),
                baseline=baseline, steps=steps, items=items,
                datastores=tuple(v for k, v in stores.items() if k in used),
                hosts=_hosts(_table(doc, "hosts")))


def _unmade_stores_stay_as_made(items: tuple[Item, ...], repeat: int) -> None:
    """A fault that changes the datastore (a device removed ...) under a data directory the
    plan does not make (no ``[datastores.NAME]``) is refused where another run would follow
    on it: the plan could not make it again, and that run would measure another datastore."""
    from ..datastores.spec import altering
    for n, item in enumerate(items):
        changing = altering(getattr(item.spec, "inject", ()))
        if not changing or item.cell.datastore is not None:
            continue
        after = [i for i in items[n + 1:] if i.cell.db.datadir == item.cell.db.datadir]
        if repeat > 1 or after:
            why = f"plan.repeat = {repeat}" if repeat > 1 else f"{after[0].name} runs after it"
            raise UsageError(f"inject {changing[0]!r} in {item.name} changes the datastore under "
                             f"{item.cell.db.datadir}, and {why}: declare it as a "
                             "[datastores.NAME] table, which the plan makes again before each "
                             "run, or run it once")


def _hosts(table: dict) -> PlanHosts | None:
    """``[hosts]``: ``names`` (a list of the cluster's host names) and ``cluster_dir``."""
    if not table:
        return None
    from ..cluster.state import DEFAULT_DIR
    for key, value in table.items():
        if key not in HOSTS_KEYS:
            raise UsageError(f"unknown key hosts.{key} (it takes: {', '.join(HOSTS_KEYS)})")
        if not isinstance(value, HOSTS_KEYS[key]):
            raise UsageError(f"hosts.{key}: {value!r} is the wrong type")
    names = table.get("names")
    if not names or not all(isinstance(n, str) and LABEL.fullmatch(n) for n in names) \
            or len(set(names)) != len(names):
        raise UsageError("hosts.names: give the cluster's hosts the cells run on, such as "
                         '["h1", "h2"] (each once)')
    return PlanHosts(tuple(names), Path(table.get("cluster_dir", str(DEFAULT_DIR))))


def _datastores(tables: dict) -> dict:
    """``[datastores.NAME]``: name -> (DatastoreSpec, keep), checked as ``datastore create``
    checks its options."""
    from ..datastores.spec import make_spec
    from ..options import DATASTORE, rows
    keys = rows(DATASTORE, plans=True)
    out = {}
    for dname, table in tables.items():
        where = f"datastores.{dname}"
        if not isinstance(table, dict):
            raise UsageError(f"{where} must be a table ([{where}])")
        given = {k: typed(where, k, v, keys, "a datastore takes") for k, v in table.items()}
        keep = bool(given.pop("keep", False))
        try:
            out[dname] = (make_spec(dname, **given), keep)
        except UsageError as e:
            raise UsageError(f"{where}: {e}") from None
    if out and os.geteuid() != 0:
        raise UsageError("datastores: making file systems and loop devices needs root")
    return out


def _neighbours_keys_need_a_step(steps: tuple[Step, ...], defaults: dict, matrix: dict) -> None:
    """Options only a neighbours step reads are refused in a plan without one."""
    given = {s.kind for s in steps}
    for where, table in (("defaults", defaults), ("matrix", matrix)):
        for key in table:
            part = KEYS[key].part
            if part in kinds.steps() and part not in given:
                raise UsageError(f"{where}.{key}: only a {part} step takes it, and the plan "
                                 f"has none ([[step]] kind = \"{part}\")")


def _known_target(where: str, t: str, targets: dict) -> None:
    if t not in targets:
        known = ", ".join(targets) or "none"
        raise UsageError(f"{where}.target: unknown target {t!r} (known: {known})")


def _steps(raw: Any, targets: dict) -> tuple[Step, ...]:
    """The ``[[step]]`` tables checked against their kind's option table; one tpcc step when
    the plan gives none."""
    if raw is None:
        return (Step(1, kinds.DEFAULT_STEP),)
    if not isinstance(raw, list) or not raw or not all(isinstance(t, dict) for t in raw):
        raise UsageError("step: give one or more [[step]] tables")
    steps = []
    for n, table in enumerate(raw, 1):
        where = f"step.{n}"
        kind = table.get("kind")
        steps_of = kinds.steps()
        if kind not in steps_of:
            raise UsageError(f"{where}.kind: {'unknown kind ' + repr(kind) if kind else 'missing'}"
                             f" (kinds: {', '.join(steps_of)})")
        keys = {**steps_of[kind].keys, "target": KEYS["target"]}
        options = []
        for key, value in table.items():
            if key == "kind":
                continue
            typed(where, key, value, keys, f"a {kind} step takes")
            if key == "target":
                _known_target(where, value, targets)
            options.append((key, value))
        steps.append(Step(n, kind, tuple(options)))
    return tuple(steps)


def _items(plan_name: str, cells: list[Cell], steps: tuple[Step, ...], targets: dict,
           results_dir: Path, stores: dict) -> tuple[Item, ...]:
    """Every (step, cell) pair - (step, datastore) for per-target kinds - with its spec."""
    items: list[Item] = []
    seen: set = set()
    for cell in cells:
        for step in steps:
            kind = kinds.steps()[step.kind]
            where = f"step.{step.index} ({step.kind}) in cell {cell.name}"
            given = dict(step.options)
            home = _retarget(cell, given.pop("target"), targets, results_dir, stores) \
                if "target" in given else cell
            try:
                opts = {k: typed(f"step.{step.index}", k, v, kind.keys)
                        for k, v in given.items()}
                if kind.scope == "target":
                    path = kind.target_path(home, opts)
                    if (step.index, path) in seen:
                        continue
                    seen.add((step.index, path))
                    name = (f"target={home.target}" if home.target and "path" not in opts
                            else f"path={path}")
                    label = _step_label(plan_name, name, step, steps)
                else:
                    name = cell.name
                    label = cell.label if kind.cell_label and sum(
                        s.kind == step.kind for s in steps) == 1 else _step_label(
                        cell.label, "", step, steps)
                spec = kind.make(home, opts, label, results_dir)
            except UsageError as e:
                raise UsageError(f"{where}: {e}") from None
            items.append(Item(cell=home, step=step, name=name, label=label, spec=spec))
    return tuple(items)


def _retarget(cell: Cell, target: str, targets: dict, results_dir: Path,
              stores: dict) -> Cell:
    """The cell as it would be with its data in ``target`` (a step's own ``target``)."""
    values = {k: v for k, v in cell.values if k not in TARGET_KEYS}
    values["target"] = target
    return _cell(cell.index, cell.name, cell.label, {**targets[target], **values}, results_dir,
                 stores)


def _step_label(base: str, name: str, step: Step, steps: tuple[Step, ...]) -> str:
    """``base[.name].kind``, with the step's number when the plan has several of its kind."""
    several = sum(s.kind == step.kind for s in steps) > 1
    tail = f"{step.kind}{step.index if several else ''}"
    label = re.sub(r"[^A-Za-z0-9_.\-]", "_", ".".join(p for p in (base, name, tail) if p))
    if len(label) <= 64:
        return label
    # too long: the end of the name (where two targets' paths differ) and a digest of the
    # whole, so that two targets never share a label (their runs would be one group)
    digest = hashlib.sha1(label.encode()).hexdigest()[:6]
    head = re.sub(r"[^A-Za-z0-9_.\-]", "_", base)[:24]
    room = 64 - len(head) - len(tail) - len(digest) - 3
    end = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)[-room:].lstrip("._") if room > 0 else ""
    return ".".join(p for p in (head, f"{end}-{digest}" if end else digest, tail) if p)


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
    return dataclasses.replace(cell, label=label, run=dataclasses.replace(cell.run, name=label))


def _db_spec(values: dict) -> DbSpec:
    """The cell's DbSpec: the engine from ``dsn`` or ``engine``, its data directory and port
    by default."""
    return DbSpec.of(flag="", **values)


def _on_datastore(values: dict, stores: dict):
    """The cell's values with its data directory in its datastore's mount (ROOT/NAME/mnt/
    ENGINE), and that datastore's spec; the values as they are without a datastore."""
    name = values.get("datastore")
    if name is None:
        return values, None
    if name not in stores:
        raise UsageError(f"datastore: unknown datastore {name!r} (known: "
                         f"{', '.join(stores) or 'none: add a [datastores.NAME] table'})")
    if "datadir" in values or "dsn" in values:
        raise UsageError("datastore puts the data directory in its mount; it does not go with "
                         f"{'datadir' if 'datadir' in values else 'dsn'}")
    spec = stores[name][0]
    engine = values.get("engine", "postgres")
    return {**values, "datadir": str(spec.root / name / "mnt" / engine)}, spec


def _cell(index: int, name: str, label: str, values: dict, results_dir: Path,
          stores: dict) -> Cell:
    values, store = _on_datastore(values, stores)
    conv = {k: typed("cell", k, v) for k, v in values.items()}
    db = _db_spec({k: v for k, v in conv.items() if KEYS[k].part == "db"})
    if db.dsn and db.listen:
        raise UsageError("listen configures a managed server; it does not go with dsn")
    if db.dsn and db.host_memory is not None:
        raise UsageError("host_memory limits a managed server; it does not go with dsn")
    run = {k: v for k, v in conv.items() if KEYS[k].part == "run"}
    run.update(run.pop("users", {}))
    workload = conv.get("workload", "tpcc")
    size = scale = None
    shop = {k: v for k, v in conv.items() if KEYS[k].part in ("dvds_build", "dvds_run")}
    if workload == "brokerage":
        from .brokerage import brokerage_cell
        run, db, scale = brokerage_cell(conv, values, run, db, shop)
    else:
        from .brokerage import brokerage_keys_refused
        brokerage_keys_refused(conv)
    if workload == "dvds":
        from ..workloads.dvds.params import DS3_PARAMS, DvdsParams
        for key in ("warehouses", "keying_thinking", "all_warehouses"):
            if key in conv:
                raise UsageError(f"{key} is a TPC-C option; the dvds workload does not take it")
        for key in DS3_PARAMS:  # a plan's cells build and run DS2 shops
            if key in conv:
                raise UsageError(f"{key} is an option of DVD Store 3's steps, which a plan's "
                                 "DS2 shops do not run")
        if "size" not in conv:
            raise UsageError("workload = \"dvds\" needs a size (such as size = \"10MB\")")
        size = shop.pop("size")
        run.update(workload="dvds", params=DvdsParams(**{
            k: v for k, v in shop.items() if KEYS[k].part == "dvds_run"}))
        if "dbname" not in values and not db.dsn:
            db = dataclasses.replace(db, dbname="dvds")
    elif shop and workload != "brokerage":
        raise UsageError(f"{next(iter(shop))} is an option of the dvds workload; give "
                         "workload = \"dvds\"")
    rspec = checked_run(db, RunSpec(name=label, results_dir=results_dir, **run),
                        planned_store(store))
    return Cell(index=index, name=name, label=label, values=tuple(values.items()), db=db,
                warehouses=conv.get("warehouses"), size=size, scale=scale,
                build_users=conv.get("build_users") or max(1, os.cpu_count() or 1), run=rspec,
                target=conv.get("target"), datastore=store)
