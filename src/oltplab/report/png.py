"""A chart as a PNG file, drawn with matplotlib's Agg backend (no display, no pyplot state)."""

from __future__ import annotations

import io
import math
from pathlib import Path

from .output import write_file
from .model import FAULT_COLOR, FEW_POINTS, LABEL_ROW, STYLES, Chart, label_leftwards, label_rows

WIDTH_IN, AXES_H_IN, DPI = 10.0, 3.8, 100


def _nan(v):
    return math.nan if v is None else v


def _bars(ax, chart: Chart) -> None:
    cats = list(dict.fromkeys(x for s in chart.series for x in s.x))
    index = {c: i for i, c in enumerate(cats)}
    n = max(1, len(chart.series))
    width = min(0.8 / n, 0.3)  # few categories: keep bars slim
    for k, s in enumerate(chart.series):
        xs = [index[x] - width * n / 2 + width * (k + 0.5) for x in s.x]
        hatch = STYLES[s.style % len(STYLES)][3]
        ys = [_nan(y) for y in s.y]
        bars = ax.bar(xs, ys, width=width * 0.95, color=s.color, label=s.name, hatch=hatch,
                      edgecolor="white" if hatch else None, linewidth=0)
        if s.lo is not None and s.hi is not None:
            lo = [0 if (a is None or y is None) else max(0.0, y - a) for a, y in zip(s.lo, s.y)]
            hi = [0 if (b is None or y is None) else max(0.0, b - y) for b, y in zip(s.hi, s.y)]
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt="none", ecolor="#333", capsize=3, lw=1)
        if s.text is not None:
            ax.bar_label(bars, labels=list(s.text), fontsize=7, padding=2)
    ax.set_xticks(range(len(cats)), cats)
    ax.set_xlim(-0.6, len(cats) - 0.4)
    if max((len(str(c)) for c in cats), default=0) * len(cats) > 90:
        ax.tick_params(axis="x", labelrotation=30)
        for lab in ax.get_xticklabels():
            lab.set_horizontalalignment("right")


def _hist(ax, chart: Chart) -> None:
    for s in chart.series:
        ax.bar(list(s.x), list(s.y), width=list(s.width or [1] * len(s.x)), color=s.color,
               label=s.name, linewidth=0)


def _lines(ax, chart: Chart) -> None:
    for s in chart.series:
        style = STYLES[s.style % len(STYLES)][2]
        xs, ys = [_nan(x) for x in s.x], [_nan(y) for y in s.y]
        if chart.kind == "scatter":
            ax.plot(xs, ys, style, marker="o", color=s.color, label=s.name, lw=1.2, ms=5)
            for x, y, t in zip(xs, ys, s.text or ()):
                ax.annotate(t, (x, y), textcoords="offset points", xytext=(0, 6),
                            ha="center", fontsize=7)
        else:
            few = len(xs) <= FEW_POINTS  # a line of one point would not show
            ax.plot(xs, ys, style, color=s.color, label=s.name, lw=1.1,
                    marker="o" if few else None, ms=3)
    for i, (b, row) in enumerate(zip(chart.bands, label_rows(chart))):
        if b.fault:  # in red, its label inside the axes from its start (figure.py alike)
            ax.axvspan(b.x0, b.x1, color=FAULT_COLOR, alpha=0.18, lw=0)
            leftwards = label_leftwards(chart, b)
            ax.text(b.x1 if leftwards else b.x0, 0.99 - row * LABEL_ROW, f" {b.label} ",
                    transform=ax.get_xaxis_transform(), ha="right" if leftwards else "left",
                    va="top", fontsize=7, color=FAULT_COLOR,
                    bbox={"facecolor": "white", "alpha": 0.75, "lw": 0, "pad": 0.5})
            continue
        ax.axvspan(b.x0, b.x1, color="#4c72b0" if i % 2 == 0 else "#dd8452", alpha=0.08, lw=0)
        ax.text((b.x0 + b.x1) / 2, 1.0, b.label, transform=ax.get_xaxis_transform(),
                ha="center", va="bottom", fontsize=7, color="#555", clip_on=False)


def _layout(fig, ax, chart: Chart) -> None:
    """Fixed margins in inches (a layout engine would draw every figure twice): the title
    above the axes, tick labels and the legend below; the figure grows with the legend."""
    legend = len(chart.series) > 1 or chart.kind in ("line", "bar")
    rotated = any(t.get_rotation() for t in ax.get_xticklabels())
    ticks = 0.95 if rotated else 0.6
    title = 0.6 if chart.bands else 0.45
    legend_h = 0.0
    if legend:
        longest = max(len(s.name) for s in chart.series)
        ncol = max(1, min(len(chart.series), int(100 // (longest + 6))))
        rows = -(-len(chart.series) // ncol)
        legend_h = 0.2 * rows + 0.1
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -ticks / AXES_H_IN), ncol=ncol,
                  fontsize=8, frameon=False, borderaxespad=0.0)
    height = title + AXES_H_IN + ticks + legend_h + 0.1
    fig.set_size_inches(WIDTH_IN, height)
    fig.subplots_adjust(left=0.09, right=0.97, top=1 - title / height,
                        bottom=(ticks + legend_h + 0.1) / height)


def render_png(chart: Chart) -> bytes:
    """The PNG image of ``chart`` (which must have data)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    fig = Figure(figsize=(WIDTH_IN, AXES_H_IN + 1.5), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if chart.kind == "bar":
        _bars(ax, chart)
    elif chart.kind == "hist":
        _hist(ax, chart)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        _lines(ax, chart)
    ax.set_title(chart.title, loc="left", fontsize=12, pad=16 if chart.bands else 6)
    ax.set_xlabel(chart.x_label)
    ax.set_ylabel(chart.y_label)
    if chart.y_min_zero and ax.get_ylim()[1] > 0:
        ax.set_ylim(bottom=0)
    if chart.kind == "scatter":
        ax.set_xlim(left=0)
    if chart.x_range:
        ax.set_xlim(*chart.x_range)
    if chart.x_ticks:
        ax.set_xticks(list(chart.x_ticks), [f"{v:g}" for v in chart.x_ticks])
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.6g}"))
    ax.grid(axis="y", color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    _layout(fig, ax, chart)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def write_png(chart: Chart, out_dir: Path) -> Path:
    path = Path(out_dir) / f"{chart.key}.png"
    write_file(path, render_png(chart))
    return path
