"""``oltplab tpcc`` (build, run, check) and ``oltplab quickstart``."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import click

from ..config import BuildSpec, DbSpec, RunSpec, loadgen_spec, metrics_spec
from ..errors import OltplabError, UsageError
from ..options import BUILD, LOADGEN, QUICKSTART, RUN
from ..runs.lifecycle import (WorkloadProgress, check_record, raise_for_status, run_group,
                              run_workload_recorded)
from .db import db_options, make_db_spec
from .options import (check_repeats, metrics_options, print_repeats, repeat_option,
                      table_options, telemetry_options)


@click.group()
def tpcc():
    """The TPC-C-derived workload: build, run, check."""


@tpcc.command("build")
@db_options
@table_options(BUILD)
def tpcc_build(warehouses, build_users, force, seed, **kw):
    """Create and load the schema, keys, indexes and transaction functions."""
    spec = make_db_spec(kw)
    bspec = BuildSpec(warehouses=warehouses,
                      build_users=build_users or max(1, os.cpu_count() or 1),
                      force=force, seed=seed)
    from .. import engines
    engine = engines.get(spec.engine)
    with engine.database(spec, need_connections=bspec.build_users + 10) as target:
        summary = build_shown(engine, target.dsn, bspec)
        seconds = summary.get("seconds", 0)
        click.echo(f"built {summary.get('warehouses', warehouses)} warehouses in "
                   f"{seconds:.1f} s ({60 * warehouses / max(seconds, 1e-9):.1f} "
                   "warehouses/min)")
        echo_dedupe(spec)


def echo_dedupe(spec) -> None:
    """After a build on a managed server whose datastore was made with --dedupe: what
    duperemove did."""
    if spec.dsn is None:
        from ..datastores.service import after_build
        entry = after_build(spec.datadir)
        if entry is not None:
            click.echo(dedupe_line(entry))


def dedupe_line(entry: dict) -> str:
    mib = 1024**2

    def size(n):  # None where btrfs-progs cannot count RAID-5/6 chunks (datastores/space.py)
        return "n/a" if n is None else f"{n / mib:,.1f}"
    return (f"dedupe: duperemove took {entry['seconds']:.1f} s; allocated "
            f"{size(entry['allocated_before_bytes'])} -> "
            f"{size(entry['allocated_after_bytes'])} MiB, "
            f"{(entry['dedupe_saved_bytes'] or 0) / mib:,.1f} MiB shared"
            + (f" (duperemove: {entry['duperemove_shared_bytes'] / mib:,.1f} MiB newly shared)"
               if entry.get("duperemove_shared_bytes") is not None else ""))


def build_shown(engine, dsn: str, bspec, workload: str | None = None) -> dict:
    """The workload's build (TPC-C's for None) with its progress line."""
    from .ui import BuildLines
    lines = BuildLines()
    try:
        return engine.dialect_for(workload).build(dsn, bspec, progress=lines.start())
    finally:
        lines.close()


@tpcc.command("run")
@db_options
@table_options(RUN)
@repeat_option
@telemetry_options
@metrics_options
@table_options(LOADGEN)
def tpcc_run(users, rampup, duration, mode, keying_thinking, all_warehouses, warehouses,
             workers, seed, name, check, cold, inject, results_dir, repeat, sample_interval,
             power, io_latency, metrics_port, metrics_listen, loadgen, cluster_dir, **kw):
    """Drive virtual users through a user sequence and record TPM, NOPM and latencies."""
    spec = make_db_spec(kw)
    metrics = metrics_spec(metrics_port, metrics_listen)
    check_sequence(users, repeat, inject)
    rspec = RunSpec(**users, rampup=rampup, duration=duration, mode=mode,
                    keying_thinking=keying_thinking, all_warehouses=all_warehouses,
                    warehouses=warehouses, workers=workers, seed=seed, name=name, check=check,
                    results_dir=results_dir, sample_interval=sample_interval, power=power,
                    io_latency=io_latency, cold=cold, inject=inject)
    drive_runs(spec, rspec, run_tpcc_printed, repeat, metrics, loadgen, cluster_dir)


def check_sequence(users: dict, repeat: int, inject: tuple) -> None:
    """A run command's user sequence against its --repeat and --inject, before anything."""
    if users["users_auto"] is not None and repeat > 1:
        raise UsageError("--users auto searches for the best user count in one run; --repeat "
                         "does not go with it (repeat the user count it finds)")
    check_repeats(repeat, inject)


def drive_runs(spec, rspec: RunSpec, run_printed, repeat: int, metrics, loadgen,
               cluster_dir) -> None:
    """A workload's run command after its options are read: the load generator's hosts, the
    faults' and --cold's checks, ``repeat`` runs of ``run_printed(spec, rspec, labels,
    metrics=, loadgen=)`` as one group, the group's summary, and the exit status of the last."""
    hosts = checked_loadgen(loadgen, cluster_dir, rspec)
    if rspec.inject:
        from ..faults.inject import preflight
        preflight(spec, rspec)
    if rspec.cold:
        from ..host.memory import check_drop_caches
        check_drop_caches()
    runs = run_group(repeat, rspec.name, functools.partial(run_printed, spec, rspec,
                                                           loadgen=hosts), metrics=metrics)
    print_repeats(runs)
    raise_for_status(runs[-1])


class TpccLines(WorkloadProgress):
    """The run folder, the live line and one line per step, on stderr."""

    def __init__(self, steps: int, auto: bool = False):
        from .ui import LiveLine
        self.steps = f"up to {steps}" if auto else str(steps)  # --users auto may stop sooner
        self.line = LiveLine(every=10)

    def started(self, run_dir: Path) -> None:
        from .ui import err
        err.print(f"run {run_dir}")

    def tick(self, t) -> None:
        self.line.show(f"step {t.step + 1} of {self.steps}  users {t.users}  {t.phase:<10} "
                       f"{t.elapsed_s:6.0f} s  client TPM {t.tpm:>9,.0f}  "
                       f"client NOPM {t.headline:>9,.0f}")

    def step(self, step: dict) -> None:
        from .ui import fmt_int
        self.line.done(f"step users={step['users']}: TPM (instance) {fmt_int(step['tpm'])}  "
                       f"TPM (workload) {fmt_int(step.get('workload_tpm'))}  "
                       f"NOPM {fmt_int(step['nopm'])}"
                       f"{'  (partial)' if step.get('partial') else ''}")
        self.hosts(step)

    def hosts(self, step: dict) -> None:
        """A line per host of a --loadgen step: its share, its count, its clock."""
        from .ui import fmt_int
        for h in step.get("loadgen") or ():
            offset = h.get("clock_offset_ms")
            clock = ("" if offset is None else
                     f"  clock {offset:+.3f} ms (round trip {h['round_trip_ms']:.3f} ms)")
            self.line.done(f"  {h['host']}: {h['users']} users, {h['workers']} workers, "
                           f"{fmt_int(h['completed'])} transactions{clock}"
                           + (f"  FAILED: {h['error']}" if h.get("error") else ""))

    def finished(self) -> None:
        self.line.done()


def checked_loadgen(hosts, cluster_dir, rspec: RunSpec):
    """--loadgen's spec (None without it); what it does not go with is refused in one line."""
    return loadgen_spec(hosts, cluster_dir)


def run_tpcc_printed(spec: DbSpec, rspec: RunSpec, labels: dict | None = None,
                     metrics=None, loadgen=None) -> dict:
    """One recorded run with its progress on stderr, then its table and folder."""
    run = run_workload_recorded(spec, rspec, TpccLines(len(rspec.users), bool(rspec.users_auto)),
                                labels, metrics=metrics, loadgen=loadgen)
    print_run(run)
    return run


def print_run(run: dict) -> None:
    """A finished run's tables and warnings, then where it is saved."""
    from .ui import err
    _print_steps(run)
    err.print(f"saved {run['_path']}")


def _print_steps(run: dict) -> None:
    """The step table, the input shares, the best user count of --users auto, then the
    warnings (which never change the exit code), the injected faults and the check."""
    from .ui import inputs_table, out, outcome_lines, steps_table
    out.print(steps_table(run))
    if run.get("steps"):
        out.print(inputs_table(run))
    if isinstance(run.get("users_auto"), dict):
        from ..loadgen.sequence import describe
        click.echo(describe(run["users_auto"]))
    for line in outcome_lines(run):
        click.echo(line)


@tpcc.command("check")
@db_options
@click.option("--after-run/--after-load", default=None,
              help="Skip CC11 (it holds only until the first Delivery) "
                   "[default: decided from the data].")
def tpcc_check(after_run, **kw):
    """Consistency conditions CC1-CC12 in one snapshot; exit 0 when all hold."""
    spec = make_db_spec(kw)
    from .. import engines
    engine = engines.get(spec.engine)
    with engine.database(spec) as target:
        engine.schema_info(target.dsn)
        if after_run is None:
            after_run = engine.dialect.has_run(target.dsn)
        rec = check_record(target.dsn, after_run=after_run, engine=engine.name)
    print_conditions(rec)


def workload_check(kw: dict, workload: str) -> None:
    """``<workload> check`` (the shop's, the brokerage's): its conditions in one snapshot, a
    line each; OltplabError naming those that failed."""
    spec = make_db_spec(kw)
    from .. import engines
    engine = engines.get(spec.engine)
    with engine.database(spec) as target:
        engine.schema_info(target.dsn, workload)
        rec = check_record(target.dsn, after_run=True, engine=engine.name, workload=workload)
    print_conditions(rec)


def print_conditions(rec: dict) -> None:
    """A check record's conditions, a line each; OltplabError naming those that failed."""
    for c in rec["conditions"]:
        mark = "ok  " if c["ok"] else "FAIL"
        click.echo(f"{mark} {c['name']:<5} {c['clause']:<10} {c['description']}"
                   + ("" if c["ok"]
                      else f"  ({c['violations']} violations, e.g. {c['sample'][:2]})"))
    if not rec["ok"]:
        failed = ", ".join(c["name"] for c in rec["conditions"] if not c["ok"])
        raise OltplabError(f"consistency checks failed: {failed}")


@click.command()
@db_options
@table_options(QUICKSTART)
@telemetry_options
def quickstart(warehouses, users, rampup, duration, results_dir, sample_interval, power,
               io_latency, **kw):
    """Build a small schema on the managed server, run a short user sequence, save it."""
    spec = make_db_spec(kw)
    from .. import engines
    from ..runs.schema import ensure_schema
    engine = engines.get(spec.engine)
    engine.driver  # noqa: B018 - an engine without a driver fails here, before the build
    rspec = RunSpec(users=users, rampup=rampup, duration=duration,
                    name="quickstart", check=True, results_dir=results_dir,
                    sample_interval=sample_interval, power=power, io_latency=io_latency)
    with engine.database(spec, need_connections=max(rspec.users) + 20) as target:
        t0 = time.monotonic()
        from .ui import BuildLines
        built = BuildLines()
        try:
            done = ensure_schema(spec.engine, target.dsn, warehouses, on_build=lambda: built.start(
                f"building {warehouses} warehouses in {spec.datadir} ..."))
        finally:
            built.close()
        if done == "built":
            click.echo(f"built in {time.monotonic() - t0:.1f} s", err=True)
        else:
            click.echo(f"reusing the {warehouses}-warehouse schema in {spec.datadir}", err=True)
        restarted = getattr(target.instance, "restarted", None)
        run = run_tpcc_printed(spec, rspec, {"restarted": restarted} if restarted else None)
    raise_for_status(run)


def show_run(data: dict) -> None:
    """``results show`` of a tpcc run: its steps, then the database, constants and checks."""
    _print_steps(data)
    db = data.get("database", {})
    click.echo(f"database: {db.get('version', '?')}; warehouses {db.get('warehouses', '?')}")
    if data.get("constants"):
        click.echo("C constants: " + ", ".join(f"{k}={v}" for k, v in data["constants"].items()))
    if data.get("error"):
        click.echo(f"error: {data['error']}")


def plan_lines(spec: RunSpec) -> TpccLines:
    """The live lines of a plan's workload step (the shop's when its cell runs dvds)."""
    if spec.workload != "tpcc":
        from .. import kinds
        from ..runs.kind import resolve
        return resolve(kinds.get(spec.workload).live)(spec)
    return TpccLines(len(spec.users), bool(spec.users_auto))


def describe_step(item) -> str:
    """A plan's tpcc step in one line (``plan show``)."""
    s = item.spec
    users = f"auto:{s.users_auto}" if s.users_auto else ",".join(map(str, s.users))
    return f"users {users}, rampup {s.rampup:g} s, duration {s.duration:g} s, mode {s.mode}"
