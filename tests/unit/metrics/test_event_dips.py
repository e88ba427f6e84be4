"""A run's fault records (Injector.events): the dip of a fault that follows another is read
against the seconds after the earlier one's return."""

from __future__ import annotations

from oltplab.faults.inject import Injector


def test_a_run_s_events_read_each_dip_against_a_clean_window():
    """Injector.events: a kill's recovery_s and a device fault's seconds set how long each
    disturbs; the record of the later fault carries the before it was read against."""
    injector = Injector((), None, 0)
    injector.records = [
        {"kind": "kill-server", "event": "at=60s,kill-server", "at_s": 60.0, "for_s": 0.0,
         "recovery_s": 4.2},
        {"kind": "scrub", "event": "at=90s,scrub", "at_s": 90.0, "for_s": 0.0, "seconds": 10.0},
        {"kind": "scrub", "event": "at=200s,scrub", "for_s": 0.0,
         "error": "not fired: the run ended first"}]
    series = [100] * 60 + [0] * 20 + [100] * 10 + [50] * 10 + [100] * 20
    kill, scrub, unfired = injector.events(series)
    assert scrub["dip_avg_pct"] == 50.0 and scrub["before_s"] == 10  # was 25%, from 66.7/s
    assert kill["back_within_10pct_s"] == 20 and kill["before_s"] == 60
    assert scrub["dip_note"] is None and "dip_avg_pct" not in unfired
    assert injector.records[1].get("before_s") is None  # the records stay as they were
