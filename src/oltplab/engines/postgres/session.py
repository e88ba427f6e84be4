"""The database a command works on: a managed server for the time of the command, or --dsn.

``database(spec)`` starts the managed server when it is not running, creates ``spec.dbname``,
and stops the server on the way out if it started it: after success, an exception,
KeyboardInterrupt, or SIGTERM (which the CLI turns into KeyboardInterrupt). With ``spec.dsn``
it only checks that the server answers and manages nothing.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ...config import DbSpec
from ...errors import DatabaseError
from ..serving import serving
from .instance import PostgresInstance, _run_sync

CONNECT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Target:
    """Where to connect. ``dsn`` names spec.dbname on a managed server and is the given --dsn
    otherwise; ``admin_dsn`` names the 'postgres' database on a managed server and is the
    given --dsn otherwise (nothing is created or dropped on a server oltplab does not manage)."""

    dsn: str
    admin_dsn: str
    instance: PostgresInstance | None
    started_here: bool


def redact(dsn: str) -> str:
    """The DSN without its password, for messages."""
    dsn = re.sub(r"(://[^:/@?]*:)[^@/?]*@", r"\1***@", dsn)
    return re.sub(r"(?i)(password=)[^&\s]*", r"\1***", dsn)


def check_reachable(dsn: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Connect once; raise DatabaseError with the reason when the server does not answer."""
    import asyncpg

    async def go():
        conn = await asyncpg.connect(dsn, timeout=timeout)
        await conn.close()

    try:
        _run_sync(go)
    except (asyncio.TimeoutError, TimeoutError):
        reason = f"no answer within {timeout:g} s"
    except Exception as e:  # asyncpg raises many kinds: OSError, PostgresError, ValueError ...
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
    else:
        return
    raise DatabaseError(f"cannot connect to --dsn {redact(dsn)}: {reason}")


@contextmanager
def database(spec: DbSpec, need_connections: int = 100) -> Iterator[Target]:
    """Yield the Target for ``spec``; stop a server started here however the body ends."""
    if not spec.managed:
        check_reachable(spec.dsn)
        yield Target(dsn=spec.dsn, admin_dsn=spec.dsn, instance=None, started_here=False)
        return
    inst = PostgresInstance(spec)
    with serving(inst, spec.dbname, need_connections) as started_here:
        yield Target(dsn=inst.dsn(spec.dbname), admin_dsn=inst.dsn("postgres"),
                     instance=inst, started_here=started_here)
