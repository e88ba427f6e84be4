"""``oltplab dvds`` (build, run, check): the DVD-Store-derived shop."""

from __future__ import annotations

import os
from typing import Any

import click
from rich.table import Table

from ..config import RunSpec, metrics_spec
from ..options import DVDS_BUILD, DVDS_DB, DVDS_RUN, LOADGEN
from ..runs.lifecycle import run_workload_recorded
from .db import make_db_spec
from .options import metrics_options, repeat_option, table_options, telemetry_options
from .tpcc import (TpccLines, build_shown, check_sequence, drive_runs, echo_dedupe,
                   workload_check)

WORKLOAD = "dvds"


@click.group()
def dvds():
    """The DVD-Store-derived online shop: build, run, check (orders per minute, OPM)."""


@dvds.command("build")
@table_options(DVDS_DB)
@table_options(DVDS_BUILD)
def dvds_build(size, build_users, force, seed, ds3, **kw):
    """Create and load the shop's tables, keys, full-text indexes and functions."""
    from .. import engines
    from ..workloads.dvds.build import DvdsBuildSpec
    spec = make_db_spec(kw)
    bspec = DvdsBuildSpec(size=size, build_users=build_users or max(1, os.cpu_count() or 1),
                          force=force, seed=seed, ds3=ds3)
    engine = engines.get(spec.engine)
    engine.dialect_for(WORKLOAD)  # an engine without the shop fails here
    with engine.database(spec, need_connections=bspec.build_users + 10) as target:
        summary = build_shown(engine, target.dsn, bspec, WORKLOAD)
        seconds = summary.get("seconds", 0) or 0
        rows = summary.get("rows", {})
        ds3 = (f", DS3: {rows.get('membership', 0):,} members, {rows.get('reviews', 0):,} "
               f"reviews, {rows.get('reviews_helpfulness', 0):,} ratings" if ds3 else "")
        click.echo(f"built the {size.name} shop ({size.customers:,} customers, "
                   f"{size.orders:,} orders, {size.products:,} products{ds3}) in "
                   f"{seconds:.1f} s")
        echo_dedupe(spec)


@dvds.command("run")
@table_options(DVDS_DB)
@table_options(DVDS_RUN)
@repeat_option
@telemetry_options
@metrics_options
@table_options(LOADGEN)
def dvds_run(users, rampup, duration, mode, think_time, pct_new_customers, searches,
             search_batch, line_items, ds3, pct_new_members, reviews, pct_new_reviews,
             pct_new_helpfulness, workers, seed, name, check, cold, inject, results_dir,
             repeat, sample_interval, power, io_latency, metrics_port, metrics_listen, loadgen,
             cluster_dir, **kw):
    """Drive virtual shoppers through a user sequence and record OPM and response times."""
    from ..workloads.dvds.params import DvdsParams
    spec = make_db_spec(kw)
    metrics = metrics_spec(metrics_port, metrics_listen)
    check_sequence(users, repeat, inject)
    params = DvdsParams(think_time=think_time, pct_new_customers=pct_new_customers,
                        searches=searches, search_batch=search_batch, line_items=line_items,
                        ds3=ds3, pct_new_members=pct_new_members, reviews=reviews,
                        pct_new_reviews=pct_new_reviews,
                        pct_new_helpfulness=pct_new_helpfulness)
    rspec = RunSpec(**users, rampup=rampup, duration=duration, mode=mode, workers=workers,
                    seed=seed, name=name, check=check, results_dir=results_dir,
                    sample_interval=sample_interval, power=power, io_latency=io_latency,
                    cold=cold, inject=inject, workload=WORKLOAD, params=params)
    drive_runs(spec, rspec, run_dvds_printed, repeat, metrics, loadgen, cluster_dir)


class DvdsLines(TpccLines):
    """The run folder, the live line (client OPM) and one line per step, on stderr."""

    def tick(self, t) -> None:
        self.line.show(f"step {t.step + 1} of {self.steps}  users {t.users}  {t.phase:<10} "
                       f"{t.elapsed_s:6.0f} s  client OPM {t.headline:>9,.0f}  "
                       f"calls/min {t.tpm:>9,.0f}")

    def step(self, step: dict) -> None:
        from .ui import fmt_int
        self.line.done(f"step users={step['users']}: OPM {fmt_int(step.get('opm'))}  "
                       f"client OPM {fmt_int(step.get('client_opm'))}  rollbacks "
                       f"{_pct(step.get('rollback_pct'))}"
                       f"{'  (partial)' if step.get('partial') else ''}")
        self.hosts(step)


def _pct(x: Any) -> str:
    return "-" if x is None else f"{x:.2f}%"


def _ms(x: Any) -> str:
    from .ui import fmt_ms
    return fmt_ms(x)


def run_dvds_printed(spec, rspec: RunSpec, labels: dict | None = None, metrics=None,
                     loadgen=None) -> dict:
    run = run_workload_recorded(spec, rspec, DvdsLines(len(rspec.users), bool(rspec.users_auto)),
                                labels, metrics=metrics, loadgen=loadgen)
    print_run(run)
    return run


def steps_table(run: dict) -> Table:
    """OPM (the server's orders), the client's, rollbacks and the order's response time."""
    t = Table(title=f"{run.get('id', '')}  [{run.get('status')}]", title_justify="left")
    for col in ("users", "OPM", "client OPM", "OPM/user", "rollbacks", "order ms mean",
                "order p95 ms", "order p99 ms", "new customers", "searches/order",
                "items/cart", "errors", "retries"):
        t.add_column(col, justify="right")
    from .ui import fmt_int
    for s in run.get("steps", []):
        users = s.get("users") or 0
        lat = s.get("order_latency") or {}
        inputs = s.get("inputs") or {}
        tx = {k: v for k, v in (s.get("transactions") or {}).items() if k != "order"}
        share = inputs.get("new_customers")
        t.add_row(f"{users}{'*' if s.get('partial') else ''}", fmt_int(s.get("opm")),
                  fmt_int(s.get("client_opm")),
                  fmt_int((s.get("opm") or 0) / users if users else None),
                  _pct(s.get("rollback_pct")), _ms(lat.get("mean")), _ms(lat.get("p95")),
                  _ms(lat.get("p99")), _pct(None if share is None else 100 * share),
                  _ms(inputs.get("searches_per_order")), _ms(inputs.get("items_per_cart")),
                  str(sum(v.get("errors", 0) or 0 for v in tx.values())),
                  str(sum(v.get("retries", 0) or 0 for v in tx.values())))
    return t


def phases_table(run: dict) -> Table:
    """Each phase's response time per step (ms)."""
    t = Table(title="response time per phase (ms)", title_justify="left")
    for col in ("users", "phase", "count", "mean", "p50", "p95", "p99", "max"):
        t.add_column(col, justify="right")
    for s in run.get("steps", []):
        for phase, lat in (s.get("phases") or {}).items():
            t.add_row(str(s.get("users")), phase, f"{lat.get('count', 0):,}",
                      *(_ms(lat.get(k)) for k in ("mean", "p50", "p95", "p99", "max")))
    return t


def print_run(run: dict) -> None:
    from .ui import err
    _print_steps(run)
    err.print(f"saved {run['_path']}")


def _print_steps(run: dict) -> None:
    from .ui import out, outcome_lines
    out.print(steps_table(run))
    if run.get("steps"):
        out.print(phases_table(run))
    if isinstance(run.get("users_auto"), dict):  # the best user count, with its OPM
        from ..loadgen.sequence import describe
        click.echo(describe(run["users_auto"]))
    for line in outcome_lines(run):
        click.echo(line)


def show_run(data: dict) -> None:
    """``results show`` of a dvds run: its steps, the shop's size and the checks."""
    _print_steps(data)
    schema = data.get("schema", {})
    db = data.get("database", {})
    ds3 = f", DS3 with {schema['reviews']:,} reviews" if schema.get("ds3") else ""
    click.echo(f"database: {db.get('version', '?')}; size {schema.get('size', '?')} "
               f"({schema.get('customers', 0):,} customers, {schema.get('products', 0):,} "
               f"products{ds3})")
    if data.get("error"):
        click.echo(f"error: {data['error']}")


def plan_lines(spec: RunSpec) -> DvdsLines:
    return DvdsLines(len(spec.users), bool(spec.users_auto))


@dvds.command("check")
@table_options(DVDS_DB)
def dvds_check(**kw):
    """The shop's consistency rules in one snapshot; exit 0 when all hold."""
    workload_check(kw, WORKLOAD)
