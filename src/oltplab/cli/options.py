"""Click option groups shared by the commands (kept apart from cli.py to avoid import cycles)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import click

from ..config import parse_duration

DEFAULT_RESULTS = Path("results")  # where runs are saved unless --results-dir says

def duration_option(ctx, param, value):
    return None if value is None else parse_duration(value, f"--{param.name.replace('_', '-')}")


def telemetry_options(f: Callable) -> Callable:
    """The sampler that records CPU, disks, memory, network, database and power."""
    f = click.option("--power", default="auto", show_default=True,
                     help="Power meter: auto, none, rapl[:DIR], ipmi, redfish:URL or cmd:COMMAND.")(f)
    f = click.option("--sample-interval", default="1s", show_default=True,
                     callback=duration_option,
                     help="Telemetry sampling interval (0 turns the sampler off).")(f)
    return f


def repeat_option(f: Callable) -> Callable:
    """--repeat N: N runs of one configuration, recorded as one group."""
    return click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
                        help="Make N runs of this configuration as one group; the summary and "
                             "the report give each figure's mean, 95% CI and CV.")(f)


def print_repeats(runs: list[dict]) -> None:
    """After a group of repeats: each figure's mean, 95% CI and CV, then the unstable ones."""
    from ..report.compare import repeat_lines
    lines = repeat_lines(runs)
    if lines:
        click.echo(f"{len(runs)} repeats, group {runs[0]['group']['id']}:")
    for line in lines:
        click.echo(("warning: " if line.startswith("unstable:") else "  ") + line)


def make_sampler(interval: float, paths: dict, power: str, dsn: str | None = None,
                 engine: str | None = None):
    """A telemetry sampler for a run's timeline (not started), or None when turned off;
    ``dsn`` adds ``engine``'s database counters."""
    if not interval:
        return None
    from ..telemetry.sampler import Sampler
    return Sampler(interval, paths=paths, db_dsn=dsn, power=power, db_engine=engine)


def save_timeline(sampler, record) -> None:
    """timeline.json beside run.json, and each step's derived telemetry figures."""
    if sampler is None or not sampler.started:
        return
    from ..results.store import atomic_write
    from ..telemetry.derive import derive_steps
    timeline = sampler.stop()
    data = timeline.to_dict()
    atomic_write(record.path / "timeline.json", json.dumps(data) + "\n")
    steps = record.data["steps"]
    for figures in derive_steps(timeline, steps):
        k = figures.get("step")
        if isinstance(k, int) and 0 <= k < len(steps):
            steps[k]["telemetry"] = figures
    record.data["telemetry"] = {"file": "timeline.json", "interval_s": timeline.interval_s,
                                "power": data.get("power")}
