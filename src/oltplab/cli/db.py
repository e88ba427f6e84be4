"""``oltplab db``: start, stop and inspect the managed server; the database options every
command that needs a server shares."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ..config import DEFAULT_DATA, DbSpec, parse_host_memory, parse_setting, parse_size
from ..engines import ENGINES
from ..errors import UsageError



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
    """The command's DbSpec from its database options (popped from ``kw``)."""
    return DbSpec.of(
        engine=kw.pop("engine"), dsn=kw.pop("dsn"), datadir=kw.pop("datadir"),
        port=kw.pop("port"), waldir=kw.pop("waldir"), db_memory=kw.pop("db_memory"),
        pg_bin=kw.pop("pg_bin"), settings=tuple(parse_setting(s) for s in kw.pop("settings")),
        dbname=kw.pop("dbname"), listen=kw.pop("listen"),
        host_memory=parse_host_memory(kw.pop("host_memory")))


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


# ---- tpcc

