"""``oltplab plan``: show, run and follow a plan file. Only wiring and printing: the plan is
read by plans/model.py and run by plans/run.py; errors are raised and the top-level CLI turns them
into one line and an exit code."""

from __future__ import annotations

from pathlib import Path

import click

from .. import engines, kinds
from ..config import format_size, metrics_spec
from ..errors import OltplabError
from ..plans.datastores import state as datastore_state
from ..plans.model import Cell, Item, Plan, load_plan
from ..plans.run import PlanProgress, plan_status, run_plan, write_plan_report
from ..runs.kind import resolve
from .options import metrics_options

RESULTS = Path("results")


def _plan_args(f):
    f = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                     help="Override the plan: a default (duration=10s, users=[1,2]; narrows "
                          "a matrix that varies it), or plan.repeat, targets.NAME.KEY, "
                          "matrix.KEY, step.N.KEY. Repeat for several.")(f)
    f = click.option("--results-dir", type=click.Path(path_type=Path), default=RESULTS,
                     show_default=True, help="Where the plan's runs are saved and looked up.")(f)
    return click.argument("plan_file", metavar="PLAN.toml", type=click.Path(path_type=Path))(f)


@click.group("plan", context_settings={"help_option_names": ["-h", "--help"],
                                       "max_content_width": 100})
def plan():
    """Experiments as TOML files: a matrix of options, each combination a cell, its steps
    (tpcc, fio, backup, neighbours) run in order, repeated."""


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


@plan.command("show")
@_plan_args
def plan_show(plan_file: Path, results_dir: Path, overrides: tuple[str, ...]) -> None:
    """The expanded cells and steps; nothing runs."""
    p = load_plan(plan_file, results_dir, overrides)
    click.echo(f"plan {p.name}: {_n(len(p.cells), 'cell')} x {_n(p.repeat, 'repeat')} = "
               f"{_n(len(p.items) * p.repeat, 'run')}"
               + (f" ({_n(len(p.steps), 'step')}: "
                  f"{', '.join(p.step_name(s) for s in p.steps)})" if len(p.steps) > 1 or
                  p.steps[0].kind != kinds.DEFAULT_STEP else ""))
    for spec, keep in p.datastores:  # what plan run will do with each (here, or on its host)
        state = datastore_state(spec) if p.hosts is None else "made on the host that offers it"
        click.echo(f"datastore {spec.name}: {spec.describe()}{', kept' if keep else ''}; "
                   f"{state}")
    for c in p.cells:
        click.echo(f"{c.index + 1:>4}  {c.name}")
        items = [i for i in p.items if i.cell.index == c.index]
        if any(not i.kind.own_servers for i in items):  # not all start servers of their own
            click.echo(f"      {_where(c)}")
        for item in items:
            click.echo(f"      step {item.step.index} {item.what}: {_what(item)}; "
                       f"runs labelled {item.label}")


def _where(c: Cell) -> str:
    if c.db.dsn:
        return f"dsn {c.db.dsn}"
    w = c.schema_name
    wal = f", WAL in {c.db.waldir}" if c.db.waldir else ""
    host = f", host memory {format_size(c.db.host_memory)}" if c.db.host_memory else ""
    label = engines.get(c.db.engine).label
    store = (f"; datastore {c.datastore.name}: {c.datastore.describe()}" if c.datastore
             else "")
    return (f"{label}, {w} in {c.db.datadir}{wal} (port {c.db.port}, db memory "
            f"{format_size(c.db.db_memory)}{host}){store}")


def _what(item: Item) -> str:
    describe = resolve(kinds.get(item.step.kind).describe)
    return describe(item) if describe is not None else str(item.spec)


@plan.command("status")
@_plan_args
def plan_status_cmd(plan_file: Path, results_dir: Path, overrides: tuple[str, ...]) -> None:
    """Done, failed and pending cells (and steps), as the results folder has them."""
    p = load_plan(plan_file, results_dir, overrides)
    _print_status(p, results_dir)


def _print_status(p: Plan, results_dir: Path) -> list:
    states = plan_status(p, results_dir)
    steps = len(p.steps) > 1 or p.steps[0].kind != kinds.DEFAULT_STEP
    for s in states:
        step = f"  step {s.item.step.index} {s.item.what}" if steps else ""
        click.echo(f"{s.state:<8} {s.name}{step}  ({len(s.done)}/{p.repeat} runs done"
                   + (f", repeats {','.join(map(str, s.failed))} failed" if s.failed else "")
                   + (f", {s.stale} of another configuration" if s.stale else "")
                   + ")")
    counts = {k: sum(1 for s in states if s.state == k) for k in ("done", "failed", "pending")}
    click.echo(f"plan {p.name}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    return states


class _PlanLines(PlanProgress):
    """Each item, its build and its runs as the commands print them."""

    def __init__(self, plan: Plan):
        self.plan = plan

    def item(self, item: Item, todo: tuple[int, ...], of: int) -> None:
        step = (f" step {item.step.index} {item.what}" if len(self.plan.steps) > 1
                else "")
        click.echo(f"plan {self.plan.name}: cell {item.cell.index + 1}/{len(self.plan.cells)} "
                   f"{item.name}{step}: repeat{'s' if len(todo) != 1 else ''} "
                   f"{','.join(map(str, todo))} of {of}", err=True)

    def building(self, cell: Cell, warehouses: int):
        from .ui import BuildLines
        return BuildLines().start(f"building {cell.schema_name} for cell {cell.name}")

    def run_progress(self, item: Item, repeat: int):
        live = resolve(kinds.get(item.step.kind).live)
        return live(item.spec) if live is not None else None

    def run_done(self, item: Item, run: dict) -> None:
        from .ui import err
        kind = kinds.find(run.get("kind"))
        done = resolve(kind.done) if kind is not None else None
        if done is not None:
            done(run)  # its tables, then where it is saved
        else:
            err.print(f"saved {run['_path']}")

    def item_failed(self, item: Item, error: str) -> None:
        click.echo(f"{item.name} step {item.step.index} ({item.what}) failed: {error}; "
                   "the plan goes on", err=True)

    def datastore(self, name: str, what: str) -> None:
        click.echo(f"plan {self.plan.name}: datastore {name}: {what}", err=True)

    def fetched(self, host: str, folder: str, names: list[str]) -> None:
        click.echo(f"plan {self.plan.name}: fetched from {host} ({folder}), where a failed "
                   f"part kept it: {', '.join(names) or 'nothing'}", err=True)


@plan.command("run")
@_plan_args
@click.option("--resume", is_flag=True, help="Run only the cells and repeats not done yet.")
@click.option("--report-dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Folder of the plan's report  [default: reports/plan-<name>].")
@click.option("--pdf", is_flag=True, help="Also print the plan's report as report.pdf.")
@metrics_options
def plan_run(plan_file: Path, results_dir: Path, overrides: tuple[str, ...], resume: bool,
             report_dir: Path | None, pdf: bool, metrics_port: int | None,
             metrics_listen: str) -> None:
    """Run every cell of the plan, then write its report (every cell side by side)."""
    p = load_plan(plan_file, results_dir, overrides)
    run_plan(p, results_dir, resume=resume, progress=_PlanLines(p),
             metrics=metrics_spec(metrics_port, metrics_listen))
    states = _print_status(p, results_dir)
    result = write_plan_report(p, results_dir, report_dir, pdf=pdf)
    if result is not None:
        click.echo(f"report {result.html}")
        if result.pdf is not None:
            click.echo(f"pdf {result.pdf}")
    failed = list(dict.fromkeys(s.name for s in states if s.state != "done"))
    if failed:
        raise OltplabError(f"plan {p.name}: {_n(len(failed), 'cell')} not done: "
                           f"{', '.join(failed)}")
