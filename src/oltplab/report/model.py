"""What a report is made of, independent of how it is drawn: charts, series, tables.

A ``Chart`` is drawn twice from the same data: as an interactive figure in the HTML report
(plotly.py) and as a PNG file (png.py). A chart without data carries ``note``, the one line the
report prints in its place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# one colour per run (comparisons) or per series (one run), the same in HTML and PNG
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
# line dashes and bar hatches: (plotly dash, plotly pattern, matplotlib linestyle, hatch)
STYLES = (("solid", "", "-", None), ("dash", "/", "--", "//"), ("dot", "x", ":", "xx"),
          ("dashdot", ".", "-.", ".."))
FAULT_COLOR = "#d62728"  # the shading of an injected fault, the same in HTML and PNG
FEW_POINTS = 60  # lines of no more points than this show markers too (one point would not show)
MAX_POINTS = 1500  # per time series, in both renderings; longer series are averaged down


@dataclass(frozen=True)
class Series:
    name: str
    x: tuple
    y: tuple
    color: str | None = None
    text: tuple | None = None  # a label per point (scatter) or per bar
    style: int = 0  # 0 plain; 1.. dashed lines or hatched bars (see STYLES)
    width: tuple | None = None  # bar widths in x units (histograms)
    lo: tuple | None = None  # lowest and highest of repeated runs, per point (bars)
    hi: tuple | None = None


@dataclass(frozen=True)
class Band:
    """A shaded span of the x axis (a step's measured window, or an injected fault when
    ``fault``: drawn in its own colour, its label inside the axes) with its label."""

    x0: float
    x1: float
    label: str
    fault: bool = False


@dataclass(frozen=True)
class Chart:
    key: str  # file stem of the PNG, id of the HTML figure
    title: str
    kind: str  # "bar" (categories on x), "line" (numeric x), "scatter", "hist"
    x_label: str
    y_label: str
    series: tuple[Series, ...] = ()
    bands: tuple[Band, ...] = ()
    caption: str = ""  # what the figure shows and how it was derived
    note: str | None = None  # set when there is nothing to draw: the line shown instead
    section: str = ""
    y_min_zero: bool = True
    x_ticks: tuple | None = None  # the x values that get a tick (line charts), None: automatic
    x_range: tuple | None = None  # (lowest, highest) x drawn, None: automatic (time charts of
    # a run with faults share one)

    @property
    def empty(self) -> bool:
        return self.note is not None


LABEL_CHAR = 0.006  # the width of a band label's character, as a share of the axes' width
LABEL_ROW = 0.06  # the height of a row of fault labels, as a share of the axes' height


def _x_extent(chart: Chart) -> tuple[float, float]:
    xs = [v for s in chart.series for v in s.x if isinstance(v, (int, float))]
    return chart.x_range or ((min(xs), max(xs)) if xs else (0.0, 0.0))


def label_leftwards(chart: Chart, band: Band) -> bool:
    """Whether a fault's label ends at its band's end (the band lies in the right part of the
    x axis, where a label from its start would run off the chart) rather than starts at its
    start."""
    lo, hi = _x_extent(chart)
    return hi > lo and band.x0 > lo + 0.6 * (hi - lo)


def label_rows(chart: Chart) -> list[int]:
    """Per band, the row its label goes in, 0 at the top of the axes: a fault's label goes one
    row down while it would overlap the label of a fault before it (steps' labels: 0)."""
    lo, hi = _x_extent(chart)
    width = (hi - lo) or 1.0
    ends: list[float] = []  # per row, where its last label ends (share of the axes)
    rows = []
    for b in chart.bands:
        if not b.fault:
            rows.append(0)
            continue
        w = (len(b.label) + 2) * LABEL_CHAR
        start = ((b.x1 - lo) / width - w) if label_leftwards(chart, b) else (b.x0 - lo) / width
        row = next((i for i, end in enumerate(ends) if end <= start), len(ends))
        ends[row:row + 1] = [start + w]
        rows.append(row)
    return rows


def no_data(key: str, title: str, why: str, section: str = "") -> Chart:
    """A chart that could not be drawn, with the reason."""
    return Chart(key=key, title=title, kind="none", x_label="", y_label="",
                 note=f"{title}: no data ({why}).", section=section)


@dataclass(frozen=True)
class Link:
    """A table cell that links to another page (a run's own page); CSV keeps its text."""

    text: str
    href: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Table:
    key: str  # file stem of its CSV
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    caption: str = ""


@dataclass(frozen=True)
class Section:
    title: str
    charts: tuple[Chart, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()  # paragraphs before the charts


@dataclass
class Report:
    title: str
    subtitle: str
    sections: list[Section] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def charts(self) -> list[Chart]:
        return [c for s in self.sections for c in s.charts]


def downsample(x: list, ys: list[list], max_points: int = MAX_POINTS):
    """Average consecutive points into at most ``max_points`` buckets (None values skipped).

    Returns (x, ys, k): k is the number of samples per bucket, 1 when nothing was done."""
    n = len(x)
    if n <= max_points:
        return list(x), [list(y) for y in ys], 1
    k = -(-n // max_points)
    out_x = [_avg(x[i:i + k]) for i in range(0, n, k)]
    out_ys = [[_avg(y[i:i + k]) for i in range(0, n, k)] for y in ys]
    return out_x, out_ys, k


def _avg(values) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None
