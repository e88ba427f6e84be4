"""Comparisons of runs: ratios against the first group, and whether each difference is larger
than run-to-run noise (``stats.noise_test``, stated in the report)."""

from __future__ import annotations

from dataclasses import dataclass

from ..runs.kind import Metric
from .model import Table
from .runs import Group
from .stats import CV_LIMIT_PCT, ci_half_width, cv_pct, mean, noise_test, ratio, stdev

TEST_TEXT = (
    "Runs with the same kind, label and workload configuration count as repeats. A difference "
    "is tested with Welch's t-test (two-sided, larger than noise when p < 0.05) where both "
    "sides have at least two runs; where only one side has repeats, the difference of the "
    "means is set against the range (highest minus lowest) of those repeats; with one run "
    "on each side the noise is unknown and no claim is made.")


@dataclass(frozen=True)
class Comparison:
    metric: str
    at: str  # "89 users", or a profile name
    key: object  # the user count, or the profile name
    baseline: str
    other: str
    base_values: tuple
    other_values: tuple
    ratio: float | None
    verdict: str
    test: str

    def sentence(self) -> str:
        r = "-" if self.ratio is None else f"{self.ratio:.2f}x"
        return (f"{self.metric} at {self.at}: {self.other} {r} {self.baseline} "
                f"({self.verdict}; {self.test})")


def compare(groups: list[Group], metrics: tuple[Metric, ...]) -> list[Comparison]:
    """Every group against the first, at every point (user count, profile ...) both have."""
    if len(groups) < 2:
        return []
    base = groups[0]
    out = []
    for metric, values, at in ((m.name, m.values, m.at) for m in metrics):
        bvals = values(base)
        for g in groups[1:]:
            ovals = values(g)
            for k in [k for k in bvals if k in ovals]:
                a, b = ovals[k], bvals[k]
                v = noise_test(a, b)
                out.append(Comparison(metric, at(k), k, base.label, g.label, tuple(b),
                                      tuple(a), ratio(mean(a), mean(b)), v.verdict, v.test))
    return out


ENGINES_TEXT = ("These runs ran on different database engines: compare them by {unit}. TPM "
                "counts each engine's own commits and rollbacks (PostgreSQL's xact_commit + "
                "xact_rollback, MariaDB's Com_commit + Com_rollback), which depend on where "
                "each implementation places its transactions, so TPM is comparable only "
                "within one engine.")


def headlines(comparisons: list[Comparison], best_points: str = "first-three") -> list[str]:
    """A few sentences of the first metric: at the baseline's best and the highest shared
    point (``best_points`` "best-and-top"), else at the first three shared points."""
    first = comparisons[0].metric if comparisons else None
    picked: dict[tuple, Comparison] = {}
    by_other: dict[str, list[Comparison]] = {}
    for c in comparisons:
        if c.metric == first:
            by_other.setdefault(c.other, []).append(c)
    for other, cs in by_other.items():
        if best_points == "best-and-top":
            top = max(cs, key=lambda c: c.key)
            best = max(cs, key=lambda c: mean(c.base_values) or 0)
            for c in (best, top):
                picked[(other, c.at)] = c
        else:
            for c in cs[:3]:
                picked[(other, c.at)] = c
    return [c.sentence() for c in picked.values()]


def comparison_table(comparisons: list[Comparison]) -> Table:
    rows = tuple((c.metric, c.at, c.baseline, mean(c.base_values), len(c.base_values), c.other,
                  mean(c.other_values), len(c.other_values), c.ratio,
                  None if c.ratio is None else (c.ratio - 1) * 100, c.verdict, c.test)
                 for c in comparisons)
    return Table("comparison", "Comparison with the first run",
                 ("metric", "at", "baseline", "baseline mean", "baseline runs", "compared",
                  "mean", "runs", "ratio", "difference %", "noise", "test"), rows,
                 caption="ratio = mean / baseline mean; the test is stated above.")


def spread_table(groups: list[Group], metrics: tuple[Metric, ...]) -> Table | None:
    """Run-to-run spread of every group with repeats, with the 95% confidence interval of the
    mean."""
    rows = [(metric, at, g.label, len(v), mean(v), stdev(v), cv_pct(v), min(v), max(v),
             ci_half_width(v)) for metric, at, g, v in _repeated(groups, metrics)]
    if not rows:
        return None
    return Table("spread", "Run-to-run spread of repeated runs",
                 ("metric", "at", "runs", "n", "mean", "stdev", "CV %", "lowest", "highest",
                  "95% CI ±"),
                 tuple(rows), caption="Sample standard deviation (n - 1); CV = stdev / mean; "
                                      "the 95% confidence interval of the mean is mean ± the "
                                      "last column (Student's t, n - 1 degrees of freedom).")


def unstable(groups: list[Group], metrics: tuple[Metric, ...],
             limit: float = CV_LIMIT_PCT) -> list[str]:
    """One warning per figure whose repeats vary by more than ``limit`` percent (CV)."""
    out = []
    for metric, at, g, v in _repeated(groups, metrics):
        cv = cv_pct(v)
        if cv is not None and cv > limit:
            out.append(f"unstable: {metric} at {at} of {g.label} varies by {cv:.1f}% "
                       f"(CV over {len(v)} repeats; above {limit:g}%)")
    return out


def _repeated(groups: list[Group], metrics: tuple[Metric, ...]):
    """(metric, where, group, values) of every figure of every group with repeats."""
    for m in metrics:
        for g in groups:
            if len(g.runs) >= 2:
                for k, v in m.values(g).items():
                    yield m.name, m.at(k), g, v


def repeat_lines(records: list[dict], metrics: tuple[Metric, ...]) -> list[str]:
    """One group of repeats in a few lines: mean ± 95% confidence interval and CV per figure
    (``metrics``: their kind's) over the completed runs, then the unstable figures."""
    from .runs import RunData
    done = [r for r in records if r.get("status") == "completed"]
    if len(done) < 2:
        return []
    g = Group(label=done[0].get("name") or "?", runs=[RunData(record=r) for r in done], color="")
    lines = []
    for m in metrics:
        for k, v in m.values(g).items():
            half, cv = ci_half_width(v), cv_pct(v)
            lines.append(f"{m.name} at {m.at(k)}: mean {_num(mean(v))} ± {_num(half)} "
                         f"(95% CI, n = {len(v)}), CV {'-' if cv is None else f'{cv:.1f}%'}")
    return lines + unstable([g], metrics)


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"
