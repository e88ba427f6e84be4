"""A managed server for the time of one command, whatever its engine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def serving(inst, dbname: str, need_connections: int = 100) -> Iterator[bool]:
    """Start ``inst`` (an engines.base.ManagedInstance) when it is down and create
    ``dbname``; yield whether it was started here, and then stop it again however the body
    ends (a failed stop does not hide the error already on its way out)."""
    was_running = inst.is_running()
    failed = False
    try:
        inst.start(need_connections)
        inst.ensure_database(dbname)
        yield not was_running
    except BaseException:
        failed = True
        raise
    finally:
        if not was_running:
            try:
                inst.stop()
            except Exception:
                if not failed:
                    raise
