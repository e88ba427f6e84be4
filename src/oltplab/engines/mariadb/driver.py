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
"""

from __future__ import annotations

import functools
import threading
from typing import Callable

from ... import _native
from ...errors import UsageError
from ..common.loop import (LOOP_SAMPLES, RECONNECT_TIMEOUT_S, LoopUsers, UserPlan, WorkerPlan,
                           reconnect_until)
from ..common.recorder import MAX_CONSECUTIVE_ERRORS, MAX_RETRIES, Recorder, UserFailed
from . import client

# A lost session: the client's own errors (client.CONNECTION_ERRORS), and the server's word
# that it ends it: 1053 shutdown in progress, 1927 connection killed, 4031 idle too long.
LOST_ERRORS = frozenset(client.CONNECTION_ERRORS | {1053, 1927, 4031})


def connect(plan: WorkerPlan) -> _native.MariaDBConnection:
    """One user's session on ``plan.dsn`` (blocking: run it in a thread); UserFailed with the
    reason in one line."""
    try:
        args = client.connect_args(plan.dsn)
    except UsageError as e:
        raise UserFailed(str(e)) from None
    try:
        return _native.MariaDBConnection(
            host=args.get("host"), port=args.get("port", 0), user=args.get("user"),
            password=args.get("password"), database=args.get("database"),
            unix_socket=args.get("unix_socket"), option_file=args.get("read_default_file"),
            connect_timeout=max(1, round(min(plan.connect_timeout, args["connect_timeout"]))))
    except (ConnectionError, RuntimeError) as e:
        raise UserFailed(f"connecting: {e}") from None


def reconnect(plan: WorkerPlan, cancel: threading.Event | None = None,
              timeout: float = RECONNECT_TIMEOUT_S) -> _native.MariaDBConnection:
    """``connect``, retried with a growing pause until the server accepts (at most
    ``timeout`` seconds) or ``cancel`` is set."""
    return reconnect_until(functools.partial(connect, plan), timeout, cancel)


def close(conn: _native.MariaDBConnection) -> None:
    conn.close()


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
