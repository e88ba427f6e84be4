"""Click options made from the option tables (oltplab/options.py), and the ones shared by the
commands that save runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from ..options import METRICS, TELEMETRY, Option


def click_option(o: Option) -> Callable:
    """The click option of one row: click reads the text, the row's ``parse`` makes the spec
    value of it (as a callback, so that bad values fail before anything runs)."""
    kw: dict[str, Any] = {"help": o.help}
    if o.is_flag:
        kw["is_flag"] = True
    elif o.default is not None:  # an explicit None would count as given, even when required
        kw["default"] = o.default
    if o.choices:
        kw["type"] = click.Choice(o.choices)
    elif o.range is not None:
        kw["type"] = click.IntRange(*o.range)
    elif o.type is Path:
        kw["type"] = click.Path(path_type=Path)
    elif o.type is not str:
        kw["type"] = o.type
    for field in ("metavar", "envvar"):
        if getattr(o, field) is not None:
            kw[field] = getattr(o, field)
    for field in ("show_default", "required", "multiple"):
        if getattr(o, field):
            kw[field] = True
    if o.parse is not None:
        kw["callback"] = lambda ctx, param, value: o.from_text(value)
    return click.option(*o.flags, o.name, **kw)


def table_options(*tables: tuple[Option, ...]) -> Callable:
    """One click option per row of ``tables`` that has flags, in the tables' order."""
    def decorate(f: Callable) -> Callable:
        for o in reversed([o for table in tables for o in table if o.flags]):
            f = click_option(o)(f)
        return f
    return decorate


telemetry_options = table_options(TELEMETRY)
metrics_options = table_options(METRICS)


def repeat_option(f: Callable) -> Callable:
    """--repeat N: N runs of one configuration, recorded as one group."""
    return click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
                        help="Make N runs of this configuration as one group; the summary and "
                             "the report give each figure's mean, 95% CI and CV.")(f)


def check_repeats(repeat: int, inject: tuple) -> None:
    """--repeat with a fault that changes the datastore (a device removed ...) is refused: the
    repeats after the first would run on another datastore than the one the group records."""
    from ..datastores.spec import altering
    from ..errors import UsageError
    changing = altering(inject)
    if repeat > 1 and changing:
        raise UsageError(f"--repeat {repeat} with --inject {changing[0]}: the fault changes the "
                         f"datastore, so repeats 2 to {repeat} would run on another one; run "
                         "once per datastore, or use a plan (it makes the datastore again "
                         "before each repeat)")


def print_repeats(runs: list[dict]) -> None:
    """After a group of repeats: each figure's mean, 95% CI and CV, then the unstable ones."""
    from .. import kinds
    from ..report.compare import repeat_lines
    kind = kinds.find(runs[0].get("kind")) if runs else None
    lines = repeat_lines(runs, kind.metrics_for(runs) if kind is not None else ())
    if lines:
        click.echo(f"{len(runs)} repeats, group {runs[0]['group']['id']}:")
    for line in lines:
        click.echo(("warning: " if line.startswith("unstable:") else "  ") + line)
