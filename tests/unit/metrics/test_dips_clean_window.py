"""Several faults in one window: each fault's before holds no earlier fault nor its
recovery (made-up per-second series with known answers)."""

from __future__ import annotations

import pytest

from oltplab.metrics.dips import Fault, dip, dips


def test_a_second_fault_after_a_kill_reads_its_dip_against_the_seconds_after_the_return():
    """A kill at 60 s stops everything for 20 s; a throttle at 90 s halves the rate. The 60 s
    before the throttle hold the kill's 20 empty seconds (a mean of 66.7/s): the halving read
    as a 25% dip; against the 10 s after the return, it is the 50% it was."""
    series = [100] * 60 + [0] * 20 + [100] * 10 + [50] * 10 + [100] * 20
    kill, throttle = dips(series, [Fault(60.0, down_s=20.0, name="kill-server"),
                                   Fault(90.0, for_s=10.0, name="throttle")])
    assert kill.back_within_10pct_s == 20 and kill.dip_avg_pct == 100
    assert throttle.before_s == 10 and throttle.before_tpm == 6000
    assert throttle.dip_avg_pct == pytest.approx(50.0) and throttle.dip_max_pct == 50
    assert throttle.back_within_10pct_s == 10 and throttle.note is None
    # the same throttle alone, against the 60 s before it: what was recorded before
    assert dip(series, 90.0, 10.0).dip_avg_pct == pytest.approx(25.0)


def test_a_fault_inside_an_earlier_fault_s_recovery_has_no_figures_and_says_why():
    series = [100] * 60 + [0] * 20 + [100] * 40
    first, second = dips(series, [Fault(60.0, name="kill-server"),
                                  Fault(70.0, name="remove-device=1")])
    assert first.back_within_10pct_s == 20
    assert (second.before_tpm, second.dip_avg_pct, second.back_within_10pct_s) == \
        (None, None, None)
    assert second.before_s == 0
    assert second.note == ("no second before it is clear of kill-server at 60 s and its "
                           "recovery (until 80.0 s)")


def test_an_earlier_fault_that_never_came_back_is_done_after_its_end_and_its_duration_again():
    """A throttle at 30 s for 10 s leaves the rate at 70/s (never back within 10% of 100):
    its disturbance ends at 30 + 10 + 10 = 50 s; a kill at 60 s is read against 50..59."""
    series = [100] * 30 + [40] * 10 + [70] * 20 + [0] * 3 + [70] * 10
    throttle, kill = dips(series, [Fault(30.0, for_s=10.0), Fault(60.0)])
    assert throttle.back_within_10pct_s is None
    assert kill.before_s == 10 and kill.before_tpm == 70 * 60
    assert kill.back_within_10pct_s == 3 and kill.dip_avg_pct == 100
    assert dip(series, 60.0).back_within_10pct_s is None  # against 0..59 (80/s): never back


def test_faults_are_answered_in_the_order_given_and_a_lone_fault_as_before():
    series = [100] * 60 + [0] * 20 + [100] * 10 + [50] * 10 + [100] * 20
    later, earlier = dips(series, [Fault(90.0, for_s=10.0), Fault(60.0)])
    assert earlier.back_within_10pct_s == 20 and later.before_s == 10
    [alone] = dips(series, [Fault(60.0)])
    assert alone == dip(series, 60.0) and alone.before_s == 60


def test_faults_at_the_same_second_share_the_seconds_before_them():
    series = [100] * 20 + [0] * 5 + [100] * 10
    a, b = dips(series, [Fault(20.0), Fault(20.0)])
    assert a == b and a.before_tpm == 6000 and a.before_s == 20

