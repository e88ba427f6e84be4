"""The manager of ``tpcc run``: the user sequence, one step after another (step.py).

For each user count of the sequence (HammerDB's autopilot) a new ``Step`` starts its worker
processes, measures, and hands its record to ``on_step``; the next step starts with new
processes. With ``--users auto[:MAX]`` the sequence doubles (1, 2, 4 ...) and the manager
decides after each step, from its measured TPM, whether to run the next one (sequence.py).

The manager's monitor connection checks the database before the run and snapshots the
server's counters at each step's boundaries. A step that fails fails the run; Ctrl-C
(KeyboardInterrupt, which the CLI also raises for SIGTERM) stops the workers, keeps the
completed steps, and adds the current step marked partial when its measurement had started.
Workers never outlive the manager.
"""

from __future__ import annotations

import asyncio
import random
import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import asyncpg

from ..config import RunSpec
from ..engines.postgres import counters
from ..errors import DatabaseError, SchemaError
from ..workloads.tpcc.inputs import draw_constants
from ..workloads.tpcc.transactions import new_order
from . import sequence
from .step import Step, StepFailed, Tick, default_workers, is_local  # noqa: F401 (re-exported)
from .vuser import FLUSH_SQL

PROCEDURES = ("neword", "payment", "ostat", "delivery", "slev")
SNAPSHOT_TIMEOUT_S = 10.0
RECOVERY_WAIT_S = 120.0  # with --inject: how long a snapshot waits for the server to be back


@dataclass(frozen=True)
class RunOutcome:
    status: str  # 'completed' | 'interrupted' | 'failed'
    error: str | None
    constants: dict
    steps: list = field(default_factory=list)
    workers: int = 0
    stopped_because: str | None = None  # --users auto: why the search ended (sequence.py)


def run_tpcc(dsn: str, spec: RunSpec, on_tick=None, on_step=None, on_mark=None,
             sampler_db=None) -> RunOutcome:
    """Run the steps of ``spec.users`` against the loaded database at ``dsn``: every one, or
    with ``spec.users_auto`` those the search decides after each step (sequence.py).

    ``sampler_db`` is the telemetry sampler's database source (telemetry/sources/database.py):
    its samples that count in the workload database's row are subtracted from
    ``workload_tpm``, and the snapshots take its lock.

    ``on_mark(name, t_ns, **attrs)`` hears the step boundaries on the monotonic clock, for a
    telemetry timeline: ``step_start`` (workers spawned), ``ramp_end`` and ``measure_end``
    (announced in advance, with their future instants) and ``step_end`` (after ``on_step``,
    with ``last`` true when no step follows).
    """
    from ..workloads.tpcc.schema import schema_info

    info = schema_info(dsn)
    rng = random.Random(spec.seed)
    constants = draw_constants(rng, info.c_last_load)
    monitor = _Monitor(dsn, sampler_db, patient=bool(spec.inject))
    steps: list[dict] = []
    status, error, most_workers, stopped = "completed", None, 0, None
    try:
        monitor.precheck(spec)
        index, users = 0, spec.users[0]
        while users is not None:
            step = Step(index, dsn, spec, users, info.warehouses, constants,
                        rng.getrandbits(63), monitor, on_tick, on_mark)
            most_workers = max(most_workers, step.nworkers)
            try:
                record = step.run()
            except StepFailed as e:
                status, error = "failed", str(e)
                break
            except KeyboardInterrupt:
                status, error = "interrupted", "interrupted by the user"
                partial = step.interrupted()
                if partial is not None:
                    steps.append(partial)
                break
            finally:
                step.cleanup()
            steps.append(record)
            if on_step is not None:
                on_step(record)
            users, stopped = sequence.next_users(spec.users, spec.users_auto, steps)
            if on_mark is not None:
                on_mark("step_end", None, step=index, users=record["users"], last=users is None)
            index += 1
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
    finally:
        monitor.close()
    if spec.users_auto is not None and status != "completed":
        stopped = status
    return RunOutcome(status, error, constants.as_dict(), steps, most_workers, stopped)



class _Monitor:
    """The manager's own connection: checks before the run and the server snapshots."""

    def __init__(self, dsn: str, sampler_db=None, patient: bool = False):
        self.dsn = dsn
        self.patient = patient  # faults are injected: the server may be away for a while
        self.sampler_db = sampler_db
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(lambda loop, context: None)  # the library never prints
        self.conn = None
        self.flush_stats = False  # can users publish their statistics on demand (PG 15+)?

    def _run(self, coro, timeout: float):
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def _connection(self):
        if self.conn is None or self.conn.is_closed():
            self.conn = self._run(asyncpg.connect(
                self.dsn, timeout=SNAPSHOT_TIMEOUT_S, statement_cache_size=0,
                server_settings={"application_name": "oltplab-monitor"}), SNAPSHOT_TIMEOUT_S + 1)
        return self.conn

    def precheck(self, spec: RunSpec) -> None:
        """Raise before starting when the functions or the connection slots are missing."""
        try:
            conn = self._connection()
            if spec.mode == "procedures":
                found = self._run(conn.fetch(
                    "SELECT DISTINCT proname FROM pg_proc WHERE proname = ANY($1::text[])",
                    list(PROCEDURES)), SNAPSHOT_TIMEOUT_S)
                missing = sorted(set(PROCEDURES) - {r[0] for r in found})
                if missing:
                    raise SchemaError(f"the transaction functions {', '.join(missing)} are missing;"
                                      " rebuild the schema or use --mode sql")
                if self._run(conn.fetchval("SELECT to_regprocedure($1) IS NULL",
                                           new_order.SIGNATURE), SNAPSHOT_TIMEOUT_S):
                    raise SchemaError("the transaction functions are those of an older oltplab "
                                      f"(no {new_order.SIGNATURE}): rebuild the schema with "
                                      "'oltplab tpcc build --force' or use --mode sql")
            version = int(self._run(conn.fetchval("SHOW server_version_num"), SNAPSHOT_TIMEOUT_S))
            self.flush_stats = version >= 150000
            free = self._run(conn.fetchval("""
                SELECT current_setting('max_connections')::int
                       - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')
                       - CASE WHEN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
                              THEN 0 ELSE current_setting('superuser_reserved_connections')::int END
                """), SNAPSHOT_TIMEOUT_S)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncio.TimeoutError) as e:
            raise DatabaseError(f"cannot check the database: {e}") from None
        need = max(spec.users)
        if need > free:
            raise DatabaseError(f"the server accepts {free} more connections but --users asks for"
                                f" {need}; raise max_connections"
                                + (" or give auto:MAX" if spec.users_auto else ""))

    def snapshot(self) -> counters.ServerCounters:
        """The server's counters; first, when it can, the monitor publishes its own pending
        transactions, so that exactly MONITOR_XACTS of them fall between two snapshots. A
        patient monitor tries again on a new connection until RECOVERY_WAIT_S have passed."""
        deadline = time.monotonic() + RECOVERY_WAIT_S
        while True:
            try:
                return self._snapshot()
            except StepFailed:
                if not self.patient or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _snapshot(self) -> counters.ServerCounters:
        try:
            conn = self._connection()
            with self.sampler_db.lock if self.sampler_db is not None else nullcontext():
                if self.flush_stats:
                    self._run(conn.execute(FLUSH_SQL, timeout=SNAPSHOT_TIMEOUT_S),
                              SNAPSHOT_TIMEOUT_S + 1)
                return self._run(counters.snapshot(conn, timeout=SNAPSHOT_TIMEOUT_S),
                                 SNAPSHOT_TIMEOUT_S + 1)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncio.TimeoutError,
                asyncpg.InternalClientError) as e:  # the last: a connection the server dropped
            self.reset()
            raise StepFailed(f"server snapshot failed: {type(e).__name__}: {e}") from None

    def reset(self) -> None:
        """Drop the connection (after an interruption it may be in the middle of a query)."""
        if self.conn is not None:
            self.conn.terminate()
            self.conn = None

    def close(self) -> None:
        try:
            if self.conn is not None and not self.conn.is_closed():
                try:
                    self._run(self.conn.close(timeout=2), 3)
                except (Exception, KeyboardInterrupt):  # noqa: BLE001
                    self.conn.terminate()
            self.conn = None
        finally:
            self.loop.close()
