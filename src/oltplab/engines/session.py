"""The life cycle every engine's ``session.database`` shares: a managed server for the time of
a command, or a given --dsn that is only checked."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..config import DbSpec
from .base import Target


@contextmanager
def session(spec: DbSpec, need_connections: int, make_instance: Callable,
            check_reachable: Callable[[str], None], admin_db: str) -> Iterator[Target]:
    """Yield the Target for ``spec``: with ``spec.dsn``, after ``check_reachable``; else start
    the instance ``make_instance(spec)`` when it is not running, create ``spec.dbname``, and
    stop the server on the way out if it was started here, however the body ends."""
    if not spec.managed:
        check_reachable(spec.dsn)
        yield Target(dsn=spec.dsn, admin_dsn=spec.dsn, instance=None, started_here=False)
        return
    inst = make_instance(spec)
    was_running = inst.is_running()
    failed = False
    try:
        inst.start(need_connections)
        inst.ensure_database(spec.dbname)
        yield Target(dsn=inst.dsn(spec.dbname), admin_dsn=inst.dsn(admin_db),
                     instance=inst, started_here=not was_running)
    except BaseException:
        failed = True
        raise
    finally:
        if not was_running:
            try:
                inst.stop()
            except Exception:
                if not failed:  # do not hide the error that is already on its way out
                    raise


def redact(dsn: str) -> str:
    """The DSN without its password, for messages."""
    dsn = re.sub(r"(://[^:/@?]*:)[^@/?]*@", r"\1***@", dsn)
    return re.sub(r"(?i)(password=)[^&\s]*", r"\1***", dsn)
