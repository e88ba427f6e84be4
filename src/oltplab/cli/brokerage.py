"""``oltplab brokerage`` (build, check): the TPC-E-derived brokerage."""

from __future__ import annotations

import os

import click

from ..options import BROKERAGE_BUILD, BROKERAGE_DB
from .db import make_db_spec
from .options import table_options
from .tpcc import build_shown, echo_dedupe, workload_check

WORKLOAD = "brokerage"


@click.group()
def brokerage():
    """The TPC-E-derived brokerage: build, check (trade results per second, trps)."""


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
