"""Reports of runs: charts, an HTML page, PNG files, comparisons and CSV export.

    from oltplab.report.build import write_report     # report.html and a PNG per chart
    from oltplab.report.export import export_csv      # every table of a run as CSV
    from oltplab.report.headline import headline      # one line per run, for listings

Layers: runs.py (records, timelines, groups of repeats) -> tpcc.py, fio.py, timeline.py
(charts as data, model.py) and tables.py -> compare.py, stats.py (ratios, noise) ->
build.py -> html.py (plotly figures, figure.py) and png.py (matplotlib).
"""
