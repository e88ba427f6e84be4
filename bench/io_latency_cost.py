"""What timing every IO costs: fio's IOPS with and without the per-IO latency source
(telemetry/iolatency.py: bpftrace on block_rq_issue/complete) running, side by side in one run,
alternating A B B A so that drift falls on both sides.

The device is a loop device over a file in /dev/shm (memory), so that the block layer, not a
disk, sets the rate: 4k random reads, libaio, iodepth 16, direct IO. The target is under 2%
fewer IOPS at 50k IOPS (``--rate-iops 50000`` holds fio there; without it fio goes as fast as
the CPU lets it, and the ratio is the tracing's share of a CPU-bound IO path).

    sudo .venv/bin/python bench/io_latency_cost.py --rounds 4 --seconds 10
    sudo .venv/bin/python bench/io_latency_cost.py --rounds 4 --seconds 10 --rate-iops 50000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from oltplab.telemetry.iolatency import IoLatency, wait_started, why_unavailable


RATE: list[str] = []  # --rate-iops: fio's rate_iops


def fio_iops(device: str, seconds: int) -> float:
    p = subprocess.run(["fio", "--name=cost", f"--filename={device}", "--rw=randread", *RATE,
                        "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=16",
                        f"--runtime={seconds}", "--time_based", "--ramp_time=1",
                        "--output-format=json"], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)["jobs"][0]["read"]["iops"]


def traced(device: str, seconds: int) -> tuple[float, int]:
    lat = IoLatency("on")
    lat.start()
    if lat.reason:
        sys.exit(f"io latency: {lat.reason}")
    wait_started(lat)
    lat.mark("ramp_end", 0, {"step": 0})  # every dump counts
    try:
        iops = fio_iops(device, seconds)
    finally:
        out = lat.stop()
    return iops, out["ios"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4, help="A B B A rounds")
    ap.add_argument("--seconds", type=int, default=10, help="each fio run")
    ap.add_argument("--size-mib", type=int, default=512)
    ap.add_argument("--rate-iops", type=int, default=0,
                    help="hold fio at this rate (fio's rate_iops); 0: as fast as it goes")
    args = ap.parse_args()
    if args.rate_iops:
        RATE.append(f"--rate_iops={args.rate_iops}")
    reason = why_unavailable()
    if reason:
        sys.exit(f"io latency: {reason}")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        image = Path(d) / "disk.img"
        with open(image, "wb") as f:
            f.truncate(args.size_mib * 2**20)
        device = subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                                capture_output=True, text=True).stdout.strip()
        try:
            fio_iops(device, 2)  # warm the file's pages
            plain, with_lat, counted = [], [], []
            for r in range(args.rounds):
                for side in ("AB" if r % 2 == 0 else "BA"):
                    if side == "A":
                        plain.append(fio_iops(device, args.seconds))
                    else:
                        iops, ios = traced(device, args.seconds)
                        with_lat.append(iops)
                        counted.append(ios)
                print(f"round {r + 1}: without {plain[-1]:,.0f} IOPS, with {with_lat[-1]:,.0f} "
                      f"IOPS ({counted[-1]:,} IOs timed)", flush=True)
        finally:
            subprocess.run(["losetup", "--detach", device])
    ratios = [w / p for w, p in zip(with_lat, plain)]
    print(f"without: {statistics.mean(plain):,.0f} IOPS (sd {statistics.stdev(plain):,.0f})")
    print(f"with:    {statistics.mean(with_lat):,.0f} IOPS (sd {statistics.stdev(with_lat):,.0f})")
    print(f"ratio with/without: {statistics.mean(ratios):.3f} +/- {statistics.stdev(ratios):.3f} "
          f"over {len(ratios)} pairs ({(1 - statistics.mean(ratios)) * 100:.1f}% fewer IOPS)")


if __name__ == "__main__":
    main()
