"""What a comparison answers, before any chart: a title that says what was compared, one
headline table (per group, the kind's headline figure at each point as mean ± 95% confidence
interval, its ratio to the baseline group and whether the difference is larger than noise) and
one sentence naming the best group.

The baseline is the first group unless ``baseline`` names another (a plan's ``baseline``). The
headline figure is the first of the kind's comparison metrics (NOPM for a tpcc run, IOPS for
fio); a group's best point is where its mean is highest, and the best group the one whose best
point is highest.
"""

from __future__ import annotations

import re

from ..runs.kind import Metric, RunKind
from .charts import fmt
from .model import Section, Table
from .runs import Group, without_faults
from .stats import ci_half_width, mean, noise_test, ratio

_TOKEN = re.compile(r"[^._,\s/()]+")


def short_labels(labels: list[str]) -> list[str]:
    """Each label less the words every label shares ("e2.target-ext4_mem-1GiB" and
    "e2.target-xfs_mem-1GiB" -> "target-ext4", "target-xfs"); a label left empty stays whole."""
    tokens = [_TOKEN.findall(label) for label in labels]
    if len(labels) < 2:
        return list(labels)
    common = set(tokens[0]).intersection(*map(set, tokens[1:]))
    out = []
    for label, words in zip(labels, tokens):
        kept = [w for w in words if w not in common]
        out.append(" ".join(kept) if kept else label)
    return out


def comparison_title(groups: list[Group]) -> str:
    """"oltplab comparison: A vs B", the groups' labels less their shared words and the
    faults they name (the headline names them)."""
    labels = short_labels([without_faults(g.label) for g in groups])
    return "oltplab comparison: " + " vs ".join(dict.fromkeys(labels))


def plan_title(plan) -> str:
    """"Plan e2-datastores: target x host_memory, 2 repeats"."""
    varied = " x ".join(plan.varied) if plan.varied else "one cell"
    repeats = f", {plan.repeat} repeats" if plan.repeat != 1 else ""
    return f"Plan {plan.name}: {varied}{repeats}"


def baseline_group(groups: list[Group], baseline: str | None) -> Group:
    """The group named ``baseline`` (its label, or the start of it), else the first."""
    if baseline:
        for test in (lambda g: g.label == baseline, lambda g: g.label.startswith(baseline + "."),
                     lambda g: g.label.startswith(baseline)):
            found = [g for g in groups if test(g)]
            if found:
                return found[0]
    return groups[0]


def headline_section(kind: RunKind, groups: list[Group], baseline: str | None = None,
                     links: dict | None = None) -> Section | None:
    """The headline table of ``groups`` (runs of one kind) and the sentence naming the best;
    None when the kind has no metric or no group measured it. ``links``: {run id: page}."""
    metrics = kind.metrics_for([r.record for g in groups for r in g.runs])
    if not metrics or not groups:
        return None
    metric = metrics[0]
    base = baseline_group(groups, baseline)
    base_values = metric.values(base)
    rows, peaks = [], []
    for g in groups:
        values = metric.values(g)
        for point in sorted(values, key=_order):
            v = [x for x in values[point] if x is not None]
            if not v:
                continue
            b = [x for x in base_values.get(point, []) if x is not None]
            r = ratio(mean(v), mean(b)) if b and g is not base else None
            verdict = (noise_test(v, b).verdict if b and g is not base else
                       "baseline" if g is base else "no baseline at this point")
            rows.append((g.label, metric.at(point), len(v), mean(v), ci_half_width(v),
                         None if r is None else round(r, 3), verdict,
                         _pages(g, links)))
        if values:
            best = max(values, key=lambda p: mean(values[p]) or 0)
            peaks.append((mean(values[best]) or 0, g, best))
    if not rows:
        return None
    table = Table("headline", f"{metric.name} per group: mean ± 95% CI, ratio to {base.label}",
                  ("group", "at", "runs", f"{metric.name} mean", "95% CI ±", "ratio",
                   "difference", "runs' pages"), tuple(rows),
                  caption="The 95% confidence interval of the mean needs two runs or more; the "
                          "ratio sets each group's mean against the baseline's at the same "
                          "point; the test is stated in the comparison below.")
    return Section("Headline", tables=(table,), notes=(_best(metric, peaks, base),))


def _best(metric: Metric, peaks: list, base: Group) -> str:
    """"Best: B, NOPM 20,200 at 8 users, 2.00x the best of A (10,100)". A best group whose
    runs had faults injected is named with them, and the best group without any follows."""
    value, group, point = max(peaks, key=lambda p: p[0])
    base_values = metric.values(base)
    sentence = f"Best: {group.label}, {metric.name} {fmt(value)} at {metric.at(point)}"
    if group is not base and base_values:
        base_peak = max((mean(v) or 0) for v in base_values.values())
        r = ratio(value, base_peak)
        if r is not None:
            sentence += f", {r:.2f}x the best of {base.label} ({fmt(base_peak)})"
    if group.faults:
        sentence += "; measured with faults injected"
        clean = [p for p in peaks if not p[1].faults]
        if clean:
            value, group, point = max(clean, key=lambda p: p[0])
            sentence += (f"; the best without a fault: {group.label}, {metric.name} "
                         f"{fmt(value)} at {metric.at(point)}")
    return sentence + "."


def _pages(group: Group, links: dict | None):
    """The links to the group's runs' pages (report.model.Link), "-" without pages."""
    found = tuple(links[r.id] for r in group.runs if r.id in (links or {}))
    return found or "-"


def _order(point):
    return (0, point, "") if isinstance(point, (int, float)) else (1, 0, str(point))
