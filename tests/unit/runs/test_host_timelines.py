"""The other hosts' timelines in a run's record (runs/timeline.py): each host's figures per
step over this host's step marks, its clock, and a warning where its clock is known to 100 ms
or worse."""

from __future__ import annotations

import dataclasses

from oltplab.cluster.clocks import Probe, Reading, offset_from
from oltplab.runs.timeline import _host_figures
from oltplab.telemetry.derive import derive_steps
from oltplab.telemetry.sampler import Timeline

from ..report.test_report_fixtures import timeline_dict

MS = 1_000_000


def _offset(host: str, rtt_ms: int):
    half = rtt_ms * MS // 2
    return offset_from(host, [Probe(Reading(0, 0), Reading(half, half),
                                    Reading(2 * half, 2 * half))])


def test_each_hosts_figures_per_step_its_clock_and_a_warning_for_a_loose_clock():
    here = Timeline.from_dict(timeline_dict(users=(1, 2)))
    there = dataclasses.replace(here, marks=[])  # placed: its samples at the same instants
    fine, loose = _offset("h1", 2), _offset("h2", 300)
    parts = {"h1": {"timeline": there, "clock": fine.to_json()},
             "h2": {"timeline": there, "clock": loose.to_json(), "warning": loose.warning()},
             "h3": {"timeline": None, "clock": None, "error": "its sampler was lost: X"}}
    steps = [{"users": 1, "telemetry": {}}, {"users": 2, "telemetry": {}}]
    out = _host_figures(here, parts, steps)
    assert fine.warning() is None and loose.warning().startswith(
        "h2: its clock is known to 150 ms only")
    assert out["h1"] == {"clock": fine.to_json(), "samples": len(there)}
    assert out["h2"]["warning"] == loose.warning()
    assert out["h3"] == {"clock": None, "samples": 0, "error": "its sampler was lost: X"}
    assert [s["warnings"] for s in steps] == [[loose.warning()], [loose.warning()]]
    own = derive_steps(here, steps)
    for k, step in enumerate(steps):
        assert set(step["telemetry"]["hosts"]) == {"h1", "h2"}
        assert step["telemetry"]["hosts"]["h1"]["cpu"] == own[k]["cpu"]
