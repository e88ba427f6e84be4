"""``oltplab db``: start, stop and inspect the managed server; the database options every
command that needs a server shares."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..config import DbSpec
from ..errors import UsageError
from ..options import DB
from .options import table_options

# where the database lives, or --dsn for an existing server (then nothing is managed)
db_options = table_options(DB)


def make_db_spec(kw: dict[str, Any]) -> DbSpec:
    """The command's DbSpec from its database options (popped from ``kw``)."""
    return DbSpec.of(**{o.name: kw.pop(o.name) for o in DB})


# --------------------------------------------------------------------------- commands

@click.group()
def db():
    """Start, stop or inspect the managed server (PostgreSQL or MariaDB)."""


def _instance(spec: DbSpec):
    from .. import engines
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
