"""The contract of a run kind: everything the commands, plans and reports need to know of one
kind of recorded run (tpcc, fio, backup, neighbours ...), declared once in ``kinds/<name>.py``.

Nothing outside ``kinds/`` branches on a kind's name: the commands, the results listing, the
CSV export, the reports and the comparisons ask the kind of each record for its part. A part a
kind does not have falls back to a neutral default (no charts, no comparison metric ...).

The printers of the command line (``show``, ``live``, ``done``) are named by
``"module:function"``, as entry points are, and imported by the command line when it prints:
so the command line imports the registry and the registry never imports the command line. A
kind made at run time (a test's, say) may give the functions themselves.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Metric:
    """A figure two groups of runs are compared by: ``values(group)`` gives ``{point: [one
    value per run]}`` (a point is a user count, a profile ...), ``at(point)`` names a point
    ("4 users")."""

    name: str
    values: Callable[[Any], dict]
    at: Callable[[Any], str] = str


def _nothing(*args, **kwargs) -> list:
    return []


@dataclass(frozen=True)
class RunKind:
    """One kind of recorded run.

    - ``headline(record)``: one line of its best figures for listings ("-" without any);
    - ``tables(run)``: its own result tables (report and CSV), ``run`` a ``report.runs.RunData``;
    - ``charts(groups)``: the charts of its runs side by side, one line or bar per group;
    - ``run_charts(run, suffix)``: charts of one run drawn before its telemetry;
    - ``metrics``: what comparisons and repeat summaries set side by side, the headline first;
      ``metrics_of(records)``: them as named for these runs, where the headline's unit follows
      the runs' workload (a neighbours run's NOPM, the shop's OPM): see ``metrics_for``;
    - ``notes(groups)``: sentences under its charts; ``compare_notes(groups)`` under a
      comparison; ``best_points``: how many points of the headline metric a comparison names
      (``"best-and-top"``: the baseline's best and the highest shared one, as for user counts);
    - ``plan_charts(groups)``: ``(charts, tables)`` of a plan's cells, one group per cell;
    - ``bands(run, divisor)``: shading of its timeline where it has no measured steps;
    - ``timeline``: whether its report always has the telemetry charts (explaining a missing
      timeline) or only when the run has a timeline;
    - ``database``: whether it runs against a database (old records without ``engine`` were
      all PostgreSQL's); ``caveat``: a sentence every report with such a run carries;
    - ``step``: what a plan's ``[[step]]`` of this kind takes and does (plans.keys.StepKind);
    - ``show(record)``, ``done(record)``: the command line's printing of a saved run and of a
      run a plan has just finished; ``live(spec)``: its live progress in a plan;
      ``describe(item)``: one line of what a plan's step of this kind will do.
    """

    name: str
    help: str
    headline: Callable[[dict], str] = lambda record: "-"
    tables: Callable[[Any], list] = _nothing
    charts: Callable[[list], list] = _nothing
    run_charts: Callable[[Any, str], list] = _nothing
    metrics: tuple[Metric, ...] = ()
    metrics_of: Callable[[list], tuple[Metric, ...]] | None = None
    notes: Callable[[list], list] = _nothing
    compare_notes: Callable[[list], list] = _nothing
    best_points: str = "first-three"
    plan_charts: Callable[[list], tuple] = lambda groups: ([], [])
    bands: Callable[[Any, float], tuple] | None = None
    timeline: bool = False
    database: bool = False
    caveat: str | None = None
    step: Any = None
    show: Callable[[dict], None] | str | None = None
    done: Callable[[dict], None] | str | None = None
    live: Callable[[Any], Any] | str | None = None
    describe: Callable[[Any], str] | str | None = None

    def metrics_for(self, records: list[dict]) -> tuple[Metric, ...]:
        """The comparison metrics of these runs (their records): ``metrics_of``'s, else
        ``metrics``."""
        return self.metrics_of(records) if self.metrics_of is not None else self.metrics


def resolve(ref: Callable | str | None) -> Callable | None:
    """A printer named ``"module:function"`` (or given as the function itself)."""
    if ref is None or callable(ref):
        return ref
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)
