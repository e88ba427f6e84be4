"""The engine interface: what the layers above need from a database engine.

An engine is a sub-package of ``engines/`` with the same parts (STYLE.md): a managed
instance, its access rules, a client session, server counters, and the TPC-C-derived dialect
(DDL, bulk load, transaction procedures, consistency checks). Nothing outside ``engines/``
and an engine's own dialect modules imports a database client; the layers above hold DSNs
(strings) and the typed records below.

These are structural types (``typing.Protocol``): an engine satisfies them by shape, without
inheriting. MariaDB implements them (engines/mariadb, workloads/tpcc/mariadb); PostgreSQL
adapts to them when the engine seam replaces its direct imports.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..config import BuildSpec


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
