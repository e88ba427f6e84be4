"""The report's render time for an hour of 1 s samples: ten steps (10 to 100 users, 30 s of
ramp-up and 329 s measured each), the run record and timeline the report's own tests build
(tests/unit/report/test_report_fixtures.py), written to a scratch folder and rendered with
``write_report`` (HTML with every chart; no PDF) a few times.

    .venv/bin/python bench/report_render.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path

from oltplab.report.build import write_report

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "unit" / "report" / \
    "test_report_fixtures.py"


def fixtures():
    spec = importlib.util.spec_from_file_location("oltplab_report_fixtures", FIXTURES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    fx = fixtures()
    users = tuple(range(10, 110, 10))
    times = []
    with tempfile.TemporaryDirectory(prefix="oltplab-bench-report-") as scratch:
        root = Path(scratch)
        timeline = fx.timeline_dict(users, ramp_s=30, measure_s=329, gap_s=1)
        samples = len(users) * (30 + 329 + 1)
        record = fx.write_run(root / "hour", fx.tpcc_record("hour", users=users), timeline)
        for k in range(args.rounds):
            t0 = time.monotonic()
            result = write_report([record], root / f"out{k}")
            times.append(time.monotonic() - t0)
            assert result.missing == [], result.missing
            print(f"round {k + 1}: {times[-1]:.2f} s", flush=True)
    print(f"an hour of samples ({len(users)} steps, {samples} samples of 1 s): render "
          f"median {statistics.median(times):.2f} s, min {min(times):.2f} s, "
          f"max {max(times):.2f} s over {len(times)} rounds (target < 10 s)")


if __name__ == "__main__":
    main()
