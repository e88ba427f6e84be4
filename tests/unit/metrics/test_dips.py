"""The dip and recovery arithmetic around an injected fault, on made-up per-second series."""

from __future__ import annotations

import pytest

from oltplab.metrics.dips import dip


def test_a_kill_that_stops_everything_for_four_seconds():
    series = [100] * 10 + [0, 0, 0, 0] + [100] * 10
    d = dip(series, at_s=10.0)
    assert d.before_tpm == 6000
    assert d.back_within_10pct_s == 4  # second 14 starts five seconds at 100
    assert d.dip_s == 4 and d.dip_avg_pct == 100 and d.dip_max_pct == 100


def test_a_fault_fired_just_after_its_second_dips_that_second():
    """A kill asked for at 3 s fires at 3.001 s: second 3, where the completions stopped, is
    the dip's, and the next (already back, above the mean before) does not hide it."""
    series = [280, 285, 290, 7, 310] + [300] * 10
    d = dip(series, at_s=3.001)
    assert d.before_tpm == pytest.approx(285 * 60)
    assert d.dip_s == 1 and d.dip_max_pct == pytest.approx(100 * (1 - 7 / 285))
    assert d.back_within_10pct_s == pytest.approx(4 - 3.001)


def test_a_fault_late_within_a_second_counts_from_the_next_whole_second():
    series = [100] * 10 + [60, 0, 50] + [100] * 10
    d = dip(series, at_s=9.5)
    assert d.before_tpm == 6000  # seconds 0..8, the whole ones before the fault
    assert d.back_within_10pct_s == pytest.approx(13 - 9.5)  # 12 averages 90 with 13..16,
    # but itself is at 50
    assert d.dip_avg_pct == pytest.approx(100 * (1 - 110 / 3 / 100))  # seconds 10, 11, 12
    assert d.dip_max_pct == 100


def test_a_throttle_dips_over_its_window_and_counts_only_sixty_seconds_before():
    series = [50] * 10 + [100] * 60 + [80, 70, 60, 70, 80] + [100] * 5
    d = dip(series, at_s=70, for_s=5)
    assert d.before_tpm == 6000  # the 60 s before, not the slower start
    assert d.dip_s == 5
    assert d.dip_avg_pct == pytest.approx(28.0)
    assert d.dip_max_pct == pytest.approx(40.0)
    assert d.back_within_10pct_s == 5  # 73..77 average 90, but 73 itself is at 70


def test_a_dip_that_never_recovers_lasts_to_the_end():
    d = dip([100] * 5 + [10] * 5, at_s=5)
    assert d.back_within_10pct_s is None and d.dip_s == 5 and d.dip_avg_pct == 90


def test_no_second_before_or_after_the_fault_gives_no_figures():
    assert dip([100] * 5, at_s=0).before_tpm is None
    assert dip([100] * 5, at_s=5).dip_avg_pct is None
    assert dip([0] * 5, at_s=2).dip_avg_pct is None  # nothing completed before: no base


def test_a_catch_up_burst_after_a_stall_does_not_count_as_back():
    series = [100] * 10 + [5, 1, 300, 300, 100, 100]
    d = dip(series, at_s=10)
    assert d.back_within_10pct_s == 2  # not 0, although 10..14 average 141
    assert d.dip_s == 2 and d.dip_avg_pct == 97


def test_throttle_that_bites_late_counts_its_recovery():
    """A throttle that slows the server only in its last second: the return is looked for
    after the throttle's end, not in its first (still fast) seconds."""
    series = [100] * 10 + [100] * 9 + [20] + [50, 80] + [100] * 8
    d = dip(series, at_s=10, for_s=10)
    assert d.back_within_10pct_s == 12  # second 22, the first back after the end at 20
    assert d.dip_s == 12  # seconds 10..21: the slow 20 and 21 are in the dip
    assert d.dip_avg_pct == pytest.approx(100 * (1 - (900 + 20 + 50 + 80) / 12 / 100))
    assert d.dip_max_pct == pytest.approx(80.0)
