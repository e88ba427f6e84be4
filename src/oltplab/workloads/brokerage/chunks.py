"""What one loading process of a TPC-E-derived brokerage build loads, the same for every
engine.

A build's processes take the chunks of population.plan from one list, costliest first
(population.deal_order), each the next one when it is free (``LoadJob.taken``, a counter they
share), so that they end together whatever a kind of chunk costs on the engine (dealt
beforehand by PostgreSQL's costs, MariaDB's two loading processes ended 1.1-1.4 s apart at every
size). Each process makes the COPY text of its chunks (``chunks``) in a thread ahead of the
loader (``produce``), so that generator and server work at the same time, and tallies its
completed trades per broker (``LoadJob.tally``), which the build adds up into the broker
table. The rows are the same whichever process makes a chunk: a chunk's draws are seeded by the
chunk alone.
"""

from __future__ import annotations

import multiprocessing
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
    trades to; ``parent_pid`` is the build's process (the worker stops when it is gone).
    With ``taken`` (a multiprocessing Value every process of the build shares: the index of
    the next chunk of ``work`` to take), the process loads the chunks it takes; without it,
    all of ``work``."""

    dsn: str
    worker: int
    seed: int
    scale: Scale
    work: tuple[pop.Chunk, ...]
    parent_pid: int
    tally: list = field(default_factory=list, compare=False, repr=False)
    taken: object = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        """What the process loads, for an error's message."""
        if self.taken is not None:
            return f"the chunks loading process {self.worker} took"
        first = self.work[0]
        return f"{len(self.work)} chunk(s) from the {first.kind} chunk {first.index}"


def shared_counter():
    """A counter from 0 for the build's processes, of the multiprocessing context their
    runner starts them in (fork while the calling process has one thread, otherwise spawn)."""
    method = "fork" if threading.active_count() == 1 else "spawn"
    return multiprocessing.get_context(method).Value("q", 0)


def load_jobs(dsn: str, scale: Scale, build_users: int, seed: int) -> list[LoadJob]:
    """One job per loading process (``build_users``, at most one a chunk), all taking from
    the plan's chunks in population.deal_order."""
    work = tuple(pop.deal_order(scale))
    taken = shared_counter()
    return [LoadJob(dsn=dsn, worker=k, seed=seed, scale=scale, work=work,
                    parent_pid=os.getpid(), tally=pop.new_tally(scale), taken=taken)
            for k in range(max(1, min(build_users, len(work))))]


def chunk_count(jobs: list[LoadJob]) -> int:
    """The chunks the jobs load between them."""
    if jobs and jobs[0].taken is not None:
        return len(jobs[0].work)
    return sum(len(j.work) for j in jobs)


def taken_chunks(job: LoadJob):
    """The chunks ``job``'s process loads: each the next untaken one of ``work`` when it asks
    (all of ``work`` without a shared counter)."""
    if job.taken is None:
        yield from job.work
        return
    while True:
        with job.taken.get_lock():
            k = job.taken.value
            job.taken.value = k + 1
        if k >= len(job.work):
            return
        yield job.work[k]


def chunks(job: LoadJob):
    """(table, COPY text, rows) in load order; ("", "", chunk index) marks a finished chunk."""
    return shared.marked(taken_chunks(job),
                         lambda chunk: pop.chunk_rows(job.seed, job.scale, chunk, job.tally))


def produce(job: LoadJob, out: queue.Queue, stop: threading.Event) -> None:
    """Generator thread: encoded chunks into ``out``, then None (or the exception raised)."""
    shared.feed_text(chunks(job), out, stop)
