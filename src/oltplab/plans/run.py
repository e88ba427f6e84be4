"""Running a plan: its items in order, what is done read back from the results store, and
resume.

Order: cell by cell; within a cell, step by step, each step's repeats back to back. The cell's
managed server is started before its first step that needs it (its schema built when it lacks
the cell's ``warehouses``) and stopped after the cell; a per-target step (fio) runs with the
first cell whose datastore it measures. Every run carries ``plan: {name, cell, repeat, step,
file}`` and ``group: {id, index, of}``.

An attempt that did not complete (interrupted, failed) stays in the results folder until its
repeat completes; then it is moved, as measured, into the completed run's folder under
``superseded/<id>/`` (the run's ``superseded`` lists them), where neither ``results list``,
the report nor ``plan status`` counts it.

Each run also carries the ``fingerprint`` of what it measured (``fingerprint``): a run in an
item's place whose fingerprint differs (the plan or a ``--set`` changed the step's kind or
configuration since) does not count for the item; it runs again and the old run is set aside
as an attempt that did not complete is. One ``plan run`` at a time holds a results folder
(the lock file ``.plan.lock`` in it); a second is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from ..errors import Interrupted, OltplabError, UsageError
from .datastores import (check_at_start, ensure, last_cells, mark_altering, owner, release,
                         restore, restore_reason)
from .model import Cell, Item, Plan

SUPERSEDED = "superseded"
LOCK = ".plan.lock"


@dataclass(frozen=True)
class ItemState:
    item: Item
    repeats: int  # runs the item needs
    done: tuple[int, ...]  # repeats with a completed run
    failed: tuple[int, ...]  # repeats that failed (an interrupted run is still pending)
    runs: tuple[dict, ...]  # the completed runs, in repeat order
    stale: int = 0  # runs in its place with another fingerprint: not counted, set aside

    @property
    def cell(self) -> Cell:
        return self.item.cell

    @property
    def name(self) -> str:
        """The cell (or datastore) and, when the plan has steps, the step."""
        return self.item.name

    @property
    def todo(self) -> tuple[int, ...]:
        return tuple(r for r in range(1, self.repeats + 1) if r not in self.done)

    @property
    def state(self) -> str:
        if not self.todo:
            return "done"
        return "failed" if self.failed else "pending"


def plan_runs(plan: Plan, results_dir: Path) -> list[dict]:
    """Every run of this plan in the results store, oldest first."""
    from ..results.store import list_runs
    return [r for r in list_runs(results_dir)
            if isinstance(r.get("plan"), dict) and r["plan"].get("name") == plan.name]


def _attempts(runs: list[dict], item: Item, repeat: int) -> list[dict]:
    return [r for r in runs if r["plan"].get("cell") == item.name
            and r["plan"].get("step", 1) == item.step.index
            and r["plan"].get("repeat") == repeat]


def fingerprint(item: Item) -> str:
    """What a run of the item measures, hashed: the step's kind and spec and, for a step on the
    cell's server, that server and its warehouses (not the runs' label or results folder)."""
    from ..runs.lifecycle import spec_dict
    # io_latency: what the sampler adds beside the run, not what the run measures
    what = {"kind": item.step.kind, "spec": {k: v for k, v in _spec(item).items()
                                             if k not in ("name", "results_dir", "io_latency")}}
    if item.kind.needs_db:
        what.update(db=spec_dict(item.cell.db), warehouses=item.cell.warehouses)
        if item.cell.size is not None:
            what["size"] = item.cell.size.name
        if item.cell.scale is not None:
            what["scale"] = [item.cell.scale.customers, item.cell.scale.days]
    if item.cell.datastore is not None:  # the storage under it, as the plan makes it
        what["datastore"] = item.cell.datastore.describe()
    text = json.dumps(what, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _same(run: dict, mark: str) -> bool:
    """The run measured what the item measures now (a run recorded without a fingerprint, by
    an older version, is taken to)."""
    return run["plan"].get("fingerprint", mark) == mark


def plan_status(plan: Plan, results_dir: Path) -> list[ItemState]:
    """Each item's done, failed and pending repeats, as the results store has them."""
    runs = plan_runs(plan, results_dir)
    out = []
    for item in plan.items:
        done, failed, kept, stale, mark = [], [], [], 0, fingerprint(item)
        for rep in range(1, plan.repeat + 1):
            of_rep = [r for r in _attempts(runs, item, rep) if _same(r, mark)]
            stale += len(_attempts(runs, item, rep)) - len(of_rep)
            completed = [r for r in of_rep if r.get("status") == "completed"]
            if completed:
                done.append(rep)
                kept.append(completed[-1])
            elif any(r.get("status") != "interrupted" for r in of_rep):
                failed.append(rep)
        out.append(ItemState(item, plan.repeat, tuple(done), tuple(failed), tuple(kept),
                             stale))
    return out


class PlanProgress:
    """Hooks a plan calls while it goes; every one does nothing here."""

    def item(self, item: Item, todo: tuple[int, ...], of: int) -> None:
        """An item (a step of a cell) is about to run these repeats."""

    def building(self, cell: Cell, warehouses: int):
        """The cell's schema is missing or of another size and is about to be built; returns
        the loader's progress callback ``(event, done, total)``, or None."""
        return None

    def run_progress(self, item: Item, repeat: int):
        """What the item's kind reports to (``StepKind.run``'s ``progress``; None: silent)."""
        return None

    def run_done(self, item: Item, run: dict) -> None:
        """One run ended (in any way) and is saved."""

    def item_failed(self, item: Item, error: str) -> None:
        """The item failed; the plan goes on with the next one."""

    def datastore(self, name: str, what: str) -> None:
        """A datastore of the plan was made, reused or destroyed (or a step of making it)."""

    def fetched(self, host: str, folder: str, names: list[str]) -> None:
        """What ``host`` kept in ``folder`` of an earlier failed part is back (``names``)."""


def run_plan(plan: Plan, results_dir: Path, resume: bool = False,
             progress: PlanProgress | None = None, metrics=None) -> list[ItemState]:
    """Run every repeat of every item that is not done; return the status at the end.

    Without ``resume`` a plan that already has runs in ``results_dir`` is refused. An item that
    fails, whatever the error, is recorded (a failed run) and the plan goes on; Ctrl-C keeps
    the runs so far and raises ``Interrupted``. ``metrics`` (a config.MetricsSpec) serves the
    live figures of each run in turn on one endpoint, open from the first run to the last."""
    from ..telemetry.openmetrics import endpoint
    progress = progress or PlanProgress()
    with _locked(Path(results_dir)), endpoint(metrics) as live:
        if not resume and plan_runs(plan, results_dir):
            raise UsageError(f"plan {plan.name!r} already has runs in {results_dir}: "
                             "add --resume to run only what is not done, or use another "
                             "--results-dir")
        if resume and plan.hosts is not None:  # what failed hosts kept, before the status
            from .hosts import fetch_kept_runs
            fetch_kept_runs(plan, results_dir, progress)
        states = [s for s in plan_status(plan, results_dir) if s.todo]
        if plan.hosts is not None:
            from .hosts import run_on_hosts
            run_on_hosts(plan, states, results_dir, progress, host_share,
                         lambda item, run: supersede(plan, item, run["plan"]["repeat"], run,
                                                     results_dir))
        else:
            run_cells(plan, plan.cells, states, results_dir, progress, live)
        return plan_status(plan, results_dir)


def run_cells(plan: Plan, cells, states: list[ItemState], results_dir: Path,
              progress: PlanProgress, live=None, host: str | None = None) -> None:
    """``cells`` of the plan in order, each with the items of ``states`` it has; a datastore
    the plan does not keep is destroyed after the last of them that uses it. ``host``: the
    cluster's host they run on, recorded with each run."""
    last = last_cells(plan, cells)
    for cell in cells:
        mine = [s for s in states if s.item.cell.index == cell.index]
        if mine and _stores_ready(plan, mine, progress, host):
            _run_cell(plan, mine, results_dir, progress, live, host)
        for spec, keep in plan.datastores:
            if last.get(spec.name) == cell.index and not keep:
                try:
                    progress.datastore(spec.name, release(spec, owner(plan)))
                except OltplabError as e:
                    progress.datastore(spec.name, f"not destroyed: {e}")


def host_share(link, out: Path, text: str, path: str, overrides: tuple, cwd: str, host: str,
               cells: tuple[int, ...], todo: dict) -> dict:
    """A host's cells of a plan with ``[hosts]`` (plans/hosts.py places them, cluster/partmain
    runs this there): the plan loaded as the coordinator loaded it, its runs written under
    ``out``. ``todo``: "cell/step" -> the repeats to run."""
    import dataclasses
    import tempfile

    from .hosts import PartProgress
    from .model import load_plan
    if not os.path.isdir(cwd):
        raise UsageError(f"host {host} has no folder {cwd}, where the plan's relative paths "
                         "are taken from: make it, or give absolute paths")
    os.chdir(cwd)
    with tempfile.TemporaryDirectory(prefix="oltplab-plan-") as tmp:
        copy = Path(tmp) / Path(path).name
        copy.write_text(text)
        plan = dataclasses.replace(load_plan(copy, out, tuple(overrides)), path=Path(path))
    mine = [c for c in plan.cells if c.index in cells]
    states = []
    for item in plan.items:
        reps = todo.get(f"{item.cell.index}/{item.step.index}")
        if reps:
            done = tuple(r for r in range(1, plan.repeat + 1) if r not in reps)
            states.append(ItemState(item, plan.repeat, done, (), ()))
    try:
        run_cells(plan, mine, states, out, PartProgress(link), host=host)
    except Interrupted as e:
        return {"interrupted": str(e)}
    return {}


def _stores_ready(plan: Plan, states: list[ItemState], progress: PlanProgress,
                  host: str | None = None) -> bool:
    """The datastores of the cell's items made (or found); where one cannot be, its items
    fail (recorded) and the plan goes on."""
    specs = {s.item.cell.datastore for s in states if s.item.cell.datastore is not None}
    for spec in sorted(specs, key=lambda x: x.name):
        try:
            said = ensure(spec, on_step=lambda text, n=spec.name: progress.datastore(n, text),
                          made_by=owner(plan))
            progress.datastore(spec.name, said)
        except KeyboardInterrupt:
            raise Interrupted(f"plan {plan.name} interrupted while datastore {spec.name} was "
                              "made; --resume goes on from there") from None
        except OltplabError as e:
            why = str(e) if str(e).startswith("datastore ") else f"datastore {spec.name}: {e}"
            for s in states:
                if s.item.cell.datastore == spec:
                    _failed_record(plan, s.item, s.todo[0], why, host)
                    progress.item_failed(s.item, why)
            return False
    return True


def _locked(results_dir: Path):
    """Hold the results folder's lock file (with our process id in it) while the body runs;
    UsageError when another process holds it."""
    from ..results.store import held_lock
    return held_lock(results_dir / LOCK, lambda holder: UsageError(
        f"{results_dir} is in use by another plan run (process {holder}): wait for it to end, "
        "or use another --results-dir"))


def _interrupted(plan: Plan, item: Item) -> Interrupted:
    return Interrupted(f"plan {plan.name} interrupted in {item.name} "
                       f"(step {item.step.index}, {item.what}); --resume goes on from there")


def _run_cell(plan: Plan, states: list[ItemState], results_dir: Path,
              progress: PlanProgress, live=None, host: str | None = None) -> None:
    """The cell's items in order; its server (one per data directory) is started for the
    first item that needs it and stopped after the cell. Before each run on a datastore, the
    datastore is made again where a fault changed it (its servers stopped first, the schema
    built again after); a run whose datastore differs from the plan's fails."""
    with _Servers(states, progress) as servers:
        for state in states:
            item = state.item
            repeat = state.todo[0]
            progress.item(item, state.todo, plan.repeat)
            try:
                for repeat in state.todo:
                    store = item.cell.datastore
                    if store is not None:
                        _made_again(store, servers, progress)
                        check_at_start(store)
                    restarted = servers.up(item.cell) if item.kind.needs_db else None
                    if store is not None:
                        mark_altering(store, getattr(item.spec, "inject", ()))
                    labels = _labels(plan, item, repeat, host)
                    if restarted:  # recorded with each run
                        labels["restarted"] = restarted
                    run = item.kind.run(item, progress.run_progress(item, repeat), labels,
                                        live)
                    progress.run_done(item, run)
                    if run.get("status") == "interrupted":
                        raise _interrupted(plan, item)
                    if run.get("status") != "completed":
                        progress.item_failed(item, run.get("error") or run.get("status"))
                        break
                    supersede(plan, item, repeat, run, results_dir)
            except KeyboardInterrupt:
                raise _interrupted(plan, item) from None
            except Interrupted:
                raise
            except Exception as e:  # the item fails (recorded), the plan goes on
                # an OltplabError comes before a run could start; any other is unexpected
                error = str(e) if isinstance(e, OltplabError) else f"{type(e).__name__}: {e}"
                _failed_record(plan, item, repeat, error, host)
                progress.item_failed(item, error)


class _Servers:
    """A cell's managed servers, one per data directory: each started (its schema built when
    it lacks the cell's) for the first item that needs it, and stopped after the cell or
    before its datastore is made again."""

    def __init__(self, states: list[ItemState], progress: PlanProgress):
        self.progress = progress
        self.connections = max((s.item.kind.connections(s.item.spec) for s in states),
                               default=0)
        self.open: dict = {}  # DbSpec -> (ExitStack, what the server was restarted for)

    def __enter__(self) -> _Servers:
        return self

    def __exit__(self, *exc) -> None:
        with ExitStack() as all_of:
            for stack, _ in self.open.values():
                all_of.push(stack)
            self.open.clear()

    def up(self, cell: Cell) -> str | None:
        """The cell's server running with the cell's schema; what it was restarted for
        (engines/base.py), or None."""
        from .. import engines
        if cell.db not in self.open:
            stack = ExitStack()
            target = stack.enter_context(engines.get(cell.db.engine).database(
                cell.db, need_connections=max(cell.build_users + 10, self.connections)))
            self.open[cell.db] = (stack, getattr(target.instance, "restarted", None))
            _ensure_schema(target.dsn, cell, self.progress)
        return self.open[cell.db][1]

    def down_on(self, spec) -> None:
        """Stop the servers whose data directory is in the datastore's folder."""
        home = os.path.abspath(spec.root / spec.name) + os.sep
        for db in [d for d in self.open if d.datadir is not None
                   and os.path.abspath(d.datadir).startswith(home)]:
            self.open.pop(db)[0].close()


def _made_again(spec, servers: _Servers, progress: PlanProgress) -> None:
    """The datastore made again as the plan asks where a fault changed it (with its steps
    shown), after the servers on it are stopped."""
    why = restore_reason(spec)
    if why is None:
        return
    progress.datastore(spec.name, f"making it again: {why}")
    servers.down_on(spec)
    restore(spec, on_step=lambda text: progress.datastore(spec.name, text))
    progress.datastore(spec.name, "made again")


def _labels(plan: Plan, item: Item, repeat: int, host: str | None = None) -> dict:
    several = len(plan.steps) > 1
    gid = f"{plan.name}:{item.name}" + (f":{item.step.index}" if several else "")
    return {"plan": {"name": plan.name, "cell": item.name, "repeat": repeat,
                     "step": item.step.index, "file": str(plan.path),
                     "fingerprint": fingerprint(item), **({"host": host} if host else {})},
            "group": {"id": gid, "index": repeat, "of": plan.repeat}}


def supersede(plan: Plan, item: Item, repeat: int, run: dict, results_dir: Path) -> list[str]:
    """Move the attempts of (item, repeat) that did not complete, and the runs in its place
    with another fingerprint, into the completed run's folder (``superseded/<id>/``) and list
    their ids in its ``superseded``."""
    from ..results.store import atomic_write
    mark = fingerprint(item)
    others = [r for r in _attempts(plan_runs(plan, results_dir), item, repeat)
              if (r.get("status") != "completed" or not _same(r, mark))
              and r.get("id") != run.get("id")]
    if not others:
        return []
    home = Path(run["_path"])
    moved = []
    for r in others:
        dest = home / SUPERSEDED / r["id"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(r["_path"], dest)
        moved.append(r["id"])
    record = json.loads((home / "run.json").read_text())
    record["superseded"] = [*record.get("superseded", []), *moved]
    atomic_write(home / "run.json", json.dumps(record, indent=2, default=str) + "\n")
    return moved


def _ensure_schema(dsn: str, cell: Cell, progress: PlanProgress) -> None:
    """Reuse the schema when it has the cell's warehouses (or shop size, a DS2 shop: a plan's
    cells run DS2's orders; or the brokerage's customers and days); build it (again)
    otherwise."""
    from ..runs.schema import ensure_schema
    from .brokerage import ensure_brokerage

    def on_build():
        return progress.building(cell, cell.warehouses if cell.size is None and
                                 cell.scale is None else cell.schema_name)

    if cell.scale is not None:
        built = ensure_brokerage(cell.db.engine, dsn, cell.scale, managed=cell.db.managed,
                                 build_users=cell.build_users, on_build=on_build)
    else:
        built = ensure_schema(cell.db.engine, dsn, cell.warehouses, managed=cell.db.managed,
                              build_users=cell.build_users, size=cell.size, on_build=on_build)
    if built == "built" and cell.datastore is not None:
        from ..datastores.service import after_build
        entry = after_build(cell.db.datadir)  # the space after the build; dedupe if asked
        if entry is not None:
            progress.datastore(cell.datastore.name,
                               f"dedupe after the build: {entry['seconds']:.1f} s, "
                               f"{(entry['dedupe_saved_bytes'] or 0) / 2**20:,.1f} MiB shared")


def _failed_record(plan: Plan, item: Item, repeat: int, error: str,
                   host: str | None = None) -> None:
    from .. import __version__
    from ..results.store import RunRecord
    from ..runs.lifecycle import spec_dict
    cell = item.cell
    record = RunRecord.create(cell.run.results_dir, item.what, item.label,
                              oltplab_version=__version__,
                              config={"db": spec_dict(cell.db),
                                      item.kind.config_key or item.step.kind: _spec(item)},
                              **_labels(plan, item, repeat, host))
    record.finish("failed", error)


def _spec(item: Item) -> dict:
    from ..runs.lifecycle import spec_dict
    spec = item.spec
    return spec.as_dict() if hasattr(spec, "as_dict") else spec_dict(spec)


def write_plan_report(plan: Plan, results_dir: Path, out_dir: Path | None = None,
                      pdf: bool = False):
    """The report of every cell side by side (the comparison report over the completed
    runs, in plan order, its title the plan's name and what it varies, its ratios against
    ``plan.baseline`` or the first cell) with the plan's own charts; None when no run
    completed. ``pdf`` prints it as report.pdf too."""
    from ..report.build import write_report
    from ..report.answer import plan_title
    from ..report.plan import plan_section
    runs = [r for s in plan_status(plan, results_dir) for r in s.runs]
    if not runs:
        return None
    return write_report(runs, out_dir or Path("reports") / f"plan-{plan.name}",
                        sections=[plan_section(plan, runs)], title=plan_title(plan),
                        baseline=plan.baseline, pdf=pdf)
