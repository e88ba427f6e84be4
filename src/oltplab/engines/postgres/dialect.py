"""A workload in PostgreSQL's dialect, behind the engine interface (engines/base.py
``Dialect``): its package's loader, checks and schema modules, the engine's classification of
errors, and what the run monitor and the users need to know of its tables and functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base import DialectParts, Failure
from .states import FATAL_STATES, RETRYABLE_STATES

#: SQLSTATEs of a session the server ends (shutdown, crash, restart): the users reconnect.
CONNECTION_STATES = frozenset(s for s in FATAL_STATES if s.startswith("57P"))


class PostgresDialect(DialectParts):
    """engines.base.Dialect for PostgreSQL.

    - ``package``: the workload's dialect package (engines/postgres/<workload>/);
    - ``flush_table``: a small table the statistics flush at a boundary reads (states.py);
    - ``unit_sql``: a scalar subquery counting the headline's unit on the server (committed
      New-Orders, orders), with ``{base}`` where the count starts from ``base_sql``'s answer
      at the run's start (None: the count needs no base);
    - ``functions``: the transaction functions a procedures-mode run needs, and
      ``signature`` one of them as the current build declares it (None: any);
    - ``called``: those a run calls, from its spec's ``params`` (None: all of them).
    """

    def __init__(self, package: str, flush_table: str, unit_sql: str, functions: tuple[str, ...],
                 signature: str | None = None, base_sql: str | None = None,
                 called: Callable[[Any], tuple[str, ...]] | None = None):
        self.package = package
        self.flush_table = flush_table
        self.unit_sql = unit_sql
        self.functions = functions
        self.signature = signature
        self.base_sql = base_sql
        self.called = called

    def functions_called(self, spec) -> tuple[str, ...]:
        """The transaction functions a procedures-mode run of ``spec`` calls."""
        return self.called(spec.params) if self.called else self.functions

    @property
    def flush_sql(self) -> str:
        return flush_sql(self.flush_table)

    def classify(self, exc: BaseException) -> Failure:
        """By SQLSTATE (asyncpg's and psycopg's exceptions carry ``sqlstate``): serialization
        failures and deadlocks are retried; class 08 and the server's shutdowns are a lost
        connection, as are OS-level connection errors; anything else is fatal."""
        state = getattr(exc, "sqlstate", None) or ""
        if state in RETRYABLE_STATES:
            return Failure.RETRYABLE
        if state.startswith("08") or state in CONNECTION_STATES or \
                isinstance(exc, (ConnectionError, OSError)):
            return Failure.CONNECTION
        return Failure.FATAL


def flush_sql(table: str) -> str:
    """The statistics flush at a boundary, reading ``table`` (states.py says why)."""
    return f"SELECT pg_stat_force_next_flush() FROM {table} LIMIT 1"
