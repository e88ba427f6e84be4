"""Building blocks for charts: grouped bars over categories, lines over time with the steps
shaded, histograms. Pure functions from numbers to ``model.Chart``."""

from __future__ import annotations

import math
from typing import Callable, Iterable

from ..telemetry.derive import step_windows
from .model import PALETTE, STYLES, Band, Chart, Series, downsample, no_data
from .runs import Group, RunData
from .stats import mean

MAX_LABELLED_BARS = 16  # bars carry their value as text up to this many per chart
MAX_TICKS = 16  # ticks on an x axis of given values


def count(x) -> str:
    """A whole number with thousands separators, "-" for none."""
    return "-" if x is None else f"{round(x):,}"


def fmt(x) -> str:
    """A figure for a label or a table cell: thousands separated, about three digits."""
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if not isinstance(x, float):
        return str(x)
    if math.isnan(x):
        return "-"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a == 0:
        return "0"
    return f"{x:.3g}"


def _cat_key(c):
    return (0, c, "") if isinstance(c, (int, float)) else (1, 0, str(c))


# an entry of a bar chart: (series name, colour, style, {category: [values over repeats]})
Entry = tuple[str, str, int, dict]


def entries(groups: list[Group], metrics: list[tuple[str, Callable[[Group], dict]]]
            ) -> list[Entry]:
    """One entry per group and metric, named and coloured so that runs stay apart: one group
    -> a colour per metric; several -> a colour per group and a hatch per metric."""
    out = []
    for gi, g in enumerate(groups):
        for mi, (metric, values) in enumerate(metrics):
            if len(groups) == 1:
                out.append((metric, PALETTE[mi % len(PALETTE)], 0, values(g)))
            else:
                name = g.label if len(metrics) == 1 else f"{g.label}: {metric}"
                out.append((name, g.color, mi % len(STYLES), values(g)))
    return out


def bar_chart(key: str, title: str, x_label: str, y_label: str, items: list[Entry], *,
              why: str, caption: str = "", section: str = "",
              cat_label: Callable = str, order: Callable | None = None) -> Chart:
    """Bars per category, one bar per entry; several values (repeats) give their mean with
    the lowest and highest as an error bar."""
    items = [e for e in items if any(v for v in e[3].values())]
    cats = sorted({c for e in items for c, v in e[3].items() if v}, key=order or _cat_key)
    if not cats:
        return no_data(key, title, why, section)
    labelled = len(cats) * len(items) <= MAX_LABELLED_BARS
    series, ranged = [], False
    for name, color, style, vals in items:
        ys, lo, hi = [], [], []
        for c in cats:
            v = [x for x in vals.get(c, []) if x is not None]
            ys.append(mean(v))
            lo.append(min(v) if len(v) > 1 else None)
            hi.append(max(v) if len(v) > 1 else None)
        has_range = any(x is not None for x in lo)
        ranged = ranged or has_range
        series.append(Series(name=name, x=tuple(cat_label(c) for c in cats), y=tuple(ys),
                             color=color, style=style,
                             text=tuple(fmt(y) for y in ys) if labelled else None,
                             lo=tuple(lo) if has_range else None,
                             hi=tuple(hi) if has_range else None))
    if ranged:
        caption = (caption + " " if caption else "") + (
            "Bars of repeated runs show their mean; the error bar spans the lowest and "
            "highest run.")
    return Chart(key=key, title=title, kind="bar", x_label=x_label, y_label=y_label,
                 series=tuple(series), caption=caption, section=section)


def per_step(group: Group, value: Callable[[RunData, int, dict], float | None],
             category: Callable[[dict], object] = lambda s: s.get("users")) -> dict:
    """{category: [value of each run's step in that category]} over the group's runs."""
    out: dict = {}
    for r in group.runs:
        for i, s in enumerate(r.steps):
            c = category(s)
            if c is None:
                continue
            v = value(r, i, s)
            if v is not None:
                out.setdefault(c, []).append(v)
    return out


# -- time ---------------------------------------------------------------------------------------
def time_axis(span_s: float) -> tuple[float, str]:
    """(divisor, label) for a time axis that spans ``span_s`` seconds."""
    if span_s > 2 * 3600:
        return 3600.0, "time since the start (h)"
    if span_s > 600:
        return 60.0, "time since the start (min)"
    return 1.0, "time since the start (s)"


def step_label(attrs: dict, index: int) -> str:
    if attrs.get("users") is not None:
        return f"{attrs['users']} user{'' if attrs['users'] == 1 else 's'}"
    if attrs.get("profile"):
        return str(attrs["profile"])
    return f"step {index + 1}"


def timeline_bands(run: RunData, divisor: float, origin_ns: int | None = None
                   ) -> tuple[Band, ...]:
    """The measured window of every marked step (ramp-up excluded), in axis units of an axis
    whose zero is ``origin_ns`` on the timeline's clock (its first sample's, by default)."""
    tl = run.timeline
    if tl is None or tl.t0_ns is None:
        return ()
    zero = tl.t0_ns if origin_ns is None else origin_ns
    out = []
    for i, w in enumerate(step_windows(tl)):
        out.append(Band(x0=(w.ramp_end_ns - zero) / 1e9 / divisor,
                        x1=(w.end_ns - zero) / 1e9 / divisor,
                        label=step_label(w.attrs, i)))
    return tuple(out)


def line_chart(key: str, title: str, x_label: str, y_label: str, x: list,
               lines: list[tuple[str, list, int]], *, why: str, bands=(), caption: str = "",
               section: str = "", colors: Iterable[str] | None = None,
               whole_ticks: bool = False, x_range: tuple | None = None) -> Chart:
    """Lines over a numeric x; (name, y values, style) each; averaged down to MAX_POINTS.
    ``whole_ticks``: ticks at the x values themselves (such as the user counts run), thinned
    to at most MAX_TICKS, rather than wherever the renderer puts them (1.2, 1.4 ...);
    ``x_range``: the (lowest, highest) x drawn, else the renderer's choice."""
    lines = [ln for ln in lines if any(v is not None for v in ln[1])]
    if not lines or not x:
        return no_data(key, title, why, section)
    colors = list(colors) if colors is not None else list(PALETTE)
    if all(sum(v is not None for v in ln[1]) == 1 for ln in lines):
        return _point_bars(key, title, x_label, y_label, list(x), lines, colors, caption,
                           section)
    xs, ys, k = downsample(list(x), [ln[1] for ln in lines])
    if k > 1:
        caption = (caption + " " if caption else "") + (
            f"Drawn from {len(x):,} samples averaged in groups of {k} "
            f"({len(xs):,} points per line).")
    series = tuple(Series(name=name, x=tuple(_round(v) for v in xs),
                          y=tuple(_round(v) for v in y), color=colors[i % len(colors)],
                          style=style)
                   for i, ((name, _, style), y) in enumerate(zip(lines, ys)))
    ticks = None
    if whole_ticks:
        step = -(-len(xs) // MAX_TICKS)
        ticks = tuple(_round(v) for v in sorted(xs)[::step])
    return Chart(key=key, title=title, kind="line", x_label=x_label, y_label=y_label,
                 series=series, bands=tuple(bands), caption=caption, section=section,
                 x_ticks=ticks, x_range=x_range)


def _round(v):
    return None if v is None else float(f"{v:.6g}")


def _point_bars(key: str, title: str, x_label: str, y_label: str, x: list,
                lines: list[tuple[str, list, int]], colors: list[str], caption: str,
                section: str) -> Chart:
    """Lines of one point each, drawn as bars (a line needs two points to be seen): a category
    per x value, a bar per line in its colour and style, its value written on it."""
    points = [{x[i]: v for i, v in enumerate(y) if v is not None} for _, y, _ in lines]
    cats = sorted({c for p in points for c in p}, key=_cat_key)
    labelled = len(cats) * len(lines) <= MAX_LABELLED_BARS
    series = []
    for i, ((name, _, style), p) in enumerate(zip(lines, points)):
        ys = tuple(_round(p.get(c)) for c in cats)
        series.append(Series(name=name, x=tuple(f"{c:g}" if isinstance(c, (int, float))
                                                else str(c) for c in cats),
                             y=ys, color=colors[i % len(colors)], style=style,
                             text=tuple(fmt(y) for y in ys) if labelled else None))
    caption = (caption + " " if caption else "") + (
        "One value per line: drawn as bars (a dashed line's bar is hatched).")
    return Chart(key=key, title=title, kind="bar", x_label=x_label, y_label=y_label,
                 series=tuple(series), caption=caption, section=section)


def histogram(key: str, title: str, x_label: str, values: list[float], name: str, color: str,
              *, why: str, caption: str = "", section: str = "", bins: int = 30) -> Chart:
    """Counts of ``values`` in equal-width bins (the same bins in HTML and PNG)."""
    values = [v for v in values if v is not None]
    if not values:
        return no_data(key, title, why, section)
    lo, hi = min(values), max(values)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    n = max(1, min(bins, len(set(values))))
    width = (hi - lo) / n
    counts = [0] * n
    for v in values:
        counts[min(n - 1, int((v - lo) / width))] += 1
    centers = tuple(_round(lo + (i + 0.5) * width) for i in range(n))
    return Chart(key=key, title=title, kind="hist", x_label=x_label, y_label="samples",
                 series=(Series(name=name, x=centers, y=tuple(counts), color=color,
                                width=tuple([_round(width)] * n)),),
                 caption=caption, section=section)
