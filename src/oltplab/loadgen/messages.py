"""Typed messages between the manager and its worker processes (pickled over a pipe).

manager -> worker: a WorkerPlan (process argument), then Start, Go after the first snapshot,
or Stop at any time.
worker -> manager: Connected, Progress about once a second, then Final or Failed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..metrics.summary import TypeCounts


@dataclass(frozen=True)
class Start:
    """Run from now on; count what starts at or after ramp_end and ends by measure_end. With
    ``hold``, a user that crosses ramp_end waits there until Go."""

    ramp_end_ns: int
    measure_end_ns: int
    hold: bool = False


@dataclass(frozen=True)
class Go:
    """The server's counters at the window's start are read: the held users go on."""


@dataclass(frozen=True)
class Stop:
    """Stop now and send a partial Final."""

    reason: str = "interrupted"


@dataclass(frozen=True)
class Connected:
    worker: int
    users: int


@dataclass(frozen=True)
class Flushed:
    """Every user of the worker has crossed a boundary (0 = ramp_end, 1 = measure_end) and
    flushed its backend's statistics; ``users`` of them did."""

    worker: int
    boundary: int
    users: int


@dataclass(frozen=True)
class Progress:
    """Cumulative completions since Start, ramp-up included, at ``t_ns`` (sent on a
    one-second grid through ramp_end: live rates, and the step's completions per 10 s)."""

    worker: int
    t_ns: int
    completed: int
    headline: int  # units of the workload's headline figure (TPC-C: New-Orders)
    # a workload with a unit row: (units begun in the window, their response times' sum in
    # us, rolled back, the worst of the last 100 in us) so far (ProcLoop.live), else None
    live: tuple[int, int, int, int] | None = None


@dataclass(frozen=True)
class Final:
    """The measured window's counts and histograms of one worker, indexed like the mix."""

    worker: int
    counts: tuple[TypeCounts, ...]
    histograms: tuple[str, ...]
    completed: int
    headline: int
    partial: bool
    crossings: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # users' flush end times
    cpu_s: float = 0.0  # the worker's CPU time (user + system) from Start to Final
    inputs: dict | None = None  # what the window's transactions drew (Recorder.inputs)
    lost: int = 0  # connections lost (the users reconnected: --inject), every phase


@dataclass(frozen=True)
class Failed:
    worker: int
    error: str
