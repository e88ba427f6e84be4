"""Click option groups shared by the commands (kept apart from cli.py to avoid import cycles)."""

from __future__ import annotations

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
    from .. import kinds
    from ..report.compare import repeat_lines
    kind = kinds.find(runs[0].get("kind")) if runs else None
    lines = repeat_lines(runs, kind.metrics if kind is not None else ())
    if lines:
        click.echo(f"{len(runs)} repeats, group {runs[0]['group']['id']}:")
    for line in lines:
        click.echo(("warning: " if line.startswith("unstable:") else "  ") + line)
