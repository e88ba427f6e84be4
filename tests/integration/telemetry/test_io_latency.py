"""Every IO's latency from the block layer (bpftrace), per step and device, against fio's own
count of the same IOs on a loop device; and what is recorded where it cannot run."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time

import pytest

from oltplab.telemetry.iolatency import (IoLatency, bucket_value, device_name, device_number,
                                         why_unavailable)
from oltplab.telemetry.sampler import Sampler

MiB = 1024**2


def test_buckets_keep_ten_bits_and_name_the_device():
    assert [bucket_value(0, 87), bucket_value(3, 1000)] == [87, 8004]
    # a latency v lands in (s, v >> s) with v >> s < 1024: its bucket is within 0.1% of it
    for v in (1, 999, 1023, 1024, 5000, 123_456, 7_654_321):
        s = 0
        while v >> s >= 1024:
            s += 1
        assert abs(bucket_value(s, v >> s) - v) <= max(1, v / 1000)
    # a block device of this machine by its number (loop3 need not exist while other tests
    # attach and detach theirs), and one with a number no device has
    name = os.listdir("/sys/block")[0]
    major, minor = map(int, open(f"/sys/block/{name}/dev").read().split(":"))
    assert device_name((major << 20) | minor) == name
    assert device_name((259 << 20) | 999_999) == "259:999999"


def _attach(image) -> str:
    with open(image, "wb") as f:
        f.truncate(64 * MiB)
    p = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True,
                       text=True)
    if p.returncode != 0:
        pytest.skip(f"no loop device: {p.stderr.strip()}")
    return p.stdout.strip()


@pytest.fixture
def loop_device(tmp_path):
    reason = why_unavailable()
    if reason:
        pytest.skip(f"per-IO latency: {reason}")
    device = _attach(tmp_path / "disk.img")
    yield device
    subprocess.run(["losetup", "--detach", device])


@pytest.fixture
def other_loop_device(loop_device, tmp_path):
    device = _attach(tmp_path / "other.img")
    yield device
    subprocess.run(["losetup", "--detach", device])


def _fio_read(device: str, seconds: int = 2) -> subprocess.CompletedProcess:
    return subprocess.run(["fio", "--name=r", f"--filename={device}", "--rw=randread",
                           "--bs=4k", "--direct=1", "--ioengine=psync", f"--runtime={seconds}",
                           "--time_based", "--output-format=json"], capture_output=True,
                          text=True, check=True)


def test_each_step_gets_the_ios_fio_made_with_their_percentiles(loop_device):
    sampler = Sampler(0.5, devices=[loop_device.rsplit("/", 1)[1]], power="none",
                      io_latency="on")
    sampler.start()
    try:
        t0 = time.monotonic_ns()
        sampler.mark("ramp_end", t_ns=t0, step=0)
        p = _fio_read(loop_device)
        time.sleep(0.6)  # the last dump of the step's IOs
        sampler.mark("measure_end", step=0)
    finally:
        tl = sampler.stop()
    fio_ios = json.loads(p.stdout)["jobs"][0]["read"]["total_ios"]
    assert tl.io_latency["available"], tl.io_latency
    read = tl.io_latency["steps"]["0"][loop_device.rsplit("/", 1)[1]]["read"]
    assert abs(read["ios"] - fio_ios) <= 0.02 * fio_ios + 10, (read, fio_ios)
    assert 0 < read["p50_us"] <= read["p99_us"] <= read["p999_us"] <= read["max_us"]


def test_only_the_sampled_devices_are_timed_and_held(loop_device, other_loop_device):
    """Another's device busy beside the run (a loop device of another test) is not timed:
    before, each such device got rows in the record and histograms in the driver (190 kB a
    direction each, for the run's length), and the driver grew as others' tests came."""
    mine, other = loop_device.rsplit("/", 1)[1], other_loop_device.rsplit("/", 1)[1]
    sampler = Sampler(0.5, devices=[mine], power="none", io_latency="on")
    sampler.start()
    try:
        sampler.mark("ramp_end", t_ns=time.monotonic_ns(), step=0)
        reads_before = _reads(other)
        both = [threading.Thread(target=_fio_read, args=(f"/dev/{d}",)) for d in (mine, other)]
        for t in both:
            t.start()
        for t in both:
            t.join()
        time.sleep(0.6)  # the last dump of the step's IOs
        held = dict(sampler._iolat._counts)
        sampler.mark("measure_end", step=0)
    finally:
        tl = sampler.stop()
    # the other device served thousands of random reads (more than FEW_LATENCIES distinct
    # latencies: a histogram of its own, had it been timed)
    assert _reads(other) - reads_before > 1000
    io = tl.io_latency
    assert io["available"] and list(io["steps"]["0"]) == [mine], io
    assert io["steps"]["0"][mine]["read"]["ios"] > 1000 and io["devices"] == [mine]
    assert {dev for _, dev, _ in held} == {device_number(mine)}


def _reads(name: str) -> int:
    """Reads the device completed (/sys/block/NAME/stat's first field)."""
    return int(open(f"/sys/block/{name}/stat").read().split()[0])


def test_off_records_why_and_measures_nothing():
    lat = IoLatency("off")
    lat.start()
    out = lat.stop()
    assert out["available"] is False and out["reason"].startswith("off")
    assert out["steps"] == {} and lat.proc is None


def test_a_bpftrace_that_never_attaches_is_given_up_on_within_its_bound(monkeypatch):
    import os
    import signal
    import threading

    import psutil

    from oltplab.telemetry import iolatency
    reason = why_unavailable()
    if reason:
        pytest.skip(f"per-IO latency: {reason}")
    monkeypatch.setattr(iolatency, "ATTACH_WAIT_S", 3.0, raising=False)
    lat = IoLatency("on")
    started = threading.Thread(target=lat.start, daemon=True)
    began = time.monotonic()
    started.start()
    frozen = None
    while frozen is None and time.monotonic() - began < 5:  # freeze it before it attaches
        for child in psutil.Process(os.getpid()).children():
            if child.name() == "bpftrace":
                child.send_signal(signal.SIGSTOP)
                frozen = child
        time.sleep(0.005)
    assert frozen is not None
    started.join(30)  # before, start() waited for its first line for ever
    alive = started.is_alive()
    if alive:
        frozen.kill()
    assert not alive
    assert 3.0 <= time.monotonic() - began < 20
    assert lat.reason == "bpftrace did not attach within 3 s" and lat.proc is None
    assert not frozen.is_running() or frozen.status() == psutil.STATUS_ZOMBIE
    lat.stop()
