"""Each host's clocks against the coordinator's: what puts every host's samples and marks on
one timeline.

A probe is a round trip: the coordinator reads its clocks, asks the host for its own (a task
on the host's worker, a ping on a relay's queue, or a sampler's answer to ``clock``), and
reads its clocks again when the answer is back. ``measure`` is the one estimator: every
user of a host's clock (``cluster status``, the samplers, ``--loadgen``) probes through it.
The host read its clocks somewhere inside the round trip, so

    offset = host - (sent + received) / 2,   |error| <= (received - sent) / 2

for the wall clock and for the monotonic one alike (the monotonic offset maps the host's
``t_ns`` onto the coordinator's; the wall clock offset says how far apart the hosts' clocks
are). Of several probes the one with the shortest round trip gives the tightest bound.

Where chrony runs, its own view is recorded beside: how far the host's clock is from true
time (``chronyc -c tracking``: the system time's correction) and the bound chrony's
documentation gives for it, |correction| + root dispersion + root delay / 2. A host whose
bound exceeds ``WARN_BOUND_S`` gets a warning: its samples cannot be placed to better than
that.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

from ..telemetry.sampler import clock_pair

WARN_BOUND_S = 0.1
PROBES = 5


@dataclass(frozen=True)
class Reading:
    """A host's clocks at one instant: wall (ns since the epoch, UTC) and monotonic (ns)."""

    unix_ns: int
    mono_ns: int


@dataclass(frozen=True)
class Probe:
    """One round trip: the coordinator's clocks before and after, the host's in between."""

    sent: Reading
    host: Reading
    received: Reading


@dataclass(frozen=True)
class Chrony:
    """chrony's view of a host's clock: how far it is from true time and the bound on it."""

    offset_s: float  # the host's clock minus true time (the negated system time correction)
    bound_s: float  # |correction| + root dispersion + root delay / 2
    stratum: int
    leap: str
    reference: str


@dataclass(frozen=True)
class Offset:
    """A host's clocks against the coordinator's, from the tightest of its probes."""

    host: str
    wall_offset_ns: int  # host wall clock minus the coordinator's
    mono_offset_ns: int  # host monotonic clock minus the coordinator's
    bound_ns: int  # half the round trip: the midpoint's largest error
    rtt_ns: int
    probes: int
    chrony: Chrony | None = None
    coordinator_chrony: Chrony | None = None

    def to_coordinator(self, host_mono_ns: int) -> int:
        """A monotonic instant of the host on the coordinator's monotonic clock."""
        return host_mono_ns - self.mono_offset_ns

    def to_host(self, mono_ns: int) -> int:
        """A monotonic instant of the coordinator on the host's monotonic clock."""
        return mono_ns + self.mono_offset_ns

    @property
    def error_bound_s(self) -> float:
        """The larger of the round trip's bound and chrony's (host and coordinator summed)."""
        chrony = (self.chrony.bound_s + (self.coordinator_chrony.bound_s
                                         if self.coordinator_chrony else 0.0)) \
            if self.chrony else 0.0
        return max(self.bound_ns / 1e9, chrony)

    def warning(self) -> str | None:
        """One line when the host's time cannot be placed within ``WARN_BOUND_S``."""
        if self.error_bound_s <= WARN_BOUND_S:
            return None
        source = "chrony's error bound" if self.chrony and \
            self.chrony.bound_s >= self.bound_ns / 1e9 else "the clock probe's round trip"
        return (f"{self.host}: its clock is known to {1000 * self.error_bound_s:.0f} ms only "
                f"({source}; more than {1000 * WARN_BOUND_S:.0f} ms): its samples may be "
                "misplaced on the timeline by as much")

    def to_json(self) -> dict:
        doc = {k: v for k, v in asdict(self).items() if k not in ("chrony", "coordinator_chrony")}
        doc["error_bound_ms"] = round(1000 * self.error_bound_s, 3)
        doc["chrony"] = asdict(self.chrony) if self.chrony else None
        doc["coordinator_chrony"] = asdict(self.coordinator_chrony) \
            if self.coordinator_chrony else None
        return doc


def now() -> Reading:
    """This host's clocks, the wall clock read between two readings of the monotonic one."""
    mono, unix = clock_pair()
    return Reading(unix, mono)


def offset_from(host: str, probes: Sequence[Probe], chrony: Chrony | None = None,
                coordinator_chrony: Chrony | None = None) -> Offset:
    """The host's offsets from the probe with the shortest round trip."""
    if not probes:
        raise ValueError("no probe")
    best = min(probes, key=lambda p: p.received.mono_ns - p.sent.mono_ns)
    rtt = best.received.mono_ns - best.sent.mono_ns
    mid_unix = (best.sent.unix_ns + best.received.unix_ns) // 2
    mid_mono = (best.sent.mono_ns + best.received.mono_ns) // 2
    return Offset(host, best.host.unix_ns - mid_unix, best.host.mono_ns - mid_mono,
                  (rtt + 1) // 2, rtt, len(probes), chrony, coordinator_chrony)


def measure(host: str, ask: Callable[[], Reading | tuple[Reading, Reading]],
            probes: int = PROBES, chrony: Chrony | None = None,
            coordinator_chrony: Chrony | None = None,
            here: Callable[[], Reading] = now) -> Offset:
    """The one clock-offset estimator: probe ``host`` ``probes`` times through ``ask`` and
    take the offsets of the shortest round trip (``offset_from``). Every user of a host's
    clock calls it: ``cluster status`` (probe_hosts), the hosts' samplers and the load
    generator over hosts.

    ``ask`` gets the host's clocks there (a task on its worker, a relay's ping, a sampler's
    answer to ``clock``) and raises when none comes in time; this machine's clocks are read
    with ``here`` just before it and just after. Where the answer is stamped on arrival by
    the thread that took it, ``ask`` returns ``(the host's clocks, the arrival's)`` and the
    round trip ends there, not when the caller woke up."""
    taken = []
    for _ in range(probes):
        sent = here()
        got = ask()
        received = here()
        there, received = got if isinstance(got, tuple) else (got, received)
        taken.append(Probe(sent, there, received))
    return offset_from(host, taken, chrony, coordinator_chrony)


def parse_tracking(text: str) -> Chrony | None:
    """chrony's view from the CSV line of ``chronyc -c tracking``; None when it has none
    (not synchronised, or not a tracking line)."""
    fields = text.strip().split(",")
    if len(fields) < 14:
        return None
    try:
        correction = float(fields[4])
        root_delay, root_dispersion = float(fields[10]), float(fields[11])
        stratum = int(fields[2])
    except ValueError:
        return None
    leap = fields[13].strip()
    if leap.lower().startswith("not synchronised") or stratum == 0:
        return None
    return Chrony(offset_s=-correction, bound_s=abs(correction) + root_dispersion
                  + root_delay / 2, stratum=stratum, leap=leap, reference=fields[1])


def read_chrony(timeout: float = 2.0) -> Chrony | None:
    """This host's chrony view, None where chronyc is missing or chronyd does not answer."""
    chronyc = shutil.which("chronyc")
    if chronyc is None:
        return None
    try:
        out = subprocess.run([chronyc, "-c", "-n", "tracking"], capture_output=True,
                             text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_tracking(out.stdout) if out.returncode == 0 else None


def host_clocks() -> Reading:
    """What a probe asks of a host (a task on its worker): its clocks, now."""
    return now()


def host_chrony() -> Chrony | None:
    """chrony's view on a host (a task on its worker)."""
    return read_chrony()


def probe_hosts(client, hosts: Sequence[str], probes: int = PROBES,
                timeout: float = 10.0) -> dict[str, Offset | str]:
    """Each host's offset, probed with tasks on its worker, or why it could not be (a host
    that does not answer within ``timeout``). The probes hold none of the host's resources:
    they run beside a placed task, not after it."""
    from .client import placement
    out: dict[str, Offset | str] = {}
    mine = read_chrony()
    for host in hosts:
        where = {k: v for k, v in placement(host).items() if k != "resources"}
        try:
            chrony = client.submit(host_chrony, **where).result(timeout=timeout)
            out[host] = measure(host, lambda: client.submit(host_clocks, **where)
                                .result(timeout=timeout), probes, chrony, mine)
        except TimeoutError:
            out[host] = f"no answer in {timeout:g} s"
        except Exception as e:  # the worker went away, or a task failed there
            out[host] = f"{type(e).__name__}: {e}"
    return out
