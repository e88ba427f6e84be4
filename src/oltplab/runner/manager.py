"""The manager of ``tpcc run``: one step per user count, N worker processes per step.

For each user count of the sequence (HammerDB's autopilot) the manager assigns terminals
(home warehouse, Stock-Level district), starts the worker processes, waits until every
virtual user has connected and prepared its statements, then fixes

    ramp_end = now + rampup,  measure_end = ramp_end + duration

and tells the workers to run. At ramp_end and at measure_end it snapshots the server's
counters itself (engines/postgres/counters.py); the workers count client-side what started
at or after ramp_end and finished by measure_end. When every worker has reported, the step's
record is built, handed to ``on_step``, and the next step starts with new processes.

Every wait has a deadline. A worker that fails (lost connections, a dead database) or exits
fails the run within seconds; Ctrl-C (KeyboardInterrupt, which the CLI also raises for
SIGTERM) stops the workers, keeps the completed steps, and adds the current step marked
partial when its measurement had started. Workers never outlive the manager.
"""

from __future__ import annotations

import asyncio
import collections
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_ready

import asyncpg

from ..config import RunSpec
from ..engines.postgres import counters
from ..errors import DatabaseError, SchemaError
from ..metrics import rigor
from ..metrics.histogram import encode, merge, new_histogram
from ..metrics.summary import TypeCounts, client_rates, rate, server_rates, transaction_entry
from ..workloads.tpcc import mix
from ..workloads.tpcc.inputs import RunConstants, assign_terminals, draw_constants
from ..workloads.tpcc.transactions import new_order
from . import worker
from .vuser import FLUSH_SQL
from .messages import (Connected, Failed, Final, Flushed, Progress, Start, Stop, UserPlan,
                       WorkerPlan)

PROCEDURES = ("neword", "payment", "ostat", "delivery", "slev")
CONNECT_TIMEOUT_S = 30.0
SPAWN_TIMEOUT_S = 30.0
FINAL_TIMEOUT_S = worker.GRACE_S + 10.0  # after measure_end
STOP_TIMEOUT_S = 3.0
SNAPSHOT_TIMEOUT_S = 10.0
RECOVERY_WAIT_S = 120.0  # with --inject: how long a snapshot waits for the server to be back
# the monitor's own transactions between the snapshots when it flushes before each one: the
# ramp_end snapshot's, published by the flush before the measure_end snapshot, and that flush
MONITOR_XACTS = 2
BOUNDARY_WAIT_S = 2.0  # longest wait for the users' statistics flushes before a snapshot
TICK_S = 1.0
RATE_WINDOW = 5  # ticks over which live rates are computed


@dataclass(frozen=True)
class Tick:
    """Live progress, about once a second."""

    step: int  # 0-based index in the user sequence
    steps: int
    users: int
    phase: str  # 'connecting' | 'rampup' | 'measure'
    elapsed_s: float  # since the phase began
    phase_s: float | None  # length of the phase (None while connecting)
    tpm: int  # client-side, over the last few seconds
    nopm: int


@dataclass(frozen=True)
class RunOutcome:
    status: str  # 'completed' | 'interrupted' | 'failed'
    error: str | None
    constants: dict
    steps: list = field(default_factory=list)
    workers: int = 0


def default_workers(users: int, requested: int | None = None, local_server: bool = False) -> int:
    """Worker processes for a step, at most one per user.

    By default one per usable CPU; half of them when the server runs on this host, because
    every driver process then takes CPU from the server it measures (on 2 cores one worker
    costs about 30% less CPU per transaction than two).
    """
    if requested is None:
        try:
            requested = len(os.sched_getaffinity(0))
        except AttributeError:
            requested = os.cpu_count() or 1
        if local_server:
            requested //= 2
    return max(1, min(users, requested))


def is_local(dsn: str) -> bool:
    """True when the DSN names a unix socket or a loopback address."""
    from urllib.parse import parse_qs, urlsplit
    try:
        parts = urlsplit(dsn)
        hosts = parse_qs(parts.query).get("host", []) + ([parts.hostname] if parts.hostname else [])
    except ValueError:
        return False
    if not hosts:
        return True  # libpq's default: the local unix socket
    return all(h.startswith("/") or h in ("localhost", "::1") or h.startswith("127.")
               for h in hosts)


def run_tpcc(dsn: str, spec: RunSpec, on_tick=None, on_step=None, on_mark=None,
             sampler_db=None) -> RunOutcome:
    """Run every step of ``spec.users`` against the loaded database at ``dsn``.

    ``sampler_db`` is the telemetry sampler's database source (telemetry/sources/database.py):
    its samples that count in the workload database's row are subtracted from
    ``workload_tpm``, and the snapshots take its lock.

    ``on_mark(name, t_ns, **attrs)`` hears the step boundaries on the monotonic clock, for a
    telemetry timeline: ``step_start`` (workers spawned), ``ramp_end`` and ``measure_end``
    (announced in advance, with their future instants) and ``step_end``.
    """
    from ..workloads.tpcc.schema import schema_info

    info = schema_info(dsn)
    rng = random.Random(spec.seed)
    constants = draw_constants(rng, info.c_last_load)
    monitor = _Monitor(dsn, sampler_db, patient=bool(spec.inject))
    steps: list[dict] = []
    status, error, most_workers = "completed", None, 0
    try:
        monitor.precheck(spec)
        for index, users in enumerate(spec.users):
            step = _Step(index, dsn, spec, users, info.warehouses, constants,
                         rng.getrandbits(63), monitor, on_tick, on_mark)
            most_workers = max(most_workers, step.nworkers)
            try:
                record = step.run()
            except _StepFailed as e:
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
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
    finally:
        monitor.close()
    return RunOutcome(status, error, constants.as_dict(), steps, most_workers)


class _StepFailed(Exception):
    pass


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
                                f" {need}; raise max_connections")

    def snapshot(self) -> counters.ServerCounters:
        """The server's counters; first, when it can, the monitor publishes its own pending
        transactions, so that exactly MONITOR_XACTS of them fall between two snapshots. A
        patient monitor tries again on a new connection until RECOVERY_WAIT_S have passed."""
        deadline = time.monotonic() + RECOVERY_WAIT_S
        while True:
            try:
                return self._snapshot()
            except _StepFailed:
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
            raise _StepFailed(f"server snapshot failed: {type(e).__name__}: {e}") from None

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


def _wall(mono_ns: int) -> str:
    """ISO wall-clock time (UTC) of a monotonic instant."""
    ts = time.time() - (time.monotonic_ns() - mono_ns) / 1e9
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")


class _Step:
    """One user count: spawn, connect, ramp up, measure, collect, stop."""

    def __init__(self, index: int, dsn: str, spec: RunSpec, users: int, warehouses: int,
                 constants: RunConstants, seed: int, monitor: _Monitor, on_tick, on_mark=None):
        self.index = index
        self.steps = len(spec.users)
        self.warehouses = warehouses
        self.spec = spec
        self.users = users
        self.monitor = monitor
        self.on_tick = on_tick
        self.on_mark = on_mark
        self.nworkers = default_workers(users, spec.workers, is_local(dsn))
        rng = random.Random(seed)
        terminals = assign_terminals(rng, users, warehouses, spec.all_warehouses)
        shares: list[list[UserPlan]] = [[] for _ in range(self.nworkers)]
        for t in terminals:
            shares[t.index % self.nworkers].append(
                UserPlan(t.index, t.w_id, t.stock_d_id, t.warehouses, rng.getrandbits(63)))
        self.flush_stats = monitor.flush_stats
        self.plans = [WorkerPlan(k, dsn, spec.mode, tuple(share), warehouses, constants,
                                 spec.keying_thinking, CONNECT_TIMEOUT_S,
                                 flush_stats=self.flush_stats, resilient=bool(spec.inject))
                      for k, share in enumerate(shares)]
        self.procs: list[subprocess.Popen] = []
        self.pipes: list[Connection] = []
        self.errs: list = []
        self.alive: set[int] = set()
        self.finals: dict[int, Final] = {}
        self.connected: set[int] = set()
        self.flushed: tuple[dict[int, int], dict[int, int]] = ({}, {})
        self.progress: dict[int, tuple[int, int]] = {}
        self.points: dict[int, list[tuple[int, int]]] = {}  # per worker: (t_ns, completed)
        self.rates = collections.deque(maxlen=RATE_WINDOW + 1)
        self.t0 = self.ramp_end = self.measure_end = None
        self.s0 = self.s1 = None
        self.s0_sent = self.s1_sent = None
        self.started_at = None

    # -- processes -------------------------------------------------------------------------
    def _spawn(self) -> None:
        """Start each worker as ``python -m oltplab.runner.worker`` on one end of a socket pair
        (never re-importing the caller's __main__); its stderr goes to a temporary file that
        is read only to explain a crash."""
        for plan in self.plans:
            mine, theirs = socket.socketpair()
            err = tempfile.TemporaryFile()
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "oltplab.runner.worker", str(theirs.fileno()),
                     str(os.getpid())],
                    pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=err, close_fds=True)
            except OSError as e:
                mine.close()
                err.close()
                raise _StepFailed(f"cannot start a worker process: {e}") from None
            finally:
                theirs.close()
            pipe = Connection(mine.detach())
            self.procs.append(proc)
            self.errs.append(err)
            self.pipes.append(pipe)
            self.alive.add(plan.worker)
            pipe.send(plan)

    def _broadcast(self, msg) -> None:
        for k in self.alive:
            try:
                self.pipes[k].send(msg)
            except (OSError, ValueError):
                pass

    def _crash_text(self, k: int) -> str:
        proc = self.procs[k]
        try:
            code = proc.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        text = ""
        try:
            self.errs[k].seek(0)
            lines = self.errs[k].read().decode("utf-8", "replace").strip().splitlines()
            text = f": {lines[-1]}" if lines else ""
        except (OSError, ValueError):
            pass
        return f"worker {k} exited unexpectedly (exit code {code}){text}"

    def _drain(self, k: int) -> None:
        """Handle worker k's messages; on end of file the worker has exited."""
        pipe = self.pipes[k]
        try:
            while pipe.poll():
                self._handle(pipe.recv())
        except (EOFError, OSError):
            self.alive.discard(k)
            if k not in self.finals:
                raise _StepFailed(f"{self.users} users: {self._crash_text(k)}") from None

    def _handle(self, msg) -> None:
        if isinstance(msg, Progress):
            self.progress[msg.worker] = (msg.completed, msg.new_orders)
            self.points.setdefault(msg.worker, []).append((msg.t_ns, msg.completed))
        elif isinstance(msg, Final):
            self.finals[msg.worker] = msg
        elif isinstance(msg, Flushed):
            self.flushed[msg.boundary][msg.worker] = msg.users
        elif isinstance(msg, Connected):
            self.connected.add(msg.worker)
        elif isinstance(msg, Failed):
            raise _StepFailed(f"{self.users} users: {msg.error}")

    def _pump(self, timeout: float) -> None:
        """Handle what the workers sent within ``timeout``; fail on a worker that died."""
        live = [self.pipes[k] for k in sorted(self.alive)]
        if not live:
            time.sleep(max(0.0, min(timeout, 0.1)))
            return
        ready = wait_ready(live, max(0.0, timeout))
        for k in sorted(self.alive):
            if self.pipes[k] in ready:
                self._drain(k)

    # -- live progress ---------------------------------------------------------------------
    def _tick(self, now: int) -> None:
        completed = sum(c for c, _ in self.progress.values())
        new_orders = sum(n for _, n in self.progress.values())
        self.rates.append((now, completed, new_orders))
        if self.on_tick is None:
            return
        tpm = nopm = 0
        if len(self.rates) > 1:
            t_a, c_a, n_a = self.rates[0]
            dt = (now - t_a) / 1e9
            if dt > 0:
                tpm, nopm = round((completed - c_a) * 60 / dt), round((new_orders - n_a) * 60 / dt)
        if self.ramp_end is None:
            phase, elapsed, length = "connecting", (now - self.t0) / 1e9, None
        elif now < self.ramp_end:
            phase, length = "rampup", self.spec.rampup
            elapsed = length - (self.ramp_end - now) / 1e9
        else:
            phase, elapsed, length = "measure", (now - self.ramp_end) / 1e9, self.spec.duration
            elapsed = min(elapsed, length)
        self.on_tick(Tick(self.index, self.steps, self.users, phase, round(elapsed, 3), length,
                          tpm, nopm))

    # -- the step ----------------------------------------------------------------------------
    def _mark(self, name: str, t_ns: int | None = None) -> None:
        if self.on_mark is not None:
            self.on_mark(name, t_ns, step=self.index, users=self.users)

    def run(self) -> dict:
        self.t0 = time.monotonic_ns()
        self.started_at = _wall(self.t0)
        self._mark("step_start", self.t0)
        self._spawn()
        deadline = self.t0 + int((SPAWN_TIMEOUT_S + CONNECT_TIMEOUT_S + 0.05 * self.users) * 1e9)
        next_tick = self.t0
        while len(self.connected) < self.nworkers:
            now = time.monotonic_ns()
            if now >= deadline:
                raise _StepFailed(f"{self.users} users: the virtual users did not connect in time")
            if now >= next_tick:
                self._tick(now)
                next_tick = now + int(TICK_S * 1e9)
            self._pump(min(next_tick, deadline) / 1e9 - now / 1e9)
        now = time.monotonic_ns()
        self.ramp_end = now + int(self.spec.rampup * 1e9)
        self.measure_end = self.ramp_end + int(self.spec.duration * 1e9)
        self.rates.clear()
        self._mark("ramp_end", self.ramp_end)
        self._mark("measure_end", self.measure_end)
        self._broadcast(Start(self.ramp_end, self.measure_end))
        final_deadline = self.measure_end + int(FINAL_TIMEOUT_S * 1e9)
        wait_ns = int(BOUNDARY_WAIT_S * 1e9) if self.flush_stats else 0
        next_tick = now
        while self.s1 is None or len(self.finals) < self.nworkers:
            now = time.monotonic_ns()
            if self.s0 is None and self._boundary_due(0, self.ramp_end, wait_ns, now):
                self.s0_sent = now
                self.s0 = self.monitor.snapshot()
                continue
            if self.s0 is not None and self.s1 is None \
                    and self._boundary_due(1, self.measure_end, wait_ns, now):
                self.s1_sent = now
                self.s1 = self.monitor.snapshot()
                continue
            if now >= final_deadline:
                raise _StepFailed(f"{self.users} users: workers did not report after the run")
            if now >= next_tick:
                self._tick(now)
                next_tick = now + int(TICK_S * 1e9)
            events = [next_tick, final_deadline]
            if self.s0 is None:
                events.append(max(now, self.ramp_end) if wait_ns == 0 else self.ramp_end + wait_ns)
            elif self.s1 is None:
                events.append(self.measure_end + wait_ns)
            self._pump((min(events) - now) / 1e9)
        self._mark("step_end")
        return self._record(self.measure_end, partial=False)

    def _boundary_due(self, boundary: int, at_ns: int, wait_ns: int, now: int) -> bool:
        """Snapshot time: every worker reported its users' flushes, or the wait is over."""
        if now < at_ns:
            return False
        return len(self.flushed[boundary]) == self.nworkers or now >= at_ns + wait_ns

    def interrupted(self) -> dict | None:
        """After Ctrl-C: stop the workers; the partial record if the measurement had started."""
        now = time.monotonic_ns()
        measuring = self.ramp_end is not None and now >= self.ramp_end and self.s0 is not None
        end_ns = min(now, self.measure_end) if measuring else now
        if measuring and self.s1 is None:
            self.monitor.reset()
            self.s1_sent = time.monotonic_ns()
            try:
                self.s1 = self.monitor.snapshot()
            except _StepFailed:
                self.s1 = None
        self._broadcast(Stop())
        deadline = time.monotonic_ns() + int(STOP_TIMEOUT_S * 1e9)
        while self.alive - set(self.finals) and time.monotonic_ns() < deadline:
            try:
                self._pump((deadline - time.monotonic_ns()) / 1e9)
            except _StepFailed:
                break
        if not measuring:
            return None
        return self._record(end_ns, partial=True)

    def cleanup(self) -> None:
        """Make sure no worker process is left: ask, wait briefly, then kill."""
        try:
            self._broadcast(Stop())
            deadline = time.monotonic() + STOP_TIMEOUT_S
            for p in self.procs:
                try:
                    p.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        except KeyboardInterrupt:
            pass
        finally:
            for p in self.procs:
                if p.poll() is None:
                    p.kill()
            for p in self.procs:
                try:
                    p.wait(2.0)
                except subprocess.TimeoutExpired:
                    pass
            for f in self.pipes + self.errs:
                f.close()

    # -- the record --------------------------------------------------------------------------
    def _record(self, end_ns: int, partial: bool) -> dict:
        measured_s = max(0.0, (end_ns - self.ramp_end) / 1e9)
        counts = {name: TypeCounts() for name in mix.NAMES}
        hists = {name: new_histogram() for name in mix.NAMES}
        inputs = rigor.zero_inputs()
        for f in self.finals.values():
            if f.inputs is not None:
                rigor.add_inputs(inputs, f.inputs)
            for name, c, h in zip(mix.NAMES, f.counts, f.histograms):
                counts[name] = counts[name] + c
                hists[name] = merge([hists[name], h])
        tpm = nopm = workload_tpm = None
        server = None
        if self.s0 is not None and self.s1 is not None:
            server = counters.delta(self.s0, self.s1)
            # the users' and the monitor's own transactions between the snapshots are not TPM
            own = sum(t > self.s0_sent for f in self.finals.values() for t in f.crossings[0])
            own += sum(t <= self.s1_sent for f in self.finals.values() for t in f.crossings[1])
            own += MONITOR_XACTS if self.flush_stats else 0
            server["xacts_delta"] -= own
            server["workload_xacts_delta"] -= own
            server["own_xacts_excluded"] = own
            sampler = self.monitor.sampler_db
            if sampler is not None:  # HammerDB's TPM keeps the sampler, as any monitoring
                sampled = sampler.transactions_between(self.s0.t_ns, self.s1.t_ns)
                server["workload_xacts_delta"] -= sampled
                server["sampler_xacts_excluded"] = sampled
            # The counts hold what the users finished between their flushes at the window's
            # boundaries, whatever the manager's delay in snapshotting: per minute of the
            # window, the client's time base.
            server["snapshot_s"] = round((self.s1.t_ns - self.s0.t_ns) / 1e9, 3)
            tpm, nopm = server_rates(server["xacts_delta"], server["d_next_o_id_delta"],
                                     measured_s)
            workload_tpm = rate(server["workload_xacts_delta"], measured_s)
        client_tpm, client_nopm = client_rates(counts, measured_s)
        transactions = {name: transaction_entry(counts[name], hists[name]) for name in mix.NAMES}
        transactions["delivery"]["skipped_districts"] = \
            inputs["skipped_deliveries"] if inputs["deliveries"] else None
        cpu_s = sum(f.cpu_s for f in self.finals.values())
        completed = sum(f.completed for f in self.finals.values())
        rigor_fields = self._rigor(counts, inputs, client_tpm,
                                   workload_tpm if workload_tpm is not None else tpm, end_ns,
                                   server)
        return {
            "users": self.users,
            "rampup_s": self.spec.rampup,
            "duration_s": self.spec.duration,
            "measured_s": round(measured_s, 3),
            "started_at": self.started_at,
            "ramp_end_at": _wall(self.ramp_end),
            "ended_at": _wall(end_ns),
            "tpm": tpm,
            "workload_tpm": workload_tpm,
            "nopm": nopm,
            "client_tpm": client_tpm,
            "client_nopm": client_nopm,
            "server": server,
            "transactions": transactions,
            "histograms": {name: encode(hists[name]) for name in mix.NAMES},
            "driver": {"workers": self.nworkers, "cpu_s": round(cpu_s, 3),
                       "cpu_us_per_transaction":
                           round(cpu_s * 1e6 / completed, 1) if completed else None,
                       **({"lost_connections": sum(f.lost for f in self.finals.values())}
                          if self.spec.inject else {})},
            **rigor_fields,
            "partial": partial,
        }

    def _rigor(self, counts: dict, inputs: dict, client_tpm: int, server_tpm: int | None,
               end_ns: int, server: dict | None) -> dict:
        """The step's input shares, completions per 10 s and warnings (metrics/rigor.py)."""
        new_order = counts["new_order"]
        series = [self.points[k] for k in sorted(self.points)]
        per_10s = rigor.per_interval(series, self.ramp_end, end_ns) if series else []
        cv = rigor.variation(per_10s)
        shares = rigor.input_shares(inputs, new_order.committed, new_order.rolled_back)
        warnings = rigor.step_warnings(
            client_tpm=client_tpm, server_tpm=server_tpm,
            completed=sum(c.count for c in counts.values()),
            errors=sum(c.errors for c in counts.values()),
            retries=sum(c.retries for c in counts.values()), inputs=inputs,
            committed_new_orders=new_order.committed,
            rolled_back_new_orders=new_order.rolled_back, warehouses=self.warehouses,
            cv=cv, intervals=len(per_10s),
            autovacuum_runs=(server or {}).get("autovacuum_runs_delta", 0))
        throughput = {"interval_s": rigor.INTERVAL_S, "completed": per_10s,
                      "cv": None if cv is None else round(cv, 4)}
        if self.spec.inject and series:  # completions per second, for the faults' dips
            throughput["per_s"] = rigor.per_interval(series, self.ramp_end, end_ns, 10**9)
        return {"inputs": {k: None if v is None else round(v, 6) for k, v in shares.items()},
                "input_counts": inputs,
                "throughput": throughput,
                "warnings": warnings}
