"""Shared fixtures: a real PostgreSQL started by the suite (or OLTPLAB_TEST_DSN to use one),
and a managed MariaDB for the modules that need one."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

_counter = itertools.count()

# Ctrl-C as a terminal sends it: Python turns SIGINT into KeyboardInterrupt only where the
# process that started it did not ignore the signal, and a shell ignores it for the commands
# it starts in the background (`make test &`). The tests that press Ctrl-C, in this process or
# in the commands they start (whose handler resets to the default at exec), need it delivered.
signal.signal(signal.SIGINT, signal.default_int_handler)

# bpftrace's start costs a second of CPU per run: the suite's runs go without per-IO latencies,
# except the tests of that source, which ask for them (tests/integration/telemetry)
os.environ["OLTPLAB_IO_LATENCY"] = "off"


# a managed server whose data directory's path is too long for a socket beside it keeps its
# socket folder under /tmp (engines/common/access.py), and the tests delete only the data
# directories: the session that made such folders removes them at its end, once empty and
# untouched for a while (a server of a session beside this one may just have made its own)
_SOCKET_FOLDERS = "oltplab-" + "[0-9a-f]" * 16  # the hash of the data directory's path
_before = pytest.StashKey[set]()


def _socket_folders() -> set[Path]:
    from oltplab.engines.common.access import FALLBACK_ROOT
    return set(Path(FALLBACK_ROOT).glob(_SOCKET_FOLDERS))


# The longest test files first, the longest of all first (the C part built and tested under
# the sanitizers, about three minutes): with --dist loadfile --no-loadscope-reorder (make
# test) a worker takes files in this order, the end-to-end ones next (collected first) and
# the many short unit files last, where they fill the gaps. xdist's own order (most tests
# first) started the sanitizers' one test last and the suite waited for it.
LONGEST_FIRST = ("test_native_sanitizers.py", "test_plan_examples.py", "test_device_faults.py",
                 "test_backup.py", "test_neighbours.py", "test_experiments_on_hosts.py",
                 "test_inject.py", "test_mariadb_faults.py", "test_datastore.py",
                 "test_mariadb_backup.py", "test_dvds_cli.py", "test_brokerage_cli.py",
                 "test_brokerage_mariadb.py", "test_brokerage_experiments.py", "test_plans.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the session itself, not one of its xdist workers
        config.stash[_before] = _socket_folders()


def pytest_sessionfinish(session):
    before = session.config.stash.get(_before, None)
    if before is None:
        return
    for folder in _socket_folders() - before:
        try:
            if time.time() - folder.stat().st_mtime > 10:
                folder.rmdir()  # only when empty
        except OSError:
            pass


# test servers listen below Linux's ephemeral range (32768-60999), where no client socket of
# the suite takes a port from under them
TEST_PORTS = range(20000, 32768)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(span: int = 1) -> int:
    """The first of ``span`` consecutive free TCP ports on the loopback. Where the suite runs
    in several pytest processes, each takes its ports from its own slice of TEST_PORTS, so two
    cannot pick the same one between finding it free and a server binding it."""
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    mine = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % count
    width = len(TEST_PORTS) // count
    low = TEST_PORTS.start + mine * width
    for _ in range(1000):
        base = random.randrange(low, low + width - span + 1)
        if all(_bindable(p) for p in range(base, base + span)):
            return base
    raise RuntimeError(f"no {span} free consecutive ports in {low}-{low + width - 1}")


@contextmanager
def ctrl_c_when(ready, timeout: float = 60.0) -> Iterator[list]:
    """Ctrl-C as a user presses it: SIGINT to the main thread, sent from another thread as
    soon as ``ready()`` is true (polled each millisecond). Yields a list that holds True once
    it was sent; the block must expect the KeyboardInterrupt."""
    main, sent, done = threading.main_thread().ident, [], threading.Event()

    def watch():
        deadline = time.monotonic() + timeout
        while not done.is_set() and not sent and time.monotonic() < deadline:
            if ready():
                sent.append(True)
                signal.pthread_kill(main, signal.SIGINT)
            time.sleep(0.001)

    helper = threading.Thread(target=watch)
    helper.start()
    try:
        yield sent
    finally:
        done.set()
        helper.join()


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


@contextmanager
def _server_dir() -> Iterator[Path]:
    """A new directory for a managed server's files, outside pytest's base directory: pytest
    makes /tmp/pytest-of-<user> mode 0700 again whenever a session starts, which locks the
    server's unprivileged OS user out of a server that starts at that moment when sessions
    run side by side. The path is short too, so the socket goes beside the data directory."""
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def server_tmp() -> Iterator[Path]:
    """A fresh directory for the managed servers of one test (see _server_dir)."""
    with _server_dir() as root:
        yield root


@pytest.fixture(scope="session")
def pg():
    """A running PostgreSQL for the whole session."""
    external = os.environ.get("OLTPLAB_TEST_DSN")
    if external:
        yield Server(external)
        return
    from oltplab.config import DbSpec
    from oltplab.engines.postgres.instance import PostgresInstance

    with _server_dir() as root:
        # autovacuum off: with dozens of databases, its workers visit every few seconds, and a
        # visit runs transactions in that database's row even when it vacuums nothing, which a
        # test of exact server counts would see (per-table reloptions cannot stop the visits)
        spec = DbSpec(datadir=root / "data", port=free_port(), db_memory=256 * 1024**2,
                      settings=(("max_connections", "300"), ("autovacuum", "off")))
        inst = PostgresInstance(spec)
        inst.init()
        inst.start()
        try:
            yield Server(inst.dsn("postgres"))
        finally:  # its data goes with it: no shutdown checkpoint of every test's database
            inst.stop("immediate")


@pytest.fixture(scope="session")
def loaded_w1(pg) -> str:
    """A pristine W=1 TPC-C-derived database; tests must not change it. OLTPLAB_TEST_W1_DSN
    names one built already (on the server of OLTPLAB_TEST_DSN)."""
    from oltplab.config import BuildSpec
    from oltplab.engines.postgres.tpcc.loader import build

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


@pytest.fixture
def quiet_w1(scratch_w1) -> str:
    """A private W=1 copy whose tables autovacuum leaves alone: autovacuum's transactions
    count in the workload database's row like any session's, and a test that compares server
    and client counts over a few seconds keeps them out (on the suite's own server autovacuum
    is off altogether; this also covers a server named by OLTPLAB_TEST_DSN, except for the
    workers' visits themselves)."""
    import asyncio

    import asyncpg

    async def go():
        conn = await asyncpg.connect(scratch_w1)
        try:
            for (table,) in await conn.fetch(
                    "SELECT relname FROM pg_class WHERE relkind = 'r'"
                    " AND relnamespace = 'public'::regnamespace"):
                await conn.execute(f'ALTER TABLE "{table}" SET (autovacuum_enabled = off)')
        finally:
            await conn.close()

    asyncio.run(go())
    return scratch_w1


@pytest.fixture(scope="session")
def mariadb():
    """A managed MariaDB for the session, in a short private directory (each module that
    uses it makes databases of its own)."""
    from oltplab.config import DbSpec
    from oltplab.engines.mariadb.instance import MariaDBInstance

    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))
    inst = MariaDBInstance(DbSpec(datadir=root / "data", db_memory=256 * 1024**2))
    inst.start()
    try:
        yield inst
    finally:
        inst.stop()
        shutil.rmtree(root, ignore_errors=True)
