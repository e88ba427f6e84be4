"""Virtual users on libpq connections driven by the C loop of ``oltplab._native``, both modes.

The client's cost per round trip decides how much CPU the driver takes from a server on the
same host. Each connection is opened and prepared here with psycopg's libpq binding (the
procedure calls, or for ``--mode sql`` the client-side statements of the transaction modules);
then ``_native.ProcLoop`` drives all the users of a worker on one thread without the GIL: it
draws the cards and inputs, sends the call (or the statements, pipelined), reads the answers,
retries, records and crosses the window's boundaries, per the rules engines/common/recorder.py
describes. Python steps in only at events (engines/common/loop.py, shared with MariaDB's driver).

With ``reopen`` (runs with ``--inject``) a lost connection loses one user, not the run: the
loop counts its transaction in flight as an error and goes on with the others, and Python
opens another connection (``reopen_connection``: retried until the server accepts, at most
RECONNECT_TIMEOUT_S), wakes the loop and hands the connection over (``ProcLoop.replace``).
"""

from __future__ import annotations

import functools
import threading
from importlib import import_module
from typing import Callable

from psycopg import pq

from ... import _native
from ..common.loop import LOOP_SAMPLES, RECONNECT_TIMEOUT_S, LoopUsers, WorkerPlan, reconnect_until
from ..common.recorder import MAX_CONSECUTIVE_ERRORS, MAX_RETRIES, Recorder, UserFailed
from .states import FATAL_STATES, IDLE_PUBLISHED_AFTER_NS, RETRYABLE_STATES

_OK = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)


def _prepared(workload: str, mode: str, constants=None) -> list[tuple[str, str]]:
    """The statements of ``workload``'s dialect (engines/postgres/<workload>/) a user prepares
    for a run of ``constants`` (the workload's run constants: which statements it sends)."""
    return import_module(f"{__package__}.{workload}.transactions").prepared(mode, constants)


def flush_sql(workload: str) -> str:
    """The statistics flush at a boundary, on a table of ``workload``'s schema (states.py)."""
    return import_module(f"{__package__}.{workload}").DIALECT.flush_sql


def kind_names(workload: str) -> tuple[str, ...]:
    """The prepared names of ``workload``'s procedure calls, in the loop's order of kinds
    (every kind's: a run prepares those it calls)."""
    return import_module(f"{__package__}.{workload}.transactions").KIND_NAMES


def connect(plan: WorkerPlan):
    """One user's connection for ``plan``, opened and prepared (blocking: run it in a thread);
    raises UserFailed."""
    return open_connection(plan.dsn, plan.application_name, plan.flush_stats, plan.mode,
                           plan.workload, plan.constants)


def reconnect(plan: WorkerPlan, cancel: threading.Event | None = None):
    """``connect``, retried until the server accepts (``reopen_connection``)."""
    return reopen_connection(plan.dsn, plan.application_name, plan.flush_stats, plan.mode,
                             plan.workload, plan.constants, cancel=cancel)


def close(conn) -> None:
    """Close a connection that was not handed to ``Users``."""
    conn.finish()


def open_connection(dsn: str, application_name: str, flush_stats: bool,
                    mode: str = "procedures", workload: str = "tpcc", constants=None):
    """Open and prepare one connection for ``workload`` in ``mode``, for a run of ``constants``
    (the workload's run constants) (blocking: run it in a thread)."""
    conn = pq.PGconn.connect(_conninfo(dsn, application_name))
    if conn.status != pq.ConnStatus.OK:
        message = _text(conn.get_error_message())
        conn.finish()
        raise UserFailed(f"connecting: {message}")
    try:
        for name, text in _prepared(workload, mode, constants):
            _check(conn, conn.prepare(name.encode(), text.encode()), f"preparing {name}")
        if flush_stats:
            _check(conn, conn.exec_(flush_sql(workload).encode()), "statistics flush")
    except BaseException:
        conn.finish()
        raise
    conn.nonblocking = 1
    return conn


def reopen_connection(dsn: str, application_name: str, flush_stats: bool,
                      mode: str = "procedures", workload: str = "tpcc", constants=None,
                      timeout: float = RECONNECT_TIMEOUT_S,
                      cancel: threading.Event | None = None):
    """``open_connection``, retried with a growing pause (50 ms to 1 s) until the server accepts,
    ``timeout`` seconds have passed or ``cancel`` is set (blocking: run it in a thread)."""
    return reconnect_until(functools.partial(open_connection, dsn, application_name,
                                             flush_stats, mode, workload, constants), timeout,
                           cancel)


def accepts(dsn: str, application_name: str = "oltplab") -> bool:
    """Whether the server accepts a connection now."""
    conn = pq.PGconn.connect(_conninfo(dsn, application_name))
    try:
        return conn.status == pq.ConnStatus.OK
    finally:
        conn.finish()


def backend_pid(dsn: str, application_name: str, watcher: str = "oltplab-watch"):
    """The lowest pid among the client backends of ``application_name``, and the watching
    connection (open: the caller finishes it), or (None, connection)."""
    watch = pq.PGconn.connect(_conninfo(dsn, watcher))
    res = watch.exec_(b"SELECT min(pid) FROM pg_stat_activity WHERE backend_type = "
                      b"'client backend' AND application_name = '"
                      + application_name.encode() + b"'")
    value = res.get_value(0, 0) if res.status == pq.ExecStatus.TUPLES_OK else None
    return (int(value) if value is not None else None), watch


def alive(conn) -> bool:
    """Whether a connection still answers (one round trip)."""
    return conn.exec_(b"SELECT 1").status == pq.ExecStatus.TUPLES_OK


def _conninfo(dsn: str, application_name: str) -> bytes:
    sep = "&" if "?" in dsn else "?"
    if dsn.startswith(("postgresql://", "postgres://")):
        return f"{dsn}{sep}application_name={application_name}".encode()
    return f"{dsn} application_name={application_name}".encode()


def _check(conn, res, what: str) -> None:
    if res is None or res.status not in _OK:
        message = (res.error_message if res is not None else conn.get_error_message())
        raise UserFailed(f"{what}: {_text(message)}")


def _text(message) -> str:
    """libpq's message as one stripped str (psycopg gives bytes or str, by version)."""
    if isinstance(message, bytes):
        message = message.decode(errors="replace")
    return message.strip()


@functools.lru_cache(maxsize=1)
def libpq_path() -> str:
    """The libpq that psycopg loaded in this process: the loop calls the same library."""
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            path = line.split(maxsplit=5)[-1].strip()
            if "/libpq" in path and ".so" in path:
                return path
    raise UserFailed("cannot find the libpq library psycopg uses")


class ProcUsers(LoopUsers):
    """The users of one worker on libpq: their connections and their C loop. ``sql``: the
    connections are prepared for ``--mode sql`` (``open_connection(..., mode="sql")``). ``reopen``:
    opens a user's new connection after it lost its own (blocking; ``reopen_connection``); without
    it a lost connection fails the run."""

    def __init__(self, workload: str, conns: list, plans: list, w_max: int, constants,
                 waits: bool, flush_stats: bool = True, bulk: int = LOOP_SAMPLES,
                 sql: bool = False, reopen: Callable[[], object] | None = None):
        super().__init__(workload, conns, plans, w_max, constants, reopen=reopen, bulk=bulk)
        self.sql = sql
        self.waits = waits
        self.flush_stats = flush_stats

    def _make_loop(self, rec: Recorder) -> _native.ProcLoop:
        return _native.ProcLoop(
            workload=self.workload, libpq=libpq_path(), connections=self.conns,
            pointers=[c.pgconn_ptr for c in self.conns], terminals=self.terminals,
            names=kind_names(self.workload),
            flush_sql=flush_sql(self.workload), ramp_end_ns=rec.ramp_end,
            measure_end_ns=rec.measure_end, waits=self.waits, flush_stats=self.flush_stats,
            idle_published_after_ns=IDLE_PUBLISHED_AFTER_NS, max_retries=MAX_RETRIES,
            max_consecutive_errors=MAX_CONSECUTIVE_ERRORS, retryable=RETRYABLE_STATES,
            fatal=FATAL_STATES, bulk=self.bulk, sql=self.sql, resilient=self.reopen is not None)

    def _hand_over(self, index: int, conn) -> None:
        self.loop.replace(index, conn, conn.pgconn_ptr)

    def _close_conn(self, conn) -> None:
        conn.finish()


class Users(ProcUsers):
    """The users of one worker, as loadgen/worker.py makes them from its WorkerPlan."""

    def __init__(self, conns: list, user_plans: list, plan: WorkerPlan, reopen=None):
        super().__init__(plan.workload, conns, user_plans, plan.w_max, plan.constants,
                         plan.keying_thinking, plan.flush_stats, sql=plan.mode == "sql",
                         reopen=reopen)
