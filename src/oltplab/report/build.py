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
from .answer import comparison_title, headline_section
from .datastores import datastore_section
from .model import Chart, Link, Report, Section, Table
from .events import events_chart, events_table
from .output import write_file
from .runs import Group, RunData, label_runs, prepare
from .tables import run_tables
from .timeline import timeline_charts

REPORT_FILE = "report.html"
PDF_FILE = "report.pdf"
RUNS_DIR = "runs"  # each run's page of a report of several runs
NO_TIMELINE = ("Host telemetry over time (disk IOPS, MB/s, latency, CPU, power): no data (the "
               "run folder has no timeline.json).")
Progress = Callable[[int, int, str], None]


@dataclass
class ReportResult:
    out_dir: Path
    html: Path
    pngs: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # the notes of charts without data
    pages: list[Path] = field(default_factory=list)  # each run's page (several runs)
    pdf: Path | None = None
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


def _runs_table(groups: list[Group], run_pages: dict[str, str] | None = None) -> Table:
    rows = []
    for g in groups:
        for r in g.runs:
            users = ",".join(str(s.get("users")) for s in r.steps if s.get("users") is not None)
            page = (run_pages or {}).get(r.id)
            rows.append((r.label, Link(r.id, page) if page else r.id, r.kind, r.engine_name,
                         r.record.get("status"), r.record.get("started_at"), len(r.steps),
                         users or ", ".join(str(s.get("profile")) for s in r.steps),
                         g.label, len(g.runs), r.telemetry_from))
    return Table("runs", "Runs", ("run", "id", "kind", "engine", "status", "started", "steps",
                                  "users or profiles", "group", "runs in group", "telemetry"),
                 tuple(rows))


def _subtitle(runs: list[RunData]) -> str:
    if len(runs) == 1:
        r = runs[0]
        facts = r.record.get("host") or {}
        host = facts.get("name") or facts.get("hostname")  # the cluster's name for it first
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


def build_report(records: list[dict], sections: list[Section] = (), *, title: str | None = None,
                 baseline: str | None = None, run_pages: dict[str, str] | None = None
                 ) -> Report:
    """The report's sections, nothing written: the answer first (the headline table of each
    kind, for several runs), then ``sections`` (a plan's own, say), the comparison and the
    charts of each kind, the runs, each run's details (unless ``run_pages`` gives {run id:
    page} where they are), and last the charts that have no data, each with why."""
    from .. import kinds as registry
    if not records:
        raise UsageError("no run to report")
    runs = [prepare(r) for r in records]
    groups = label_runs(runs)
    kinds = list(dict.fromkeys(r.kind for r in runs))
    single = len(runs) == 1
    if title is None:
        title = f"oltplab report: {runs[0].label}" if single else comparison_title(groups)
    report = Report(title=title, subtitle=_subtitle(runs))
    for caveat in dict.fromkeys(k.caveat for k in map(registry.find, kinds) if k and k.caveat):
        report.notes.append(caveat)
    if not single:
        for kind in kinds:
            declared = registry.find(kind)
            kgroups = [g for g in groups if g.runs[0].kind == kind]
            answer = (headline_section(declared, kgroups, baseline, _links(run_pages))
                      if declared is not None else None)
            if answer is not None:
                report.sections.append(answer if len(kinds) == 1 else Section(
                    f"Headline: {kind}", answer.charts, answer.tables, answer.notes))
    stores = datastore_section(groups, baseline)
    if stores is not None:
        report.sections.append(stores)
    report.sections.extend(sections)
    for kind in kinds:
        kgroups = [g for g in groups if g.runs[0].kind == kind]
        report.sections.extend(_kind_sections(registry.find(kind), kind, kgroups, single,
                                              len(kinds) == 1))
    if not single:
        report.sections.append(Section("Runs", tables=(_runs_table(groups, run_pages),)))
    if single or not run_pages:
        for i, r in enumerate(runs):
            suffix = "" if single else f"-{i + 1}"
            head = "Run details" if single else f"Run {r.label}"
            report.sections.append(_run_sections(r, suffix, head))
    _empty_charts_last(report)
    return report


def _kind_sections(declared, kind: str, kgroups: list[Group], single: bool,
                   only: bool) -> list[Section]:
    """The comparison (several runs) and the charts of the runs of one kind."""
    out = []
    metrics = (declared.metrics_for([r.record for g in kgroups for r in g.runs])
               if declared is not None else ())
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
        out.append(Section("Comparison" + ("" if only else f": {kind}"), tables=tuple(tables),
                           notes=tuple(notes)))
    charts = declared.charts(kgroups) if declared is not None else []
    kind_notes = tuple(declared.notes(kgroups)) if declared is not None else ()
    if not charts:
        kind_notes += (f"No charts are drawn for {kind} runs; their tables are below.",)
    out.append(Section("Results" if only else f"Results: {kind}", charts=tuple(charts),
                       notes=kind_notes))
    return out


def _links(run_pages: dict[str, str] | None) -> dict | None:
    return {rid: Link(rid, href) for rid, href in run_pages.items()} if run_pages else None


def _empty_charts_last(report: Report) -> None:
    """Charts without data leave their sections for one list at the end, each with why."""
    empty = [c for s in report.sections for c in s.charts if c.empty]
    if not empty:
        return
    total = len(report.charts)
    report.sections[:] = [Section(s.title, tuple(c for c in s.charts if not c.empty),
                                  s.tables, s.notes) for s in report.sections]
    report.sections.append(Section(
        "Charts without data", charts=tuple(empty),
        notes=(f"{len(empty)} of {total} charts have no data and are not drawn; "
               "each line says why.",)))


def write_report(records: list[dict], out_dir: Path | None = None, *,
                 progress: Progress | None = None, png: bool = True,
                 sections: list[Section] = (), title: str | None = None,
                 baseline: str | None = None, pdf: bool = False) -> ReportResult:
    """Write report.html and one PNG per chart with data into ``out_dir``; with several runs,
    each run's details go to a page of its own, ``runs/<id>.html``, linked from the report's
    tables; ``pdf`` prints report.pdf from the page (headless Chromium)."""
    t0 = time.monotonic()
    out = Path(out_dir) if out_dir is not None else default_out_dir(records)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file")
    pages = ({str(r.get("id")): f"{RUNS_DIR}/{_page_name(r)}" for r in records}
             if len(records) > 1 else None)
    report = build_report(records, sections, title=title, baseline=baseline, run_pages=pages)
    charts = [c for c in report.charts if not c.empty]
    total = len(charts) + 1 + (len(records) if pages else 0)
    result = ReportResult(out_dir=out, html=out / REPORT_FILE,
                          missing=[c.note for c in report.charts if c.empty])
    if png:
        from .png import write_png
        for i, chart in enumerate(charts):
            if progress:
                progress(i, total, f"{chart.key}.png")
            result.pngs.append(write_png(chart, out))
    generated = time.strftime("%Y-%m-%d %H:%M:%S %z")
    from .html import render_html
    if pages:
        for i, record in enumerate(records):
            page = build_report([record])
            page.notes.insert(0, f"One run of {report.title}; the whole report: ../{REPORT_FILE}")
            if progress:
                progress(len(charts) + i, total, pages[str(record.get("id"))])
            write_file(out / pages[str(record.get("id"))],
                       render_html(page, generated=generated, version=__version__))
            result.pages.append(out / pages[str(record.get("id"))])
    if progress:
        progress(total - 1, total, REPORT_FILE)
    write_file(result.html, render_html(report, generated=generated, version=__version__))
    if pdf:
        from .pdf import print_pdf
        result.pdf = print_pdf(result.html, out / PDF_FILE)
    if progress:
        progress(total, total, "done")
    result.seconds = time.monotonic() - t0
    return result


def _page_name(record: dict) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", str(record.get("id") or "run")) + ".html"


__all__ = ["build_report", "write_report", "default_out_dir", "ReportResult"]
