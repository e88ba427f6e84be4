"""The database a command works on: a managed server for the time of the command, or --dsn.

``database(spec)`` starts the managed server when it is not running, creates ``spec.dbname``,
and stops the server on the way out if it started it: after success, an exception,
KeyboardInterrupt, or SIGTERM (which the CLI turns into KeyboardInterrupt). With ``spec.dsn``
it only checks that the server answers and manages nothing.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager

from ...config import DbSpec
from ...errors import DatabaseError
from ..base import Target
from ..session import redact, session
from ..common.aio import run_sync
from .instance import PostgresInstance

CONNECT_TIMEOUT_S = 5.0


def check_reachable(dsn: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Connect once; raise DatabaseError with the reason when the server does not answer."""
    import asyncpg

    async def go():
        conn = await asyncpg.connect(dsn, timeout=timeout)
        await conn.close()

    try:
        run_sync(go)
    except (asyncio.TimeoutError, TimeoutError):
        reason = f"no answer within {timeout:g} s"
    except Exception as e:  # asyncpg raises many kinds: OSError, PostgresError, ValueError ...
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
    else:
        return
    raise DatabaseError(f"cannot connect to --dsn {redact(dsn)}: {reason}")


def database(spec: DbSpec, need_connections: int = 100) -> AbstractContextManager[Target]:
    """The Target for ``spec`` as a context manager; a server started here is stopped however
    the body ends."""
    return session(spec, need_connections, PostgresInstance, check_reachable, "postgres")
