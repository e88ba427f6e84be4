"""``oltplab fio run`` with the real fio, briefly: profiles, a job file, a block device, an
interrupt; and the pooled percentiles checked against fio's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from interrupts import INTERRUPTIBLE, ctrl_c

from oltplab.fio.jobs import FioJob
from oltplab.fio.parse import PERCENTILES, percentile, pool_bins, summarize
from oltplab.fio.process import find_fio, run_fio

# The top-level CLI with the fio group registered (a no-op once oltplab.cli.main registers it).
_ENTRY = """
import sys
from oltplab.cli.main import cli, main
from oltplab.cli.fio import fio
if "fio" not in cli.commands:
    cli.add_command(fio)
sys.exit(main(sys.argv[1:]))
"""

SMALL = ("--size", "64MiB", "--duration", "3s", "--ramp", "1s")
ROOT = Path(__file__).parents[3]

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def argv(*args: str) -> list[str]:
    return [sys.executable, "-c", _ENTRY, "fio", *args]


def oltplab_fio(*args: str, env: dict | None = None, timeout: float = 120,
                cwd: Path | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run(argv(*args), capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=cwd)


def runs(results: Path) -> list[dict]:
    if not results.is_dir():
        return []
    return [json.loads((p / "run.json").read_text()) | {"_path": str(p)}
            for p in sorted(results.iterdir()) if (p / "run.json").is_file()]


def one_line_error(p: subprocess.CompletedProcess, rc: int, needle: str) -> str:
    assert p.returncode == rc, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert needle.lower() in lines[0].lower(), lines[0]
    return lines[0]


pytestmark = needs_fio

STEP_KEYS = {"index", "profile", "kind", "job_file", "bs", "rw", "rwmixread", "iodepth", "jobs",
             "size_bytes", "runtime_s", "read", "write", "total_iops", "total_mbps", "series",
             "steady_state", "errors", "fio_version", "options", "fio_args", "wall_s", "partial",
             "raw_file"}
LAT_KEYS = {"min", "mean", "p50", "p95", "p99", "p99_9", "max"}


def _check_direction(d: dict, expect_io: bool) -> None:
    assert set(d) == {"ios", "bytes", "iops", "mbps", "lat_ms"} and set(d["lat_ms"]) == LAT_KEYS
    if expect_io:
        lat = d["lat_ms"]
        assert d["ios"] > 0 and d["iops"] > 0 and d["mbps"] > 0
        assert 0 < lat["min"] <= lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["p99_9"]
        assert lat["p99_9"] <= lat["max"] * 1.02  # a bin's value may sit a little above max
    else:
        assert d["ios"] == 0 and d["lat_ms"]["p99"] is None


def test_two_profiles_saved_as_a_run(tmp_path):
    target, results = tmp_path / "target", tmp_path / "results"
    target.mkdir()
    p = oltplab_fio("run", "--target", str(target), *SMALL, "--profile", "4k-70r30w-random",
                    "--profile", "128k-seqwrite", "--jobs", "2", "--results-dir", str(results),
                    "--name", "two")
    assert p.returncode == 0, p.stderr
    assert "4k-70r30w-random" in p.stdout and "saved" in p.stderr
    assert list(target.iterdir()) == []  # test files removed
    [run] = runs(results)
    assert run["kind"] == "fio" and run["status"] == "completed" and run["name"] == "two"
    assert run["fio"]["version"].startswith("fio-") and run["host"]["paths"]["target"]["fs_type"]
    assert [s["profile"] for s in run["steps"]] == ["4k-70r30w-random", "128k-seqwrite"]
    mix, seq = run["steps"]
    assert set(mix) == STEP_KEYS | {"telemetry", "io"}
    # the devices' side of the IO beside fio's own count of what it issued (the front end)
    assert mix["io"]["front_write_iops"] == mix["write"]["iops"] > 0, mix["io"]
    assert mix["io"]["back_write_iops"] > 0, mix["io"]
    assert mix["telemetry"]["devices"], "the sampler saw the disk behind the target"
    assert (mix["bs"], mix["rw"], mix["rwmixread"], mix["jobs"], mix["iodepth"]) == \
        (4096, "randrw", 70, 2, 8)
    _check_direction(mix["read"], True)
    _check_direction(mix["write"], True)
    _check_direction(seq["read"], False)
    _check_direction(seq["write"], True)
    share = mix["read"]["ios"] / (mix["read"]["ios"] + mix["write"]["ios"])
    assert 0.6 < share < 0.8
    assert mix["total_iops"] == pytest.approx(mix["read"]["iops"] + mix["write"]["iops"])
    ser = mix["series"]
    assert 1 <= len(ser["t_s"]) <= 3 and len(ser["read_iops"]) == len(ser["t_s"])
    assert all(x > 0 for x in ser["read_iops"] + ser["write_iops"])
    raw = json.loads((Path(run["_path"]) / mix["raw_file"]).read_text())
    assert len(raw["jobs"]) == 2 and "bins" in raw["jobs"][0]["read"]["clat_ns"]


def test_example_job_file_with_precondition_and_steady_state(tmp_path):
    target, results = tmp_path / "target", tmp_path / "results"
    target.mkdir()
    example = ROOT / "examples" / "fio" / "oltp-8k.fio"
    p = oltplab_fio("run", "--target", str(target), "--size", "64MiB", "--duration", "4s",
                    "--ramp", "1s", "--profile", "4k-randread", "--profile", str(example),
                    "--precondition", "--steady-state", "iops:50%", "--steady-window", "2s",
                    "--results-dir", str(results))
    assert p.returncode == 0, p.stderr
    assert "precondition: wrote 64 MiB" in p.stderr
    assert list(target.iterdir()) == []
    [run] = runs(results)
    assert run["precondition"]["bytes"] == 64 * 1024**2
    rand, oltp = run["steps"]
    assert oltp["kind"] == "job-file" and oltp["profile"] == "oltp-8k"
    assert oltp["job_file"] == str(example) and oltp["jobs"] == 3 and oltp["bs"] == 8192
    assert set(oltp["options"]["jobs"]) == {"data", "wal"}
    _check_direction(oltp["read"], True)
    _check_direction(oltp["write"], True)
    for step in (rand, oltp):
        ss = step["steady_state"]
        assert ss["window_s"] == 2 and ss["jobs"] == step["jobs"]
        assert isinstance(ss["attained"], bool) and ss["criterion"].startswith("iops:50")


def test_pooled_percentiles_match_fios_own_for_one_job(tmp_path):
    """With one job and one direction, pooling changes nothing: fio's percentiles must agree
    (fio computes in floating point, so an exact bin boundary may tip it one bin up)."""
    from oltplab.fio.jobs import fio_time
    fio = find_fio()
    job = FioJob(name="check", kind="profile", size_bytes=None, args=(
        "--name=check", f"--directory={tmp_path}", "--rw=randread", "--bs=4k", "--size=16m",
        "--ioengine=libaio", "--direct=1", "--iodepth=4", "--time_based",
        f"--runtime={fio_time(1.5)}"))
    out = run_fio(fio, job, tmp_path / "scratch")
    clat = out.doc["jobs"][0]["read"]["clat_ns"]
    bins = pool_bins([clat["bins"]])
    total = sum(bins.values())
    for key, pct in PERCENTILES:
        ours = percentile(bins, pct)
        theirs = clat["percentile"][f"{float(pct):.6f}"]
        if ours != theirs:  # exactly on a boundary: ours holds precisely pct% of the IOs
            assert sum(c for v, c in bins.items() if v <= ours) * 100 == pct * total, key
    s = summarize(out.doc, out.iops_logs)
    assert s["read"]["lat_ms"]["mean"] == pytest.approx(clat["mean"] / 1e6)
    assert s["read"]["iops"] == pytest.approx(out.doc["jobs"][0]["read"]["iops"], rel=1e-3)


def test_interrupt_saves_the_run_and_leaves_nothing(tmp_path):
    target, results = tmp_path / "target", tmp_path / "results"
    target.mkdir()
    proc = subprocess.Popen(argv("run", "--target", str(target), "--size", "64MiB",
                                 "--duration", "60s", "--ramp", "0", "--results-dir",
                                 str(results)), stderr=subprocess.PIPE, text=True,
                            **INTERRUPTIBLE)
    try:
        first = proc.stderr.readline()
        assert first.startswith("run "), first
        fio_pids = _wait_for_fio(proc.pid)
        time.sleep(1.5)  # let it measure something
        rest = ctrl_c(proc, timeout=30)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "interrupted" in rest and "Traceback" not in rest
    assert list(target.iterdir()) == []
    [run] = runs(results)
    assert run["status"] == "interrupted"
    [step] = run["steps"]  # what fio measured before it was stopped
    assert step["partial"] is True and step["read"]["ios"] > 0 and step["runtime_s"] < 30
    time.sleep(0.2)
    assert not [p for p in fio_pids if psutil.pid_exists(p) and
                psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


def _wait_for_fio(pid: int, timeout: float = 20) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = [c for c in psutil.Process(pid).children(recursive=True) if c.name() == "fio"]
        if kids:
            time.sleep(1.0)
            return [k.pid for k in psutil.Process(pid).children(recursive=True)]
        time.sleep(0.1)
    raise AssertionError("fio did not start")


@pytest.fixture
def loop_device(tmp_path):
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(96 * 1024**2)
    p = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"no loop device: {p.stderr.strip()}")
    dev = p.stdout.strip()
    try:
        yield Path(dev)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def test_block_device_target(tmp_path, loop_device):
    results = tmp_path / "results"
    p = oltplab_fio("run", "--target", str(loop_device), *SMALL, "--profile", "4k-randread",
                    "--jobs", "2", "--results-dir", str(results))
    assert p.returncode == 0, p.stderr
    [run] = runs(results)
    assert run["target"]["kind"] == "block" and run["target"]["capacity_bytes"] == 96 * 1024**2
    assert run["target"]["device"]["name"] == loop_device.name
    step = run["steps"][0]
    assert step["read"]["iops"] > 0 and step["write"]["ios"] == 0
    assert f"--filename={loop_device}" in step["fio_args"]
    p = oltplab_fio("run", "--target", str(loop_device), "--size", "1GiB",
                    "--results-dir", str(results))
    assert p.returncode == 2 and "larger than block device" in p.stderr


def test_repeat_makes_one_group_of_runs(tmp_path):
    target, results = tmp_path / "target", tmp_path / "results"
    target.mkdir()
    p = oltplab_fio("run", "--target", str(target), "--size", "64MiB", "--duration", "1s",
                    "--ramp", "0s", "--profile", "4k-randread", "--sample-interval", "0",
                    "--repeat", "2", "--results-dir", str(results), "--name", "rep")
    assert p.returncode == 0, p.stderr
    first, second = runs(results)
    assert first["group"]["id"] == second["group"]["id"]
    assert [first["group"]["index"], second["group"]["index"]] == [1, 2]
    assert "IOPS at 4k-randread: mean " in p.stdout and "95% CI, n = 2" in p.stdout
