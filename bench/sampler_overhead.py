"""The telemetry sampler's cost and accuracy.

1. Overhead: the sampler runs for ``--seconds`` at ``--interval`` with every source (the
   database too when ``--dsn`` or OLTPLAB_TEST_DSN is given) while this process does nothing
   else; prints the CPU time of the sampling thread and of the whole process, as % of one
   core. The target is at most 0.1% at 1 s.
2. Agreement: real fio (4 KiB random reads, O_DIRECT, libaio, iodepth 8) on a file in
   ``--fio-dir`` while the sampler samples the device behind it; prints the device's mean
   read IOPS over the measured window against fio's own IOPS, and their ratio (target:
   within 5%).

    .venv/bin/python bench/sampler_overhead.py --seconds 60
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from oltplab.telemetry.derive import derive_steps  # noqa: E402
from oltplab.telemetry.sampler import Sampler  # noqa: E402
from oltplab.telemetry.sources.disks import path_device  # noqa: E402


def overhead(seconds: float, interval: float, dsn: str | None, paths: dict) -> None:
    sampler = Sampler(interval, paths=paths, db_dsn=dsn, power="auto")
    sampler.start()
    cpu0, wall0 = time.process_time(), time.monotonic()
    time.sleep(seconds)
    timeline = sampler.stop()
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    o = timeline.overhead
    sources = ["cpu", "disks " + ",".join(timeline.devices), "memory",
               "network " + ",".join(timeline.interfaces)]
    if timeline.database and timeline.database["available"]:
        sources.append("database")
    sources.append(f"power {timeline.power['source']}" if timeline.power["available"]
                   else "power unavailable")
    print(f"sources: {'; '.join(sources)}")
    print(f"samples: {o['samples']} over {o['elapsed_s']:.1f} s at {interval:g} s; "
          f"errors: {len(timeline.errors)}")
    print(f"sampling thread CPU: {o['cpu_s'] * 1000:.1f} ms = {o['pct_of_core']:.4f}% of a core "
          f"({o['cpu_s'] / max(1, o['samples']) * 1e6:.0f} us per sample)")
    print(f"whole process CPU:   {cpu * 1000:.1f} ms = {100 * cpu / wall:.4f}% of a core")


def run_fio(args: list[str]) -> dict:
    out = subprocess.run(["fio", "--output-format=json", *args], capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout[out.stdout.index("{"):])


def agreement(directory: Path, runtime: int, interval: float) -> None:
    if shutil.which("fio") is None:
        print("fio agreement: skipped (fio is not installed)")
        return
    device = path_device(directory)["device"]
    if device is None:
        print(f"fio agreement: skipped (no block device behind {directory})")
        return
    target = directory / f"oltplab-bench-{os.getpid()}.dat"
    common = [f"--filename={target}", "--size=256m", "--bs=4k", "--direct=1", "--name=bench"]
    ramp = 1
    try:
        run_fio([*common, "--rw=write", "--bs=1m"])
        sampler = Sampler(interval, paths={"target": directory}, power="none")
        sampler.start()
        try:
            t = sampler.mark("step_start", step=0)["t_ns"]
            sampler.mark("ramp_end", t_ns=t + int((ramp + 0.5) * 1e9), step=0)
            sampler.mark("measure_end", t_ns=t + int((ramp + runtime - 0.5) * 1e9), step=0)
            result = run_fio([*common, "--rw=randread", "--ioengine=libaio", "--iodepth=8",
                              "--time_based", f"--ramp_time={ramp}", f"--runtime={runtime}"])
        finally:
            timeline = sampler.stop()
    finally:
        target.unlink(missing_ok=True)
    fio_iops = result["jobs"][0]["read"]["iops"]
    dev = derive_steps(timeline)[0]["devices"][device]
    print(f"fio agreement on {device}: sampler {dev['read_iops']:.0f} read IOPS, fio "
          f"{fio_iops:.0f} IOPS, ratio {dev['read_iops'] / fio_iops:.4f} (target 0.95-1.05); "
          f"device r_await {dev['r_await_ms']:.3f} ms, fio mean completion latency "
          f"{result['jobs'][0]['read']['clat_ns']['mean'] / 1e6:.3f} ms")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--dsn", default=os.environ.get("OLTPLAB_TEST_DSN"))
    p.add_argument("--datadir", type=Path, default=Path("/var/tmp"),
                   help="a path whose device is sampled as the data directory's")
    p.add_argument("--fio-dir", type=Path, default=Path("/var/tmp"))
    p.add_argument("--fio-runtime", type=int, default=8)
    p.add_argument("--skip-fio", action="store_true")
    a = p.parse_args()
    overhead(a.seconds, a.interval, a.dsn, {"datadir": a.datadir})
    if not a.skip_fio:
        agreement(a.fio_dir, a.fio_runtime, a.interval)


if __name__ == "__main__":
    main()
