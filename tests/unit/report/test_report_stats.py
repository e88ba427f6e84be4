"""Run-to-run statistics of comparisons, against known answers."""

from __future__ import annotations

import math

import pytest

from oltplab.report.stats import betainc, mean, noise_test, ratio, stdev, t_two_sided_p, welch


def test_mean_stdev_ratio():
    assert mean([1, 2, 3, None]) == 2
    assert mean([]) is None
    assert stdev([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(2.138089935)  # n - 1
    assert stdev([5]) is None
    assert ratio(6, 3) == 2
    assert ratio(1, 0) is None and ratio(None, 1) is None


def test_incomplete_beta_closed_forms():
    # I_x(1, 1) = x;  I_x(a, 1) = x^a;  I_x(1, b) = 1 - (1 - x)^b
    assert betainc(1, 1, 0.3) == pytest.approx(0.3)
    assert betainc(2.5, 1, 0.4) == pytest.approx(0.4 ** 2.5)
    assert betainc(1, 3, 0.2) == pytest.approx(1 - 0.8 ** 3)
    assert betainc(2, 3, 0) == 0 and betainc(2, 3, 1) == 1


@pytest.mark.parametrize("t", [0.3, 1.0, 2.5, 7.0])
def test_student_t_closed_forms(t):
    # df = 1 (Cauchy): p = 1 - 2 atan|t| / pi;  df = 2: p = 1 - |t| / sqrt(2 + t^2)
    assert t_two_sided_p(t, 1) == pytest.approx(1 - 2 * math.atan(t) / math.pi, rel=1e-9)
    assert t_two_sided_p(-t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t), rel=1e-9)


def test_student_t_table_values():
    # two-sided 5% critical values of t tables
    assert t_two_sided_p(2.228139, 10) == pytest.approx(0.05, abs=1e-6)
    assert t_two_sided_p(2.085963, 20) == pytest.approx(0.05, abs=1e-6)
    assert t_two_sided_p(1.959964, math.inf) == pytest.approx(0.05, abs=1e-6)
    assert t_two_sided_p(0.0, 5) == pytest.approx(1.0)


def test_welch_known_answer():
    # means 2 and 5, variances 1 and 1, n = 3 each: t = -3 / sqrt(2/3), df = 4
    w = welch([1, 2, 3], [4, 5, 6])
    assert w.t == pytest.approx(-3 / math.sqrt(2 / 3))
    assert w.df == pytest.approx(4.0)
    assert w.p == pytest.approx(t_two_sided_p(3.674234614, 4))
    assert 0.02 < w.p < 0.025
    # unequal variances: df from Welch-Satterthwaite
    w = welch([10, 12, 14, 16], [20, 21])
    va, vb = (20 / 3) / 4, 0.5 / 2
    assert w.df == pytest.approx((va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 1))
    assert welch([1], [2, 3]) is None
    assert welch([1, 1], [2, 2]) is None


def test_noise_verdicts():
    big = noise_test([3400, 3500, 3300], [6800, 7000, 6600])
    assert big.verdict == "larger than noise" and big.significant
    assert "Welch" in big.test and big.p < 0.01
    small = noise_test([3400, 3500, 3300], [3450, 3350, 3500])
    assert small.verdict == "within noise" and small.p > 0.5
    # repeats on one side: the difference against their range (200)
    assert noise_test([3400, 3500, 3300], [3550]).verdict == "within noise"  # 150 <= 200
    assert noise_test([3900], [3400, 3500, 3300]).verdict == "larger than noise"  # 500 > 200
    assert "range of 3 repeats" in noise_test([3900], [3400, 3500, 3300]).test
    assert noise_test([1], [2]).verdict == "noise unknown"
    assert noise_test([5, 5], [5, 5]).verdict == "within noise"
    assert noise_test([5, 5], [6, 6]).verdict == "larger than noise"
