"""The virtual users of one worker process on MariaDB, in C.

Each user's session is opened by ``_native.MariaDBConnection`` (libmariadb, loaded at run
time; the DSN parsed by client.connect_args, the password read from the DSN's option file):
several statements per query, autocommit on, snapshot isolation off where the server has it.
``_native.MariaDBLoop`` then drives all the users of the worker on one thread without the GIL,
with the rules of engines/common/recorder.py: each transaction is one round trip,
``CALL NEWORD(..., @oltplab_out); SELECT @oltplab_out``, with the inputs the user's Terminal draws,
as in PostgreSQL's procedures mode; the workload's C side writes the CALL (the shop's:
``CALL DVDS_PURCHASE(5,'[1,2]','[1,3]',@oltplab_out)``, engines/mariadb/dvds/). Deadlocks and
lock wait timeouts (client.RETRYABLE_ERRORS) run the same transaction again and count as
retries; a New-Order the unused item rolled back returns -O_ID (a purchase short of stock -1)
and counts as rolled back; a lost session (LOST_ERRORS) fails the run, or with
``reopen`` (--inject) loses that user, who reconnects; any other error fails the run with
the server's message. MariaDB needs no statistics flush at the window's boundaries: SHOW
GLOBAL STATUS sums the live sessions, so the users cross them by time alone.

``--mode sql`` runs the same loop with the transaction's statements sent from the client in a
few multi-statement round trips (native/tpcc/mytxn.c, whose SQL the reference of
tpcc/transactions.py formats too): START TRANSACTION ... COMMIT or ROLLBACK, so that the
server's Com_commit + Com_rollback still moves by one per transaction; a retryable error is
ended by a ROLLBACK before the retry.

MariaDB shows other sessions no application name (connection attributes only in
performance_schema, off by default), so each user's session holds a user-level lock named
after the plan's application name and its own connection id (``GET_LOCK('oltplab:1234', 0)``
when it connects), which ``IS_USED_LOCK`` lets any session see: ``user_sessions`` finds the
run's users in ``information_schema.PROCESSLIST`` by it, never the sampler's or the monitor's
sessions, and ``end_session`` ends one with ``KILL CONNECTION`` (faults/kill.py: kill-backend
on a server of threads). The lock is released when the session ends, and conflicts with
nothing else (user-level locks are their own namespace).
"""

from __future__ import annotations

import functools
import threading
from typing import Callable

from ... import _native
from ...errors import DatabaseError, UsageError
from ..common.loop import (LOOP_SAMPLES, RECONNECT_TIMEOUT_S, LoopUsers, UserPlan, WorkerPlan,
                           reconnect_until)
from ..common.recorder import MAX_CONSECUTIVE_ERRORS, MAX_RETRIES, Recorder, UserFailed
from . import client

# A lost session: the client's own errors (client.CONNECTION_ERRORS), and the server's word
# that it ends it: 1053 shutdown in progress, 1927 connection killed, 4031 idle too long.
LOST_ERRORS = frozenset(client.CONNECTION_ERRORS | {1053, 1927, 4031})
UNKNOWN_THREAD = 1094  # KILL of a session that has ended meanwhile
WATCH_TIMEOUT_S = 10


def session_mark(application_name: str) -> str:
    """The prefix of the user-level lock each user's session of ``application_name`` holds
    (its connection id follows)."""
    return f"{application_name}:"


def _literal(text: str) -> str:
    return "'" + client.pymysql.converters.escape_string(text) + "'"


def connect(plan: WorkerPlan) -> _native.MariaDBConnection:
    """One user's session on ``plan.dsn`` (blocking: run it in a thread); UserFailed with the
    reason in one line."""
    try:
        args = client.connect_args(plan.dsn)
    except UsageError as e:
        raise UserFailed(str(e)) from None
    try:
        conn = _native.MariaDBConnection(
            host=args.get("host"), port=args.get("port", 0), user=args.get("user"),
            password=args.get("password"), database=args.get("database"),
            unix_socket=args.get("unix_socket"), option_file=args.get("read_default_file"),
            connect_timeout=max(1, round(min(plan.connect_timeout, args["connect_timeout"]))))
    except (ConnectionError, RuntimeError) as e:
        raise UserFailed(f"connecting: {e}") from None
    mark = _literal(session_mark(plan.application_name))
    try:  # the mark by which user_sessions finds it
        held = conn.scalar(f"SELECT GET_LOCK(CONCAT({mark}, CONNECTION_ID()), 0)")
    except RuntimeError as e:
        conn.close()
        raise UserFailed(f"connecting: {e}") from None
    if held != "1":
        conn.close()
        raise UserFailed(f"connecting: the session's mark was refused (GET_LOCK gave {held})")
    return conn


def reconnect(plan: WorkerPlan, cancel: threading.Event | None = None,
              timeout: float = RECONNECT_TIMEOUT_S) -> _native.MariaDBConnection:
    """``connect``, retried with a growing pause until the server accepts (at most
    ``timeout`` seconds) or ``cancel`` is set."""
    return reconnect_until(functools.partial(connect, plan), timeout, cancel)


def close(conn) -> None:
    """Close a user's session (or ``watch``'s)."""
    conn.close()


# ----- what the faults need (faults/kill.py)

def accepts(dsn: str, application_name: str = "oltplab") -> bool:
    """Whether the server accepts a session now (MariaDB takes no application name)."""
    try:
        client.connect(dsn, connect_timeout=2).close()
    except DatabaseError:
        return False
    return True


def watch(dsn: str):
    """A session of its own to find and end the users' sessions (``close`` it)."""
    return client.connect(dsn, connect_timeout=WATCH_TIMEOUT_S, read_timeout=WATCH_TIMEOUT_S,
                          write_timeout=WATCH_TIMEOUT_S)


def user_sessions(conn, application_name: str = "oltplab") -> list[tuple[int, str]]:
    """(id, command) of each session of ``application_name``'s users (those holding its mark),
    those running a statement ('Query') first, then by id; asked on ``watch``'s session."""
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id, command FROM information_schema.PROCESSLIST"
                        " WHERE IS_USED_LOCK(CONCAT(%s, id)) = id"
                        " ORDER BY command <> 'Query', id", (session_mark(application_name),))
            return [(int(i), str(c)) for i, c in cur.fetchall()]
    except client.Error as e:
        raise DatabaseError(f"cannot list the users' sessions: {client.error_text(e)}") from None


def end_session(conn, session_id: int) -> bool:
    """``KILL CONNECTION`` of session ``session_id``: its transaction in flight is rolled back
    and its user finds the session gone. False when it had ended already."""
    try:
        with conn.cursor() as cur:
            cur.execute(f"KILL CONNECTION {int(session_id)}")
        return True
    except client.Error as e:
        if client.error_code(e) == UNKNOWN_THREAD:
            return False
        raise DatabaseError(f"cannot end session {session_id}: {client.error_text(e)}") \
            from None


class Users(LoopUsers):
    """Every user of one worker on MariaDB: their sessions and their C loop. ``reopen``
    (``reconnect`` with the plan) opens a user's new session after it lost its own; without
    it a lost session fails the run."""

    def __init__(self, conns: list, user_plans: list[UserPlan], plan: WorkerPlan,
                 reopen: Callable[..., object] | None = None, bulk: int = LOOP_SAMPLES):
        super().__init__(plan.workload, conns, user_plans, plan.w_max, plan.constants,
                         reopen=reopen, bulk=bulk)
        self.waits = plan.keying_thinking
        self.sql = plan.mode == "sql"

    def _make_loop(self, rec: Recorder) -> _native.MariaDBLoop:
        return _native.MariaDBLoop(
            workload=self.workload, connections=self.conns, terminals=self.terminals,
            ramp_end_ns=rec.ramp_end, measure_end_ns=rec.measure_end, waits=self.waits,
            max_retries=MAX_RETRIES, max_consecutive_errors=MAX_CONSECUTIVE_ERRORS,
            retryable=sorted(client.RETRYABLE_ERRORS), lost=sorted(LOST_ERRORS),
            bulk=self.bulk, resilient=self.reopen is not None, sql=self.sql)

    def _hand_over(self, index: int, conn) -> None:
        self.loop.replace(index, conn)

    def _close_conn(self, conn) -> None:
        conn.close()
