"""One step of ``tpcc run``: one user count, its worker processes, its record.

The step assigns terminals (home warehouse, Stock-Level district), starts the worker
processes, waits until every virtual user has connected and prepared its statements, then
fixes

    ramp_end = now + rampup,  measure_end = ramp_end + duration

and tells the workers to run. At ramp_end and at measure_end the manager's monitor snapshots
the server's counters (engines/<name>/counters.py); the workers count client-side what
started at or after ramp_end and finished by measure_end. When every worker has reported, the
step's record is built (TPM, NOPM, latencies, input shares, warnings).

The server's unit (TPC-C's New-Orders, the shop's orders) is read from its tables, exact at
the snapshot's instant, which comes after the users' crossings (their statistics flushes).
So that the users' first counted transactions do not commit before it, a user that crosses
ramp_end waits there (Start's ``hold``) until the first snapshot is taken (Go): both sides
then count from the same instant, as at measure_end, where the users stop before the last
snapshot. The wait is recorded (``server.start_hold_s``: from ramp_end to Go).

Every wait has a deadline: a worker that fails or exits fails the step (``StepFailed``) within
seconds; after Ctrl-C ``interrupted`` stops the workers and returns the partial record when
the measurement had started; ``cleanup`` makes sure no worker process is left.
"""

from __future__ import annotations

import collections
import os
import random
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from ..config import RunSpec
from ..engines.base import SnapshotFailed, counters_delta
from ..engines.common.loop import UserPlan, WorkerPlan
from ..metrics.histogram import encode, merge, new_histogram
from ..metrics.summary import TypeCounts, client_rates, rate, server_rates, transaction_entry
from ..metrics.throughput import Points
from .. import engines, workloads
from . import worker
from .messages import Connected, Failed, Final, Flushed, Go, Progress, Start, Stop
from .spawn import Exited, FleetFailed, Workers

CONNECT_TIMEOUT_S = 30.0
SPAWN_TIMEOUT_S = 30.0
FINAL_TIMEOUT_S = worker.GRACE_S + 10.0  # after measure_end
STOP_TIMEOUT_S = 3.0  # after Stop, for the workers' partial Finals
# the monitor's own transactions between the snapshots when it flushes before each one: the
# ramp_end snapshot's, published by the flush before the measure_end snapshot, and that flush
MONITOR_XACTS = 2
BOUNDARY_WAIT_S = 2.0  # longest wait for the users' statistics flushes before a snapshot
TICK_S = 1.0
LOG_S = 10.0  # the driver's log: a line per 10 s of the window, as the shop's driver writes
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
    tpm: int  # client-side calls per minute, over the last few seconds
    headline: int  # the workload's headline unit per minute (tpcc: NOPM; the shop: OPM), alike
    rate_s: float | None = None  # the seconds the rates span (None: no rate yet, they are 0)


def default_workers(users: int, requested: int | None = None, local_server: bool = False,
                    worker_per_local_user: bool = False) -> int:
    """Worker processes for a step, at most one per user.

    By default one per usable CPU; half of them when the server runs on this host, because
    every driver process then takes CPU from the server it measures (on 2 cores one worker
    costs about 30% less CPU per transaction than two). ``worker_per_local_user`` (the engine's
    ``worker_per_local_user``): a local server's users get a worker each while they do not
    outnumber the CPUs, since one worker serving several of its sessions costs the server
    more than the worker saves (docs/benchmarks.md, "Worker processes on a local server").
    """
    if requested is None:
        try:
            requested = len(os.sched_getaffinity(0))
        except AttributeError:
            requested = os.cpu_count() or 1
        if local_server and not (worker_per_local_user and users <= requested):
            requested //= 2
    return max(1, min(users, requested))


def is_local(dsn: str) -> bool:
    """True when the DSN names a unix socket or a loopback address."""
    from urllib.parse import parse_qs, urlsplit
    try:
        parts = urlsplit(dsn)
        hosts = (parse_qs(parts.query).get("host", [])
                 + ([parts.hostname] if parts.hostname else []))
    except ValueError:
        return False
    if not hosts:
        return True  # libpq's default: the local unix socket
    return all(h.startswith("/") or h in ("localhost", "::1") or h.startswith("127.")
               for h in hosts)


def user_plans(workload, seed: int, users: int, warehouses: int, all_warehouses: bool
               ) -> list[UserPlan]:
    """The step's virtual users: terminals (home warehouse, Stock-Level district) and each
    user's seed, drawn from the step's ``seed``. They depend on nothing else, so a step split
    over hosts runs exactly the users of a step on one machine."""
    rng = random.Random(seed)
    terminals = workload.assign_users(rng, users, warehouses, all_warehouses)
    return [UserPlan(t.index, t.w_id, t.stock_d_id, t.warehouses, rng.getrandbits(63))
            for t in terminals]


def deal(users: list, nworkers: int) -> list[list]:
    """The users dealt over ``nworkers`` worker processes (user i to worker i mod n)."""
    shares: list[list] = [[] for _ in range(nworkers)]
    for u in users:
        shares[u.index % nworkers].append(u)
    return shares


def actor_connections(workload, users: int, nworkers: int) -> int:
    """The connections the actors of a step of ``users`` users over ``nworkers`` workers
    open (each worker's ``actors_for`` its share, as ``worker_plans`` deals them)."""
    shares = deal([UserPlan(i, 0, 0, (), 0) for i in range(users)], nworkers)
    return sum(workload.actors_for(len(share)) for share in shares)


def worker_plans(users: list[UserPlan], nworkers: int, dsn: str, spec: RunSpec,
                 warehouses: int, constants, flush_stats: bool, engine: str
                 ) -> list[WorkerPlan]:
    """The users dealt over ``nworkers`` worker processes (``deal``), each worker with its
    share's actors."""
    return [WorkerPlan(k, dsn, spec.mode, tuple(share), warehouses, constants,
                       spec.keying_thinking, CONNECT_TIMEOUT_S, flush_stats=flush_stats,
                       resilient=bool(spec.inject), engine=engine, workload=spec.workload,
                       actors=workloads.get(spec.workload).actors_for(len(share)))
            for k, share in enumerate(deal(users, nworkers))]


class StepFailed(Exception):
    """The step could not be measured: a worker failed or exited, or a wait ran out."""


def _wall(mono_ns: int) -> str:
    """ISO wall-clock time (UTC) of a monotonic instant."""
    ts = time.time() - (time.monotonic_ns() - mono_ns) / 1e9
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")


class Step:
    """One user count: spawn, connect, ramp up, measure, collect, stop."""

    def __init__(self, index: int, dsn: str, spec: RunSpec, users: int, warehouses: int,
                 constants, seed: int, monitor, on_tick, on_mark=None,
                 engine: str = "postgres", stop: threading.Event | None = None,
                 on_log=None, fleets=None):
        """``fleets``, when given, runs the worker processes elsewhere (``--loadgen``:
        remote.Fleets): ``fleets.workers(users, default)`` is how many, ``fleets.fleet(plans)``
        the object that starts and talks to them; by default they run here (spawn.Workers)."""
        self.index = index
        self.on_log = on_log  # a line of the driver's log (a workload with a unit row)
        self.live: dict[int, tuple] = {}  # per worker: Progress.live
        self.next_log = None
        self.stop = stop  # set: the step ends as on Ctrl-C, at its next turn (within a tick)
        self.steps = len(spec.users)
        self.warehouses = warehouses
        self.constants = constants
        self.spec = spec
        self.users = users
        self.monitor = monitor
        self.on_tick = on_tick
        self.on_mark = on_mark
        self.nworkers = default_workers(users, spec.workers, is_local(dsn),
                                        engines.get(engine).worker_per_local_user)
        if fleets is not None:
            self.nworkers = fleets.workers(users, self.nworkers)
        self.workload = workloads.get(spec.workload)
        self.flush_stats = monitor.flush_stats
        self.plans = worker_plans(
            user_plans(self.workload, seed, users, warehouses, spec.all_warehouses),
            self.nworkers, dsn, spec, warehouses, constants, self.flush_stats, engine)
        self.fleet = Workers(self.plans) if fleets is None else fleets.fleet(self.plans)
        self.finals: dict[int, Final] = {}
        self.connected: set[int] = set()
        self.flushed: tuple[dict[int, int], dict[int, int]] = ({}, {})
        self.progress: dict[int, tuple[int, int]] = {}
        # per worker: (t_ns, completed), or (t_ns, units) for a workload with a unit row, a
        # point a second kept in two arrays (the step's counts per 10 s and per second)
        self.points: dict[int, Points] = {}
        self.rates = collections.deque(maxlen=RATE_WINDOW + 1)
        self.t0 = self.ramp_end = self.measure_end = None
        self.s0 = self.s1 = None
        self.s0_sent = self.s1_sent = self.go_sent = None
        self.started_at = None

    # -- processes -------------------------------------------------------------------------
    def _pump(self, timeout: float) -> None:
        """Handle what the workers sent within ``timeout``; fail on a worker that died (or,
        over several hosts, a host that did)."""
        try:
            events = self.fleet.wait(timeout)
        except FleetFailed as e:
            raise StepFailed(f"{self.users} users: {e}") from None
        for ev in events:
            if isinstance(ev, Exited):
                if ev.worker not in self.finals:
                    raise StepFailed(f"{self.users} users: {ev.text}")
            else:
                self._handle(ev)

    def _handle(self, msg) -> None:
        if isinstance(msg, Progress):
            self.progress[msg.worker] = (msg.completed, msg.headline)
            if msg.live is not None:
                self.live[msg.worker] = msg.live
            points = self.points.get(msg.worker)
            if points is None:
                points = self.points[msg.worker] = Points()
            points.append(msg.t_ns, msg.headline if self.workload.unit_row else msg.completed)
        elif isinstance(msg, Final):
            self.finals[msg.worker] = msg
        elif isinstance(msg, Flushed):
            self.flushed[msg.boundary][msg.worker] = msg.users
        elif isinstance(msg, Connected):
            self.connected.add(msg.worker)
        elif isinstance(msg, Failed):
            raise StepFailed(f"{self.users} users: {msg.error}")

    # -- live progress ---------------------------------------------------------------------
    def _tick(self, now: int) -> None:
        completed = sum(c for c, _ in self.progress.values())
        headline = sum(n for _, n in self.progress.values())
        self.rates.append((now, completed, headline))
        if self.on_tick is None:
            return
        tpm = per_min = 0
        rate_s = None
        if len(self.rates) > 1:
            t_a, c_a, n_a = self.rates[0]
            dt = (now - t_a) / 1e9
            if dt > 0:
                tpm = round((completed - c_a) * 60 / dt)
                per_min = round((headline - n_a) * 60 / dt)
                rate_s = round(dt, 3)
        if self.ramp_end is None:
            phase, elapsed, length = "connecting", (now - self.t0) / 1e9, None
        elif now < self.ramp_end:
            phase, length = "rampup", self.spec.rampup
            elapsed = length - (self.ramp_end - now) / 1e9
        else:
            phase, elapsed, length = "measure", (now - self.ramp_end) / 1e9, self.spec.duration
            elapsed = min(elapsed, length)
        self.on_tick(Tick(self.index, self.steps, self.users, phase, round(elapsed, 3), length,
                          tpm, per_min, rate_s))

    # -- the step ----------------------------------------------------------------------------
    def _mark(self, name: str, t_ns: int | None = None) -> None:
        if self.on_mark is not None:
            self.on_mark(name, t_ns, step=self.index, users=self.users)

    def run(self) -> dict:
        self.t0 = time.monotonic_ns()
        self.started_at = _wall(self.t0)
        self._mark("step_start", self.t0)
        try:
            self.fleet.start()
        except FleetFailed as e:
            raise StepFailed(f"{self.users} users: {e}") from None
        # from the processes' start: over several hosts the relays start first (remote.py)
        deadline = time.monotonic_ns() + int(
            (SPAWN_TIMEOUT_S + CONNECT_TIMEOUT_S + 0.05 * self.users) * 1e9)
        next_tick = self.t0
        while len(self.connected) < self.nworkers:
            self._check_stop()
            now = time.monotonic_ns()
            if now >= deadline:
                raise StepFailed(f"{self.users} users: the virtual users did not connect in time")
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
        self.fleet.send(Start(self.ramp_end, self.measure_end, hold=True))
        final_deadline = self.measure_end + int(FINAL_TIMEOUT_S * 1e9)
        wait_ns = int(BOUNDARY_WAIT_S * 1e9) if self.flush_stats else 0
        next_tick = now
        while self.s1 is None or len(self.finals) < self.nworkers:
            self._check_stop()
            now = time.monotonic_ns()
            if self.s0 is None and self._boundary_due(0, self.ramp_end, wait_ns, now):
                self.s0_sent = now
                self.s0 = self._snapshot()
                self.fleet.send(Go())
                self.go_sent = time.monotonic_ns()
                continue
            if self.s0 is not None and self.s1 is None \
                    and self._boundary_due(1, self.measure_end, wait_ns, now):
                self.s1_sent = now
                self.s1 = self._snapshot()
                continue
            if now >= final_deadline:
                raise StepFailed(f"{self.users} users: workers did not report after the run")
            if now >= next_tick:
                self._tick(now)
                self._log(now)
                next_tick = now + int(TICK_S * 1e9)
            events = [next_tick, final_deadline]
            if self.s0 is None:
                events.append(max(now, self.ramp_end) if wait_ns == 0 else self.ramp_end + wait_ns)
            elif self.s1 is None:
                events.append(self.measure_end + wait_ns)
            self._pump((min(events) - now) / 1e9)
        self._log(self.measure_end, last=True)
        return self._record(self.measure_end, partial=False)

    def _log(self, now: int, last: bool = False) -> None:
        """Every LOG_S of the window (and at its end), a line of the units so far in the shop
        driver's own form: elapsed seconds, orders, OPM since the window began, the worst of
        the last 100 orders' and the average response time (ms), rollbacks."""
        if self.on_log is None or not self.workload.unit_row or now < self.ramp_end:
            return
        if self.next_log is None:
            self.next_log = self.ramp_end + int(LOG_S * 1e9)
        if now < self.next_log and not last:
            return
        while self.next_log <= now:
            self.next_log += int(LOG_S * 1e9)
        elapsed = max(1e-9, (min(now, self.measure_end) - self.ramp_end) / 1e9)
        lives = list(self.live.values())
        units = sum(v[0] for v in lives)
        us = sum(v[1] for v in lives)
        rolled = sum(v[2] for v in lives)
        worst = max((v[3] for v in lives), default=0)
        self.on_log(f"users={self.users} et={elapsed:7.1f} n_overall={units} "
                    f"opm={round(60 * (units - rolled) / elapsed)} "
                    f"rt_tot_lastn_max={worst / 1000:.0f} "
                    f"rt_tot_avg={(us / units / 1000) if units else 0:.1f} "
                    f"n_rollbacks_overall={rolled} "
                    f"rollback_rate={100 * rolled / units if units else 0:.2f}%")

    def _check_stop(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise KeyboardInterrupt

    def _snapshot(self):
        try:
            return self.monitor.snapshot()
        except SnapshotFailed as e:
            raise StepFailed(str(e)) from None

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
                self.s1 = self._snapshot()
            except StepFailed:
                self.s1 = None
        self.fleet.send(Stop())
        deadline = time.monotonic_ns() + int(STOP_TIMEOUT_S * 1e9)
        while self.fleet.alive - set(self.finals) and time.monotonic_ns() < deadline:
            try:
                self._pump((deadline - time.monotonic_ns()) / 1e9)
            except StepFailed:
                break
        if not measuring:
            return None
        return self._record(end_ns, partial=True)

    def failed(self) -> dict | None:
        """After a StepFailed: the partial record of what every host measured so far, when
        the workers ran on several hosts (a host that died or hung fails the step, the
        others' counts are kept); None for a step on this machine, as before."""
        if not getattr(self.fleet, "keeps_partial", False):
            return None
        try:
            return self.interrupted()
        except StepFailed:
            return None

    def cleanup(self) -> None:
        """Make sure no worker process is left: ask, wait briefly, then kill."""
        self.fleet.cleanup(Stop())

    # -- the record --------------------------------------------------------------------------
    def _record(self, end_ns: int, partial: bool) -> dict:
        measured_s = max(0.0, (end_ns - self.ramp_end) / 1e9)
        names = self.workload.transactions
        counts = {name: TypeCounts() for name in names}
        hists = {name: new_histogram() for name in names}
        inputs = self.workload.zero_inputs()
        for f in self.finals.values():
            if f.inputs is not None:
                self.workload.add_inputs(inputs, f.inputs)
            for name, c, h in zip(names, f.counts, f.histograms):
                counts[name] = counts[name] + c
                hists[name] = merge([hists[name], h])
        tpm = units = workload_tpm = None
        server = None
        wl = self.workload
        if self.s0 is not None and self.s1 is not None:
            server = counters_delta(self.s0, self.s1, wl.server_unit_key)
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
            # The counts hold what the users finished between their crossings of the window's
            # boundaries (they wait at ramp_end until the snapshot, and stop at measure_end),
            # whatever the manager's delay in snapshotting: per minute of the window, the
            # client's time base.
            server["snapshot_s"] = round((self.s1.t_ns - self.s0.t_ns) / 1e9, 3)
            server["start_hold_s"] = round((self.go_sent - self.ramp_end) / 1e9, 3)
            tpm, units = server_rates(server["xacts_delta"], server[wl.server_unit_key],
                                      measured_s)
            workload_tpm = rate(server["workload_xacts_delta"], measured_s)
        calls = {name: counts[name] for name in wl.calls}
        client_tpm, _ = client_rates(calls, measured_s, wl.unit_transaction)
        client_units = rate(counts[wl.unit_transaction].committed, measured_s)
        series = [self.points[k] for k in sorted(self.points)]
        rigor = wl.step_rigor(
            counts, inputs, client_tpm=client_tpm,
            server_tpm=workload_tpm if workload_tpm is not None else tpm, series=series,
            start_ns=self.ramp_end, end_ns=end_ns, warehouses=self.warehouses,
            autovacuum_runs=(server or {}).get("autovacuum_runs_delta", 0),
            per_second=bool(self.spec.inject), client_unit=client_units, server_unit=units,
            params=getattr(self.constants, "params", None) or self.spec.params)
        names = [n for n in names if n not in wl.optional or counts[n].count or counts[n].errors]
        transactions = {name: transaction_entry(counts[name], hists[name]) for name in names}
        for name, fields in rigor.pop("transaction_fields", {}).items():
            transactions[name].update(fields)
        parts = getattr(self.fleet, "parts", None)
        hosts = parts(self.finals, self.progress, wl) if parts is not None else None
        cpu_s = sum(f.cpu_s for f in self.finals.values())
        completed = sum(f.completed for f in self.finals.values())
        key = wl.unit_key
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
            key: units,
            "client_tpm": client_tpm,
            f"client_{key}": client_units,
            "server": server,
            **wl.step_fields(counts, hists),
            "transactions": transactions,
            "histograms": {name: encode(hists[name]) for name in names},
            "driver": {"workers": self.nworkers, "cpu_s": round(cpu_s, 3),
                       "cpu_us_per_transaction":
                           round(cpu_s * 1e6 / completed, 1) if completed else None,
                       **({"lost_connections": sum(f.lost for f in self.finals.values())}
                          if self.spec.inject else {})},
            **rigor,
            **({"loadgen": hosts} if hosts is not None else {}),
            "partial": partial,
        }
