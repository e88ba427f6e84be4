"""The report as one self-contained HTML page: plotly.js, the style and every figure's data are
inside the file, so it opens from disk without a network.

The page is built as an element tree (xml.etree.ElementTree, serialized as HTML): text is
escaped by the serializer; figure data is JSON in ``<script type="application/json">`` blocks
(with ``<`` escaped), drawn by one fixed script (assets/report.js).
"""

from __future__ import annotations

import json
import re
from importlib import resources
from xml.etree import ElementTree as ET

from .charts import fmt
from .figure import figure
from .model import Chart, Link, Report, Section, Table

CLOSED_TABLES = {"database_settings", "telemetry", "telemetry_errors", "host"}


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs
    return get_plotlyjs()


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _sub(parent, tag: str, text: str | None = None, **attrs) -> ET.Element:
    el = ET.SubElement(parent, tag, {k.rstrip("_").replace("_", "-"): str(v)
                                     for k, v in attrs.items()})
    if text is not None:
        el.text = text
    return el


def figure_json(chart: Chart) -> str:
    """The figure as JSON that cannot end its script element."""
    text = json.dumps(figure(chart), separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _chart(parent, chart: Chart) -> None:
    if chart.empty:
        _sub(parent, "p", chart.note, class_="nodata", data_chart=chart.key)
        return
    fig = _sub(parent, "figure", id=f"fig-{chart.key}")
    div = _sub(fig, "div", class_="chart", id=f"chart-{chart.key}", data_chart=chart.key)
    div.text = ""
    if chart.caption:
        _sub(fig, "figcaption", chart.caption)
    data = _sub(fig, "script", type="application/json", class_="figure-data",
                data_target=f"chart-{chart.key}")
    data.text = figure_json(chart)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _table(parent, table: Table, prefix: str) -> None:
    holder = _sub(parent, "details", id=f"table-{prefix}-{table.key}")
    if table.key not in CLOSED_TABLES:
        holder.set("open", "open")
    _sub(holder, "summary", table.title)
    if not table.rows:
        _sub(holder, "p", f"{table.title}: no rows.", class_="nodata")
        return
    wrap = _sub(holder, "div", class_="wide")
    t = _sub(wrap, "table", class_="data")
    if table.caption:
        cap = _sub(t, "caption")
        _sub(cap, "small", table.caption)
    head = _sub(_sub(t, "thead"), "tr")
    for c in table.columns:
        _sub(head, "th", c)
    body = _sub(t, "tbody")
    for row in table.rows:
        tr = _sub(body, "tr")
        for v in row:
            if isinstance(v, Link) or (isinstance(v, tuple) and v and
                                       all(isinstance(x, Link) for x in v)):
                td = _sub(tr, "td")
                for i, link in enumerate(v if isinstance(v, tuple) else (v,)):
                    a = _sub(td, "a", link.text, href=link.href, class_="run-page")
                    if i:
                        a.set("style", "margin-left: 0.5em")
                continue
            td = _sub(tr, "td", fmt(v) if v is not None else "-")
            if _is_num(v):
                td.set("class", "num")


def _section(parent, section: Section, level: str = "h2") -> None:
    sid = slug(section.title)
    sec = _sub(parent, "section", id=sid)
    _sub(sec, level, section.title)
    for note in section.notes:
        if isinstance(note, (list, tuple)):
            ul = _sub(sec, "ul", class_="headlines")
            for line in note:
                _sub(ul, "li", line)
        else:
            _sub(sec, "p", note)
    for chart in section.charts:
        _chart(sec, chart)
    for table in section.tables:
        _table(sec, table, sid)


def render_html(report: Report, *, generated: str, version: str) -> str:
    html = ET.Element("html", lang="en")
    head = _sub(html, "head")
    _sub(head, "meta", charset="utf-8")
    _sub(head, "meta", name="viewport", content="width=device-width, initial-scale=1")
    _sub(head, "title", report.title)
    _sub(head, "style", _asset("report.css"))
    _sub(head, "script", plotly_js())
    body = _sub(html, "body")
    header = _sub(body, "header")
    _sub(header, "h1", report.title)
    _sub(header, "p", report.subtitle, class_="subtitle")
    for note in report.notes:
        _sub(header, "p", note, class_="caveat")
    nav = _sub(body, "nav")
    _sub(nav, "strong", "Contents")
    ul = _sub(nav, "ul")
    for s in report.sections:
        li = _sub(ul, "li")
        _sub(li, "a", s.title, href=f"#{slug(s.title)}")
    for s in report.sections:
        _section(body, s)
    footer = _sub(body, "footer")
    _sub(footer, "p", f"Generated {generated} by oltplab {version}. Charts are drawn by "
                      "plotly.js, embedded in this file; the same charts are saved as PNG "
                      "files beside it.")
    _sub(body, "script", _asset("report.js"))
    return "<!DOCTYPE html>\n" + ET.tostring(html, encoding="unicode", method="html") + "\n"
