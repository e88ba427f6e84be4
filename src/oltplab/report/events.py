"""Throughput during injected faults (``tpcc run --inject``): the E8 chart of transactions per
minute over the measured window with each fault's span shaded and annotated, and the events'
table (recovery, throughput before, average and deepest dip, time until back within 10%)."""

from __future__ import annotations

from .charts import fmt, line_chart
from .model import Band, Chart, Table
from .runs import RunData

COLUMNS = ("event", "at (s)", "for (s)", "recovery (s)", "TPM before", "dip avg %",
           "dip max %", "back within 10% (s)", "error")


def _span(e: dict) -> tuple[float, float]:
    """Where the fault shades the axis: a throttle's window, a kill until its recovery."""
    at = e["at_s"]
    end = at + (e.get("for_s") or e.get("recovery_s") or 0)
    return at, max(end, at + 0.5)


def _label(e: dict) -> str:
    parts = [e["kind"]]
    if e.get("recovery_s") is not None:
        parts.append(f"recovery {e['recovery_s']:.1f} s")
    if e.get("dip_avg_pct") is not None:
        parts.append(f"dip {e['dip_avg_pct']:.0f}% avg, {e['dip_max_pct']:.0f}% max")
    return ", ".join(parts)


def events_chart(run: RunData, suffix: str = "") -> Chart | None:
    """TPM per 10 s and per second over the measured window, the faults marked; None when
    the run injected nothing."""
    events = [e for e in run.record.get("events") or [] if e.get("at_s") is not None]
    if not run.record.get("events"):
        return None
    step = run.steps[0] if run.steps else {}
    tp = step.get("throughput") or {}
    per_10s, per_s = tp.get("completed") or [], tp.get("per_s") or []
    width = int(tp.get("interval_s") or 10)
    x = [i + 0.5 for i in range(len(per_s))]
    # each second also shows its 10-s interval's rate: one x grid for both lines
    coarse = [per_10s[i // width] * 60 / width if i // width < len(per_10s) else None
              for i in range(len(per_s))]
    from .. import workloads
    wl = workloads.of_record(run.record)
    rate = wl.throughput_name
    what = "orders per minute" if wl.unit_row else "transactions per minute"
    lines = [(f"{rate} per second", [c * 60 for c in per_s], 1),
             (f"{rate} per {width} s", coarse, 0)]
    return line_chart(
        "events_tpm" + suffix, "Throughput during the injected faults",
        "time since the start of the measured window (s)", what, x,
        lines, why="the step has no completions per second",
        bands=[Band(*_span(e), _label(e)) for e in events],
        caption="Client-side completions per second (from the workers' one-second progress "
                f"points) and per {width} s, as {rate}"
                + (" (committed orders)" if wl.unit_row else "")
                + "; shaded: each fault, a kill until the server accepted a connection again, "
                "a throttle for its window.")


def events_table(run: RunData) -> Table | None:
    events = run.record.get("events") or []
    if not events:
        return None
    from .. import workloads
    rate = workloads.of_record(run.record).throughput_name
    rows = tuple((e.get("event") or e["kind"], e.get("at_s"), e.get("for_s"),
                  e.get("recovery_s"), fmt(e.get("before_tpm")), e.get("dip_avg_pct"),
                  e.get("dip_max_pct"), e.get("back_within_10pct_s"), e.get("error") or "")
                 for e in events)
    return Table("events", "Injected faults",
                 tuple(f"{rate} before" if c == "TPM before" else c for c in COLUMNS), rows,
                 caption="at: seconds from the start of the measured window. Before: the mean "
                         "of up to 60 s before the fault. Dip: from the fault until throughput "
                         "is back within 10% of before (or the throttle ends, if later).")
