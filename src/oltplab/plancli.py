"""``oltplab plan``: show, run and follow a plan file. Only wiring and printing: the plan is
read and run by ``plans``; errors are raised and the top-level CLI turns them into one line
and an exit code."""

from __future__ import annotations

import time
from pathlib import Path

import click

from .config import format_size
from .errors import OltplabError
from .plans import Cell, Plan, PlanProgress, load_plan, plan_status, run_plan, write_plan_report

RESULTS = Path("results")


def _plan_args(f):
    f = click.option("--results-dir", type=click.Path(path_type=Path), default=RESULTS,
                     show_default=True, help="Where the plan's runs are saved and looked up.")(f)
    return click.argument("plan_file", metavar="PLAN.toml", type=click.Path(path_type=Path))(f)


@click.group("plan", context_settings={"help_option_names": ["-h", "--help"],
                                       "max_content_width": 100})
def plan():
    """Experiments as TOML files: a matrix of options, each combination a cell, repeated."""


@plan.command("show")
@_plan_args
def plan_show(plan_file: Path, results_dir: Path) -> None:
    """The expanded cells; nothing runs."""
    p = load_plan(plan_file, results_dir)
    click.echo(f"plan {p.name}: {len(p.cells)} cell{'s' if len(p.cells) != 1 else ''} x "
               f"{p.repeat} repeat{'s' if p.repeat != 1 else ''} = {len(p.cells) * p.repeat} runs")
    for c in p.cells:
        click.echo(f"{c.index + 1:>4}  {c.name}")
        users = f"auto:{c.run.users_auto}" if c.run.users_auto else ",".join(map(str, c.run.users))
        click.echo(f"      {_where(c)}; users {users}, "
                   f"rampup {c.run.rampup:g} s, duration {c.run.duration:g} s, "
                   f"mode {c.run.mode}; runs labelled {c.label}")


def _where(c: Cell) -> str:
    if c.db.dsn:
        return f"dsn {c.db.dsn}"
    w = f"{c.warehouses} warehouses" if c.warehouses else "the schema there"
    wal = f", WAL in {c.db.waldir}" if c.db.waldir else ""
    return f"{w} in {c.db.datadir}{wal} (port {c.db.port}, db memory {format_size(c.db.db_memory)})"


@plan.command("status")
@_plan_args
def plan_status_cmd(plan_file: Path, results_dir: Path) -> None:
    """Done, failed and pending cells, as the results folder has them."""
    p = load_plan(plan_file, results_dir)
    _print_status(p, results_dir)


def _print_status(p: Plan, results_dir: Path) -> list:
    states = plan_status(p, results_dir)
    for s in states:
        click.echo(f"{s.state:<8} {s.cell.name}  ({len(s.done)}/{p.repeat} runs done"
                   + (f", repeats {','.join(map(str, s.failed))} failed" if s.failed else "")
                   + ")")
    counts = {k: sum(1 for s in states if s.state == k) for k in ("done", "failed", "pending")}
    click.echo(f"plan {p.name}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    return states


class _PlanLines(PlanProgress):
    """Each cell, its build and its runs as ``tpcc run`` prints them."""

    def __init__(self, plan: Plan):
        self.plan = plan

    def cell(self, cell: Cell, todo: tuple[int, ...], of: int) -> None:
        click.echo(f"plan {self.plan.name}: cell {cell.index + 1}/{len(self.plan.cells)} "
                   f"{cell.name}: repeat{'s' if len(todo) != 1 else ''} "
                   f"{','.join(map(str, todo))} of {of}", err=True)

    def building(self, cell: Cell, warehouses: int):
        from .ui import LiveLine
        line = LiveLine(every=5)
        t0 = time.monotonic()
        click.echo(f"building {warehouses} warehouses for cell {cell.name}", err=True)

        def on_build(event: str, done: int, total: int) -> None:
            pct = 100.0 * done / total if total else 0.0
            line.show(f"build: {event} {done:,}/{total:,} ({pct:.0f}%)  "
                      f"elapsed {time.monotonic() - t0:.0f} s")
            if total and done >= total:
                line.done()
        return on_build

    def run_progress(self, cell: Cell, repeat: int):
        from .cli import TpccLines
        return TpccLines(len(cell.run.users), bool(cell.run.users_auto))

    def run_done(self, cell: Cell, run: dict) -> None:
        from .cli import print_run
        print_run(run)

    def cell_failed(self, cell: Cell, error: str) -> None:
        click.echo(f"cell {cell.name} failed: {error}; the plan goes on", err=True)


@plan.command("run")
@_plan_args
@click.option("--resume", is_flag=True, help="Run only the cells and repeats not done yet.")
@click.option("--report-dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Folder of the plan's report  [default: reports/plan-<name>].")
def plan_run(plan_file: Path, results_dir: Path, resume: bool, report_dir: Path | None) -> None:
    """Run every cell of the plan, then write its report (every cell side by side)."""
    p = load_plan(plan_file, results_dir)
    run_plan(p, results_dir, resume=resume, progress=_PlanLines(p))
    states = _print_status(p, results_dir)
    result = write_plan_report(p, results_dir, report_dir)
    if result is not None:
        click.echo(f"report {result.html}")
    failed = [s.cell.name for s in states if s.state != "done"]
    if failed:
        raise OltplabError(f"plan {p.name}: {len(failed)} cell{'s' if len(failed) != 1 else ''}"
                           f" not done: {', '.join(failed)}")
