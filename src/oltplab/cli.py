"""The oltplab command line. The only place that prints errors and chooses exit codes."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

import click

from . import __version__
from .cliopts import (DEFAULT_RESULTS, duration_option, print_repeats, repeat_option,
                      telemetry_options)
from .config import (BuildSpec, DbSpec, RunSpec, parse_host_memory, parse_inject,
                     parse_setting, parse_size, parse_user_option, parse_users)
from .engines import ENGINES
from .errors import Interrupted, OltplabError, UsageError
from .services import (TpccProgress, check_record, raise_for_status, run_group,
                       run_tpcc_recorded)

DEFAULT_DATA = Path("oltplab-data")  # the managed server's data directory: <this>/<engine>


# --------------------------------------------------------------------------- option helpers

def _size(ctx, param, value):
    return None if value is None else parse_size(value, f"--{param.name.replace('_', '-')}")


def db_options(f: Callable) -> Callable:
    """Where the database lives, or --dsn for an existing server (then nothing is managed)."""
    opts = [
        click.option("--engine", type=click.Choice(ENGINES), default=None,
                     help="Database engine [default: postgres, or what --dsn names]."),
        click.option("--datadir", type=click.Path(path_type=Path), default=None,
                     help=f"Data directory of the managed server: the datastore under test "
                          f"[default: {DEFAULT_DATA}/ENGINE]."),
        click.option("--waldir", type=click.Path(path_type=Path), default=None,
                     help="Put the WAL (MariaDB: the redo log) on another path."),
        click.option("--port", type=click.IntRange(1, 65535), default=None,
                     help="Port of the managed server (names PostgreSQL's unix socket; TCP with "
                          "--listen) [default: 5432, MariaDB 3306]."),
        click.option("--listen", default="", metavar="ADDRESSES",
                     help="Also accept TCP on these addresses (listen_addresses, e.g. 127.0.0.1 "
                          "or '*'); TCP clients need the password in <datadir>.pgpass."),
        click.option("--db-memory", "db_memory", default="1GiB", show_default=True, callback=_size,
                     help="shared_buffers and derived settings: the DRAM knob."),
        click.option("--host-memory", "host_memory", default="none", show_default=True,
                     metavar="SIZE|none",
                     help="Run the managed server in a memory control group with this limit, "
                          "page cache included: the host's DRAM."),
        click.option("--pg-bin", type=click.Path(path_type=Path), default=None,
                     help="PostgreSQL binaries to use instead of the embedded ones."),
        click.option("-c", "settings", multiple=True, metavar="NAME=VALUE",
                     help="A server setting override (repeatable), as postgres -c takes it."),
        click.option("--dsn", default=None, envvar="OLTPLAB_DSN",
                     help="Use this existing server instead of a managed one: postgresql://... "
                          "or mariadb://... (the engine follows the scheme)."),
        click.option("--dbname", default="tpcc", show_default=True, help="Database that holds the schema."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def make_db_spec(kw: dict[str, Any]) -> DbSpec:
    from . import engines
    engine = engines.resolve(kw.pop("engine"), kw.get("dsn"))
    if kw.get("pg_bin") is not None and engine != "postgres":
        raise UsageError(f"--pg-bin names PostgreSQL binaries; it does not go with "
                         f"--engine {engine}")
    if kw.get("dsn") and kw.get("listen"):
        raise UsageError("--listen configures a managed server; it does not go with --dsn")
    host_memory = parse_host_memory(kw.pop("host_memory"))
    if kw.get("dsn") and host_memory is not None:
        raise UsageError("--host-memory limits a managed server; it does not go with --dsn")
    datadir, port = kw.pop("datadir"), kw.pop("port")
    return DbSpec(
        engine=engine, datadir=datadir if datadir is not None else DEFAULT_DATA / engine,
        port=port if port is not None else engines.get(engine).default_port,
        waldir=kw.pop("waldir"),
        db_memory=kw.pop("db_memory"), pg_bin=kw.pop("pg_bin"),
        settings=tuple(parse_setting(s) for s in kw.pop("settings")),
        dsn=kw.pop("dsn"), dbname=kw.pop("dbname"), listen=kw.pop("listen"),
        host_memory=host_memory,
    )


# --------------------------------------------------------------------------- commands

@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="oltplab")
def cli():
    """oltplab: storage and database performance experiments.

    A managed PostgreSQL or MariaDB, a TPC-C-derived workload with HammerDB-comparable TPM and NOPM,
    and every result kept.
    """


# ---- db

@cli.group()
def db():
    """Start, stop or inspect the managed server (PostgreSQL or MariaDB)."""


def _instance(spec: DbSpec):
    from . import engines
    engine = engines.get(spec.engine)
    return engine, engine.instance(spec)


@db.command("start")
@db_options
def db_start(**kw):
    """Start the managed server (initialising the data directory if needed)."""
    spec = _managed_only(make_db_spec(kw), "db start")
    engine, inst = _instance(spec)
    inst.start()
    inst.ensure_database(spec.dbname)
    click.echo(f"{engine.label} running: datadir {spec.datadir}, port {spec.port}, "
               f"dsn {inst.dsn(spec.dbname)}")
    group = inst.memory_group() if hasattr(inst, "memory_group") else None
    if group is not None:
        click.echo(f"host memory: limit {group.limit()} bytes, control group {group.path}")
    tcp = inst.tcp_dsn(spec.dbname)
    if tcp:
        click.echo(f"TCP (password in {inst.password_file}): {tcp}")


@db.command("stop")
@db_options
def db_stop(**kw):
    """Stop the managed server."""
    spec = _managed_only(make_db_spec(kw), "db stop")
    engine, inst = _instance(spec)
    was = inst.is_running()
    inst.stop()
    click.echo(f"{engine.label} stopped" if was else f"{engine.label} was not running")


@db.command("status")
@db_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def db_status(as_json, **kw):
    """Show whether the managed server runs, and where."""
    spec = _managed_only(make_db_spec(kw), "db status")
    st = _instance(spec)[1].status()
    if as_json:
        click.echo(json.dumps(st, indent=2, default=str))
    else:
        for k, v in st.items():
            click.echo(f"{k:>10}: {v}")
    sys.exit(0 if st.get("running") else 3)


def _managed_only(spec: DbSpec, what: str) -> DbSpec:
    if spec.dsn:
        raise UsageError(f"'{what}' manages the local server; it does not take --dsn")
    return spec


# ---- tpcc

@cli.group()
def tpcc():
    """The TPC-C-derived workload: build, run, check."""


@tpcc.command("build")
@db_options
@click.option("--warehouses", "-w", type=int, required=True, help="Number of warehouses (scale).")
@click.option("--build-users", type=int, default=None, help="Parallel loaders [default: CPU count].")
@click.option("--force", is_flag=True, help="Drop and rebuild an existing schema.")
@click.option("--seed", type=int, default=None, help="Seed for reproducible data.")
def tpcc_build(warehouses, build_users, force, seed, **kw):
    """Create and load the schema, keys, indexes and transaction functions."""
    spec = make_db_spec(kw)
    if warehouses < 1:
        raise UsageError(f"--warehouses must be at least 1 (got {warehouses})")
    if build_users is not None and build_users < 1:
        raise UsageError(f"--build-users must be at least 1 (got {build_users})")
    bspec = BuildSpec(warehouses=warehouses, build_users=build_users or max(1, os.cpu_count() or 1),
                      force=force, seed=seed)
    from . import engines
    engine = engines.get(spec.engine)
    with engine.database(spec, need_connections=bspec.build_users + 10) as target:
        summary = _build(engine, target.dsn, bspec)
    click.echo(f"built {summary.get('warehouses', warehouses)} warehouses in "
               f"{summary.get('seconds', 0):.1f} s "
               f"({60 * warehouses / max(summary.get('seconds', 1e-9), 1e-9):.1f} warehouses/min)")


def _build(engine, dsn: str, bspec: BuildSpec) -> dict:
    from .ui import LiveLine
    line = LiveLine(every=5)
    t0 = time.monotonic()

    def progress(event: str, done: int, total: int) -> None:
        pct = 100.0 * done / total if total else 0.0
        line.show(f"build: {event} {done:,}/{total:,} ({pct:.0f}%)  elapsed {time.monotonic() - t0:.0f} s")

    try:
        return engine.dialect.build(dsn, bspec, progress=progress)
    finally:
        line.done()


@tpcc.command("run")
@db_options
@click.option("--users", "-u", default="1", show_default=True,
              help="User sequence, e.g. 1,2,4,8: one step per user count; or auto[:MAX]: "
                   "1, 2, 4 ... until TPM grows less than 5% (MAX default 64).")
@click.option("--rampup", default="30s", show_default=True, callback=duration_option,
              help="Ramp-up per step (not measured).")
@click.option("--duration", default="2m", show_default=True, callback=duration_option,
              help="Measured time per step.")
@click.option("--mode", type=click.Choice(["procedures", "sql"]), default="procedures",
              show_default=True, help="Server-side functions, or client-side SQL.")
@click.option("--keying-thinking", is_flag=True, help="Spec keying and think times.")
@click.option("--all-warehouses", is_flag=True, help="Spread each user over all warehouses.")
@click.option("--warehouses", "-w", type=int, default=None,
              help="Drive warehouses 1..N [default: all in the schema].")
@click.option("--workers", type=int, default=None, help="Driver processes [default: CPU count].")
@click.option("--seed", type=int, default=None, help="Seed for the drivers' random inputs.")
@click.option("--name", default="tpcc", show_default=True, help="Label of the run.")
@click.option("--check", is_flag=True, help="Run the consistency checks after the last step.")
@click.option("--cold", is_flag=True, help="Drop the page cache before each step (root only).")
@click.option("--inject", "inject", multiple=True, metavar="EVENT",
              help="A fault during the run (repeatable): at=60s,kill-server; at=60s,kill-backend; "
                   "at=30s,for=60s,throttle=write:10MiB/s (also read, read-iops, write-iops); "
                   "at= counts from the start of the measured window.")
@click.option("--results-dir", type=click.Path(path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@repeat_option
@telemetry_options
def tpcc_run(users, rampup, duration, mode, keying_thinking, all_warehouses, warehouses,
             workers, seed, name, check, cold, inject, results_dir, repeat, sample_interval,
             power, **kw):
    """Drive virtual users through a user sequence and record TPM, NOPM and latencies."""
    spec = make_db_spec(kw)
    if warehouses is not None and warehouses < 1:
        raise UsageError(f"--warehouses must be at least 1 (got {warehouses})")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be at least 1 (got {workers})")
    user_fields = parse_user_option(users)
    if user_fields["users_auto"] is not None and repeat > 1:
        raise UsageError("--users auto searches for the best user count in one run; --repeat "
                         "does not go with it (repeat the user count it finds)")
    rspec = RunSpec(**user_fields, rampup=rampup, duration=duration, mode=mode,
                    keying_thinking=keying_thinking, all_warehouses=all_warehouses,
                    warehouses=warehouses, workers=workers, seed=seed, name=name, check=check,
                    results_dir=results_dir, sample_interval=sample_interval, power=power,
                    cold=cold, inject=tuple(parse_inject(e) for e in inject))
    if rspec.inject:
        from .scenarios.inject import preflight
        preflight(spec, rspec)
    if cold:
        from .hostmem import check_drop_caches
        check_drop_caches()
    runs = run_group(repeat, name, lambda labels: run_tpcc_printed(spec, rspec, labels))
    print_repeats(runs)
    raise_for_status(runs[-1])


class TpccLines(TpccProgress):
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
                       f"client NOPM {t.nopm:>9,.0f}")

    def step(self, step: dict) -> None:
        from .ui import fmt_int
        self.line.done(f"step users={step['users']}: TPM (instance) {fmt_int(step['tpm'])}  "
                       f"TPM (workload) {fmt_int(step.get('workload_tpm'))}  "
                       f"NOPM {fmt_int(step['nopm'])}"
                       f"{'  (partial)' if step.get('partial') else ''}")

    def finished(self) -> None:
        self.line.done()


def run_tpcc_printed(spec: DbSpec, rspec: RunSpec, labels: dict | None = None) -> dict:
    """One recorded run with its progress on stderr, then its table and folder."""
    run = run_tpcc_recorded(spec, rspec, TpccLines(len(rspec.users), bool(rspec.users_auto)),
                            labels)
    print_run(run)
    return run


def print_run(run: dict) -> None:
    """A finished run's tables and warnings, then where it is saved."""
    from .ui import err
    _print_steps(run)
    err.print(f"saved {run['_path']}")


def _print_steps(run: dict) -> None:
    """The step table, the input shares, the best user count of --users auto, then the
    warnings (which never change the exit code) and the injected faults."""
    from .ui import event_lines, inputs_table, out, steps_table, warning_lines
    out.print(steps_table(run))
    if run.get("steps"):
        out.print(inputs_table(run))
    if isinstance(run.get("users_auto"), dict):
        from .runner.sequence import describe
        click.echo(describe(run["users_auto"]))
    for line in warning_lines(run):
        click.echo(line)
    for line in event_lines(run):
        click.echo(line)



@tpcc.command("check")
@db_options
@click.option("--after-run/--after-load", default=None,
              help="Skip CC11 (it holds only until the first Delivery) [default: decided from the data].")
def tpcc_check(after_run, **kw):
    """Consistency conditions CC1-CC12 in one snapshot; exit 0 when all hold."""
    spec = make_db_spec(kw)
    from . import engines
    engine = engines.get(spec.engine)
    with engine.database(spec) as target:
        engine.schema_info(target.dsn)
        if after_run is None:
            after_run = engine.dialect.has_run(target.dsn)
        rec = check_record(target.dsn, after_run=after_run, engine=engine.name)
    for c in rec["conditions"]:
        mark = "ok  " if c["ok"] else "FAIL"
        click.echo(f"{mark} {c['name']:<5} {c['clause']:<10} {c['description']}"
                   + ("" if c["ok"] else f"  ({c['violations']} violations, e.g. {c['sample'][:2]})"))
    if not rec["ok"]:
        failed = ", ".join(c["name"] for c in rec["conditions"] if not c["ok"])
        raise OltplabError(f"consistency checks failed: {failed}")


# ---- backup

@cli.group()
def backup():
    """Backup and restore cycles, each restore checked."""


@backup.command("run")
@db_options
@click.option("--cycles", type=int, default=3, show_default=True, help="Backup/restore cycles.")
@click.option("--method", type=click.Choice(["basebackup", "dump"]), default="basebackup",
              show_default=True, help="pg_basebackup, or pg_dump -Fd with pg_restore.")
@click.option("--to", type=click.Path(path_type=Path), default=None,
              help="Folder for the backups [default: <datadir>-backup]; the newest is kept.")
@click.option("--interval", default="0s", show_default=True, callback=duration_option,
              help="Time between cycle starts (0: back to back).")
@click.option("--compress", type=click.Choice(["none", "gzip", "zstd"]), default="none",
              show_default=True, help="pg_basebackup -F t -Z METHOD (the build must have it).")
@click.option("--max-rate", default=None, callback=_size, metavar="RATE",
              help="pg_basebackup -r: bytes per second, e.g. 50MiB.")
@click.option("--no-restore", is_flag=True, help="Only back up.")
@click.option("--jobs", "-j", type=int, default=2, show_default=True,
              help="pg_dump / pg_restore parallel jobs.")
@click.option("--name", default="backup", show_default=True, help="Label of the run.")
@click.option("--results-dir", type=click.Path(path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@telemetry_options
def backup_run(cycles, method, to, interval, compress, max_rate, no_restore, jobs, name,
               results_dir, sample_interval, power, **kw):
    """Back up, restore into a scratch copy, start it and check it; per cycle, timed."""
    from .scenarios.backup import BackupSpec, run_backup
    from .ui import LiveLine, err
    spec = make_db_spec(kw)
    if spec.engine != "postgres":
        from . import engines
        engines.get(spec.engine).backup  # noqa: B018 - one line when the engine has none
    bspec = BackupSpec(cycles=cycles, method=method, to=to, interval=interval, compress=compress,
                       max_rate=max_rate, restore=not no_restore, jobs=jobs, name=name,
                       results_dir=results_dir, sample_interval=sample_interval, power=power)
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
    err.print(f"saved {run['_path']}")
    failed = [c["cycle"] for c in run["cycles"] if c.get("restore") and not c["restore"]["check_ok"]]
    raise_for_status(run)
    if failed:
        raise OltplabError(f"the restored copy failed the consistency checks in cycle(s) "
                           f"{', '.join(map(str, failed))}")


# ---- quickstart

@cli.command()
@db_options
@click.option("--warehouses", "-w", type=int, default=4, show_default=True)
@click.option("--users", "-u", default="1,2,4", show_default=True)
@click.option("--rampup", default="10s", show_default=True, callback=duration_option)
@click.option("--duration", default="30s", show_default=True, callback=duration_option)
@click.option("--results-dir", type=click.Path(path_type=Path), default=DEFAULT_RESULTS,
              show_default=True)
@telemetry_options
def quickstart(warehouses, users, rampup, duration, results_dir, sample_interval, power, **kw):
    """Build a small schema on the managed server, run a short user sequence, save it."""
    spec = make_db_spec(kw)
    from . import engines
    from .errors import SchemaError
    engine = engines.get(spec.engine)
    engine.driver  # noqa: B018 - an engine without a driver fails here, before the build
    rspec = RunSpec(users=parse_users(users), rampup=rampup, duration=duration,
                    name="quickstart", check=True, results_dir=results_dir,
                    sample_interval=sample_interval, power=power)
    with engine.database(spec, need_connections=max(rspec.users) + 20) as target:
        try:
            info = engine.schema_info(target.dsn)
            rebuild = info.warehouses != warehouses
        except SchemaError:
            rebuild = True
        if rebuild:
            click.echo(f"building {warehouses} warehouses in {spec.datadir} ...", err=True)
            summary = _build(engine, target.dsn, BuildSpec(warehouses=warehouses, force=True))
            click.echo(f"built in {summary.get('seconds', 0):.1f} s", err=True)
        else:
            click.echo(f"reusing the {warehouses}-warehouse schema in {spec.datadir}", err=True)
        run = run_tpcc_printed(spec, rspec)
    raise_for_status(run)


# ---- fio

from .neighbourscli import neighbours  # noqa: E402
from .plancli import plan  # noqa: E402
from .resultscli import results  # noqa: E402
from .report.cli import report  # noqa: E402
from .storage.cli import fio  # noqa: E402

cli.add_command(fio)
cli.add_command(neighbours)
cli.add_command(plan)
cli.add_command(results)
cli.add_command(report)


# --------------------------------------------------------------------------- entry point

def _sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        cli.main(args=argv, prog_name="oltplab", standalone_mode=False)
        return 0
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.exceptions.UsageError as e:
        if type(e).__name__ == "NoArgsIsHelpError" and e.ctx is not None:
            click.echo(e.ctx.get_help())
            return 0
        cmd = e.ctx.command_path if e.ctx else "oltplab"
        click.echo(f"{cmd}: error: {e.format_message()}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("oltplab: interrupted", err=True)
        return 130
    except Interrupted as e:
        click.echo(f"oltplab: {e}", err=True)
        return 130
    except KeyboardInterrupt:
        click.echo("oltplab: interrupted", err=True)
        return 130
    except OltplabError as e:
        click.echo(f"oltplab: error: {e}", err=True)
        return e.exit_code
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    except OSError as e:
        click.echo(f"oltplab: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), err=True)
        return 1
    except Exception as e:  # the last line of defence: one line, never a traceback
        if os.environ.get("OLTPLAB_DEBUG"):
            raise
        click.echo(f"oltplab: internal error: {type(e).__name__}: {e} (OLTPLAB_DEBUG=1 shows more)",
                   err=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
