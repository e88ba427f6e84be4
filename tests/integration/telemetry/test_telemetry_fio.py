"""The sampler against real fio: the device IOPS it records during a run agree with fio's own
within 5%, on a loop device only fio uses."""

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
RAMP_S, RUNTIME_S = 1, 7

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
        t = sampler.mark("step_start", step=0, users=1)["t_ns"]
        # the window lies inside fio's measured time (after its ramp, before its end)
        sampler.mark("ramp_end", t_ns=t + int((RAMP_S + 0.5) * 1e9), step=0)
        sampler.mark("measure_end", t_ns=t + int((RAMP_S + RUNTIME_S - 0.5) * 1e9), step=0)
        result = fio(*common, "--rw=randread", "--ioengine=libaio", "--iodepth=8",
                     "--time_based", f"--ramp_time={RAMP_S}", f"--runtime={RUNTIME_S}")
        time.sleep(0.1)
    finally:
        timeline = sampler.stop()
    fio_iops = result["jobs"][0]["read"]["iops"]
    [step] = derive_steps(timeline)
    assert step["complete"] and step["samples"] >= RUNTIME_S - 2
    dev = step["devices"][device]
    ratio = dev["read_iops"] / fio_iops
    assert 0.95 <= ratio <= 1.05, f"sampler {dev['read_iops']:.0f} IOPS, fio {fio_iops:.0f}"
    assert dev["read_mb_s"] == pytest.approx(dev["read_iops"] * 4096 / 2**20, rel=0.05)
    assert dev["r_await_ms"] > 0 and dev["util_pct"] > 0
