"""The coordinator's side of ``--loadgen``: a step's worker processes on the cluster's hosts.

``open_loadgen(names, cluster_dir, dsn)`` connects to the cluster ``cluster up`` started,
checks that each host is known and alive, and yields ``Fleets`` for the run; each step asks
it for a ``RemoteFleet``, which a Step drives as it drives its local worker processes
(spawn.Workers): start, send, wait, cleanup. The fleet places one relay task per host
(relay.serve, with cluster.submit_on: that host and no other, never retried), talks to it
through two Dask queues, measures each host's clock by pings before the plans go out
(cluster.clocks.measure), translates instants both ways, and watches each host:

- its heartbeat (every second): none for ``SILENCE_S`` (a worker stopped, cut off) fails
  the step naming the host (the relay protocol, cluster/protocol.py: its limits, Relays);
- its task: erred (the Dask worker died: KilledWorker) fails the step naming the host.

The coordinator sends a heartbeat every second too; a relay that stops hearing it, or is
told bye, or is cancelled, stops its worker processes. The step's window is set here, on
the coordinator's clock, and the server's TPM and NOPM are read here, once (step.py).
"""

from __future__ import annotations

import dataclasses
import itertools
import pickle
import queue
import time
from contextlib import contextmanager
from pathlib import Path

from ..cluster.clocks import Offset, Reading, measure, now
from ..cluster.protocol import (PROBE_TIMEOUT_S, RELAY_BYE_TIMEOUT_S, SILENCE_S,
                                START_TIMEOUT_S, Relays)
from ..errors import UsageError
from . import relay, split
from .spawn import Exited, FleetFailed


@contextmanager
def open_loadgen(names: tuple[str, ...], cluster_dir: Path):
    """``Fleets`` on the hosts ``names`` of the cluster in ``cluster_dir``: a one-line error
    (UsageError, exit 2) for an unknown host, OltplabError (exit 1) when no cluster is up or
    a host's worker is not alive."""
    from ..cluster.client import open_hosts
    with open_hosts(names, cluster_dir, "--loadgen") as (client, specs):
        yield Fleets(client, names, specs)


def hosts_dsn(target, hosts: list) -> str:
    """The DSN the hosts' worker processes connect with. A managed server: its TCP DSN with
    the password in it (``--listen``), refused in one line without TCP, or on a loopback
    address with a host elsewhere. ``--dsn``: as given, refused when it names a unix socket
    or a loopback address and a host is elsewhere."""
    from .step import is_local
    elsewhere = [h.name for h in hosts if h.ssh is not None]
    if target.instance is not None:
        dsn = target.instance.remote_dsn()
        if dsn is None:
            raise UsageError("--loadgen: the managed server listens on its private unix socket "
                             "only, which no other host can reach: start it with --listen "
                             "ADDRESS (TCP, with a password)")
    else:
        dsn = target.dsn
    if elsewhere and is_local(dsn):
        raise UsageError(f"--loadgen: {', '.join(elsewhere)} cannot reach the database on "
                         "this machine's unix socket or loopback address: give --listen an "
                         "address the hosts reach (or a --dsn that names one)")
    return dsn


class Fleets:
    """The hosts a run's steps put their worker processes on."""

    def __init__(self, client, names: tuple[str, ...], specs: list, dsn: str | None = None,
                 silence_s: float = SILENCE_S):
        self.client = client
        self.names = tuple(names)
        self.specs = specs
        self.dsn = dsn
        self.silence_s = silence_s

    def with_dsn(self, dsn: str) -> Fleets:
        return Fleets(self.client, self.names, self.specs, dsn, self.silence_s)

    def workers(self, users: int, default: int) -> int:
        return split.workers_for(users, default, len(self.names))

    def fleet(self, plans: list) -> RemoteFleet:
        if self.dsn is not None:
            plans = [dataclasses.replace(p, dsn=self.dsn) for p in plans]
        return RemoteFleet(self.client, self.names, plans, self.silence_s)

    def record(self) -> dict:
        """What the run's config records of them."""
        return {"hosts": list(self.names),
                "addresses": {s.name: s.address for s in self.specs}}


class RemoteFleet:
    """A step's worker processes on the hosts, as a Step sees them (spawn.Workers' calls)."""

    keeps_partial = True  # a host that fails leaves the others' counts to keep

    def __init__(self, client, names: tuple[str, ...], plans: list, silence_s: float):
        self.client = client
        self.silence_s = silence_s
        self.share = split.split(plans, names)
        self.hosts = [h for h in names if self.share[h]]
        self.where = {p.worker: h for h, ps in self.share.items() for p in ps}
        self.alive: set[int] = set(self.where)
        self.events: queue.Queue = queue.Queue()
        self.clocks: dict[str, Offset] = {}
        self.failed: dict[str, str] = {}
        self.told: set[str] = set()  # the failures FleetFailed has reported
        self.pending: list = []  # messages taken with a failure, for the next wait
        self.pings = itertools.count()
        # the host's clocks and this machine's on the pong's arrival, per ping
        self.pongs: dict[tuple[str, int], tuple[Reading, Reading]] = {}
        self.relays = Relays(client, "loadgen", self.hosts, self._arrived, relay.pack([("hb",)]),
                             self._live, silence_s, what="relay",
                             early="ended before its workers reported")

    # -- start -------------------------------------------------------------------------
    def start(self) -> None:
        """Place the relays, wait for each, measure its clock, send it its plans."""
        from ..cluster import submit_on
        self.relays.start(lambda h, up, down: submit_on(self.client, h, relay.serve, h, up, down,
                                                        self.silence_s))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not all(self.relays.heard_from(h) for h in self.hosts):
            self._take(0.2)
            self._watch()
            if time.monotonic() > deadline:
                late = sorted(h for h in self.hosts if not self.relays.heard_from(h))
                raise FleetFailed(f"host {late[0]}: its relay did not start within "
                                  f"{START_TIMEOUT_S:g} s")
        for h in self.hosts:
            self.clocks[h] = measure(h, lambda: self._ping(h))
            self._put(h, [("plans", pickle.dumps(self.share[h]))])

    def _ping(self, host: str) -> tuple[Reading, Reading]:
        """One probe of the host's clocks: a ping, answered by its relay as it arrives; the
        host's clocks and this machine's when the pong arrived."""
        seq = next(self.pings)
        self._put(host, [("ping", seq)])
        deadline = time.monotonic() + PROBE_TIMEOUT_S
        while (host, seq) not in self.pongs:
            self._take(0.01)
            self._watch()
            if time.monotonic() > deadline:
                raise FleetFailed(f"host {host}: no answer to a ping within "
                                  f"{PROBE_TIMEOUT_S:g} s")
        return self.pongs[host, seq]

    def _arrived(self, host: str, item) -> None:
        """An item of the host's queue, as it comes (with this machine's clocks when it
        arrived)."""
        self.events.put((host, now(), relay.unpack(item)))

    def _live(self, host: str) -> bool:
        return host not in self.failed and host not in self.relays.finished_at

    def _put(self, host: str, orders: list) -> None:
        self.relays.put(host, relay.pack(orders))

    # -- what a Step calls -----------------------------------------------------------
    def send(self, msg) -> None:
        for h in self.hosts:
            if self._live(h):
                clock = self.clocks.get(h)
                self._put(h, [("send", split.to_host(msg, clock.mono_offset_ns if clock else 0))])

    def wait(self, timeout: float) -> list:
        """The workers' messages within ``timeout`` seconds on the coordinator's clock;
        FleetFailed (once per host) for a host that died or went silent, after which the
        messages taken with it come with the next call."""
        if self.pending:
            out, self.pending = self.pending, []
            return out
        out = self._take(timeout)
        try:
            self._watch()
        except FleetFailed:
            self.pending = out
            raise
        return out

    def _take(self, timeout: float) -> list:
        out: list = []
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            try:
                left = deadline - time.monotonic()
                host, at, events = (self.events.get(timeout=left) if left > 0 and not out
                                    else self.events.get_nowait())
            except queue.Empty:
                return out
            for ev in events:
                out += self._event(host, at, ev)

    def _event(self, host: str, at: Reading, ev: tuple) -> list:
        kind = ev[0]
        if kind == "msg":
            if host in self.failed:
                return []
            msg = ev[1]
            if isinstance(msg, Exited):
                self.alive.discard(msg.worker)
                return [Exited(msg.worker, f"host {host}: {msg.text}")]
            clock = self.clocks.get(host)
            return [split.from_host(msg, clock.mono_offset_ns if clock else 0)]
        if kind == "pong":
            self.pongs[host, ev[1]] = (ev[2], at)
        elif kind == "done":
            self.relays.finished_at.setdefault(host, time.monotonic())
        elif kind == "failed":
            self._fail(host, f"host {host}: {ev[1]}")
        return []

    def _watch(self) -> None:
        """Fail the hosts that died or went silent; FleetFailed for the first failure not
        told yet."""
        for h in self.hosts:
            if h in self.failed or not any(self.where[k] == h for k in self.alive):
                continue
            why = self.relays.lost(h)
            if why:
                self._fail(h, why)
        for h, text in self.failed.items():
            if h not in self.told:
                self.told.add(h)
                raise FleetFailed(text)

    def _fail(self, host: str, text: str) -> None:
        self.failed.setdefault(host, text)
        self.alive -= {k for k, h in self.where.items() if h == host}

    def parts(self, finals: dict, progress: dict, workload) -> list[dict]:
        """Each host's part of the step's record (split.host_part)."""
        return [split.host_part(h, self.share[h], finals, progress, workload,
                                self.clocks.get(h), self.failed.get(h)) for h in self.hosts]

    def cleanup(self, stop_msg=None) -> None:
        """Stop every host's workers (Stop, bye), wait for the relays, then cancel any
        left (a host that hangs stops its workers when it runs again and hears nothing)."""
        from distributed import wait as dask_wait
        try:
            for h in self.hosts:
                orders = [("send", stop_msg)] if stop_msg is not None else []
                self._put(h, orders + [("bye",)])
            live = [f for h, f in self.relays.futures.items() if h not in self.failed]
            if live:
                try:
                    dask_wait(live, timeout=RELAY_BYE_TIMEOUT_S)
                except Exception:  # noqa: BLE001 - timed out: cancelled below
                    pass
        except KeyboardInterrupt:
            pass
        finally:
            self.relays.close()
