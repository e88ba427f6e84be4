"""``oltplab neighbours run``: several managed servers on one datastore, some running the
workload while others back up. Only parsing, calling and printing: the run is
``scenarios.neighbours``; errors are raised and the top-level CLI turns them into one line and
an exit code."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import metrics_spec
from ..options import NEIGHBOURS, NEIGHBOURS_HOSTS
from ..runs.lifecycle import raise_for_status
from ..scenarios.neighbours import NeighboursProgress, NeighboursSpec, run_neighbours
from ..report.units import headline_unit as headline_of
from ..workloads import of_record
from .options import metrics_options, table_options, telemetry_options


@click.group("neighbours", context_settings={"help_option_names": ["-h", "--help"],
                                             "max_content_width": 100})
def neighbours():
    """Noisy neighbours: several managed servers on one datastore."""


@neighbours.command("run")
@table_options(NEIGHBOURS)
@telemetry_options
@metrics_options
@table_options(NEIGHBOURS_HOSTS)
def neighbours_run(metrics_port, metrics_listen, hosts, cluster_dir, **kw):
    """Run the workload on N - K instances while K back up every interval, all at once;
    record each instance, the average TPM and NOPM (the shop's OPM, the brokerage's trps) per
    workload instance and
    the host's devices over time in one run. With --hosts, the instances are dealt over the
    cluster's hosts."""
    spec = NeighboursSpec(**kw)
    lines = NeighboursLines(spec)
    metrics = metrics_spec(metrics_port, metrics_listen)
    try:
        if hosts:
            from ..scenarios.neighbours_hosts import run_neighbours_on_hosts
            run = run_neighbours_on_hosts(spec, hosts, cluster_dir, lines, metrics=metrics)
        else:
            run = run_neighbours(spec, lines, metrics=metrics)
    finally:
        lines.line.done()
    print_neighbours(run)
    from .ui import err
    err.print(f"saved {run['_path']}")
    raise_for_status(run)


class NeighboursLines(NeighboursProgress):
    """Preparation steps, then one live line, then a line per instance, on stderr."""

    def __init__(self, spec: NeighboursSpec):
        from .ui import LiveLine
        self.spec = spec
        self.line = LiveLine(every=10)

    def preparing(self, what: str) -> None:
        from .ui import err
        err.print(what)

    def started(self, run_dir: Path) -> None:
        from .ui import err
        err.print(f"run {run_dir}")

    def tick(self, elapsed_s, tpm, headline, measuring, workloads, cycles) -> None:
        backups = f"  backup cycles {cycles}" if self.spec.backup else ""
        key, unit = headline_of(self.spec.workload)
        rate = f"{headline / 60:>9,.2f}" if key == "trps" else f"{headline:>9,.0f}"
        self.line.show(f"{elapsed_s:6.0f} s  {measuring}/{workloads} measuring  "
                       f"client TPM {tpm:>9,.0f}  client {unit} {rate}{backups}")

    def instance(self, entry: dict) -> None:
        self.line.done(f"{entry['name']} ({entry['role']}) {entry['status']}: "
                       + _figures(entry, *headline_of(self.spec.workload)))

    def finished(self) -> None:
        self.line.done()


def _figures(e: dict, key: str = "nopm", name: str = "NOPM") -> str:
    from .ui import fmt_int
    if e.get("role") == "backup":
        cycles = e.get("cycles") or []
        secs = [c["backup"]["seconds"] for c in cycles if c.get("backup")]
        text = f"{len(cycles)} backup{'s' if len(cycles) != 1 else ''}"
        if secs:
            text += f", {sum(secs) / len(secs):.1f} s each on average"
    else:
        text = f"TPM {fmt_int(e.get('tpm'))}  {name} {_rate(e.get(key), key)}"
    return text + (f" ({e['error']})" if e.get("error") else "")


def print_neighbours(run: dict) -> None:
    """A line per instance, then the averages."""
    from .ui import fmt_int
    key, unit = headline_of(of_record(run).name)
    hosts = any(e.get("host") for e in run.get("instances") or [])
    for e in run.get("instances") or []:
        where = f"{e.get('host') or '':<8} " if hosts else ""
        click.echo(f"{e['name']:<6} {where}{e['role']:<7} {e['status']:<11} "
                   f"{_figures(e, key, unit)}")
    for p in run.get("hosts") or []:
        if p.get("error") and p.get("status") != "completed":
            click.echo(f"host {p['host']}: {p['status']}: {p['error']}")
    avg = run.get("average") or {}
    if avg.get("instances"):
        click.echo(f"average per workload instance ({avg['instances']}): "
                   f"TPM {fmt_int(avg.get('tpm'))}  {unit} {_rate(avg.get(key), key)}")


def _rate(x, key: str) -> str:
    """A headline as it is printed: trps with 2 places, the per-minute ones whole."""
    from .ui import fmt_int
    if key == "trps":
        return "-" if x is None else f"{x:,.2f}"
    return fmt_int(x)


def show_run(data: dict) -> None:
    """``results show`` of a neighbours run: its instances, then its error if any."""
    print_neighbours(data)
    if data.get("error"):
        click.echo(f"error: {data['error']}")


def plan_lines(spec) -> NeighboursLines:
    """The live lines of a plan's neighbours step."""
    return NeighboursLines(spec)


def print_done(run: dict) -> None:
    """A run a plan has just finished: its instances, then where it is saved."""
    from .ui import err
    print_neighbours(run)
    err.print(f"saved {run['_path']}")


def describe_step(item) -> str:
    """A plan's neighbours step in one line (``plan show``)."""
    s = item.spec

    def n(k: int, what: str) -> str:
        return f"{k} {what}{'' if k == 1 else 's'}"
    backups = (f", {s.backup} backing up every {s.backup_interval:g} s "
               f"(at most {n(s.backup_cycles, 'cycle')})" if s.backup else ", no backup")
    schema = s.schema_name if s.workload != "tpcc" else n(s.warehouses, 'warehouse')
    return (f"{n(s.instances, 'instance')} of {schema} in "
            f"{s.root} (ports {s.port + 1}-{s.port + s.instances}){backups}; "
            f"{n(s.users, 'user')} each, rampup {s.rampup:g} s, duration {s.duration:g} s")
