"""The report's fault chart and table (report/events.py) from a made-up run record."""

from __future__ import annotations

import pytest

from oltplab.report.events import events_chart, events_table, lasted_s
from oltplab.report.runs import RunData

RECORD = {"kind": "tpcc", "steps": [{"throughput": {
    "interval_s": 10.0, "completed": [6000, 3000], "per_s": [600] * 10 + [0] * 5 + [600] * 5}}],
    "events": [{"kind": "kill-server", "event": "at=10s,kill-server", "at_s": 10.0,
                "for_s": None, "recovery_s": 4.2, "before_tpm": 36000.0, "dip_avg_pct": 100.0,
                "dip_max_pct": 100.0, "back_within_10pct_s": 5.0},
               {"kind": "throttle", "event": "at=99s,for=1s,throttle=write:1MiB",
                "error": "not fired: the run ended first"}]}


def test_the_chart_shades_each_fired_fault_over_tpm_per_second_and_per_10s():
    chart = events_chart(RunData(RECORD), "_1")
    assert chart.key == "events_tpm_1" and not chart.empty
    per_s, per_10s = chart.series
    assert per_s.y[:10] == (36000,) * 10 and per_s.y[10:15] == (0,) * 5
    assert per_10s.y[0] == 36000 and per_10s.y[15] == 18000  # each second shows its interval
    (band,) = chart.bands  # the throttle never fired: nothing to shade
    assert (band.x0, band.x1) == (10.0, 14.2)
    assert band.label == "kill-server, recovery 4.2 s, dip 100% avg, 100% max"


def test_the_table_lists_every_event_with_its_error_and_nothing_without_events():
    table = events_table(RunData(RECORD))
    assert [r[0] for r in table.rows] == ["at=10s,kill-server",
                                          "at=99s,for=1s,throttle=write:1MiB"]
    assert table.rows[0][3] == 4.2 and table.rows[1][-1] == "not fired: the run ended first"
    assert events_table(RunData({"kind": "tpcc"})) is None
    assert events_chart(RunData({"kind": "tpcc", "steps": []})) is None


# a device fault: what the remaining devices wrote and read during it (their counters)
REMOVAL = {"kind": "remove-device", "event": "at=3s,remove-device=1", "requested_at_s": 3.0,
           "at_s": 3.002, "seconds": 13.8, "bytes_moved": 1_204_000_000,
           "bytes_read": 3_500_000, "allocated_bytes": 832 * 2**20, "mb_per_s": 87.2,
           "background_write_bytes_s": 2_000_000, "before_tpm": 20000.0, "dip_avg_pct": 61.5,
           "dip_max_pct": 95.5, "back_within_10pct_s": 15.0}


def _run(*events) -> RunData:
    return RunData({"kind": "tpcc", "steps": [{"throughput": {
        "interval_s": 10.0, "completed": [2000] * 3, "per_s": [200] * 30}}],
        "events": list(events)})


def test_each_fault_is_shaded_for_as_long_as_it_lasted():
    """A 13.8 s removal was drawn 0.5 s wide: every fault spans its own duration."""
    throttle = {"kind": "throttle", "at_s": 5.0, "for_s": 4.0, "ended_at_s": 9.1}
    failed = {"kind": "fail-device", "at_s": 2.0, "for_s": None, "ended_at_s": 27.5}
    kill = {"kind": "kill-backend", "at_s": 20.0, "for_s": None, "recovery_s": 1.5}
    chart = events_chart(_run(REMOVAL, throttle, failed, kill))
    assert [(b.x0, b.x1) for b in chart.bands] == [
        (3.002, pytest.approx(16.802)), (5.0, 9.0), (2.0, 27.5), (20.0, 21.5)]
    assert all(b.fault for b in chart.bands)
    assert chart.bands[0].label == ("remove-device 13.8 s, 1,204 MB written, dip 62% avg, "
                                    "96% max")
    assert [lasted_s(e) for e in (REMOVAL, throttle, failed, kill)] == [
        13.8, 4.0, 25.5, 1.5]


def test_the_fault_table_has_duration_bytes_rate_dip_and_recovery():
    # a record made before the devices' counters were read, as the store upgrades it
    old = {"kind": "remove-device", "event": "at=3s,remove-device=1", "at_s": 3.0,
           "seconds": 0.6, "bytes_moved": None, "allocated_bytes": 872_415_232,
           "mb_per_s": None, "dip_note": "no second before it outside an earlier fault"}
    kill = RECORD["events"][0]
    table = events_table(_run(REMOVAL, old, kill))
    assert table.columns == (
        "event", "kind", "at (s)", "lasted (s)", "moved (MB)", "MB/s", "read (MB)",
        "allocated (MB)", "writes before (MB/s)", "TPM before", "dip avg %", "dip max %",
        "back within 10% (s)", "recovery (s)", "error or note")
    assert table.rows[0] == ("at=3s,remove-device=1", "remove-device", 3.002, 13.8, 1204.0,
                             87.2, 3.5, 832 * 2**20 / 1e6, 2.0, 20000.0, 61.5, 95.5, 15.0,
                             None, "")
    assert table.rows[1][4:9] == (None, None, None, 872.415232, None)
    assert table.rows[1][-1] == "no second before it outside an earlier fault"
    assert table.rows[2][3] == 4.2 and table.rows[2][-2] == 4.2  # a kill lasts its recovery
    assert "MB = 10^6 bytes" in table.caption


def test_the_command_line_prints_a_line_per_event():
    from oltplab.cli.ui import event_lines
    assert event_lines(RECORD) == [
        "event at=10s,kill-server: at 10.0 s, recovery 4.2 s, dip 100% avg, 100% max against "
        "36,000 TPM before, back within 10% after 5 s",
        "event at=99s,for=1s,throttle=write:1MiB: not fired: the run ended first"]
    assert event_lines({"steps": []}) == []
    device = {"kind": "remove-device", "event": "at=20s,remove-device=1", "at_s": 20.0,
              "seconds": 6.4, "bytes_moved": 2 * 1024**3, "mb_per_s": 319.1,
              "before_tpm": 22533.0, "dip_avg_pct": 61.5, "dip_max_pct": 95.5,
              "back_within_10pct_s": 7.0}
    assert event_lines({"kind": "tpcc", "events": [device]}) == [
        "event at=20s,remove-device=1: at 20.0 s, 2,147 MB written in 6.4 s at 319.1 MB/s, "
        "dip 62% avg, 96% max against 22,533 TPM before, back within 10% after 7 s"]


def test_the_command_line_prints_the_consistency_check_a_run_ended_with():
    from oltplab.cli.ui import consistency_line

    def cond(name, ok=True):
        return {"name": name, "ok": ok, "violations": 0 if ok else 3}

    assert consistency_line({"steps": []}) is None  # no --check
    assert consistency_line({"check": {"ok": True, "conditions": [
        cond("DS1"), cond("DS2"), cond("DS6")]}}) == "consistency: all hold (DS1-DS6)"
    assert consistency_line({"check": {"ok": False, "conditions": [
        cond("CC1"), cond("CC2", False), cond("CC12", False)]}}) == \
        "consistency: FAILED CC2, CC12"
