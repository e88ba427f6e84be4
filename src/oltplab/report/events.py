"""Throughput during injected faults (``tpcc run --inject``, ``dvds run --inject``): the E8
chart of transactions per minute over the measured window with each fault's span shaded and
annotated, the events' table (how long each lasted, the bytes the datastore's devices moved
and at what rate, the dip and the recovery), and what every other time chart of the run needs
to share its x axis and mark the faults.

Every time chart of a run with faults is drawn over one axis: seconds (or minutes, hours) from
the start of the first step's measured window, where the events' ``at_s`` count from.
"""

from __future__ import annotations

from .charts import fmt, line_chart, time_axis
from .model import Band, Chart, Table
from .runs import RunData

MB = 10**6
WINDOW_AXIS = "time since the start of the measured window"
COLUMNS = ("event", "kind", "at (s)", "lasted (s)", "moved (MB)", "MB/s", "read (MB)",
           "allocated (MB)", "writes before (MB/s)", "TPM before", "dip avg %", "dip max %",
           "back within 10% (s)", "recovery (s)", "error or note")


def faults(run: RunData) -> list[dict]:
    """The run's events that fired (they have a time)."""
    return [e for e in run.record.get("events") or [] if e.get("at_s") is not None]


def lasted_s(e: dict) -> float | None:
    """How long a fault lasted: a device fault's file-system work (``seconds``), a kill until
    the server accepted a connection again (``recovery_s``), a failed device until it was given
    back (``ended_at_s``), a throttle its window (``for_s``); None when unknown."""
    at, ended = e.get("at_s"), e.get("ended_at_s")
    for key in ("seconds", "recovery_s"):
        if e.get(key) is not None:
            return float(e[key])
    if e.get("kind") != "throttle" and ended is not None and at is not None:
        return max(0.0, ended - at)
    if e.get("for_s"):
        return float(e["for_s"])
    return max(0.0, ended - at) if ended is not None and at is not None else None


def moved_verb(e: dict) -> str:
    """What a device fault's ``bytes_moved`` are: bytes the remaining devices wrote, or, for a
    scrub, bytes it read and verified."""
    return "scrubbed" if e.get("kind") == "scrub" else "written"


def _mb(x):
    return None if x is None else x / MB


def fault_label(e: dict, detail: bool = True) -> str:
    """"remove-device 13.8 s, 1,204 MB written, dip 61% avg, 96% max" (``detail``), else the
    kind and how long it lasted. MB = 10^6 bytes."""
    lasted = lasted_s(e)
    if e.get("recovery_s") is not None:
        parts = [e["kind"], f"recovery {e['recovery_s']:.1f} s"]
    else:
        parts = [e["kind"] + (f" {lasted:.1f} s" if lasted else "")]
    if not detail:
        return ", ".join(parts)
    if e.get("bytes_moved") is not None:
        parts.append(f"{fmt(e['bytes_moved'] / MB)} MB {moved_verb(e)}")
    if e.get("dip_avg_pct") is not None:
        parts.append(f"dip {e['dip_avg_pct']:.0f}% avg, {e['dip_max_pct']:.0f}% max")
    return ", ".join(parts)


def fault_bands(run: RunData, divisor: float = 1.0, span_s: float = 0.0,
                detail: bool = False) -> tuple[Band, ...]:
    """Each fault from its start to its end (``lasted_s``) in units of an axis whose zero is
    the measured window's start; at least 1/200 of ``span_s`` seconds (and 0.5 s) wide, so
    that an instant still shows."""
    least = max(0.5, span_s / 200)
    out = []
    for e in faults(run):
        at = e["at_s"]
        end = at + max(lasted_s(e) or 0.0, least)
        out.append(Band(at / divisor, end / divisor, fault_label(e, detail), fault=True))
    return tuple(out)


def window_start_ns(run: RunData) -> int | None:
    """The start of the first step's measured window on the timeline's clock, when the run
    has faults to mark and its timeline marks the window; else None."""
    tl = run.timeline
    if not faults(run) or tl is None or tl.t0_ns is None:
        return None
    from ..telemetry.derive import step_windows
    windows = step_windows(tl)
    return windows[0].ramp_end_ns if windows else None


def window_seconds(run: RunData) -> int:
    """Seconds of the first step's completions per second."""
    step = run.steps[0] if run.steps else {}
    return len((step.get("throughput") or {}).get("per_s") or [])


def window_axis(run: RunData) -> tuple[float, str, tuple[float, float]]:
    """(divisor, label, x range) of the axis every time chart of a run with faults shares:
    from the timeline's first sample (in the ramp-up, before zero) or zero to the end of the
    measured window or of the timeline, whichever is later."""
    lo, hi = 0.0, float(window_seconds(run))
    start, tl = window_start_ns(run), run.timeline
    if start is not None and tl.columns.get("t_ns"):
        t = tl.columns["t_ns"]
        lo, hi = min(lo, (t[0] - start) / 1e9), max(hi, (t[-1] - start) / 1e9)
    divisor, label = time_axis(hi)
    pad = (hi - lo) / 100
    return (divisor, label.replace("time since the start", WINDOW_AXIS),
            ((lo - pad) / divisor, (hi + pad) / divisor))


def events_chart(run: RunData, suffix: str = "") -> Chart | None:
    """TPM per 10 s and per second over the measured window, the faults marked; None when
    the run injected nothing."""
    if not run.record.get("events"):
        return None
    step = run.steps[0] if run.steps else {}
    tp = step.get("throughput") or {}
    per_10s, per_s = tp.get("completed") or [], tp.get("per_s") or []
    width = int(tp.get("interval_s") or 10)
    divisor, x_label, x_range = window_axis(run)
    x = [(i + 0.5) / divisor for i in range(len(per_s))]
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
        "events_tpm" + suffix, "Throughput during the injected faults", x_label, what, x,
        lines, why="the step has no completions per second", x_range=x_range,
        bands=fault_bands(run, divisor, span_s=len(per_s), detail=True),
        caption="Client-side completions per second (from the workers' one-second progress "
                f"points) and per {width} s, as {rate}"
                + (" (committed orders)" if wl.unit_row else "")
                + "; shaded: each fault for as long as it lasted: a device fault until the "
                "file system's work ended, a kill until the server accepted a connection "
                "again, a throttle for its window, a failed device until it was given back.")


def events_table(run: RunData) -> Table | None:
    events = run.record.get("events") or []
    if not events:
        return None
    from .. import workloads
    rate = workloads.of_record(run.record).throughput_name
    rows = []
    for e in events:
        rows.append((e.get("event") or e["kind"], e["kind"], e.get("at_s"), lasted_s(e),
                     _mb(e.get("bytes_moved")), e.get("mb_per_s"), _mb(e.get("bytes_read")),
                     _mb(e.get("allocated_bytes")), _mb(e.get("background_write_bytes_s")),
                     e.get("before_tpm"), e.get("dip_avg_pct"), e.get("dip_max_pct"),
                     e.get("back_within_10pct_s"), e.get("recovery_s"),
                     "; ".join(x for x in (e.get("error"), e.get("dip_note")) if x)))
    return Table("events", "Injected faults",
                 tuple(f"{rate} before" if c == "TPM before" else c for c in COLUMNS),
                 tuple(rows),
                 caption="at: seconds from the start of the measured window. Lasted: a device "
                         "fault until the file system's work ended, a kill until the server "
                         "accepted a connection again (its recovery), a throttle its window, a "
                         "failed device until it was given back. Moved: for a removal, a "
                         "replacement or a conversion, the bytes the datastore's remaining "
                         "devices wrote during the work, from their counters (the workload's "
                         "writes in that time included: writes before gives their rate before "
                         "the fault); for a scrub, the bytes it read and verified. MB/s: moved "
                         "per second of the work. Read: the bytes read from the devices "
                         "involved during the work. Allocated: the chunks the leaving device "
                         "held (a conversion: the data chunks it rewrote). MB = 10^6 bytes. "
                         "Before: the mean of up to 60 s before the fault, none of them in an "
                         "earlier fault or its recovery (the note says when none was left). "
                         "Dip: from the fault until throughput is back within 10% of before "
                         "(or the fault ends, if later), its mean and its deepest second.")
