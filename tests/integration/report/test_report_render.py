"""Reports of real data: a real fio run, and a TPC-C-derived run whose timeline a real Sampler
recorded around real disk writes (its step records are fixtures for the renderer: the
driver's figures are not what is tested here). Also: an hour of 1 s samples over 10 steps
renders within 10 s."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oltplab.report.build import write_report
from oltplab.report.export import export_csv
from oltplab.results.store import load_run
from oltplab.telemetry.sampler import Sampler


def _fixtures():
    """The renderer's fixture builders, shared with the unit tests (loaded by path: the test
    folders are not one package)."""
    import importlib.util
    path = Path(__file__).parents[2] / "unit" / "report" / "test_report_fixtures.py"
    spec = importlib.util.spec_from_file_location("oltplab_report_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_fx = _fixtures()
timeline_dict, tpcc_record, write_run = _fx.timeline_dict, _fx.tpcc_record, _fx.write_run

DISK = Path("/var/tmp")  # disk-backed here; /tmp may be a tmpfs elsewhere
# a fixture power meter: a command printing 200..239 W
METER = "cmd:sh -c 'echo $((200 + $(od -An -N1 -tu1 /dev/urandom) % 40))'"


@pytest.fixture(scope="module")
def fio_run(tmp_path_factory):
    if shutil.which("fio") is None:
        pytest.fail("fio is not installed (the Makefile's DEB_PACKAGES installs it)")
    results = tmp_path_factory.mktemp("fio-results")
    target = Path(tempfile_dir(DISK, "oltplab-report-fio-"))
    try:
        p = subprocess.run(
            [sys.executable, "-m", "oltplab", "fio", "run", "--target", str(target),
             "--profile", "4k-randread", "--profile", "64k-70r30w-random", "--size", "16MiB",
             "--duration", "2s", "--ramp", "0s", "--jobs", "1", "--iodepth", "4",
             "--results-dir", str(results), "--name", "disk"],
            capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
    finally:
        shutil.rmtree(target, ignore_errors=True)
    return load_run(results, "latest")


def tempfile_dir(base: Path, prefix: str) -> str:
    import tempfile
    return tempfile.mkdtemp(prefix=prefix, dir=base)


def sampled_tpcc_run(folder: Path) -> dict:
    """Two steps of real disk writes under a real Sampler (0.2 s), marked as a driver does."""
    work = Path(tempfile_dir(DISK, "oltplab-report-io-"))
    sampler = Sampler(interval=0.2, paths={"datadir": work}, power=METER)
    sampler.start()
    try:
        for step, users in enumerate((1, 2)):
            t = sampler.mark("step_start", users=users, step=step)["t_ns"]
            sampler.mark("ramp_end", t_ns=t + int(0.4e9), step=step)
            sampler.mark("measure_end", t_ns=t + int(1.6e9), step=step)
            end = time.monotonic() + 1.7
            with open(work / "data", "wb") as f:
                while time.monotonic() < end:
                    f.write(os.urandom(256 * 1024) * 4 * users)
                    f.flush()
                    os.fsync(f.fileno())
    finally:
        timeline = sampler.stop()
        shutil.rmtree(work, ignore_errors=True)
    record = tpcc_record("sampled", run_id="20260101T000000-sampled", users=(1, 2))
    return write_run(folder, record, timeline.to_dict())


def test_real_fio_run(fio_run, tmp_path):
    result = write_report([fio_run], tmp_path / "out")
    # the run's telemetry has no power meter on this machine: only power charts may lack data
    assert all(m.startswith(("Power", "Watts", "Orders per watt")) for m in result.missing), \
        result.missing
    assert {"fio_iops_latency", "fio_iops_time", "fio_latency", "fio_throughput"} <= \
        {p.stem for p in result.pngs}
    html = result.html.read_text()
    assert "64k-70r30w-random" in html and "fio-" in html  # the profile and fio's version
    csvs = export_csv(fio_run, tmp_path / "csv")
    assert (tmp_path / "csv" / "profiles.csv") in csvs


def test_sampled_tpcc_run(tmp_path):
    record = sampled_tpcc_run(tmp_path / "run")
    timeline = json.loads((tmp_path / "run" / "timeline.json").read_text())
    assert timeline["power"]["available"], timeline["power"]
    result = write_report([record], tmp_path / "out")
    drawn = {p.stem for p in result.pngs}
    assert {"tpm_nopm", "cpu_idle", "disk_latency", "disk_iops", "device_gb",
            "device_max_latency", "orders_per_watt", "iops_time", "mbps_time", "latency_time",
            "cpu_time", "power_time", "power_hist"} <= drawn, result.missing
    from oltplab.report.build import build_report
    charts = {c.key: c for c in build_report([record]).charts}
    idle = charts["cpu_idle"].series[0].y
    assert all(0 <= v <= 100 for v in idle)
    written = next(s for s in charts["device_gb"].series if s.name == "written")
    assert max(written.y) > 0
    opw = charts["orders_per_watt"].series[0].y
    assert all(1000 / 240 <= v <= 1900 / 200 for v in opw)  # NOPM / 200..239 W


def test_comparison_of_real_and_fixture_runs(fio_run, tmp_path):
    sampled = sampled_tpcc_run(tmp_path / "sampled")
    other = write_run(tmp_path / "other", tpcc_record("other", factor=1.5, users=(1, 2)),
                      timeline_dict((1, 2)))
    result = write_report([sampled, other, fio_run], tmp_path / "out")
    html = result.html.read_text()
    assert "NOPM at 2 users: other 1.50x sampled (noise unknown" in html
    assert "Comparison: fio" in html and "Results: fio" in html


def test_an_hour_of_samples_renders_averaged(tmp_path):
    """An hour of 1 s samples renders whole, the timeline's points averaged in groups (its
    time is bench/report_render.py's figure)."""
    users = tuple(range(10, 110, 10))
    record = write_run(tmp_path / "hour", tpcc_record("hour", users=users),
                       timeline_dict(users, ramp_s=30, measure_s=329, gap_s=1))
    result = write_report([record], tmp_path / "out")
    assert result.missing == []
    assert "averaged in groups of 3" in result.html.read_text()
