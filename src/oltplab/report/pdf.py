"""A report as a PDF, for people who attach it to a paper: headless Chromium (Debian's chromium
package) prints the HTML page once its embedded plotly.js has drawn every chart. Nothing is
fetched: the page holds everything it draws, and Chromium is kept off the network."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import UsageError

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--no-pdf-header-footer", "--hide-scrollbars",
         "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
         "--virtual-time-budget=20000")
TIMEOUT_S = 180


def browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    raise UsageError("--pdf needs headless Chromium: install the chromium package "
                     "(apt-get install chromium)")


def print_pdf(html: Path, pdf: Path) -> Path:
    """Print ``html`` to ``pdf`` (written whole or not at all); the path written."""
    exe = browser()
    pdf.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="oltplab-pdf-") as scratch:
        part = Path(scratch) / "report.pdf"
        try:
            res = subprocess.run([exe, *FLAGS, f"--user-data-dir={scratch}/profile",
                                  f"--print-to-pdf={part}", html.resolve().as_uri()],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise UsageError(f"Chromium did not print {html} within {TIMEOUT_S} s") from None
        if res.returncode != 0 or not part.is_file() or part.stat().st_size == 0:
            last = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
            raise UsageError(f"Chromium could not print {html} as PDF: {last}")
        shutil.move(str(part), pdf.with_suffix(".pdf.part"))
        pdf.with_suffix(".pdf.part").replace(pdf)
    return pdf
