"""The TPC-C-derived workload in PostgreSQL's dialect: load (COPY), PL/pgSQL transaction
functions, the client-side statements of --mode sql, consistency checks.

The SQL lives in sql/*.sql and transactions/; connections are asyncpg's (loader, checks) and
libpq's through psycopg (the driver). ``DIALECT`` is this package behind the engine interface
(engines/base.py ``Dialect``).
"""

from __future__ import annotations

from ...base import DialectParts, Failure
from ..states import FATAL_STATES, RETRYABLE_STATES

#: SQLSTATEs of a session the server ends (shutdown, crash, restart): the users reconnect.
CONNECTION_STATES = frozenset(s for s in FATAL_STATES if s.startswith("57P"))


class PostgresDialect(DialectParts):
    """engines.base.Dialect for PostgreSQL."""

    package = __name__

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


DIALECT = PostgresDialect()
