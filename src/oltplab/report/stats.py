"""Run-to-run statistics for comparisons: pure functions with known answers in the tests.

The test stated in every comparison report:

- two groups of repeated runs, at least two in each: Welch's t-test (unequal variances,
  Welch-Satterthwaite degrees of freedom), two-sided; the difference is "larger than noise"
  when p < ``ALPHA``, "within noise" otherwise;
- repeats on one side only: the difference of the means is set against the range (highest
  minus lowest) of the side that has repeats; within that range it is "within noise";
- no repeats on either side: the noise is unknown and nothing is claimed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ALPHA = 0.05
CV_LIMIT_PCT = 5.0  # repeats whose coefficient of variation exceeds this are flagged unstable


def mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def stdev(xs) -> float | None:
    """The sample standard deviation (n - 1 in the denominator); None below two values."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return None
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is zero."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            step = d * c
            h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` (real, > 0) degrees of freedom."""
    if math.isinf(t):
        return 0.0
    if math.isinf(df):
        return math.erfc(abs(t) / math.sqrt(2.0))
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_critical(df: float, alpha: float = ALPHA) -> float:
    """The t with P(|T| >= t) = alpha for ``df`` degrees of freedom (bisection on the p-value)."""
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > alpha:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > alpha:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2.0


def ci_half_width(xs, alpha: float = ALPHA) -> float | None:
    """Half the width of the (1 - alpha) confidence interval of the mean (Student's t, n - 1
    degrees of freedom); None below two values."""
    xs = [x for x in xs if x is not None]
    sd = stdev(xs)
    if sd is None:
        return None
    return t_critical(len(xs) - 1, alpha) * sd / math.sqrt(len(xs))


def cv_pct(xs) -> float | None:
    """The coefficient of variation (sample stdev / mean) in percent; None below two values or
    for a zero mean."""
    m, sd = mean(xs), stdev(xs)
    return None if sd is None or not m else sd / abs(m) * 100.0


@dataclass(frozen=True)
class Welch:
    t: float
    df: float
    p: float


def welch(a: list[float], b: list[float]) -> Welch | None:
    """Welch's t-test of mean(a) - mean(b); None unless both have two values or more, or when
    both have no spread at all (then the test says nothing)."""
    a = [x for x in a if x is not None]
    b = [x for x in b if x is not None]
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = stdev(a) ** 2 / len(a), stdev(b) ** 2 / len(b)
    se2 = va + vb
    if se2 == 0:
        return None
    t = (mean(a) - mean(b)) / math.sqrt(se2)
    df = se2 ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return Welch(t=t, df=df, p=t_two_sided_p(t, df))


@dataclass(frozen=True)
class NoiseVerdict:
    """Whether a difference of means stands out from run-to-run noise, and by which test."""

    verdict: str  # "larger than noise" | "within noise" | "noise unknown"
    test: str     # how it was decided, in words
    p: float | None = None

    @property
    def significant(self) -> bool:
        return self.verdict == "larger than noise"


def noise_test(a: list[float], b: list[float], alpha: float = ALPHA) -> NoiseVerdict:
    """Decide whether mean(a) and mean(b) differ by more than run-to-run noise (module doc)."""
    a = [x for x in a if x is not None]
    b = [x for x in b if x is not None]
    if not a or not b:
        return NoiseVerdict("noise unknown", "no values")
    diff = abs(mean(a) - mean(b))
    if len(a) >= 2 and len(b) >= 2:
        w = welch(a, b)
        if w is None:  # repeats agree exactly on both sides
            if diff == 0:
                return NoiseVerdict("within noise", "identical values")
            return NoiseVerdict("larger than noise", "repeats without any spread")
        verdict = "larger than noise" if w.p < alpha else "within noise"
        return NoiseVerdict(verdict, f"Welch's t = {w.t:.2f}, df = {w.df:.1f}, "
                                     f"{_p(w.p)} (n = {len(a)}, {len(b)})", w.p)
    repeats = a if len(a) >= 2 else b if len(b) >= 2 else None
    if repeats is None:
        return NoiseVerdict("noise unknown", "one run each: no repeats to measure noise")
    spread = max(repeats) - min(repeats)
    verdict = "larger than noise" if diff > spread else "within noise"
    return NoiseVerdict(verdict, f"difference {_num(diff)} vs range of {len(repeats)} "
                                 f"repeats {_num(spread)}")


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"
