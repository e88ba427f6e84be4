"""``oltplab fio``: storage profiles with fio, saved as runs like ``tpcc run``.

The options come from one table (``spec.OPTIONS``); this module only wires them to click, shows
progress on stderr and the results table on stdout. Errors are raised; the top-level CLI turns
them into one line and an exit code.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Callable

import click

from .. import __version__
from ..cliopts import make_sampler, save_timeline, telemetry_options
from ..errors import Interrupted, OltplabError
from .profiles import GROUPS, PROFILES
from .spec import OPTIONS, FioSpec, spec_from_options


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
    from ..ui import out
    from rich.table import Table
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
@telemetry_options
def fio_run(sample_interval, power, **raw):
    """Run storage profiles with fio and save them as a run.

    Each profile runs with direct IO; fio's json+ output gives IOPS, MB/s and completion-latency
    percentiles pooled over all jobs, and its per-second IOPS log the series.
    """
    spec = spec_from_options(raw)
    run = run_fio_recorded(spec, sample_interval, power)
    status = run.get("status")
    if status == "interrupted":
        raise Interrupted(run.get("error") or "interrupted")
    if status != "completed":
        raise OltplabError(f"run {status}: {run.get('error')}")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)[:64] or "step"


def run_fio_recorded(spec: FioSpec, sample_interval: float = 1.0, power: str = "auto") -> dict:
    """Check everything, then run the plan and keep the record (and fio's raw json+) on disk."""
    from ..results.store import RunRecord, atomic_write
    from ..telemetry.host import host_metadata
    from ..ui import LiveLine, out
    from .plan import plan_jobs, run_plan
    from .runner import find_fio
    from .target import prepared

    fio_bin = find_fio()
    with prepared(spec.target, spec.size) as target:
        jobs = plan_jobs(spec, target, fio_bin)
        sampler = make_sampler(sample_interval, {"target": spec.target}, power)
        record = RunRecord.create(
            spec.results_dir, "fio", spec.name,
            oltplab_version=__version__,
            command=sys.argv,
            config={"fio": spec.as_dict()},
            host=host_metadata({"target": spec.target}),
            target=target.as_dict(),
            fio={"path": fio_bin.path, "version": fio_bin.version},
            plan=[j.name for j in jobs],
        )
        click.echo(f"run {record.path}", err=True)
        line = LiveLine(every=10)
        total = len(jobs)

        def on_progress(p) -> None:
            what = "precondition" if p.step < 0 else f"{p.step + 1}/{total} {p.name}"
            pct = f"{p.percent:5.1f}%" if p.percent is not None else "     -"
            rates = ""
            if p.read_iops is not None or p.write_iops is not None:
                rates = f"  r {p.read_iops or 0:>9,.0f}  w {p.write_iops or 0:>9,.0f} IOPS"
            eta = f"  eta {p.eta_s} s" if p.eta_s is not None else ""
            line.show(f"fio {what}  {p.elapsed_s:5.0f} s  {pct}{rates}{eta}")

        def on_precondition(rec: dict) -> None:
            line.done(f"precondition: wrote {rec['bytes'] / 1024**2:,.0f} MiB in "
                      f"{rec['seconds']:.1f} s ({rec['mbps']:,.1f} MB/s)")
            record.data["precondition"] = rec
            record.save()

        def on_step(step: dict, raw_json: str) -> None:
            if sampler is not None:
                _mark_step(sampler, step, spec)
            name = f"fio/{step['index'] + 1:02d}-{_safe(step['profile'])}.json"
            atomic_write(record.path / name, raw_json)
            step["raw_file"] = name
            line.done(_step_line(step))
            record.add_step(step)

        status, error = "failed", None
        try:
            if sampler is not None:
                sampler.start()
            run_plan(spec, target, fio_bin, jobs, on_progress=on_progress,
                     on_precondition=on_precondition, on_step=on_step)
            status = "completed"
        except KeyboardInterrupt:
            status, error = "interrupted", "interrupted by the user"
        except OltplabError as e:
            status, error = "failed", str(e)
        finally:
            line.done()
            save_timeline(sampler, record)
            record.finish(status, error)
    out.print(steps_table(record.data))
    click.echo(f"saved {record.path}", err=True)
    return record.data


def _mark_step(sampler, step: dict, spec: FioSpec) -> None:
    """The step's windows on the telemetry timeline, placed when fio has finished: its measured
    runtime ends now and fio's ramp precedes it (file layout, before the ramp, is left out)."""
    import time
    end = time.monotonic_ns()
    ramp_end = end - int((step.get("runtime_s") or 0) * 1e9)
    attrs = {"step": step["index"], "profile": step.get("profile")}
    sampler.mark("step_start", ramp_end - int(spec.ramp * 1e9), **attrs)
    sampler.mark("ramp_end", ramp_end, **attrs)
    sampler.mark("measure_end", end, **attrs)


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
