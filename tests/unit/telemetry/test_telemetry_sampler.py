"""The sampler itself: its schedule, marks, the timeline format, and errors that never
escape the sampling thread."""

from __future__ import annotations

import json
import time

import pytest

from oltplab.errors import OltplabError, UsageError
from oltplab.telemetry.sampler import Sampler, Timeline, clock_pair, next_due, wall_grid
from oltplab.telemetry.sources import Source

S = 1_000_000_000


def test_schedule_on_the_grid():
    assert next_due(0, S, 0, []) == S
    assert next_due(0, S, S, []) == 2 * S
    assert next_due(0, S, S + S // 10, []) == 2 * S  # a late sample does not shift the grid
    assert next_due(0, S, 2 * S - 1, []) == 3 * S  # a tick never follows within half
    assert next_due(0, S, int(1.6 * S), []) == 3 * S


def test_schedule_with_marks():
    assert next_due(0, S, S, [int(1.3 * S)]) == int(1.3 * S)  # before the tick
    assert next_due(0, S, S, [int(2.4 * S)]) == int(2.4 * S)  # the tick at 2 s is skipped
    assert next_due(0, S, S, [int(2.6 * S)]) == 2 * S  # far enough: tick first
    assert next_due(0, S, int(2.4 * S), []) == 3 * S


def test_the_grid_is_placed_on_whole_multiples_of_the_interval_on_the_wall_clock():
    # the wall clock read 1,700,000,123.4 s at monotonic 50 s: the last whole second (UTC)
    # was 0.4 s before, the last whole quarter second 0.15 s before
    unix = 1_700_000_123_400_000_000
    assert wall_grid(S, 50 * S, unix) == 50 * S - 400_000_000
    assert wall_grid(S // 4, 50 * S, unix) == 50 * S - 150_000_000
    assert wall_grid(S, 50 * S, 1_700_000_123 * S) == 50 * S  # on a whole second already
    mono, wall = clock_pair()
    assert abs((time.time_ns() - wall) - (time.monotonic_ns() - mono)) < 50_000_000


def test_samples_fall_on_the_wall_clock_grid_and_record_both_clocks(tmp_path):
    interval = 250_000_000
    with Sampler(interval / S, power="none") as s:
        time.sleep(1.6)
    tl = s.stop()  # stopped by the with already: the same timeline
    t, wall = tl.columns["t_ns"], tl.columns["t_unix_ns"]
    assert len(wall) == len(t) >= 6 and tl.units["t_unix_ns"] == "ns (wall clock, UTC)"
    # both clocks advance together (no step of the wall clock here) ...
    offsets = [w - m for w, m in zip(wall, t)]
    assert max(offsets) - min(offsets) < 5_000_000
    assert abs(offsets[0] - (tl.t0_unix * S - tl.t0_ns)) < 5_000_000
    # ... and the grid's samples (all but the last, taken at stop) are on whole quarter
    # seconds of UTC, late by the thread's wake-up at most, never early
    late = sorted(w % interval for w in wall[:-1])
    assert late[len(late) // 2] < 30_000_000, late


def test_bad_arguments_fail_before_starting():
    for bad in (0, 0.01, -1, "x", 7200):
        with pytest.raises(UsageError, match="--sample-interval"):
            Sampler(bad)
    with pytest.raises(UsageError, match="not in /proc/diskstats"):
        Sampler(devices=["no-such-disk"])
    with pytest.raises(UsageError, match="--power"):
        Sampler(power="solar")


def test_marks_get_samples_and_the_timeline_is_json(tmp_path):
    # ticks every 0.5 s on the wall clock's grid; a sample near a mark is the mark's own (the
    # tolerance stays under the 250 ms a tick keeps from a sample, and a busy host fits in it)
    s = Sampler(0.5, paths={"datadir": tmp_path}, power="none")
    s.start()
    start = s.mark("step_start", users=2, step=0, where=tmp_path)
    ramp = start["t_ns"] + 250_000_000
    end = ramp + 300_000_000
    s.mark("ramp_end", t_ns=ramp, step=0)
    s.mark("measure_end", t_ns=end, step=0)
    time.sleep(1.3)
    tl = s.stop()
    assert s.stop() is tl  # stopping twice is harmless
    t = tl.columns["t_ns"]
    assert t == sorted(t) and tl.t0_ns < t[0] and tl.end_ns == t[-1]
    for mark in (start["t_ns"], ramp, end):  # a sample at each mark
        assert min(abs(x - mark) for x in t if x >= mark) < 150_000_000
    lengths = {len(v) for v in tl.columns.values()}
    # three marks, at least one tick of the grid after them, the last sample at stop
    assert lengths == {len(tl)} and len(tl) >= 4
    assert sum(tl.columns["dt_s"]) == pytest.approx((tl.end_ns - tl.t0_ns) / 1e9, abs=1e-4)
    assert all(0 < d <= 0.8 for d in tl.columns["dt_s"][1:-1])
    assert [m["name"] for m in tl.marks] == ["step_start", "ramp_end", "measure_end"]
    assert tl.marks[0]["users"] == 2 and tl.marks[0]["where"] == str(tmp_path)
    assert {"cpu.idle", "mem.used_bytes"} <= set(tl.columns) and tl.units["cpu.idle"] == "%"
    assert tl.overhead["samples"] == len(tl) and tl.overhead["cpu_s"] > 0
    text = json.dumps(tl.to_dict(), allow_nan=False)
    again = Timeline.from_dict(json.loads(text))
    assert again == tl


def test_timeline_version_is_checked():
    with pytest.raises(OltplabError, match="version 99"):
        Timeline.from_dict({"format": "oltplab-timeline", "version": 99})
    with pytest.raises(OltplabError, match="not a telemetry timeline"):
        Timeline.from_dict({"steps": []})


class Broken(Source):
    name = "broken"

    def __init__(self, column, fail_open=False):
        super().__init__()
        self.columns, self.units, self.fail_open = [column], {column: "1"}, fail_open
        self.calls = 0

    def open(self):
        if self.fail_open:
            raise OSError("no such meter")

    def read(self, t_ns):
        self.calls += 1
        if self.calls > 2:
            raise RuntimeError("meter fell over")
        return [float(self.calls)]


def test_failing_sources_give_nulls_and_counted_errors():
    broken, closed = Broken("broken.x"), Broken("broken.y", fail_open=True)
    s = Sampler(0.05, power="none", devices=[], interfaces=[], extra_sources=[broken, closed])
    s.start()
    time.sleep(0.4)
    tl = s.stop()  # no exception
    x = tl.columns["broken.x"]
    assert len(x) >= 5 and x[0] == 2.0 and all(v is None for v in x[1:])
    assert all(v is None for v in tl.columns["broken.y"])
    errors = {e["error"]: e for e in tl.errors}
    fell = errors["RuntimeError: meter fell over"]
    assert fell["source"] == "broken" and fell["repeats"] == len(x) - 2
    assert "cannot open: OSError: no such meter" in errors
    assert {e["source"] for e in tl.errors} == {"broken"}


def test_unreachable_database_is_an_error_not_an_exception():
    s = Sampler(0.1, db_dsn="postgresql://nobody@127.0.0.1:1/none", power="none",
                devices=[], interfaces=[])
    started = time.monotonic()
    s.start()
    time.sleep(0.3)
    tl = s.stop()
    assert time.monotonic() - started < 5
    assert tl.database["available"] is False
    assert all(v is None for v in tl.columns["db.commits_s"])
    assert any(e["source"] == "database" and "cannot connect" in e["error"] for e in tl.errors)
    assert tl.columns["mem.used_bytes"][-1] is not None  # the other sources carried on


def test_stop_after_ctrl_c_and_before_start():
    empty = Sampler(0.1, power="none").stop()
    assert len(empty) == 0 and empty.t0_ns is None
    s = Sampler(0.05, power="none")
    with pytest.raises(KeyboardInterrupt):
        try:
            s.start()
            time.sleep(0.15)
            raise KeyboardInterrupt
        finally:
            tl = s.stop()
    assert len(tl) >= 2 and not s.running


def test_context_manager_and_late_marks():
    with Sampler(0.05, power="none", devices=[], interfaces=[]) as s:
        time.sleep(0.12)
        s.mark("late", t_ns=time.monotonic_ns() - 10 * S)  # behind the samples: no sample
    tl = s.stop()
    assert tl.marks[0]["name"] == "late" and len(tl) <= 5


def test_a_source_whose_columns_are_taken_is_left_out():
    first, second = Broken("broken.x"), Broken("broken.x")
    s = Sampler(0.05, power="none", devices=[], interfaces=[], extra_sources=[first, second])
    s.start()
    time.sleep(0.12)
    tl = s.stop()
    assert tl.columns["broken.x"][0] == 2.0 and second.calls == 0
    assert any("broken.x is taken" in e["error"] for e in tl.errors)
