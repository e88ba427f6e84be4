"""A report of one run, or a comparison of several: the HTML page and a PNG per chart.

    result = write_report([record, ...], out_dir, progress=callback)

``record`` is a run record as ``results.store.load_run`` returns it (with ``_path``, the run
folder, where its timeline.json is looked for).
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import __version__
from ..errors import UsageError
from . import compare
from .model import Chart, Report, Section, Table
from .events import events_chart, events_table
from .output import write_file
from .runs import Group, RunData, label_runs, prepare
from .tables import run_tables
from .timeline import timeline_charts

REPORT_FILE = "report.html"
NO_TIMELINE = ("Host telemetry over time (disk IOPS, MB/s, latency, CPU, power): no data (the "
               "run folder has no timeline.json).")
Progress = Callable[[int, int, str], None]


@dataclass
class ReportResult:
    out_dir: Path
    html: Path
    pngs: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # the notes of charts without data
    seconds: float = 0.0


def default_out_dir(records: list[dict], base: Path = Path("reports")) -> Path:
    """reports/<run id> for one run; reports/compare-<labels>-<hash of the ids> for several."""
    if len(records) == 1:
        return Path(base) / str(records[0].get("id") or "run")
    labels = "-vs-".join(dict.fromkeys(str(r.get("name") or r.get("id")) for r in records))
    labels = re.sub(r"[^A-Za-z0-9_.\-]", "_", labels)[:60]
    digest = hashlib.sha1("\n".join(str(r.get("id")) for r in records).encode()).hexdigest()
    return Path(base) / f"compare-{labels}-{digest[:8]}"


def _run_sections(run: RunData, suffix: str, title: str) -> Section:
    from .. import kinds
    kind = kinds.find(run.kind)
    charts: list[Chart] = list(kind.run_charts(run, suffix)) if kind is not None else []
    if (faults := events_chart(run, suffix)) is not None:
        charts.append(faults)
    always = kind is not None and kind.timeline
    if run.timeline is not None or always:
        charts += timeline_charts(run, suffix)
    notes = []
    if run.timeline is None and not always:
        notes.append(NO_TIMELINE)
    notes += [f"Problem: {p}" for p in run.problems]
    tables = [t for t in (events_table(run),) if t is not None] + run_tables(run)
    return Section(title=title, charts=tuple(charts), tables=tuple(tables),
                   notes=tuple(notes))


def _runs_table(groups: list[Group]) -> Table:
    rows = []
    for g in groups:
        for r in g.runs:
            users = ",".join(str(s.get("users")) for s in r.steps if s.get("users") is not None)
            rows.append((r.label, r.id, r.kind, r.engine_name, r.record.get("status"),
                         r.record.get("started_at"), len(r.steps),
                         users or ", ".join(str(s.get("profile")) for s in r.steps),
                         g.label, len(g.runs), r.telemetry_from))
    return Table("runs", "Runs", ("run", "id", "kind", "engine", "status", "started", "steps",
                                  "users or profiles", "group", "runs in group", "telemetry"),
                 tuple(rows))


def _subtitle(runs: list[RunData]) -> str:
    if len(runs) == 1:
        r = runs[0]
        host = (r.record.get("host") or {}).get("hostname")
        db = (r.record.get("database") or {}).get("version")
        parts = [f"{r.kind} run {r.id}", f"status {r.record.get('status')}",
                 f"started {r.record.get('started_at')}"]
        if host:
            parts.append(f"host {host}")
        engine = r.engine_name
        if db:
            db = str(db).split(" on ")[0]
            parts.append(db if not engine or engine.lower() in db.lower() else f"{engine} {db}")
        elif engine:
            parts.append(engine)
        return "; ".join(parts)
    return f"{len(runs)} runs: " + ", ".join(f"{r.label} ({r.id})" for r in runs)


def build_report(records: list[dict], sections: list[Section] = ()) -> Report:
    """The report's sections (charts and tables), nothing written; ``sections`` (a plan's own,
    say) come after the runs table."""
    if not records:
        raise UsageError("no run to report")
    from .. import kinds as registry
    runs = [prepare(r) for r in records]
    groups = label_runs(runs)
    kinds = list(dict.fromkeys(r.kind for r in runs))
    single = len(runs) == 1
    title = (f"oltplab report: {runs[0].label}" if single else
             "oltplab comparison: " + " vs ".join(g.label for g in groups))
    report = Report(title=title, subtitle=_subtitle(runs))
    for caveat in dict.fromkeys(k.caveat for k in map(registry.find, kinds) if k and k.caveat):
        report.notes.append(caveat)
    if not single:
        report.sections.append(Section("Runs", tables=(_runs_table(groups),)))
    report.sections.extend(sections)
    for kind in kinds:
        kgroups = [g for g in groups if g.runs[0].kind == kind]
        head = "Results" if len(kinds) == 1 else f"Results: {kind}"
        declared = registry.find(kind)
        metrics = declared.metrics if declared is not None else ()
        if not single:
            comps = compare.compare(kgroups, metrics)
            tables = [compare.comparison_table(comps)] if comps else []
            spread = compare.spread_table(kgroups, metrics)
            if spread is not None:
                tables.append(spread)
            notes: list = []
            lines = compare.headlines(comps, declared.best_points if declared else "")
            if lines:
                notes.append(tuple(lines))
            elif len(kgroups) < 2:
                notes.append("All runs are repeats of one configuration: nothing to compare; "
                             "their spread is below.")
            notes.append(compare.TEST_TEXT)
            if declared is not None:
                notes.extend(declared.compare_notes(kgroups))
            notes.extend(compare.unstable(kgroups, metrics))
            report.sections.append(Section(f"Comparison{'' if len(kinds) == 1 else ': ' + kind}",
                                           tables=tuple(tables), notes=tuple(notes)))
        charts = declared.charts(kgroups) if declared is not None else []
        kind_notes = tuple(declared.notes(kgroups)) if declared is not None else ()
        if not charts:
            kind_notes += (f"No charts are drawn for {kind} runs; their tables are below.",)
        report.sections.append(Section(head, charts=tuple(charts), notes=kind_notes))
    for i, r in enumerate(runs):
        suffix = "" if single else f"-{i + 1}"
        title = "Run details" if single else f"Run {r.label}"
        report.sections.append(_run_sections(r, suffix, title))
    missing = [c for c in report.charts if c.empty]
    if missing:
        report.notes.append(f"{len(missing)} of {len(report.charts)} charts have no data; "
                            "a line in place of each says why.")
    return report


def write_report(records: list[dict], out_dir: Path | None = None, *,
                 progress: Progress | None = None, png: bool = True,
                 sections: list[Section] = ()) -> ReportResult:
    """Write report.html and one PNG per chart with data into ``out_dir``."""
    t0 = time.monotonic()
    report = build_report(records, sections)
    out = Path(out_dir) if out_dir is not None else default_out_dir(records)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file")
    charts = [c for c in report.charts if not c.empty]
    total = len(charts) + 1
    result = ReportResult(out_dir=out, html=out / REPORT_FILE,
                          missing=[c.note for c in report.charts if c.empty])
    if png:
        from .png import write_png
        for i, chart in enumerate(charts):
            if progress:
                progress(i, total, f"{chart.key}.png")
            result.pngs.append(write_png(chart, out))
    if progress:
        progress(total - 1, total, REPORT_FILE)
    generated = time.strftime("%Y-%m-%d %H:%M:%S %z")
    from .html import render_html
    write_file(result.html, render_html(report, generated=generated, version=__version__))
    if progress:
        progress(total, total, "done")
    result.seconds = time.monotonic() - t0
    return result


__all__ = ["build_report", "write_report", "default_out_dir", "ReportResult"]
