"""The clock arithmetic: a host's offsets from round trips, chrony's view and its bound."""

from __future__ import annotations

import pytest

from oltplab.cluster.clocks import (WARN_BOUND_S, Chrony, Offset, Probe, Reading, measure,
                                    offset_from, parse_tracking)

MS = 1_000_000


def probe(sent_ms: float, rtt_ms: float, host_shift_ms: float, where: float = 0.5) -> Probe:
    """A round trip starting at ``sent_ms`` (both clocks of the coordinator read the same
    number; its wall clock is 1e12 ms later), answered by a host whose clocks are
    ``host_shift_ms`` ahead, ``where`` of the way through the trip."""
    s, r = int(sent_ms * MS), int((sent_ms + rtt_ms) * MS)
    h = int((sent_ms + where * rtt_ms + host_shift_ms) * MS)
    wall = 10**12 * MS
    return Probe(Reading(wall + s, s), Reading(wall + h, h), Reading(wall + r, r))


def test_the_midpoint_of_the_shortest_round_trip():
    probes = [probe(0, 8, 1500), probe(20, 2, 1500, where=0.9), probe(40, 5, 1500)]
    off = offset_from("h2", probes)
    assert (off.rtt_ns, off.bound_ns, off.probes) == (2 * MS, 1 * MS, 3)
    # the host answered late in the trip: the midpoint is off by 0.8 ms, within the bound
    assert off.wall_offset_ns == off.mono_offset_ns == int(1500.8 * MS)
    assert abs(off.wall_offset_ns - 1500 * MS) <= off.bound_ns
    assert off.to_coordinator(off.to_host(123 * MS)) == 123 * MS
    assert off.to_coordinator(int(1521.8 * MS)) == 21 * MS
    with pytest.raises(ValueError):
        offset_from("h2", [])


class Here:
    """This machine's clocks for ``measure``: the given monotonic instants in turn (the wall
    clock 10**12 ms later)."""

    def __init__(self, mono_ns: list[int]):
        self.left = list(mono_ns)

    def __call__(self) -> Reading:
        t = self.left.pop(0)
        return Reading(10**18 + t, t)


def test_measure_takes_the_shortest_round_trip_of_its_probes():
    # the host's clocks are 1,000,000 ns ahead; the second probe's answer was slow on its way
    # back; the third is the shortest (60 ns): its midpoint 1,030 against the host's 2,001,040
    answers = iter([Reading(5 * 10**17 + h, h) for h in (1_000_150, 1_000_350, 1_001_040)])
    off = measure("h2", lambda: next(answers), 3, here=Here([100, 210, 300, 900, 1000, 1060]))
    assert (off.host, off.probes, off.rtt_ns, off.bound_ns) == ("h2", 3, 60, 30)
    assert off.mono_offset_ns == 1_000_010
    assert off.wall_offset_ns == 5 * 10**17 - 10**18 + 1_000_010
    assert off.chrony is None and off.coordinator_chrony is None


def test_measure_ends_a_round_trip_where_the_answer_was_stamped():
    """An answer stamped on arrival by the thread that took it: the round trip ends there,
    not when the caller woke up (5 ms later here)."""
    stamped = iter([(Reading(0, 2_000_500), Reading(0, 1_000)),
                    (Reading(0, 2_010_400), Reading(0, 10_800))])
    off = measure("h1", lambda: next(stamped), 2, here=Here([0, 5_000_000, 10_000, 5_010_000]))
    assert (off.rtt_ns, off.bound_ns, off.mono_offset_ns) == (800, 400, 2_000_000)

    def no_answer() -> Reading:
        raise TimeoutError("no answer")
    with pytest.raises(TimeoutError):  # an ask that gets no answer ends the measure
        measure("h1", no_answer, 2, here=Here([0, 1]))


def test_the_warning_names_what_limits_the_bound():
    fine = offset_from("h2", [probe(0, 2, 0)])
    assert fine.warning() is None and fine.error_bound_s == pytest.approx(0.001)
    slow = offset_from("h3", [probe(0, 300, 0)])
    assert slow.error_bound_s == pytest.approx(0.15)
    assert slow.warning().startswith("h3: its clock is known to 150 ms only (the clock probe's")
    drifting = Chrony(offset_s=0.02, bound_s=0.08, stratum=3, leap="Normal", reference="x")
    off = offset_from("h4", [probe(0, 2, 0)], drifting, drifting)
    assert off.error_bound_s == pytest.approx(0.16) and off.error_bound_s > WARN_BOUND_S
    assert "chrony's error bound" in off.warning()
    doc = off.to_json()
    assert doc["error_bound_ms"] == 160.0 and doc["chrony"]["bound_s"] == 0.08
    assert isinstance(off, Offset) and doc["host"] == "h4"


def test_chrony_tracking_line():
    # the 14 fields of `chronyc -c tracking`: reference id, name, stratum, reference time,
    # system time (the correction), last and RMS offset, frequency, residual frequency, skew,
    # root delay, root dispersion, update interval, leap status
    line = ("C0A80001,192.168.0.1,3,1764300000.123456,-0.000250000,0.000012,0.000030,"
            "-12.5,0.001,0.05,0.020000,0.003000,64.2,Normal\n")
    c = parse_tracking(line)
    assert c.offset_s == pytest.approx(0.00025)  # a negative correction: the clock is fast
    assert c.bound_s == pytest.approx(0.00025 + 0.003 + 0.010)
    assert (c.stratum, c.leap, c.reference) == (3, "Normal", "192.168.0.1")
    unsynced = "7F7F0101,,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0,1.0,0.0,Not synchronised"
    assert parse_tracking(unsynced) is None
    assert parse_tracking("506 Cannot talk to daemon") is None
    assert parse_tracking(line.replace("0.020000", "x")) is None
