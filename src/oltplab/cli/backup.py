"""``oltplab backup run``: backup and restore cycles."""

from __future__ import annotations

import click

from ..errors import OltplabError
from ..options import BACKUP
from ..runs.lifecycle import raise_for_status
from .db import db_options, make_db_spec
from .options import table_options, telemetry_options


@click.group()
def backup():
    """Backup and restore cycles, each restore checked."""


@backup.command("run")
@db_options
@table_options(BACKUP)
@telemetry_options
def backup_run(cycles, method, to, interval, compress, max_rate, no_restore, jobs, name,
               results_dir, sample_interval, power, io_latency, **kw):
    """Back up, restore into a scratch copy, start it and check it; per cycle, timed."""
    from ..scenarios.backup import BackupSpec, run_backup
    from .ui import LiveLine, err
    spec = make_db_spec(kw)
    if spec.engine != "postgres":
        from .. import engines
        engines.get(spec.engine).backup  # noqa: B018 - one line when the engine has none
    bspec = BackupSpec(cycles=cycles, method=method, to=to, interval=interval, compress=compress,
                       max_rate=max_rate, restore=not no_restore, jobs=jobs, name=name,
                       results_dir=results_dir, sample_interval=sample_interval, power=power,
                       io_latency=io_latency)
    line = LiveLine(every=5)

    def progress(cycle: int, phase: str, nbytes: int, seconds: float) -> None:
        rate = nbytes / 1e6 / seconds if seconds > 0 else 0.0
        line.show(f"cycle {cycle}/{cycles}  {phase:<8} {nbytes / 1e6:10,.1f} MB  "
                  f"{rate:8,.1f} MB/s  {seconds:6.0f} s")

    def on_cycle(c: dict) -> None:
        b, r = c["backup"], c.get("restore")
        line.done(f"cycle {c['cycle']}: backup {b['bytes'] / 1e6:,.1f} MB in {b['seconds']:.1f} s "
                  f"({b['mb_per_s'] or 0:,.1f} MB/s)" + (
                      f"; restore {r['seconds']:.1f} s ({r['mb_per_s'] or 0:,.1f} MB/s), "
                      f"check {'ok' if r['check_ok'] else 'FAILED ' + ','.join(r['check_failed'])}"
                      if r else ""))
    try:
        run = run_backup(spec, bspec, progress=progress, on_cycle=on_cycle)
    finally:
        line.done()
    from .ui import cycles_table, out
    out.print(cycles_table(run))
    restarted = run.get("database", {}).get("restarted")
    if restarted:
        from ..engines.base import restart_note
        err.print(f"warning: {restart_note(spec.datadir, restarted)}")
    err.print(f"saved {run['_path']}")
    failed = [c["cycle"] for c in run["cycles"]
              if c.get("restore") and not c["restore"]["check_ok"]]
    raise_for_status(run)
    if failed:
        raise OltplabError(f"the restored copy failed the consistency checks in cycle(s) "
                           f"{', '.join(map(str, failed))}")


def show_run(data: dict) -> None:
    """``results show`` of a backup run: its cycles."""
    from .ui import cycles_table, out
    out.print(cycles_table(data))


def plan_lines(spec):
    """A plan's backup step's live line and a line per cycle: ``run_backup``'s progress and
    per-cycle callbacks."""
    from .ui import LiveLine
    line = LiveLine(every=5)
    cycles = spec.cycles

    def progress(cycle: int, phase: str, nbytes: int, seconds: float) -> None:
        line.show(f"cycle {cycle}/{cycles}  {phase:<8} {nbytes / 1e6:10,.1f} MB  "
                  f"{seconds:6.0f} s")

    def on_cycle(c: dict) -> None:
        r = c.get("restore")
        line.done(f"cycle {c['cycle']}: backup {c['backup']['seconds']:.1f} s"
                  + (f", restore {r['seconds']:.1f} s, check "
                     f"{'ok' if r['check_ok'] else 'FAILED'}" if r else ""))
    return progress, on_cycle


def print_done(run: dict) -> None:
    """A run a plan has just finished: as ``results show`` prints it, then where it is saved."""
    from .ui import err
    show_run(run)
    err.print(f"saved {run['_path']}")


def describe_step(item) -> str:
    """A plan's backup step in one line (``plan show``)."""
    s = item.spec
    cycles = f"{s.cycles} cycle{'' if s.cycles == 1 else 's'}"
    return f"{cycles} of {s.method}" + ("" if s.restore else ", no restore")
