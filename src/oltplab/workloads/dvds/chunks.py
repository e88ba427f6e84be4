"""What one loading process of a DVD-Store-derived build loads, the same for every engine.

A build deals the chunks of population.plan to its processes (population.share); each process
makes the COPY text of its chunks (``chunks``) in a thread ahead of the loader (``produce``),
so that generator and server work at the same time, and tallies the quantities its order lines
order per product (``LoadJob.sales``), which the build adds up into INVENTORY.sales.
"""

from __future__ import annotations

import os
import queue
import threading
from dataclasses import dataclass, field

from .. import chunks as shared
from . import population as pop
from .sizes import Size

#: Chunks made ahead of the one being sent (workloads/chunks.py), as the loaders import it.
READ_AHEAD = shared.READ_AHEAD


@dataclass(frozen=True)
class LoadJob:
    """What one worker process loads; ``sales`` is filled while its chunks are made."""

    dsn: str
    worker: int
    seed: int
    size: Size
    work: tuple[pop.Chunk, ...]
    parent_pid: int
    sales: list[int] = field(default_factory=list, compare=False, repr=False)


def load_jobs(dsn: str, size: Size, build_users: int, seed: int,
              ds3: bool = False) -> list[LoadJob]:
    """One job per loading process that has chunks to load (``ds3``: a DS3 build's)."""
    return [LoadJob(dsn=dsn, worker=k, seed=seed, size=size, work=tuple(work),
                    parent_pid=os.getpid(), sales=pop.new_sales(size))
            for k, work in enumerate(w for w in pop.share(size, build_users, ds3) if w)]


def chunks(job: LoadJob):
    """(table, COPY text, rows) in load order; ("", "", chunk index) marks a finished chunk."""
    return shared.marked(job.work,
                         lambda chunk: pop.chunk_rows(job.seed, job.size, chunk, job.sales))


def produce(job: LoadJob, out: queue.Queue, stop: threading.Event) -> None:
    """Generator thread: encoded chunks into ``out``, then None (or the exception raised)."""
    shared.feed_text(chunks(job), out, stop)
