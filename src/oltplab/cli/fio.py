"""``oltplab fio``: storage profiles with fio, saved as runs like ``tpcc run``.

The options come from one table (``spec.OPTIONS``); this module only wires them to click, shows
progress on stderr and the results table on stdout. Errors are raised; the top-level CLI turns
them into one line and an exit code.
"""

from __future__ import annotations

from typing import Any, Callable

import click

from ..fio.profiles import GROUPS, PROFILES
from ..fio.spec import OPTIONS, FioSpec, spec_from_options
from ..runs.lifecycle import FioProgress, raise_for_status, run_fio_recorded, run_group
from .options import print_repeats, repeat_option, telemetry_options


def table_options(f: Callable) -> Callable:
    """One click option per row of the option table."""
    for o in reversed(OPTIONS):
        kw: dict[str, Any] = {"help": o.help, "default": None}
        if o.is_flag:
            kw.update(is_flag=True, default=False)
        else:
            kw["metavar"] = o.metavar
        if o.multiple:
            kw["multiple"] = True
        if o.flag_value is not None:
            kw.update(is_flag=False, flag_value=o.flag_value)
        if o.default not in (None, False):
            shown = o.default if not o.multiple else ",".join(o.default)
            kw["help"] = f"{o.help}  [default: {shown}]"
        f = click.option(o.flag, o.name, **kw)(f)
    return f


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def fio():
    """Storage profiles with fio: IOPS, MB/s and pooled latency percentiles."""


@fio.command("profiles")
def fio_profiles():
    """List the named profiles and groups."""
    from rich.table import Table

    from .ui import out
    t = Table(title="profiles", title_justify="left")
    for col in ("name", "bs", "rw", "reads %", "description"):
        t.add_column(col, justify="right" if col == "reads %" else "left")
    for p in PROFILES.values():
        t.add_row(p.name, p.bs, p.rw, str(p.rwmixread), p.description)
    out.print(t)
    for name, members in GROUPS.items():
        click.echo(f"{name}: {', '.join(members)}")


@fio.command("run")
@table_options
@repeat_option
@telemetry_options
def fio_run(repeat, sample_interval, power, io_latency, **raw):
    """Run storage profiles with fio and save them as a run.

    Each profile runs with direct IO; fio's json+ output gives IOPS, MB/s and completion-latency
    percentiles pooled over all jobs, and its per-second IOPS log the series.
    """
    spec = spec_from_options(raw)
    runs = run_group(repeat, spec.name,
                     lambda labels, _metrics: run_fio_printed(spec, sample_interval, power,
                                                              labels, io_latency))
    print_repeats(runs)
    raise_for_status(runs[-1])


class _FioLines(FioProgress):
    """The run folder, the live line and one line per profile, on stderr."""

    def __init__(self):
        from .ui import LiveLine
        self.line = LiveLine(every=10)
        self.total = 0

    def started(self, run_dir, jobs: list[str]) -> None:
        self.total = len(jobs)
        click.echo(f"run {run_dir}", err=True)

    def tick(self, p) -> None:
        what = "precondition" if p.step < 0 else f"{p.step + 1}/{self.total} {p.name}"
        pct = f"{p.percent:5.1f}%" if p.percent is not None else "     -"
        rates = ""
        if p.read_iops is not None or p.write_iops is not None:
            rates = f"  r {p.read_iops or 0:>9,.0f}  w {p.write_iops or 0:>9,.0f} IOPS"
        eta = f"  eta {p.eta_s} s" if p.eta_s is not None else ""
        self.line.show(f"fio {what}  {p.elapsed_s:5.0f} s  {pct}{rates}{eta}")

    def precondition(self, rec: dict) -> None:
        self.line.done(f"precondition: wrote {rec['bytes'] / 1024**2:,.0f} MiB in "
                       f"{rec['seconds']:.1f} s ({rec['mbps']:,.1f} MB/s)")

    def step(self, step: dict) -> None:
        self.line.done(_step_line(step))

    def finished(self) -> None:
        self.line.done()


def run_fio_printed(spec: FioSpec, sample_interval: float = 1.0, power: str = "auto",
                    labels: dict | None = None, io_latency: str = "auto") -> dict:
    """One recorded fio run with its progress on stderr, then its table and folder."""
    from .ui import out
    progress = _FioLines()
    run = run_fio_recorded(spec, sample_interval, power, progress, labels, io_latency)
    out.print(steps_table(run))
    click.echo(f"saved {run['_path']}", err=True)
    return run


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}" if x < 1 else f"{x:.2f}"


def _step_line(s: dict) -> str:
    r, w = s["read"], s["write"]
    lat = "  ".join(f"{d} p99 {_ms(x['lat_ms']['p99'])} ms" for d, x in (("r", r), ("w", w))
                    if x["ios"])
    ss = s.get("steady_state")
    steady = "" if not ss else ("  steady" if ss["attained"] else "  not steady")
    part = " (interrupted)" if s.get("partial") else ""
    return (f"{s['profile']}{part}: {s['total_iops']:,.0f} IOPS "
            f"(r {r['iops']:,.0f} w {w['iops']:,.0f})  {s['total_mbps']:,.1f} MB/s  {lat}{steady}")


def steps_table(run: dict):
    """One row per profile: IOPS, MB/s and pooled p99 and p99.9 latencies (ms)."""
    from rich import box
    from rich.table import Table
    t = Table(title=f"{run.get('id', '')}  [{run.get('status')}]", title_justify="left",
              box=box.SIMPLE_HEAD)
    for col in ("profile", "IOPS", "MB/s", "r p99", "r p99.9", "w p99", "w p99.9", "ss"):
        t.add_column(col, justify="left" if col == "profile" else "right", no_wrap=True)
    for s in run.get("steps", []):
        r, w = s["read"]["lat_ms"], s["write"]["lat_ms"]
        ss = s.get("steady_state")
        t.add_row(s["profile"] + ("*" if s.get("partial") else ""), f"{s['total_iops']:,.0f}",
                  f"{s['total_mbps']:,.1f}", _ms(r["p99"]), _ms(r["p99_9"]), _ms(w["p99"]),
                  _ms(w["p99_9"]), "-" if not ss else ("yes" if ss["attained"] else "no"))
    t.caption = "latencies in ms, pooled over all jobs; ss: steady state attained" + (
        "; * interrupted" if any(s.get("partial") for s in run.get("steps", [])) else "")
    return t


def show_run(data: dict) -> None:
    """``results show`` of a fio run: its profiles' table."""
    from .ui import out
    out.print(steps_table(data))


def plan_lines(spec) -> _FioLines:
    """The live lines of a plan's fio step."""
    return _FioLines()


def print_done(run: dict) -> None:
    """A run a plan has just finished: as ``results show`` prints it, then where it is saved."""
    from .ui import err
    show_run(run)
    err.print(f"saved {run['_path']}")


def describe_step(item) -> str:
    """A plan's fio step in one line (``plan show``)."""
    from ..config import format_size
    s = item.spec
    return (f"{', '.join(st.name for st in s.steps)} in {s.target} ({item.name}), "
            f"{format_size(s.size)}, {s.duration:g} s each")
