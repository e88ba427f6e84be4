"""The sampler against real fio: the device IOPS it records during a run agree with fio's own
within 5%."""

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
from oltplab.telemetry.sources.disks import path_device

DIRECTORY = Path("/var/tmp")  # disk-backed here; /tmp may be a tmpfs elsewhere
RAMP_S, RUNTIME_S = 1, 7

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def fio(*args: str) -> dict:
    out = subprocess.run(["fio", "--output-format=json", *args], capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        pytest.skip(f"fio cannot run here: {out.stderr.strip()[:200]}")
    return json.loads(out.stdout[out.stdout.index("{"):])


def test_device_iops_agree_with_fio():
    device = path_device(DIRECTORY)["device"]
    if device is None:
        pytest.skip(f"no block device behind {DIRECTORY}")
    target = DIRECTORY / f"oltplab-telemetry-{os.getpid()}.dat"
    common = [f"--filename={target}", "--size=64m", "--bs=4k", "--direct=1", "--name=t"]
    try:
        fio(*common, "--rw=write", "--bs=1m")  # lay the file out first
        sampler = Sampler(1.0, paths={"target": DIRECTORY}, power="none")
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
    finally:
        target.unlink(missing_ok=True)
    fio_iops = result["jobs"][0]["read"]["iops"]
    [step] = derive_steps(timeline)
    assert step["complete"] and step["samples"] >= RUNTIME_S - 2
    dev = step["devices"][device]
    ratio = dev["read_iops"] / fio_iops
    assert 0.95 <= ratio <= 1.05, f"sampler {dev['read_iops']:.0f} IOPS, fio {fio_iops:.0f}"
    # 4 KiB reads; other work on a shared disk may add reads of other sizes
    assert dev["read_mb_s"] == pytest.approx(dev["read_iops"] * 4096 / 2**20, rel=0.2)
    assert dev["r_await_ms"] > 0 and dev["util_pct"] > 0
    assert timeline.roles["target"]["device"] == device
