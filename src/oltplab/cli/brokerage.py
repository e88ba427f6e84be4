"""``oltplab brokerage`` (build, run, check): the TPC-E-derived brokerage."""

from __future__ import annotations

import os
from typing import Any

import click

from ..options import BROKERAGE_BUILD, BROKERAGE_DB, BROKERAGE_RUN, LOADGEN
from .db import make_db_spec
from .options import metrics_options, repeat_option, table_options, telemetry_options
from .tpcc import build_shown, echo_dedupe, workload_check

WORKLOAD = "brokerage"


@click.group()
def brokerage():
    """The TPC-E-derived brokerage: build, run, check (trade results per second, trps)."""


@brokerage.command("build")
@table_options(BROKERAGE_DB)
@table_options(BROKERAGE_BUILD)
def brokerage_build(customers, days, build_users, force, seed, page_kib, **kw):
    """Create and load the 33 tables, their keys and the transactions' frames."""
    from .. import engines
    from ..engines.mariadb.pages import parse_page_kib, with_page_size
    from ..workloads.brokerage.build import BrokerageBuildSpec
    from ..workloads.brokerage.scale import MEANINGFUL_DAYS, parse_scale
    scale = parse_scale(customers, days)
    kib = None if page_kib is None else parse_page_kib(page_kib)
    spec = with_page_size(make_db_spec(kw), kib)
    bspec = BrokerageBuildSpec(scale=scale, force=force, seed=seed, page_size=kib,
                               build_users=build_users or max(1, os.cpu_count() or 1))
    engine = engines.get(spec.engine)
    engine.dialect_for(WORKLOAD)  # an engine without the brokerage fails here
    with engine.database(spec, need_connections=bspec.build_users + 10) as target:
        click.echo(built_line(build_shown(engine, target.dsn, bspec, WORKLOAD), scale))
        echo_dedupe(spec)
    if not scale.meaningful:  # said after the build, so that a refusal stays one line
        click.echo(f"warning: {days} day(s) of initial trading: Trade-Lookup's time windows "
                   f"(a back-off of up to 4 days of trading) are not meaningful below "
                   f"{MEANINGFUL_DAYS} days", err=True)


def built_line(summary: dict, scale) -> str:
    """What a build made: customers, days, trades and rows loaded, seconds, rows per second,
    the page size."""
    rows = summary.get("rows", {})
    total = sum(rows.values())
    seconds = summary.get("seconds", 0) or 0
    rate = f", {total / seconds:,.0f} rows/s" if seconds else ""
    pages = f", {summary['page_kib']} KiB pages" if summary.get("page_kib") else ""
    return (f"built the TPC-E-derived brokerage ({scale.customers:,} customers, {scale.days:,} "
            f"day(s) of trading, {rows.get('trade', 0):,} trades loaded, {total:,} rows) in "
            f"{seconds:.1f} s{rate}{pages}")


@brokerage.command("check")
@table_options(BROKERAGE_DB)
def brokerage_check(**kw):
    """The brokerage's consistency rules (BK1-BK7) in one snapshot; exit 0 when all hold."""
    workload_check(kw, WORKLOAD)


@brokerage.command("run")
@table_options(BROKERAGE_DB)
@table_options(BROKERAGE_RUN)
@repeat_option
@telemetry_options
@metrics_options
@table_options(LOADGEN)
def brokerage_run(users, rampup, duration, workers, seed, name, check, cold, inject,
                  results_dir, repeat, sample_interval, power, io_latency, metrics_port,
                  metrics_listen, loadgen, cluster_dir, **kw):
    """Drive customer-emulator users and the market emulator through a user sequence and record
    trade results per second (trps) and each transaction's response times."""
    from ..config import RunSpec, metrics_spec
    from .tpcc import check_sequence, drive_runs
    spec = make_db_spec(kw)
    metrics = metrics_spec(metrics_port, metrics_listen)
    check_sequence(users, repeat, inject)
    rspec = RunSpec(**users, rampup=rampup, duration=duration, mode="procedures",
                    workers=workers, seed=seed, name=name, check=check, results_dir=results_dir,
                    sample_interval=sample_interval, power=power, io_latency=io_latency,
                    cold=cold, inject=inject, workload=WORKLOAD)
    drive_runs(spec, rspec, run_brokerage_printed, repeat, metrics, loadgen, cluster_dir)


def _lines():
    from .tpcc import TpccLines

    class BrokerageLines(TpccLines):
        """The run folder, the live line (client trade results) and one line per step."""

        def tick(self, t) -> None:
            self.line.show(f"step {t.step + 1} of {self.steps}  users {t.users}  "
                           f"{t.phase:<10} {t.elapsed_s:6.0f} s  client trps "
                           f"{t.headline / 60:>9,.1f}  transactions/min {t.tpm:>9,.0f}")

        def step(self, step: dict) -> None:
            self.line.done(f"step users={step['users']}: trps {_num(step.get('trps'))}  "
                           f"client trps {_num(step.get('client_trps'))}  rollbacks "
                           f"{_pct(step.get('rollback_pct'))}"
                           f"{'  (partial)' if step.get('partial') else ''}")
            self.hosts(step)

    return BrokerageLines


def _num(x: Any) -> str:
    return "-" if x is None else f"{x:,.2f}"


def _pct(x: Any) -> str:
    return "-" if x is None else f"{x:.2f}%"


def plan_lines(spec) -> Any:
    return _lines()(len(spec.users), bool(spec.users_auto))


def run_brokerage_printed(spec, rspec, labels: dict | None = None, metrics=None,
                          loadgen=None) -> dict:
    from ..runs.lifecycle import run_workload_recorded
    run = run_workload_recorded(spec, rspec, plan_lines(rspec), labels, metrics=metrics,
                                loadgen=loadgen)
    print_run(run)
    return run


def steps_table(run: dict):
    """trps (the server's trade results), the client's, rollbacks, retries, errors and the
    warnings per step."""
    from rich.table import Table
    from .ui import fmt_ms
    t = Table(title=f"{run.get('id', '')}  [{run.get('status')}]", title_justify="left")
    for col in ("users", "trps", "client trps", "trps/user", "rollbacks", "TR ms mean",
                "TR p95 ms", "TO p95 ms", "errors", "retries", "warnings"):
        t.add_column(col, justify="right")
    for s in run.get("steps", []):
        users = s.get("users") or 0
        tx = s.get("transactions") or {}
        tr, to = tx.get("trade_result") or {}, tx.get("trade_order") or {}
        t.add_row(f"{users}{'*' if s.get('partial') else ''}", _num(s.get("trps")),
                  _num(s.get("client_trps")),
                  _num((s.get("trps") or 0) / users if users else None),
                  _pct(s.get("rollback_pct")), fmt_ms(tr.get("mean")), fmt_ms(tr.get("p95")),
                  fmt_ms(to.get("p95")), str(s.get("errors", 0)), str(s.get("retries", 0)),
                  str(len(s.get("warnings") or [])))
    return t


def transactions_table(run: dict):
    """Each transaction's count and response times (ms) per step, the mix against the deck."""
    from rich.table import Table
    from .ui import fmt_ms
    t = Table(title="transactions (ms; mix and deck in %)", title_justify="left")
    for col in ("users", "transaction", "count", "mix", "deck", "mean", "p50", "p95", "p99",
                "max", "retries", "errors"):
        t.add_column(col, justify="right")
    for s in run.get("steps", []):
        mix, deck = s.get("mix") or {}, s.get("deck_mix") or {}
        for name, e in (s.get("transactions") or {}).items():
            t.add_row(str(s.get("users")), name, f"{e.get('count', 0):,}",
                      _share(mix.get(name)), _share(deck.get(name)),
                      *(fmt_ms(e.get(k)) for k in ("mean", "p50", "p95", "p99", "max")),
                      str(e.get("retries", 0)), str(e.get("errors", 0)))
    return t


def _share(x: Any) -> str:
    return "" if x is None else f"{x:.2f}"


def print_run(run: dict) -> None:
    from .ui import err
    _print_steps(run)
    err.print(f"saved {run['_path']}")


def _print_steps(run: dict) -> None:
    from .ui import out, outcome_lines
    out.print(steps_table(run))
    if run.get("steps"):
        out.print(transactions_table(run))
    if isinstance(run.get("users_auto"), dict):
        from ..loadgen.sequence import describe
        click.echo(describe(run["users_auto"]))
    for line in outcome_lines(run):
        click.echo(line)


def show_run(data: dict) -> None:
    """``results show`` of a brokerage run: its steps, the scale and the checks."""
    _print_steps(data)
    schema = data.get("schema", {})
    db = data.get("database", {})
    click.echo(f"database: {db.get('version', '?')}; {schema.get('customers', 0):,} customers,"
               f" {schema.get('days', '?')} day(s) of initial trading, "
               f"{schema.get('trades', 0):,} trades loaded")
    if data.get("error"):
        click.echo(f"error: {data['error']}")
