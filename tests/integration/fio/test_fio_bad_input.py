"""Bad input to ``oltplab fio run``: one clear line, no run saved, nothing left in the target."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .test_fio_run import SMALL, needs_fio, oltplab_fio, one_line_error, runs

pytestmark = needs_fio


@pytest.fixture
def target(tmp_path):
    t = tmp_path / "target"
    t.mkdir()
    return t


def _nothing_left(target, results) -> None:
    assert list(target.iterdir()) == []
    assert runs(results) == []


@pytest.mark.parametrize("extra, rc, needle", [
    (["--profile", "nope"], 2, "unknown profile 'nope'"),
    (["--size", "1000TiB"], 2, "larger than the free space"),
    (["--size", "3MiB"], 2, "too small"),
    (["--duration", "soon"], 2, "not a duration"),
    (["--jobs", "0"], 2, "--jobs"),
    (["--steady-state", "sometimes"], 2, "steady-state criterion"),
])
def test_usage_errors(tmp_path, target, extra, rc, needle):
    results = tmp_path / "results"
    p = oltplab_fio("run", "--target", str(target), *SMALL, *extra, "--results-dir", str(results))
    one_line_error(p, rc, needle)
    _nothing_left(target, results)


def test_missing_target(tmp_path):
    p = oltplab_fio("run", "--target", str(tmp_path / "nowhere"), *SMALL)
    one_line_error(p, 2, "does not exist")


def test_target_that_is_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    one_line_error(oltplab_fio("run", "--target", str(f), *SMALL), 2, "neither a directory")


def test_no_target():
    one_line_error(oltplab_fio("run", *SMALL), 2, "--target")


def test_unwritable_target(tmp_path, target):
    """Root writes anywhere, so the directory is made immutable (ext4 chattr +i)."""
    if shutil.which("chattr") is None or subprocess.run(
            ["chattr", "+i", str(target)], capture_output=True).returncode != 0:
        pytest.skip("cannot make a directory immutable here")
    try:
        p = oltplab_fio("run", "--target", str(target), *SMALL,
                        "--results-dir", str(tmp_path / "results"))
    finally:
        subprocess.run(["chattr", "-i", str(target)], capture_output=True)
    one_line_error(p, 2, "cannot write in")
    _nothing_left(target, tmp_path / "results")


def test_mounted_block_device_is_refused():
    """The disk under / is mounted: oltplab refuses to write over it."""
    st = os.stat("/")
    node = Path("/sys/dev/block") / f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    dev = Path("/dev") / node.resolve().name if node.exists() else None
    if dev is None or not dev.is_block_device():
        pytest.skip("the root filesystem has no block device node here")
    # a read-only profile, so that even a broken check could not harm the disk
    p = oltplab_fio("run", "--target", str(dev), *SMALL, "--profile", "4k-randread")
    one_line_error(p, 2, "mounted")


def test_fio_missing(tmp_path, target):
    p = oltplab_fio("run", "--target", str(target), *SMALL, env={"PATH": "/nonexistent"})
    one_line_error(p, 1, "fio is not installed")
    _nothing_left(target, tmp_path / "results")


@pytest.mark.parametrize("body, needle", [
    ("[a]\nrw=randread\nbogus=1\n", "bad option"),
    ("[a]\nrw=randread\ndirectory=/etc\n", "directory is not allowed"),
    ("[a]\nrw=randread\ndirect=0\n", "direct IO"),
])
def test_bad_job_files(tmp_path, target, body, needle):
    job = tmp_path / "mine.fio"
    job.write_text(body)
    results = tmp_path / "results"
    p = oltplab_fio("run", "--target", str(target), *SMALL, "--profile", str(job),
                    "--results-dir", str(results))
    one_line_error(p, 2, needle)
    _nothing_left(target, results)


def test_fio_failure_is_one_line_and_the_run_is_saved_failed(tmp_path, target):
    """An ioengine fio does not know fails at run time: the run records the failure."""
    results = tmp_path / "results"
    p = oltplab_fio("run", "--target", str(target), *SMALL, "--ioengine", "nosuchengine",
                    "--results-dir", str(results))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("oltplab: error:") and "nosuchengine" in last
    assert list(target.iterdir()) == []
    [run] = runs(results)
    assert run["status"] == "failed" and "fio failed" in run["error"]
