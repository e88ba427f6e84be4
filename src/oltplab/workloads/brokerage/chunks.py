"""What one loading process of a TPC-E-derived brokerage build loads, the same for every
engine.

A build deals the chunks of population.plan to its processes (population.share); each process
makes the COPY text of its chunks (``chunks``) in a thread ahead of the loader (``produce``),
so that generator and server work at the same time, and tallies its completed trades per
broker (``LoadJob.tally``), which the build adds up into the broker table.
"""

from __future__ import annotations

import os
import queue
import threading
from dataclasses import dataclass, field

from .. import chunks as shared
from . import population as pop
from .scale import Scale


@dataclass(frozen=True)
class LoadJob:
    """The chunks (``work``) that loading process ``worker`` makes and sends to ``dsn``, and
    the per-broker ``tally`` (population.new_tally) its customers chunks add their completed
    trades to; ``parent_pid`` is the build's process (the worker stops when it is gone)."""

    dsn: str
    worker: int
    seed: int
    scale: Scale
    work: tuple[pop.Chunk, ...]
    parent_pid: int
    tally: list = field(default_factory=list, compare=False, repr=False)


def load_jobs(dsn: str, scale: Scale, build_users: int, seed: int) -> list[LoadJob]:
    """One job per loading process that has chunks to load."""
    return [LoadJob(dsn=dsn, worker=k, seed=seed, scale=scale, work=tuple(work),
                    parent_pid=os.getpid(), tally=pop.new_tally(scale))
            for k, work in enumerate(w for w in pop.share(scale, build_users) if w)]


def chunks(job: LoadJob):
    """(table, COPY text, rows) in load order; ("", "", chunk index) marks a finished chunk."""
    return shared.marked(job.work,
                         lambda chunk: pop.chunk_rows(job.seed, job.scale, chunk, job.tally))


def produce(job: LoadJob, out: queue.Queue, stop: threading.Event) -> None:
    """Generator thread: encoded chunks into ``out``, then None (or the exception raised)."""
    shared.feed_text(chunks(job), out, stop)
