"""The MariaDB database a command works on: a managed server for the time of the command, or
--dsn (see engines/session.py; the same rules as engines/postgres/session.py)."""

from __future__ import annotations

from contextlib import AbstractContextManager

from ...config import DbSpec
from ...errors import DatabaseError
from ..base import Target
from ..session import redact, session
from . import client
from .instance import MariaDBInstance

CONNECT_TIMEOUT_S = 5


def check_reachable(dsn: str, timeout: int = CONNECT_TIMEOUT_S) -> None:
    """Connect once; raise DatabaseError with the reason when the server does not answer."""
    try:
        client.connect(dsn, connect_timeout=timeout).close()
    except DatabaseError as e:
        reason = str(e).removeprefix("cannot connect to MariaDB: ")
        raise DatabaseError(f"cannot connect to --dsn {redact(dsn)}: {reason}") from None


def database(spec: DbSpec, need_connections: int = 100) -> AbstractContextManager[Target]:
    """The Target for ``spec`` as a context manager; a server started here is stopped however
    the body ends. The admin DSN names no database."""
    return session(spec, need_connections, MariaDBInstance, check_reachable, "")
