"""The engine interface: what the layers above need from a database engine.

An engine is a sub-package of ``engines/`` with the same parts (STYLE.md): a managed
instance, its access rules, a client session, server counters, the run's monitor, a telemetry
source, the virtual users' driver, and the TPC-C-derived dialect (DDL, bulk load, transaction
procedures, consistency checks) in its ``tpcc`` package. Nothing outside ``engines/`` imports a
database client; the layers above hold DSNs (strings), the typed records below, and the
engine's ``ENGINE`` object (``Engine``), found by name through ``engines.get``.

These are structural types (``typing.Protocol``): an engine satisfies them by shape, without
inheriting.
"""

from __future__ import annotations

import enum
import importlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from ..config import BuildSpec, DbSpec, RunSpec
from ..errors import DatabaseError, UsageError

# The least --db-memory any engine accepts (PostgreSQL's shared_buffers, MariaDB's buffer pool).
MIN_DB_MEMORY = 16 * 1024**2


class Failure(enum.Enum):
    """How a driver treats a failed transaction."""

    RETRYABLE = "retryable"  # run the same transaction again and count the retry
    ROLLED_BACK = "rolled_back"  # the transaction ended by design (New-Order's 1% rule)
    CONNECTION = "connection"  # the session is gone: reconnect or stop the user
    FATAL = "fatal"  # a bug or a broken schema: stop the run


@dataclass(frozen=True)
class ServerCounters:
    """One snapshot of the server-side counters behind TPM and NOPM.

    ``xacts`` is the engine's count of ended transactions (HammerDB's TPM source: PostgreSQL's
    ``xact_commit + xact_rollback``, MariaDB's ``Com_commit + Com_rollback``); ``new_orders`` is
    ``sum(d_next_o_id)`` over DISTRICT, which only committed New-Orders advance (NOPM).
    """

    t_ns: int  # time.monotonic_ns() when the answer arrived
    xacts: int
    new_orders: int


def engine_module(package: str, name: str, what: str, label: str) -> ModuleType:
    """``package.name`` imported now; a UsageError naming ``what`` when the engine does not
    have it (yet)."""
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{package}.{name}":
            raise
        raise UsageError(f"{what} is not available for {label}") from None


class SnapshotFailed(DatabaseError):
    """A monitor could not snapshot the server's counters (its connection was reset)."""


@dataclass(frozen=True)
class SchemaInfo:
    """What a build recorded in ``tpcc_meta``: the warehouses and the load-time C constants
    [2.1.6.1]; ``functions_installed``: the five transaction procedures are there."""

    warehouses: int
    c_last_load: int
    c_id_load: int
    c_ol_i_id_load: int
    functions_installed: bool


@dataclass(frozen=True)
class Target:
    """Where to connect. ``dsn`` names spec.dbname on a managed server and is the given --dsn
    otherwise; ``admin_dsn`` names the server's maintenance database on a managed server and is
    the given --dsn otherwise (nothing is created or dropped on a server oltplab does not
    manage). ``instance`` is the ManagedInstance, None with --dsn."""

    dsn: str
    admin_dsn: str
    instance: Any
    started_here: bool


def check_room(free: int, spec: RunSpec) -> None:
    """DatabaseError when the server's ``free`` connection slots are fewer than the run's
    largest user count."""
    need = max(spec.users)
    if need > free:
        raise DatabaseError(f"the server accepts {free} more connections but --users asks for"
                            f" {need}; raise max_connections"
                            + (" or give auto:MAX" if spec.users_auto else ""))


# What the settings of a running server may differ in from a run's without a restart: where it
# listens and keeps its files (the running server's endpoint wins) and, unless -c names it,
# max_connections (a server that allows too few connections is refused on its own).
RESTART_EXEMPT = frozenset({
    "listen_addresses", "port", "unix_socket_directories", "max_connections", "bind_address",
    "socket", "datadir", "pid_file", "log_error", "init_file", "skip_name_resolve",
    "skip_networking", "innodb_log_group_home_dir"})


def settings_to_change(running: dict[str, str] | None, requested: dict[str, str],
                       overrides, datadir: Path) -> dict[str, list]:
    """What a running managed server must be restarted for: ``{name: [running, requested]}``
    for each requested setting (--db-memory's and -c's) that the settings file oltplab wrote
    when it started the server (``running``) gives otherwise. ``running`` None (no such file:
    oltplab did not start it) raises DatabaseError, since the server's settings are then
    unknown and not oltplab's to change."""
    if running is None:
        raise DatabaseError(f"the server in {datadir} is running but was not started by "
                            "oltplab, so its settings may not be those asked for; stop it")

    def key(name: str) -> str:  # as both engines match names: any case, - for _ (MariaDB)
        return name.lower().replace("-", "_")

    given = {key(name) for name, _ in overrides}
    have = {key(k): v for k, v in running.items()}
    return {k: [have.get(key(k)), v] for k, v in requested.items()
            if have.get(key(k)) != v and (key(k) not in RESTART_EXEMPT or key(k) in given)}


def restart_note(datadir: Path, changed: dict[str, list]) -> str:
    """The warning a run records when its server was restarted for ``changed``."""
    what = ", ".join(f"{k} {old} -> {new}" for k, (old, new) in changed.items())
    return (f"the server in {datadir} was running with other settings; oltplab restarted it "
            f"with those requested ({what})")


def retry_snapshot(take: Callable[[], Any], patient: bool, wait_s: float) -> Any:
    """``take()``; when ``patient``, tried again after each SnapshotFailed until ``wait_s``
    seconds have passed (with --inject the server may be away for a while)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return take()
        except SnapshotFailed:
            if not patient or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def counters_delta(start, end, unit_key: str = "d_next_o_id_delta") -> dict:
    """The changes between two snapshots of an engine's counters: ``xacts_delta``,
    ``workload_xacts_delta`` (the workload database's own count where the engine keeps one,
    else the instance's), the headline's units under ``unit_key`` (the workload's
    ``server_unit_key``: TPC-C's ``d_next_o_id_delta``) and ``autovacuum_runs_delta`` (0 where
    there is no autovacuum)."""
    def new_orders(c) -> int:
        return c.new_orders if hasattr(c, "new_orders") else c.d_next_o_id

    def workload(c) -> int:
        return c.workload_xacts if hasattr(c, "workload_xacts") else c.xacts

    return {"xacts_delta": end.xacts - start.xacts,
            "workload_xacts_delta": workload(end) - workload(start),
            unit_key: new_orders(end) - new_orders(start),
            "autovacuum_runs_delta": (getattr(end, "autovacuum_runs", 0)
                                      - getattr(start, "autovacuum_runs", 0))}


@runtime_checkable
class ManagedInstance(Protocol):
    """A server oltplab installs, starts and stops (``--datadir``, ``--waldir``,
    ``--db-memory``, ``-c``, ``--port``, ``--listen``). Run as root, the server runs as the
    unprivileged ``oltplab`` OS user. Access: a unix socket in a private (0700) directory
    without a password; TCP only when asked, and then only with the generated password kept in
    a file of mode 0600 beside the data directory."""

    datadir: Path

    def init(self) -> None:
        """Create the data directory's files; a no-op when it already holds a server."""

    def start(self, need_connections: int = 100) -> None:
        """Start (initialising first when needed) and wait until it accepts connections."""

    def stop(self) -> None:
        """Stop within a bound; a no-op when it is not running."""

    def is_running(self) -> bool: ...

    def status(self) -> dict:
        """running, pid, port, datadir, waldir, version, socket_dir, listen, dsn, tcp_dsn, log."""

    def settings(self, need_connections: int = 100) -> dict[str, str]:
        """The settings the next start applies: derived from db_memory, then ``-c``."""

    def settings_for_record(self) -> dict:
        """``{"server_version", "settings"}`` of the running server, recorded with a run."""

    def dsn(self, dbname: str | None = None) -> str:
        """How to connect through the private socket (or TCP when there is no socket)."""

    def tcp_dsn(self, dbname: str | None = None) -> str | None:
        """How to connect over TCP, naming the password file; None when not listening."""

    def remote_dsn(self, dbname: str | None = None) -> str | None:
        """The TCP DSN with the password in it, for other hosts (``--loadgen``); None when
        not listening. Never recorded or printed."""

    def ensure_database(self, name: str) -> bool:
        """Create database ``name`` when missing; True when it was created."""


@runtime_checkable
class Counters(Protocol):
    """Reads ServerCounters on an open connection of the engine's client."""

    def snapshot(self, conn) -> ServerCounters: ...


@runtime_checkable
class Dialect(Protocol):
    """The TPC-C-derived workload in one engine's SQL.

    DDL and procedures ship as SQL files; the population (workloads/tpcc/population.py) is
    the same generator for every engine, so a seeded build holds the same rows everywhere.
    """

    def build(self, dsn: str, spec: BuildSpec, progress=None) -> dict:
        """Create the tables, bulk-load ``spec.warehouses`` warehouses, add the secondary keys,
        install the procedures and record the build; returns the build's summary."""

    def run_checks(self, dsn: str, after_run: bool = False) -> list:
        """CC1-CC12 [TPC-C 3.3.2] in one snapshot (checks.CheckResult each)."""

    def classify(self, exc: BaseException) -> Failure:
        """What a driver does with the client's exception ``exc``."""

    def schema_info(self, dsn: str) -> SchemaInfo:
        """What the build recorded; SchemaError when there is no complete schema."""

    def has_run(self, dsn: str) -> bool:
        """True when an order was entered after the load (CC11 then no longer holds)."""


@runtime_checkable
class Monitor(Protocol):
    """The run manager's own connection: checks before a run, and the server's counters at
    each step's boundaries. ``flush_stats``: the users publish their statistics at the
    boundaries (PostgreSQL 15+), and the monitor before each snapshot."""

    flush_stats: bool
    sampler_db: Any

    def precheck(self, spec: RunSpec) -> None:
        """Raise before a run when the procedures or the connection slots are missing."""

    def snapshot(self) -> Any:
        """The counters now (a ServerCounters of the engine); SnapshotFailed."""

    def reset(self) -> None:
        """Drop the connection (after an interruption it may be in the middle of a query)."""

    def close(self) -> None: ...


class Engine(Protocol):
    """What ``engines/<name>/__init__.py`` exposes as ``ENGINE``. ``driver`` and ``backup`` are
    the engine's modules driver.py and backup.py (see engines/postgres for the contract).

    What the faults (faults/kill.py) ask of ``driver``: ``accepts(dsn, name)``, whether the
    server takes a connection now; and to end one of the run's sessions (kill-backend), a
    server of processes gives ``backend_pid(dsn, application_name, watcher)`` (one of the
    users' backends and a watching connection), ``alive(conn)`` and ``close(conn)``, while a
    server of threads gives ``watch(dsn)``, ``user_sessions(conn, application_name)`` (the
    users' session ids and what each is doing), ``end_session(conn, id)`` and ``close``."""

    name: str
    label: str  # for messages: 'PostgreSQL', 'MariaDB'
    default_port: int  # --port when not given
    dialect: Dialect
    # a local server's users get a worker process each while they do not outnumber the CPUs
    # (loadgen.step.default_workers); otherwise half the CPUs' workers serve them all
    worker_per_local_user: bool

    def instance(self, spec: DbSpec) -> ManagedInstance: ...

    def server_record(self, dsn: str) -> dict:
        """``{"server_version", "server_version_num", "settings"}`` recorded with a run."""

    def database(self, spec: DbSpec,
                 need_connections: int = 100) -> AbstractContextManager[Target]: ...

    def check_reachable(self, dsn: str) -> None: ...

    def monitor(self, dsn: str, sampler_db=None, patient: bool = False,
                workload: str | None = None) -> Monitor: ...

    def telemetry_source(self, dsn: str, **kw) -> Any: ...

    def schema_info(self, dsn: str, workload: str | None = None) -> SchemaInfo: ...

    def dialect_for(self, workload: str | None) -> Dialect: ...

    @property
    def driver(self) -> ModuleType: ...

    @property
    def backup(self) -> ModuleType: ...


class DialectParts:
    """A ``Dialect`` made of its package's modules, imported when first used: loader
    (build), checks (run_checks), schema (schema_info, has_run). ``classify`` is the
    engine's own."""

    package: str = ""

    def _part(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.{name}")

    def build(self, dsn: str, spec: BuildSpec, progress=None) -> dict:
        return self._part("loader").build(dsn, spec, progress)

    def run_checks(self, dsn: str, after_run: bool = False) -> list:
        return self._part("checks").run_checks(dsn, after_run)

    def schema_info(self, dsn: str) -> SchemaInfo:
        return self._part("schema").schema_info(dsn)

    def has_run(self, dsn: str) -> bool:
        return self._part("schema").has_run(dsn)

    def before_run(self, dsn: str, info: SchemaInfo) -> dict:
        """What the workload does once before a run's first step (the brokerage's
        Trade-Cleanup), as the record's ``before_run``; {} for a workload without."""
        fn = getattr(self._part("schema"), "before_run", None)
        return fn(dsn, info) if fn is not None else {}


class EngineParts:
    """An ``Engine`` made of its package's modules, each imported when first used: session
    (database, check_reachable), tpcc (DIALECT), monitor (Monitor), telemetry (DatabaseSource),
    driver and backup. A subclass names the package and makes the instance."""

    package: str = ""
    name: str = ""
    label: str = ""
    worker_per_local_user = False

    def _part(self, name: str, what: str) -> ModuleType:
        return engine_module(self.package, name, what, self.label)

    def instance(self, spec: DbSpec) -> ManagedInstance:
        raise NotImplementedError

    def database(self, spec: DbSpec, need_connections: int = 100):
        return self._part("session", "a session").database(spec, need_connections)

    def check_reachable(self, dsn: str) -> None:
        self._part("session", "a session").check_reachable(dsn)

    @property
    def dialect(self) -> Dialect:
        return self.dialect_for("tpcc")

    def dialect_for(self, workload: str | None) -> Dialect:
        """The workload's dialect package ``engines/<engine>/<workload>/`` (its ``DIALECT``);
        UsageError when this engine does not speak it yet."""
        from .. import workloads
        wl = workloads.get(workload)
        name, label = wl.name, wl.label
        try:
            module = importlib.import_module(f"{self.package}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{self.package}.{name}":
                raise
            raise UsageError(f"the {label} workload does not run on {self.label} yet") from None
        return module.DIALECT

    def schema_info(self, dsn: str, workload: str | None = None) -> SchemaInfo:
        return self.dialect_for(workload).schema_info(dsn)

    def monitor(self, dsn: str, sampler_db=None, patient: bool = False,
                workload: str | None = None) -> Monitor:
        """The run monitor of ``workload``'s run (the default workload's for None)."""
        return self._part("monitor", "the run monitor").Monitor(
            dsn, sampler_db, patient, dialect=self.dialect_for(workload))

    def telemetry_source(self, dsn: str, **kw):
        return self._part("telemetry", "database telemetry").DatabaseSource(dsn, **kw)

    @property
    def driver(self) -> ModuleType:
        return self._part("driver", "the TPC-C driver")

    @property
    def backup(self) -> ModuleType:
        return self._part("backup", "backup")
