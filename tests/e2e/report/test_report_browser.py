"""``oltplab report`` as a user runs it, and its page opened from disk in headless Chromium
(Debian's chromium package) with the network cut off: every chart must be drawn as SVG by
the embedded plotly.js. A screenshot of the page is saved beside the report."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# The top-level CLI with the report command registered (a no-op once oltplab.cli.main does).
_ENTRY = """
import sys
from oltplab.cli.main import cli, main
from oltplab.cli.report import report
if "report" not in cli.commands:
    cli.add_command(report)
sys.exit(main(sys.argv[1:]))
"""
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                  "--hide-scrollbars", "--mute-audio",
                  # nothing may be fetched: the page must draw from what it holds
                  "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>")


def _fixtures():
    path = Path(__file__).parents[2] / "unit" / "report" / "test_report_fixtures.py"
    spec = importlib.util.spec_from_file_location("oltplab_report_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("headless Chromium is not installed: 'apt-get install -y chromium' "
                "(the Makefile's DEB_PACKAGES installs it)")


def oltplab_report(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-c", _ENTRY, "report", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def browse(page: Path, *mode: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Chromium on ``page`` with a fresh profile; ``mode`` is --dump-dom or --screenshot=..."""
    with tempfile.TemporaryDirectory(prefix="oltplab-chromium-") as profile:
        return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                               "--virtual-time-budget=20000", *mode, page.as_uri()],
                              capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    fx = _fixtures()
    root = tmp_path_factory.mktemp("results")
    fx.write_run(root / "20260101T000000-pg17", fx.tpcc_record(
        "pg17", run_id="20260101T000000-pg17"), fx.timeline_dict())
    fx.write_run(root / "20260101T000100-pg18", fx.tpcc_record(
        "pg18", run_id="20260101T000100-pg18", factor=1.4), fx.timeline_dict())
    fx.write_run(root / "20260101T000200-nvme", fx.fio_record(
        "nvme", run_id="20260101T000200-nvme"))
    return root


def drawn_figures(dom: str) -> dict[str, str]:
    """{chart key: the figure's rendered markup} of a dumped DOM."""
    return {m.group(1): m.group(2) for m in
            re.finditer(r'<figure id="fig-([^"]+)"(.*?)</figure>', dom, re.S)}


def test_report_opens_from_disk_with_every_chart_drawn(results, tmp_path):
    out = tmp_path / "report"
    p = oltplab_report("pg17", "pg18", "nvme", "--results-dir", str(results), "--out",
                       str(out), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"report {out / 'report.html'}")
    page = out / "report.html"
    source = page.read_text()
    expected = re.findall(r'<div class="chart" id="chart-([^"]+)"', source)
    assert len(expected) == len(list(out.glob("*.png"))) >= 10

    dump = browse(page, "--dump-dom")
    assert dump.returncode == 0, dump.stderr[-2000:]
    dom = dump.stdout
    assert re.search(r'data-charts-drawn="%d"' % len(expected), dom), "the charts did not finish"
    figures = drawn_figures(dom)
    assert sorted(figures) == sorted(expected)
    for key, markup in figures.items():
        assert 'class="main-svg"' in markup, f"chart {key} has no SVG"
        assert "could not be drawn" not in markup, key
    assert "NOPM at 8 users: pg18 1.40x pg17" in dom
    assert "Best: pg18, NOPM" in dom  # the answer, before the charts

    run_page = out / "runs" / "20260101T000000-pg17.html"  # each run's details on its own page
    assert 'href="runs/20260101T000000-pg17.html"' in source
    own = browse(run_page, "--dump-dom")
    assert own.returncode == 0, own.stderr[-2000:]
    own_figures = drawn_figures(own.stdout)
    assert len(own_figures) > 10
    assert all('class="main-svg"' in markup for markup in own_figures.values())

    shot = out / "screenshot.png"
    taken = browse(page, f"--screenshot={shot}", "--window-size=1280,3200")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    print(f"screenshot: {shot}")


def test_single_run_default_folder_and_bad_reference(results, tmp_path):
    p = oltplab_report("nvme", "--results-dir", str(results), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "reports" / "20260101T000200-nvme" / "report.html").is_file()
    bad = oltplab_report("no-such-run", "--results-dir", str(results), cwd=tmp_path)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr and "no run 'no-such-run'" in bad.stderr
    twice = oltplab_report("nvme", "nvme", "--results-dir", str(results), cwd=tmp_path)
    assert twice.returncode == 2 and "given twice" in twice.stderr


def test_report_as_pdf_for_a_paper(results, tmp_path):
    out = tmp_path / "pdf"
    p = oltplab_report("pg17", "pg18", "--results-dir", str(results), "--out", str(out),
                       "--pdf", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    pdf = out / "report.pdf"
    assert f"pdf {pdf}" in p.stdout
    data = pdf.read_bytes()
    assert data[:5] == b"%PDF-" and len(data) > 50_000
    assert data.count(b"/Type /Page") - data.count(b"/Type /Pages") >= 2  # several pages
    assert not list(out.glob("*.part"))
    pages = sorted(p.name for p in (out / "runs").iterdir())
    assert pages == ["20260101T000000-pg17.html", "20260101T000100-pg18.html"]
