"""The HTML page and the PNG files: self-contained, every chart's figure valid for plotly,
notes in place of charts without data, the run's tables, passwords masked."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import plotly.graph_objects as go
import pytest

from oltplab.report.build import build_report, write_report
from oltplab.report.figure import figure
from oltplab.report.html import figure_json, render_html

from .test_report_fixtures import fio_record, timeline_dict, tpcc_record, write_run


class Page(HTMLParser):
    """What the page references and holds."""

    def __init__(self):
        super().__init__()
        self.external: list[str] = []
        self.figures: dict[str, str] = {}
        self.chart_divs: list[str] = []
        self.nodata: list[str] = []
        self.tables: list[str] = []
        self._in = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith("#"):
                self.external.append(a[key])
        if tag == "link":
            self.external.append(str(a))
        if tag == "script" and a.get("class") == "figure-data":
            self._in, self._text = a["data-target"], ""
        if tag == "div" and a.get("class") == "chart":
            self.chart_divs.append(a["id"])
        if tag == "p" and a.get("class") == "nodata" and a.get("data-chart"):
            self.nodata.append(a["data-chart"])
        if tag == "details":
            self.tables.append(a["id"])

    def handle_data(self, data):
        if self._in:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "script" and self._in:
            self.figures[self._in] = self._text
            self._in = None


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    return page


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs") / "pg18"
    record = write_run(folder, tpcc_record("pg18"), timeline_dict())
    report = build_report([record])
    return report, render_html(report, generated="now", version="test")


def test_page_is_self_contained(single):
    _, text = single
    page = parse(text)
    assert page.external == []
    assert "Plotly.newPlot" in text and len(text) > 1_000_000  # plotly.js is inside
    assert text.startswith("<!DOCTYPE html>")


def test_every_chart_has_a_div_and_a_valid_figure(single):
    report, text = single
    page = parse(text)
    drawn = [c for c in report.charts if not c.empty]
    assert page.chart_divs == [f"chart-{c.key}" for c in drawn]
    assert set(page.figures) == set(page.chart_divs)
    for c in drawn:
        fig = json.loads(page.figures[f"chart-{c.key}"])
        go.Figure(fig)  # plotly's own validation of every attribute
        assert fig["layout"]["title"]["text"] == c.title
        assert fig["layout"]["yaxis"]["title"]["text"] == c.y_label


def test_figure_data_cannot_close_its_script():
    from oltplab.report.model import Chart, Series
    chart = Chart(key="k", title="</script><b>x</b>", kind="bar", x_label="a", y_label="b",
                  series=(Series(name="n", x=("1",), y=(1.0,)),))
    text = figure_json(chart)
    assert "<" not in text and json.loads(text)["layout"]["title"]["text"].startswith("</")


def test_notes_replace_charts_without_data(tmp_path):
    record = write_run(tmp_path / "bare", tpcc_record("bare"))
    report = build_report([record])
    page = parse(render_html(report, generated="now", version="test"))
    missing = [c.key for c in report.charts if c.empty]
    assert page.nodata == missing and len(missing) == 12
    last = report.sections[-1]  # listed once, at the end, each with why
    assert last.title == "Charts without data" and [c.key for c in last.charts] == missing
    assert last.notes[0].startswith("12 of 15 charts have no data")
    assert all(not c.empty for s in report.sections[:-1] for c in s.charts)


def test_tables_of_configuration_host_and_database(single):
    _, text = single
    page = parse(text)
    for key in ("run", "steps", "transactions", "host_per_step", "devices_per_step",
                "configuration", "host", "database", "database_settings", "telemetry"):
        assert f"table-run-details-{key}" in page.tables
    assert "s3cret" not in text and "postgresql://bench:***@db:5432/tpcc" in text
    assert "TPC-C-derived" in text


def test_comparison_page_lists_ratios(tmp_path):
    a = write_run(tmp_path / "a", tpcc_record("A", run_id="a"))
    b = write_run(tmp_path / "b", tpcc_record("B", run_id="b", factor=2.3))
    text = render_html(build_report([a, b]), generated="now", version="test")
    assert "NOPM at 8 users: B 2.30x A (noise unknown" in text
    assert "Welch" in text


def test_write_report_writes_html_and_a_png_per_drawn_chart(tmp_path):
    runs = tmp_path / "runs"
    record = write_run(runs / "f", fio_record())
    result = write_report([record], tmp_path / "out")
    assert result.html == tmp_path / "out" / "report.html"
    names = sorted(p.name for p in result.pngs)
    assert names == ["fio_iops_latency.png", "fio_iops_time.png", "fio_latency.png",
                     "fio_throughput.png"]
    for p in result.pngs:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert width == 1000 and 450 < height < 800
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]
    assert re.search(r"Host telemetry over time .*: no data", result.html.read_text())
    assert (result.html.stat().st_mode & 0o044) == 0o044  # readable like other files


def test_figure_of_a_band_chart(single):
    report, _ = single
    chart = next(c for c in report.charts if c.key == "iops_time")
    fig = figure(chart)
    assert len(fig["layout"]["shapes"]) == 4
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["1 user", "2 users",
                                                                 "4 users", "8 users"]
