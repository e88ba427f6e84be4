"""A chart as a plotly figure (plain data and layout, the JSON plotly.js draws in the page)."""

from __future__ import annotations

from .model import (FAULT_COLOR, FEW_POINTS, LABEL_ROW, STYLES, Band, Chart, Series,
                    label_leftwards, label_rows)

HEIGHT = 440


def _bar(s: Series, chart: Chart) -> dict:
    trace = {"type": "bar", "name": s.name, "x": list(s.x), "y": list(s.y),
             "marker": {"color": s.color}}
    pattern = STYLES[s.style % len(STYLES)][1]
    if pattern:
        trace["marker"]["pattern"] = {"shape": pattern}
    if s.width is not None:
        trace["width"] = list(s.width)
    if s.text is not None:
        trace.update(text=list(s.text), textposition="outside", cliponaxis=False)
    if s.lo is not None and s.hi is not None:
        trace["error_y"] = {
            "type": "data", "symmetric": False, "color": "#333",
            "array": [None if h is None or y is None else max(0.0, h - y)
                      for h, y in zip(s.hi, s.y)],
            "arrayminus": [None if lo is None or y is None else max(0.0, y - lo)
                           for lo, y in zip(s.lo, s.y)]}
    hover = "%{y:,.4g}" + ("" if chart.kind == "hist" else "<extra>%{fullData.name}</extra>")
    trace["hovertemplate"] = hover
    return trace


def _line(s: Series, chart: Chart) -> dict:
    dash = STYLES[s.style % len(STYLES)][0]
    trace = {"type": "scatter", "name": s.name, "x": list(s.x), "y": list(s.y),
             "line": {"color": s.color, "dash": dash, "width": 1.5}}
    if chart.kind == "scatter":
        trace.update(mode="lines+markers+text" if s.text else "lines+markers",
                     marker={"size": 8, "color": s.color})
        if s.text:
            trace.update(text=list(s.text), textposition="top center")
    elif len(s.x) <= FEW_POINTS:  # a line of one point would not show
        trace.update(mode="lines+markers", marker={"size": 4, "color": s.color})
    else:
        trace["mode"] = "lines"
    return trace


def _shade(b: Band, i: int) -> dict:
    """A step's window in light blue and orange by turns; a fault in red, darker."""
    color = FAULT_COLOR if b.fault else "#4c72b0" if i % 2 == 0 else "#dd8452"
    return {"type": "rect", "xref": "x", "yref": "paper", "x0": b.x0, "x1": b.x1, "y0": 0,
            "y1": 1, "fillcolor": color, "opacity": 0.18 if b.fault else 0.08,
            "line": {"width": 0}, "layer": "below"}


def _band_label(b: Band, chart: Chart, row: int) -> dict:
    """A step's label centred above the axes; a fault's inside them from its start (or to its
    end), in its row (``model.label_rows``)."""
    if b.fault:
        leftwards = label_leftwards(chart, b)
        return {"x": b.x1 if leftwards else b.x0, "y": 1 - row * LABEL_ROW, "xref": "x",
                "yref": "paper",
                "text": b.label, "showarrow": False, "yanchor": "top",
                "xanchor": "right" if leftwards else "left",
                "bgcolor": "rgba(255,255,255,0.75)", "font": {"size": 10, "color": FAULT_COLOR}}
    return {"x": (b.x0 + b.x1) / 2, "y": 1, "xref": "x", "yref": "paper", "text": b.label,
            "showarrow": False, "yanchor": "bottom", "font": {"size": 10, "color": "#555"}}


def figure(chart: Chart) -> dict:
    """{"data": [...], "layout": {...}} for Plotly.newPlot."""
    data = [_bar(s, chart) if chart.kind in ("bar", "hist") else _line(s, chart)
            for s in chart.series]
    layout = {
        "title": {"text": chart.title, "x": 0.01, "xanchor": "left"},
        "height": HEIGHT,
        "margin": {"l": 70, "r": 20, "t": 60, "b": 60},
        "xaxis": {"title": {"text": chart.x_label}, "automargin": True},
        "yaxis": {"title": {"text": chart.y_label}, "automargin": True,
                  "rangemode": "tozero" if chart.y_min_zero else "normal",
                  "separatethousands": True},
        "legend": {"orientation": "h", "y": -0.22, "x": 0},
        "showlegend": len(chart.series) > 1 or chart.kind in ("line", "bar"),
        "paper_bgcolor": "white", "plot_bgcolor": "#fafafa",
    }
    if chart.kind == "bar":
        layout["barmode"] = "group"
        layout["xaxis"]["type"] = "category"
    elif chart.kind == "hist":
        layout["bargap"] = 0.02
    elif chart.kind == "line":
        layout["hovermode"] = "x unified"
    if chart.kind == "scatter":
        layout["xaxis"]["rangemode"] = "tozero"
    if chart.x_range:
        layout["xaxis"]["range"] = list(chart.x_range)
    if chart.x_ticks:
        layout["xaxis"].update(tickmode="array", tickvals=list(chart.x_ticks),
                               ticktext=[f"{v:g}" for v in chart.x_ticks])
    if chart.bands:
        layout["shapes"] = [_shade(b, i) for i, b in enumerate(chart.bands)]
        layout["annotations"] = [_band_label(b, chart, row)
                                 for b, row in zip(chart.bands, label_rows(chart))]
    return {"data": data, "layout": layout}
