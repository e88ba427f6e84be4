"""``oltplab results``: list, show and export saved runs (the CLI's printing of records)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import kinds
from ..options import DEFAULT_RESULTS
from ..runs.kind import resolve


@click.group()
def results():
    """List and show saved runs."""


@results.command("list")
@click.option("--results-dir", type=click.Path(path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@click.option("--json", "as_json", is_flag=True)
def results_list(results_dir, as_json):
    """Every run with its headline figures."""
    from ..results.store import list_runs
    from .ui import out, runs_table
    runs = list_runs(results_dir)
    for r in runs:
        kind = kinds.find(r.get("kind"))
        r["_headline"] = kind.headline(r) if kind is not None else "-"
    if as_json:
        click.echo(json.dumps([{k: r.get(k)
                                for k in ("id", "kind", "name", "status", "started_at")}
                               for r in runs], indent=2))
    elif not runs:
        click.echo(f"no runs in {results_dir}")
    else:
        out.print(runs_table(runs))


@results.command("show")
@click.argument("run", default="latest")
@click.option("--results-dir", type=click.Path(path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@click.option("--json", "as_json", is_flag=True, help="The whole run record as JSON.")
def results_show(run, results_dir, as_json):
    """One run (RUN is a folder name, a unique prefix, a label or 'latest')."""
    from ..results.store import load_run
    data = load_run(results_dir, run)
    if as_json:
        data = {k: v for k, v in data.items() if not k.startswith("_")}
        _with_io(data.get("steps") or [])
        click.echo(json.dumps(data, indent=2, default=str))
        return
    kind = kinds.find(data.get("kind"))
    show = resolve(kind.show) if kind is not None else None
    if show is not None:
        show(data)
    else:
        from ..report.runs import prepare
        from .ui import print_tables
        print_tables(kind.tables(prepare(data)) if kind is not None else [])
        if data.get("error"):
            click.echo(f"error: {data['error']}")
    click.echo(f"folder: {data.get('_path')}")


def _with_io(steps: list) -> None:
    """Each step with telemetry gets its front end beside its back end (``io``), which runs
    recorded before it was stored get from their figures (null where they had none)."""
    from ..runs.timeline import issued
    from ..telemetry.derive import io_figures
    for step in steps:
        if isinstance(step, dict) and isinstance(step.get("telemetry"), dict):
            step.setdefault("io", io_figures(step["telemetry"], issued(step)))


@results.command("export")
@click.argument("run", default="latest")
@click.option("--csv", "as_csv", is_flag=True, required=True, help="Write every table as CSV.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for the CSV files [default: <run folder>/csv].")
@click.option("--results-dir", type=click.Path(path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
def results_export(run, as_csv, out, results_dir):
    """Every table of a run as CSV files, for spreadsheets: its report's tables (the injected
    faults as events.csv, one row per event) and the telemetry samples (timeline.csv)."""
    from ..report.export import export_csv
    from ..results.store import load_run
    data = load_run(results_dir, run)
    for path in export_csv(data, out or Path(data["_path"]) / "csv"):
        click.echo(str(path))
