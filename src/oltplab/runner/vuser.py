"""A virtual user: one asyncpg connection, one transaction in flight, the TPC-C cycle.

Cycle (clause 5.2.5): draw a card from the deck, draw the inputs, wait the keying time,
run the transaction and wait for its answer (the response time), wait the think time.
Keying and think times are off unless the run asks for them. Delivery runs inside the user
like every other transaction, not deferred (as HammerDB does).

Serialization failures (40001) and deadlocks (40P01) re-run the transaction with the same
inputs; they are counted as retries, never as the New-Order 1% rollbacks, and the response
time covers all attempts. A lost connection ends the user with ``UserFailed``, which fails
the run; other database errors are counted as errors and the user carries on.

Boundaries: a PostgreSQL backend publishes its transaction counts when a transaction ends
at least a second after its previous publication (else after 10 s idle). When a user first
reaches ramp_end, and again at measure_end, it therefore asks its backend to publish now
(``pg_stat_force_next_flush()``, between two transactions, waking from a keying or think time
if need be) unless, by the same rule seen from the client, nothing can be pending. The manager
snapshots the server's counters once every user has crossed, so that the server-side counts
cover the window (see engines/postgres/counters.py for what else they hold). Users that wait between transactions
seldom need the flush, so a thousand of them do not all query the server at the same instant.
The user stops at measure_end; a transaction in flight then finishes but does not count.
"""

from __future__ import annotations

import asyncio
import time
from array import array
from collections import Counter

import asyncpg

from ..metrics.histogram import HIGHEST_US, encode, new_histogram
from ..metrics.rigor import add_inputs, zero_inputs
from ..metrics.summary import TypeCounts
from ..workloads.tpcc import mix
from ..workloads.tpcc.inputs import RunConstants, terminal
from ..workloads.tpcc.transactions import MODULES, prepare

RETRYABLE = (asyncpg.exceptions.SerializationError, asyncpg.exceptions.DeadlockDetectedError)
RETRYABLE_STATES = ("40001", "40P01")  # the same two, as SQLSTATEs (procedures mode)
MAX_RETRIES = 100  # per transaction
BULK_SAMPLES = 1 << 20  # response times held per type before they enter the histogram
MAX_CONSECUTIVE_ERRORS = 100  # then the user gives up: something is broken, not contended
# the server shutting down or restarting, the database gone (and class 08, connection errors)
FATAL_STATES = ("57P01", "57P02", "57P03", "57P04", "3D000")
_FAILED = object()
# Reading a table makes the backend hold pending table statistics, without which PostgreSQL
# publishes nothing, not even this statement's own transaction: with it, the flush always
# publishes everything, itself included (exactly one transaction).
FLUSH_SQL = "SELECT pg_stat_force_next_flush() FROM warehouse LIMIT 1"
# PostgreSQL's PGSTAT_MIN_INTERVAL (1 s) and PGSTAT_IDLE_INTERVAL (10 s), with a margin for the
# difference between the server's timestamps and the client's
PUBLISHED_AFTER_NS = 1_050_000_000
IDLE_PUBLISHED_AFTER_NS = 10_500_000_000


class UserFailed(Exception):
    """The user cannot go on (lost connection, or every transaction fails)."""


def fatal_text(what: str, exc: BaseException) -> str:
    """One line for a fatal error: what failed, and why."""
    if isinstance(exc, asyncpg.PostgresError):
        return f"{what}: {exc} (SQLSTATE {getattr(exc, 'sqlstate', '?')})"
    return f"{what}: lost the database connection ({type(exc).__name__}: {exc})"


def is_fatal(exc: BaseException) -> bool:
    """True for errors that mean the connection or the database is gone."""
    if isinstance(exc, asyncpg.PostgresError):
        state = getattr(exc, "sqlstate", "") or ""
        return state.startswith("08") or state in FATAL_STATES
    return True  # InterfaceError, ConnectionDoesNotExistError, OSError, timeouts ...


class Recorder:
    """Counts and histograms of one worker's measured window, shared by its users.

    A transaction counts when it started at or after ``ramp_end`` and finished by
    ``measure_end``: its response time lies wholly in the window. ``inputs`` counts what the
    counted transactions drew (metrics.rigor.INPUT_KEYS: order lines and remote ones, remote
    and by-name payments, by-name order-status, deliveries and their skipped districts).
    """

    __slots__ = ("ramp_end", "measure_end", "committed", "rolled_back", "errors", "retries",
                 "total_us", "hists", "_samples", "completed", "new_orders", "inputs",
                 "users", "crossed", "cross_ns", "on_boundary")

    def __init__(self, ramp_end_ns: int, measure_end_ns: int, users: int = 0, on_boundary=None):
        self.ramp_end = ramp_end_ns
        self.measure_end = measure_end_ns
        self.users = users
        self.crossed = [0, 0]
        self.cross_ns: tuple[list[int], list[int]] = ([], [])  # when each user's flush ended
        self.on_boundary = on_boundary  # called with (boundary, users) once all have crossed
        n = len(mix.TYPES)
        self.committed = [0] * n
        self.rolled_back = [0] * n
        self.errors = [0] * n
        self.retries = [0] * n
        self.total_us = [0] * n
        self.hists = [new_histogram() for _ in range(n)]
        # Response times wait in compact arrays and enter the histograms in bulk (one
        # record_value per distinct value), off the virtual users' hot path.
        self._samples = [array("q") for _ in range(n)]
        self.completed = 0  # every phase, for live rates
        self.new_orders = 0
        self.inputs = zero_inputs()

    def done(self, kind: int, start: int, end: int, rolled_back: bool, retries: int) -> bool:
        """Count a completed transaction; True when it lies in the window."""
        self.completed += 1
        if kind == 0 and not rolled_back:
            self.new_orders += 1
        if start >= self.ramp_end and end <= self.measure_end:
            us = (end - start) // 1000
            if rolled_back:
                self.rolled_back[kind] += 1
            else:
                self.committed[kind] += 1
            self.retries[kind] += retries
            self.total_us[kind] += us
            samples = self._samples[kind]
            samples.append(us)
            if len(samples) >= BULK_SAMPLES:
                self._drain(kind)
            return True
        return False

    def add_samples(self, kind: int, us: array) -> None:
        """Response times (us) recorded elsewhere under the same window rule."""
        samples = self._samples[kind]
        samples.extend(us)
        if len(samples) >= BULK_SAMPLES:
            self._drain(kind)

    def add_counts(self, c: dict) -> None:
        """Counts kept elsewhere under the same rules: ``_native.ProcLoop.counts()``."""
        for k in mix.TYPES:
            self.committed[k] += c["committed"][k]
            self.rolled_back[k] += c["rolled_back"][k]
            self.errors[k] += c["errors"][k]
            self.retries[k] += c["retries"][k]
            self.total_us[k] += c["total_us"][k]
        if "inputs" in c:
            add_inputs(self.inputs, c["inputs"])
        self.completed += c["completed"]
        self.new_orders += c["new_orders"]
        for boundary in (0, 1):
            self.cross_ns[boundary].extend(c["cross_ns"][boundary])

    def failed(self, kind: int, start: int, end: int, retries: int) -> None:
        if start >= self.ramp_end and end <= self.measure_end:
            self.errors[kind] += 1
            self.retries[kind] += retries

    def cross(self, boundary: int, flushed_ns: int | None) -> None:
        """A user crossed a boundary; ``flushed_ns`` is when its flush statement ended (None
        when it needed none)."""
        if flushed_ns is not None:
            self.cross_ns[boundary].append(flushed_ns)
        self.crossed[boundary] += 1
        if self.crossed[boundary] == self.users and self.on_boundary is not None:
            self.on_boundary(boundary, self.users)

    def counts(self) -> tuple[TypeCounts, ...]:
        return tuple(TypeCounts(self.committed[k], self.rolled_back[k], self.errors[k],
                                self.retries[k], self.total_us[k]) for k in mix.TYPES)

    def _drain(self, kind: int) -> None:
        record = self.hists[kind].record_value
        for us, n in Counter(self._samples[kind]).items():
            record(us if 0 < us <= HIGHEST_US else (1 if us <= 0 else HIGHEST_US), n)
        self._samples[kind] = array("q")

    def encoded(self) -> tuple[str, ...]:
        for kind in range(len(self.hists)):
            self._drain(kind)
        return tuple(encode(h) for h in self.hists)


class StatsPublication:
    """When a user's backend last published its transaction counts, as seen from the client.

    Shared by both kinds of virtual user; the classes using it hold ``flush_stats``,
    ``_published``, ``_last_end`` and ``_pending``.
    """

    __slots__ = ()

    def _note_end(self, end: int) -> None:
        """A transaction ended at ``end``: it was published unless one was within a second."""
        if end - self._published >= PUBLISHED_AFTER_NS:
            self._published = end
            self._pending = False
        else:
            self._pending = True
        self._last_end = end

    def _flush_due(self) -> bool:
        """Must the backend be asked to publish before a boundary is crossed?"""
        return self.flush_stats and self._pending \
            and time.monotonic_ns() - self._last_end < IDLE_PUBLISHED_AFTER_NS

    def _flushed(self) -> int:
        t = self._published = self._last_end = time.monotonic_ns()
        self._pending = False
        return t


class VirtualUser(StatsPublication):
    """One terminal: its connection, prepared statements, deck and input generator."""

    __slots__ = ("conn", "mode", "term", "waits", "flush_stats", "_calls", "_next", "_stop",
                 "_published", "_last_end", "_pending")

    def __init__(self, conn, mode: str, plan, w_max: int, constants: RunConstants, waits: bool,
                 flush_stats: bool = True):
        self.conn = conn
        self.mode = mode
        self.term = terminal(plan, w_max, constants)  # deck and inputs, as procedures mode
        self.waits = waits
        self.flush_stats = flush_stats
        self._next = self._stop = 0
        self._published = self._last_end = 0  # when the backend last published its counts
        self._pending = False  # may the backend hold unpublished transaction counts?
        self._calls = None

    async def prepare(self) -> None:
        """Prepare this connection's statements (one call per type, or the client-side SQL)."""
        conn = self.conn
        if self.mode == "procedures":
            ps = await prepare(conn, {m.NAME: m.PROCEDURE for m in MODULES})
            self._calls = tuple(ps[m.NAME].fetchval for m in MODULES)
        else:
            calls = []
            for m in MODULES:
                calls.append(_sql_call(conn, m, await prepare(conn, m.STATEMENTS)))
            self._calls = tuple(calls)
        if self.flush_stats:  # publish the set-up's transactions before the run
            await conn.execute(FLUSH_SQL)
        self._published = self._last_end = time.monotonic_ns()

    async def run(self, rec: Recorder) -> None:
        """Run transactions until measure_end; raises UserFailed when it must stop."""
        self._next, self._stop = rec.ramp_end, rec.measure_end
        now = time.monotonic_ns
        term = self.term
        calls = self._calls
        done = rec.done
        sql = self.mode == "sql"
        conn = self.conn
        waits = self.waits
        consecutive_errors = 0
        while True:
            kind = term.next_kind()
            args = term.inputs(kind, term.warehouse())
            if sql:
                args = (args,)
            if waits and not await self._sleep(mix.KEYING_S[kind], rec):
                return
            start = now()
            if start >= self._next:
                if not await self._cross(rec):
                    return
                start = now()
            call = calls[kind]
            retries = 0
            while True:
                try:
                    result = await call(*args)
                    break
                except RETRYABLE:
                    if sql:
                        await _rollback(conn)
                    retries += 1
                    if retries <= MAX_RETRIES:
                        continue
                    result = _FAILED
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # noqa: BLE001 - classified below
                    if is_fatal(e):
                        raise UserFailed(fatal_text(mix.NAMES[kind], e)) from None
                    if sql:
                        await _rollback(conn)
                    consecutive_errors += 1
                    if consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                        raise UserFailed(f"{mix.NAMES[kind]} keeps failing: {e}") from None
                    result = _FAILED
                    break
            end = now()
            self._note_end(end)
            if result is _FAILED:
                rec.failed(kind, start, end, retries)
            else:
                consecutive_errors = 0
                if done(kind, start, end, kind == 0 and result is not None and result < 0,
                        retries) and sql:
                    tally(rec.inputs, kind, args, result)
            if waits and not await self._sleep(term.think_time(kind), rec):
                return

    async def _cross(self, rec: Recorder) -> bool:
        """Cross the next boundary: make sure the backend has published its transaction counts.
        False at the end."""
        flushed = None
        if self._flush_due():
            try:
                await self.conn.execute(FLUSH_SQL)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001
                if is_fatal(e):
                    raise UserFailed(fatal_text("statistics flush", e)) from None
            flushed = self._flushed()
        last = self._next >= self._stop
        rec.cross(1 if last else 0, flushed)
        if last:
            return False
        self._next = self._stop
        return True

    async def _sleep(self, seconds: float, rec: Recorder) -> bool:
        """Wait ``seconds``, crossing boundaries on the way; False once measure_end is reached."""
        now = time.monotonic_ns
        wake = now() + int(seconds * 1e9)
        while True:
            t = now()
            if t >= self._next:
                if not await self._cross(rec):
                    return False
                continue
            if wake <= t:
                return True
            await asyncio.sleep((min(wake, self._next) - t) / 1e9)


def tally(inputs: dict, kind: int, args: tuple, result) -> None:
    """Count the inputs a completed sql-mode transaction drew (``args`` as ``_sql_args``
    builds them: the type's argument tuple, and New-Order's order lines) [5.5]."""
    a = args[0]
    if kind == mix.NEW_ORDER:
        lines = args[1]
        inputs["new_orders"] += 1
        inputs["order_lines"] += len(lines)
        inputs["remote_order_lines"] += sum(supply != a[0] for _i, supply, _q in lines)
    elif kind == mix.PAYMENT:
        inputs["payments"] += 1
        inputs["remote_payments"] += a[2] != a[0]
        inputs["payments_by_last_name"] += a[5] >= 0
    elif kind == mix.ORDER_STATUS:
        inputs["order_statuses"] += 1
        inputs["order_status_by_last_name"] += a[3] >= 0
    elif kind == mix.DELIVERY:
        inputs["deliveries"] += 1
        inputs["skipped_deliveries"] += 10 - result


def _sql_call(conn, module, ps):
    run = module.run

    async def call(*args):
        return await run(conn, ps, *args)

    return call


async def _rollback(conn) -> None:
    if conn.is_in_transaction():
        try:
            await conn.execute("ROLLBACK")
        except Exception as e:  # noqa: BLE001
            if is_fatal(e):
                raise UserFailed(fatal_text("rollback", e)) from None
