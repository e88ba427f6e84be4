"""A procedures-mode virtual user on libpq's asynchronous API, driven by event-loop callbacks.

Procedures mode is one round trip per transaction, so the client's cost per round trip decides
how much CPU the driver takes from a server on the same host. A coroutine per user over a
high-level driver costs about twice what pgbench does per call; this user keeps the cycle as
a small state machine instead: the event loop calls ``_readable`` when its socket has data,
the answer is read with libpq (psycopg's ``pq`` binding, in C) and the next call is sent from
the same callback, with no task switch and no future per transaction. Keying and think
times are timer callbacks. The rules are those of ``vuser.VirtualUser`` (which runs
``--mode sql``): the same deck, inputs, retries, error classes and boundary flushes, and the
same ``Recorder``.
"""

from __future__ import annotations

import asyncio
import random
import time

from psycopg import pq

from ..workloads.tpcc import mix
from ..workloads.tpcc.inputs import Inputs, RunConstants
from ..workloads.tpcc.transactions import MODULES
from .vuser import FLUSH_SQL, MAX_CONSECUTIVE_ERRORS, MAX_RETRIES, StatsPublication, UserFailed

_RETRYABLE = (b"40001", b"40P01")
_FATAL = (b"57P01", b"57P02", b"57P03", b"57P04", b"3D000")
_NAMES = tuple(m.NAME.encode() for m in MODULES)
_OK = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)
_SQLSTATE = pq.DiagnosticField.SQLSTATE
_PRIMARY = pq.DiagnosticField.MESSAGE_PRIMARY


def connect(dsn: str, application_name: str, flush_stats: bool):
    """Open and prepare one connection (blocking: run it in a thread)."""
    conn = pq.PGconn.connect(_conninfo(dsn, application_name))
    if conn.status != pq.ConnStatus.OK:
        message = conn.get_error_message().decode(errors="replace").strip()
        conn.finish()
        raise UserFailed(f"connecting: {message}")
    try:
        for name, module in zip(_NAMES, MODULES):
            _check(conn, conn.prepare(name, module.PROCEDURE.encode()), f"preparing {module.NAME}")
        if flush_stats:
            _check(conn, conn.exec_(FLUSH_SQL.encode()), "statistics flush")
    except BaseException:
        conn.finish()
        raise
    conn.nonblocking = 1
    return conn


def _conninfo(dsn: str, application_name: str) -> bytes:
    sep = "&" if "?" in dsn else "?"
    if dsn.startswith(("postgresql://", "postgres://")):
        return f"{dsn}{sep}application_name={application_name}".encode()
    return f"{dsn} application_name={application_name}".encode()


def _check(conn, res, what: str) -> None:
    if res is None or res.status not in _OK:
        message = (res.error_message if res is not None else conn.get_error_message())
        raise UserFailed(f"{what}: {message.decode(errors='replace').strip()}")


class PqUser(StatsPublication):
    """One terminal of procedures mode: its libpq connection, deck and input generator."""

    def __init__(self, conn, w_id: int, warehouses: tuple[int, ...], stock_d_id: int,
                 w_max: int, constants: RunConstants, seed: int, waits: bool,
                 flush_stats: bool = True):
        self.conn = conn
        self.w_id = w_id
        self.warehouses = warehouses
        self.rng = random.Random(seed)
        self.deck = mix.Deck(self.rng)
        self.gens = Inputs(self.rng, w_max, stock_d_id, constants).by_type()
        self.waits = waits
        self.flush_stats = flush_stats
        self._published = self._last_end = time.monotonic_ns()
        self._pending = False
        self._done: asyncio.Future | None = None
        self._closed = False

    # -- the public side, as VirtualUser --------------------------------------------------
    async def run(self, rec) -> None:
        """Run transactions until measure_end; raises UserFailed when it must stop."""
        loop = asyncio.get_running_loop()
        self.loop, self.rec = loop, rec
        self._next, self._stop = rec.ramp_end, rec.measure_end
        self._done = loop.create_future()
        self._errors = 0
        self._reading = False
        self._flushing = False
        self._expect = False  # a query is in flight
        self._watch()  # for the whole run: one registration, and a lost server is seen at once
        try:
            self._cycle()
            await self._done
        finally:
            self._unwatch()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._unwatch()
            self.conn.finish()

    # -- the cycle --------------------------------------------------------------------------
    def _cycle(self) -> None:
        """Draw the next card and its inputs; wait the keying time if asked."""
        kind = self.deck.draw()
        w_id = self.rng.choice(self.warehouses) if len(self.warehouses) > 1 else self.w_id
        self.kind = kind
        self.params = [str(x).encode() for x in self.gens[kind](w_id)]
        self.retries = 0
        if self.waits:
            self._sleep(mix.KEYING_S[kind], self._submit)
        else:
            self._submit()

    def _submit(self) -> None:
        now = time.monotonic_ns()
        if now >= self._next:
            self._cross(self._submit)
            return
        self.start = now
        self._send(_NAMES[self.kind], self.params)

    def _send(self, name: bytes, params) -> None:
        try:
            self.conn.send_query_prepared(name, params)
            self._flush_out()
        except Exception as e:  # noqa: BLE001 - a lost connection
            self._fail(f"{mix.NAMES[self.kind]}: lost the database connection ({e})")
            return
        self._expect = True

    def _flush_out(self) -> None:
        while self.conn.flush():  # 1: more to send on a full socket buffer (rare)
            time.sleep(0)

    def _readable(self) -> None:
        conn = self.conn
        try:
            conn.consume_input()
            if not self._expect:  # nothing in flight: a notice, or the server going away
                if conn.status != pq.ConnStatus.OK:
                    raise OSError(conn.get_error_message().decode(errors="replace").strip())
                return
            if conn.is_busy():
                return
            res = conn.get_result()
            while conn.get_result() is not None:
                pass
        except Exception as e:  # noqa: BLE001
            self._fail(f"{mix.NAMES[self.kind]}: lost the database connection ({e})")
            return
        self._expect = False
        if self._flushing:
            self._flushing = False
            self._after_flush(res)
            return
        end = time.monotonic_ns()
        self._note_end(end)
        status = res.status if res is not None else None
        if status in _OK:
            self._errors = 0
            kind = self.kind
            value = res.get_value(0, 0) if status == pq.ExecStatus.TUPLES_OK else None
            result = int(value) if value is not None else None
            if kind == mix.DELIVERY and result is not None:
                self.rec.skipped += 10 - result
            self.rec.done(kind, self.start, end, kind == 0 and result is not None and result < 0,
                          self.retries)
        else:
            state = res.error_field(_SQLSTATE) if res is not None else None
            if state in _RETRYABLE and self.retries < MAX_RETRIES:
                self.retries += 1
                self._send(_NAMES[self.kind], self.params)
                return
            if state is None or state.startswith(b"08") or state in _FATAL:
                self._fail(self._error_text(res, state))
                return
            self.rec.failed(self.kind, self.start, end, self.retries)
            self._errors += 1
            if self._errors >= MAX_CONSECUTIVE_ERRORS:
                self._fail(f"{mix.NAMES[self.kind]} keeps failing: {self._error_text(res, state)}")
                return
        if self.waits:
            self._sleep(mix.think_time(self.rng, mix.THINK_MEAN_S[self.kind]), self._cycle)
        else:
            self._cycle()

    # -- boundaries and waits ---------------------------------------------------------------
    def _cross(self, then) -> None:
        """Cross the next boundary, flushing the backend's statistics when they may be
        pending (see vuser.VirtualUser._cross); ``then`` continues the cycle."""
        self._then = then
        if self._flush_due():
            self._flushing = True
            try:
                self.conn.send_query(FLUSH_SQL.encode())
                self._flush_out()
            except Exception as e:  # noqa: BLE001
                self._fail(f"statistics flush: lost the database connection ({e})")
                return
            self._expect = True
            return
        self._crossed(None)

    def _after_flush(self, res) -> None:
        if res is None or res.status not in _OK:
            state = res.error_field(_SQLSTATE) if res is not None else None
            if state is None or state.startswith(b"08") or state in _FATAL:
                self._fail(self._error_text(res, state))
                return
        self._crossed(self._flushed())

    def _crossed(self, flushed_ns) -> None:
        last = self._next >= self._stop
        self.rec.cross(1 if last else 0, flushed_ns)
        if last:
            self._finish()
            return
        self._next = self._stop
        self._then()

    def _sleep(self, seconds: float, then) -> None:
        """Wait ``seconds``, crossing boundaries on the way."""
        wake = time.monotonic_ns() + int(seconds * 1e9)

        def tick() -> None:
            t = time.monotonic_ns()
            if t >= self._next:
                self._cross(tick)
                return
            if wake <= t:
                then()
                return
            self.loop.call_later((min(wake, self._next) - t) / 1e9, tick)

        tick()

    # -- plumbing ---------------------------------------------------------------------------
    def _watch(self) -> None:
        if not self._reading:
            self.loop.add_reader(self.conn.socket, self._readable)
            self._reading = True

    def _unwatch(self) -> None:
        if getattr(self, "_reading", False):
            try:
                self.loop.remove_reader(self.conn.socket)
            except Exception:  # noqa: BLE001 - the socket is gone already
                pass
            self._reading = False

    def _finish(self) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _fail(self, text: str) -> None:
        self._unwatch()
        if self._done is not None and not self._done.done():
            self._done.set_exception(UserFailed(text))

    def _error_text(self, res, state) -> str:
        if res is None:
            message = self.conn.get_error_message()
            return f"{mix.NAMES[self.kind]}: lost the database connection " \
                   f"({message.decode(errors='replace').strip()})"
        primary = res.error_field(_PRIMARY) or b""
        code = state.decode() if state else "?"
        return f"{mix.NAMES[self.kind]}: {primary.decode(errors='replace')} (SQLSTATE {code})"
