"""A plan's own section: what the plan varied, and the charts each kind draws of the plan's
cells (report/plancharts.py), one line or bar per cell; fio runs are compared in their own
section.
"""

from __future__ import annotations

from .model import PALETTE, Chart, Section, Table
from .runs import Group, prepare, with_faults


def _cells(plan, records: list[dict]) -> list[Group]:
    """The plan's runs of one kind per cell (or datastore), in plan order; per cell and step
    when the plan has several steps of the kind; a cell whose runs had faults injected names
    them ("raid=raid1 (with remove-device at 3 s)")."""
    cells: dict[str, list[dict]] = {}
    several = len({(r.get("plan") or {}).get("step", 1) for r in records}) > 1
    for rec in records:
        label = rec.get("plan") or {}
        cell = label.get("cell", "?") + (f" step {label.get('step', 1)}" if several else "")
        cells.setdefault(cell, []).append(rec)
    groups = []
    for i, (cell, recs) in enumerate(cells.items()):
        group = Group(label=with_faults(cell, recs), runs=[], color=PALETTE[i % len(PALETTE)])
        for rec in recs:
            run = prepare(rec)
            run.label, run.color = group.label, group.color
            group.runs.append(run)
        groups.append(group)
    return groups


def plan_section(plan, records: list[dict]) -> Section:
    """The plan's section: what it varied, and its charts per cell (each kind's own)."""
    from .. import kinds
    charts: list[Chart] = []
    tables: list[Table] = []
    for name in dict.fromkeys(r.get("kind") for r in records):
        kind = kinds.find(name)
        if kind is None:
            continue
        more_charts, more_tables = kind.plan_charts(
            _cells(plan, [r for r in records if r.get("kind") == name]))
        charts += more_charts
        tables += more_tables
    varied = ", ".join(plan.varied) or "nothing (one cell)"
    steps = ", ".join(f"{s.index}. {plan.step_name(s)}" for s in plan.steps)
    notes = (f"Plan {plan.name} ({plan.path}): it varies {varied}; steps {steps}; "
             f"{plan.repeat} repeat{'s' if plan.repeat != 1 else ''} of each.",)
    return Section(f"Plan {plan.name}", charts=tuple(charts), tables=tuple(tables), notes=notes)
