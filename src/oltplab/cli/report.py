"""``oltplab report``: an HTML report with PNG charts of one run, or a comparison of several.

Errors are raised; the top-level CLI turns them into one line and an exit code.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..errors import UsageError

SHOW_PROGRESS_AFTER_S = 1.0


@click.command("report", context_settings={"help_option_names": ["-h", "--help"],
                                           "max_content_width": 100})
@click.argument("runs", nargs=-1, required=True, metavar="RUN [RUN ...]")
@click.option("--out", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Folder for report.html and the PNG charts  [default: reports/<run id>, "
                   "or reports/compare-<labels>-<hash> for several runs].")
@click.option("--results-dir", type=click.Path(path_type=Path), default=Path("results"),
              show_default=True, help="Where runs are looked up by id, prefix or label.")
@click.option("--pdf", is_flag=True,
              help="Also print the report as report.pdf (headless Chromium).")
def report(runs: tuple[str, ...], out: Path | None, results_dir: Path, pdf: bool) -> None:
    """Write a self-contained HTML report of RUN (interactive charts, the run's tables,
    configuration, host and database) and each chart as a PNG file.

    Several runs give a comparison: side by side, with ratios against the first and, where
    runs were repeated (same label and workload configuration), whether each difference is
    larger than run-to-run noise. RUN is a run folder, an id, a unique id prefix, a label
    (its latest run) or 'latest'.
    """
    from ..report.build import write_report
    from ..results.store import load_run
    from .ui import LiveLine

    records, seen = [], set()
    for ref in runs:
        record = load_run(results_dir, ref)
        key = record.get("_path") or record.get("id")
        if key in seen:
            raise UsageError(f"run {record.get('id')} is given twice ({ref!r})")
        seen.add(key)
        records.append(record)

    line = LiveLine(every=5)
    t0 = time.monotonic()

    def progress(done: int, total: int, what: str) -> None:
        if time.monotonic() - t0 >= SHOW_PROGRESS_AFTER_S and done < total:
            line.show(f"report: {done}/{total} {what}")

    try:
        result = write_report(records, out, progress=progress, pdf=pdf)
    finally:
        line.done()
    drawn = len(result.pngs)
    click.echo(f"report {result.html}")
    click.echo(f"  {drawn} chart{'s' if drawn != 1 else ''} as PNG in {result.out_dir}"
               + (f"; {len(result.missing)} without data (a note in the report says why)"
                  if result.missing else ""))
    if result.pages:
        click.echo(f"  {len(result.pages)} run pages in {result.out_dir / 'runs'}")
    if result.pdf is not None:
        click.echo(f"pdf {result.pdf}")
