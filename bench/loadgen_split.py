"""--loadgen: what splitting the users over two cluster workers costs.

1. NOPM of one database driven from two local cluster workers (h1 on 127.0.0.1, h2 on
   127.0.0.2: --loadgen h1,h2) against one (--loadgen h1), A B B A, the same users, seeds
   and worker processes (--workers 2: one per host against two on h1), so that only the
   split differs; prints the ratio (target >= 0.97).
2. The coordinator's CPU per second while 1,000 users (keying and thinking on, as real
   terminals) run over the two workers: this process's CPU time over the measured window.

    .venv/bin/python bench/loadgen_split.py --users 4 --rampup 10 --duration 60
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import bench_database, ensure_schema, ratio_with_noise, run_args

from oltplab.cluster import load_hosts, service
from oltplab.config import RunSpec
from oltplab.loadgen.manager import run_workload
from oltplab.loadgen.remote import open_loadgen

HOSTS = """\
[[hosts]]
name = "h1"
address = "127.0.0.1"

[[hosts]]
name = "h2"
address = "127.0.0.2"
"""


class Window:
    """This process's CPU time and the wall clock over the measured window (from ticks)."""

    def __init__(self):
        self.first = self.last = None

    def tick(self, t) -> None:
        if t.phase == "measure":
            point = (time.monotonic(), time.process_time())
            self.first = self.first or point
            self.last = point

    def cpu_per_s(self) -> float:
        (w0, c0), (w1, c1) = self.first, self.last
        return (c1 - c0) / max(w1 - w0, 1e-9)


def step(dsn: str, folder: Path, hosts: tuple[str, ...], spec: RunSpec, window=None) -> dict:
    with open_loadgen(hosts, folder) as fleets:
        out = run_workload(dsn, spec, fleets=fleets.with_dsn(dsn),
                           on_tick=window.tick if window else None)
    if out.status != "completed":
        sys.exit(f"run {out.status}: {out.error}")
    return out.steps[0]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    run_args(p, duration=60)
    p.add_argument("--cpu-users", type=int, default=1000, help="0: no CPU measurement")
    p.add_argument("--cpu-duration", type=float, default=30)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="oltplab-bench-cluster-") as tmp, \
            bench_database(a, connections=max(a.users, a.cpu_users) + 30) as target:
        ensure_schema(target.dsn, a.warehouses)
        folder = Path(tmp) / "cluster"
        (Path(tmp) / "hosts.toml").write_text(HOSTS)
        service.up(load_hosts(Path(tmp) / "hosts.toml"), folder, timeout=180)
        try:
            spec = RunSpec(users=(a.users,), rampup=a.rampup, duration=a.duration, seed=a.seed,
                           workers=2, sample_interval=0)
            nopm: dict[str, list[float]] = {"two": [], "one": []}
            for _ in range(a.rounds):
                for side in ("two", "one", "one", "two"):
                    s = step(target.dsn, folder, ("h1", "h2") if side == "two" else ("h1",),
                             spec)
                    nopm[side].append(s["nopm"])
                    print(f"{side} worker(s): NOPM {s['nopm']:,}  "
                          f"hosts {[(h['host'], h['users']) for h in s['loadgen']]}",
                          file=sys.stderr)
            ratio, noise = ratio_with_noise(nopm["two"], nopm["one"])
            print(f"NOPM, two workers: {statistics.fmean(nopm['two']):,.0f}; one worker: "
                  f"{statistics.fmean(nopm['one']):,.0f}; ratio {ratio:.3f}{noise} "
                  f"(target >= 0.97)")
            if a.cpu_users < 1:
                return
            window = Window()
            cpu = RunSpec(users=(a.cpu_users,), rampup=a.rampup, duration=a.cpu_duration,
                          seed=a.seed, keying_thinking=True, workers=2, sample_interval=0)
            s = step(target.dsn, folder, ("h1", "h2"), cpu, window)
            print(f"{a.cpu_users} users over two workers: the coordinator's CPU "
                  f"{window.cpu_per_s() * 1000:.1f} ms per second; TPM {s['client_tpm']:,} "
                  f"(client), hosts {[(h['host'], h['users']) for h in s['loadgen']]}")
        finally:
            service.down(folder)


if __name__ == "__main__":
    main()
