"""The sampler against real fio: the device reads it records over a window holding the whole
fio run agree with the reads fio completed within 2%, on a loop device only fio uses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from oltplab.telemetry.derive import derive_steps
from oltplab.telemetry.sampler import Sampler

DIRECTORY = Path("/var/tmp")  # disk-backed here; /tmp may be a tmpfs elsewhere
RUNTIME_S = 7

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def fio(*args: str) -> dict:
    out = subprocess.run(["fio", "--output-format=json", *args], capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        pytest.skip(f"fio cannot run here: {out.stderr.strip()[:200]}")
    return json.loads(out.stdout[out.stdout.index("{"):])


@pytest.fixture
def own_device():
    """A loop device over a file in DIRECTORY that only this test does IO on (the suite runs
    in two processes, whose other work on the disk under it would count in its IOPS)."""
    image = DIRECTORY / f"oltplab-telemetry-{os.getpid()}.img"
    with open(image, "wb") as f:
        f.truncate(96 * 2**20)
    p = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(image)],
                       capture_output=True, text=True)
    image.unlink()  # the loop device holds it open
    if p.returncode != 0:
        pytest.skip(f"no loop device: {p.stderr.strip()}")
    yield Path(p.stdout.strip())
    subprocess.run(["losetup", "--detach", p.stdout.strip()])


def test_device_iops_agree_with_fio(own_device):
    device = own_device.name
    common = [f"--filename={own_device}", "--size=64m", "--bs=4k", "--direct=1", "--name=t"]
    fio(*common, "--rw=write", "--bs=1m")  # lay the file out first
    sampler = Sampler(1.0, devices=[device], power="none")
    sampler.start()
    try:
        # the window holds the whole fio run (no ramp): every read fio completes is in it, and
        # nothing else reads the device, so the counts agree whatever fio's rate does over
        # time (under other load it varies, so a window inside the run would not be fio's
        # average)
        sampler.mark("step_start", step=0, users=1)
        start = sampler.mark("ramp_end", step=0)["t_ns"]
        result = fio(*common, "--rw=randread", "--ioengine=libaio", "--iodepth=8",
                     "--time_based", f"--runtime={RUNTIME_S}")
        end = sampler.mark("measure_end", step=0)["t_ns"]
        time.sleep(0.1)
    finally:
        timeline = sampler.stop()
    fio_reads = result["jobs"][0]["read"]["total_ios"]
    [step] = derive_steps(timeline)
    assert step["complete"] and step["samples"] >= RUNTIME_S - 1
    dev = step["devices"][device]
    reads = dev["read_iops"] * (end - start) / 1e9
    assert reads == pytest.approx(fio_reads, rel=0.02), (
        f"sampler {reads:.0f} reads, fio {fio_reads}")
    assert dev["read_mb_s"] == pytest.approx(dev["read_iops"] * 4096 / 2**20, rel=0.05)
    assert dev["r_await_ms"] > 0 and dev["util_pct"] > 0
