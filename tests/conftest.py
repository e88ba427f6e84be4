"""Shared fixtures: a real PostgreSQL started by the suite (or OLTPLAB_TEST_DSN to use one)."""

from __future__ import annotations

import itertools
import os
import socket
from dataclasses import dataclass

import pytest

_counter = itertools.count()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    admin_dsn: str  # a libpq URI to the 'postgres' database

    def dsn(self, dbname: str) -> str:
        head, sep, query = self.admin_dsn.partition("?")
        base = head.rpartition("/")[0]
        return f"{base}/{dbname}{sep}{query}"

    def sql(self, statement: str, dbname: str = "postgres"):
        import asyncio

        import asyncpg

        async def go():
            conn = await asyncpg.connect(self.dsn(dbname))
            try:
                return await conn.fetch(statement)
            finally:
                await conn.close()

        return asyncio.run(go())

    def create_db(self, prefix: str = "t", template: str | None = None) -> str:
        name = f"{prefix}_{os.getpid()}_{next(_counter)}"
        tmpl = f" TEMPLATE {template} STRATEGY FILE_COPY" if template else ""
        self.sql(f"CREATE DATABASE {name}{tmpl}")
        return self.dsn(name)


@pytest.fixture(scope="session")
def pg(tmp_path_factory):
    """A running PostgreSQL for the whole session."""
    external = os.environ.get("OLTPLAB_TEST_DSN")
    if external:
        yield Server(external)
        return
    from oltplab.config import DbSpec
    from oltplab.engines.postgres.instance import PostgresInstance

    root = tmp_path_factory.mktemp("pg")
    spec = DbSpec(datadir=root / "data", port=free_port(), db_memory=256 * 1024**2,
                  settings=(("max_connections", "300"),))
    inst = PostgresInstance(spec)
    inst.init()
    inst.start()
    try:
        yield Server(inst.dsn("postgres"))
    finally:
        inst.stop()


@pytest.fixture(scope="session")
def loaded_w1(pg) -> str:
    """A pristine W=1 TPC-C-derived database; tests must not change it. OLTPLAB_TEST_W1_DSN
    names one built already (on the server of OLTPLAB_TEST_DSN)."""
    from oltplab.config import BuildSpec
    from oltplab.workloads.tpcc.loader import build

    if os.environ.get("OLTPLAB_TEST_W1_DSN"):
        return os.environ["OLTPLAB_TEST_W1_DSN"]
    dsn = pg.create_db("w1")
    build(dsn, BuildSpec(warehouses=1, build_users=2, seed=12345))
    return dsn


@pytest.fixture
def scratch_w1(pg, loaded_w1) -> str:
    """A private copy of the W=1 database that a test may change."""
    template = loaded_w1.split("?")[0].rsplit("/", 1)[1]
    return pg.create_db("s1", template=template)
