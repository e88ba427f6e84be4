"""Backup and restore cycles (experiment E4), recorded as a run of kind "backup".

Each cycle takes a backup with the engine's tool, then restores it into a scratch data
directory beside the data directory (the same datastore), starts the restored copy as a
managed server on its own private socket (the same lock-down as every managed server), runs
the TPC-C consistency checks on it, and stops and removes it. Every cycle is saved in
``run.json`` as soon as it ends, so an interrupted run keeps the finished cycles; the
telemetry timeline carries a mark at the start and the end of each backup and restore phase.
MB/s here are 10^6 bytes per second.

This module is the same for every engine: the cycles, their timing and record, the progress
callbacks, Ctrl-C and ``cancel``, the removal of the scratch copy, the marks. What a backup
and a restore are is the engine's, in ``engines/<engine>/backup.py`` (chosen by
``DbSpec.engine``), each with the same functions:

- ``check(spec, db)``: refuse, before anything starts, what the tools cannot do;
- ``database(db)``: a context manager yielding the target (``dsn``, ``admin_dsn``,
  ``instance``), a managed server started for the run and stopped after it if it was down;
- ``server(target)``: the record's ``database`` entry (engine, version, managed);
- ``backup(job, dest)``: back up into the new folder ``dest``; extra fields of the record;
- ``restored(job, source, scratch, parts)``: a context manager that restores ``source``
  into ``scratch``, timing its parts with ``parts.part(name)`` ("copy", "replay", "load"),
  starts the copy and yields its DSN, and stops it on the way out;
- ``check_restored(dsn)``: ``{check_ok, check_failed}`` of the restored copy;
- ``leftovers(scratch)``: what a restore into ``scratch`` may leave (the directory, its
  socket directory, its password file), removed after every cycle.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from threading import Event
from typing import Callable

from .. import engines
from ..config import DbSpec
from ..engines.common.backup import (COMPRESSIONS, METHODS, BackupSpec,  # noqa: F401
                                     Job, Parts, Progress, dir_bytes, run_watched)


def engine_backup(engine: str):
    """The backup module of ``engine`` (engines/<engine>/backup.py)."""
    return engines.get(engine).backup


def mb_per_s(nbytes: int, seconds: float) -> float | None:
    return round(nbytes / 1e6 / seconds, 3) if seconds > 0 else None


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


class BackupCycles:
    """The cycles of one run against one target, backing up into ``to`` and restoring into
    ``scratch_root``, with the engine's backup module ``engine``."""

    def __init__(self, engine, spec: BackupSpec, db: DbSpec, target, to: Path,
                 scratch_root: Path, progress: Progress | None = None,
                 mark: Callable[..., object] | None = None):
        self.engine, self.spec, self.db, self.target = engine, spec, db, target
        self.to, self.scratch_root = to, scratch_root
        self.progress = progress or (lambda *a: None)
        self.mark = mark or (lambda *a, **k: None)
        self.cancel: Event | None = None  # set: the tool under way stops (KeyboardInterrupt)

    def job(self, cycle: int) -> Job:
        return Job(self.spec, self.db, self.target, cycle, self.progress, self.cancel)

    def backup(self, cycle: int, dest: Path) -> dict:
        s = self.spec
        self.mark("backup-start", cycle=cycle, method=s.method)
        t0 = time.monotonic()
        fields = self.engine.backup(self.job(cycle), dest)
        seconds = time.monotonic() - t0
        nbytes = dir_bytes(dest)
        self.mark("backup-end", cycle=cycle, bytes=nbytes)
        return {"method": s.method, "compress": s.compress, **fields,
                "seconds": round(seconds, 3), "bytes": nbytes,
                "mb_per_s": mb_per_s(nbytes, seconds), "path": str(dest)}

    def restore(self, cycle: int, source: Path, scratch: Path) -> dict:
        """Restore ``source`` into ``scratch``, start it, run the checks; the caller removes
        ``scratch`` and what the engine leaves beside it."""
        job = self.job(cycle)
        parts = Parts(job, scratch)
        self.mark("restore-start", cycle=cycle)
        with self.engine.restored(job, source, scratch, parts) as dsn:
            seconds = parts.total()
            nbytes = parts.bytes
            self.mark("restore-end", cycle=cycle, bytes=nbytes)
            out: dict = {f"{name}_seconds": round(v, 3) for name, v in parts.seconds.items()}
            out.update(seconds=round(seconds, 3), bytes=nbytes,
                       mb_per_s=mb_per_s(nbytes, seconds))
            self.progress(cycle, "check", nbytes, seconds)
            out.update(self.engine.check_restored(dsn))
            return out

    def remove_scratch(self, scratch: Path) -> None:
        """The restored copy and what its server left beside it."""
        for p in self.engine.leftovers(scratch):
            if p.is_dir() and not p.is_symlink():
                remove_tree(p)
            else:
                try:
                    p.unlink()
                except FileNotFoundError:
                    pass


# --------------------------------------------------------------------------- the run


def default_to(db: DbSpec) -> Path:
    return Path(f"{os.path.abspath(db.datadir)}-backup") if db.managed \
        else Path("oltplab-data/backup").absolute()


def run_backup(db: DbSpec, spec: BackupSpec, progress: Progress | None = None,
               on_cycle: Callable[[dict], None] | None = None, stop: Event | None = None,
               cancel: Event | None = None, mark: Callable[..., object] | None = None,
               labels: dict | None = None, metrics=None) -> dict:
    """Run the cycles against the (managed) database and keep the record on disk; the record's
    data. A managed server is started when needed and stopped again if it was started here.

    ``stop``, when set, ends the run after the cycle under way (or during the wait before the
    next), completed; ``cancel``, when set, stops the tool under way: the run ends
    interrupted, as on Ctrl-C (both for runs in a thread, which Ctrl-C does not reach);
    ``mark`` hears the phases' marks when the run has no sampler of its own
    (``spec.sample_interval`` 0), e.g. a neighbours run's; ``labels`` are extra top-level
    fields of the record; ``metrics``, a running telemetry.openmetrics.Endpoint, serves the
    sampler's figures while the cycles run (a plan's backup step)."""
    from ..runs.timeline import make_sampler
    from ..runs.lifecycle import new_record, recording, spec_dict

    engine = engine_backup(db.engine)
    to = Path(os.path.abspath(spec.to or default_to(db)))
    engine.check(spec, db)
    with engine.database(db) as target:
        server = engine.server(target)
        restarted = getattr(target.instance, "restarted", None)
        if restarted:  # what start() restarted the server for, as a tpcc run records it
            server = {**server, "restarted": restarted}
        datadir = Path(os.path.abspath(db.datadir)) if target.instance else None
        scratch_root = datadir.parent if datadir else to.parent
        cycles = BackupCycles(engine, spec, db, target, to, scratch_root, progress, mark)
        cycles.cancel = cancel
        paths = {"datadir": datadir, "backup": to} if datadir else {"backup": to}
        to.mkdir(parents=True, exist_ok=True)
        sampler = make_sampler(spec.sample_interval, paths, spec.power, target.dsn,
                               io_latency=spec.io_latency,
                               engine=db.engine)
        record = new_record(
            spec.results_dir, "backup", spec.name, paths, engine=db.engine,
            config={"db": spec_dict(db), "backup": spec_dict(spec)},
            database=server, cycles=[], **(labels or {}))
        if sampler is not None:
            cycles.mark = sampler.mark
        with recording(record, sampler, metrics=metrics) as end:
            _cycles(cycles, spec, record, to, on_cycle, stop or Event())
            end.status = "completed"
    return {**record.data, "_path": str(record.path)}


def _cycles(cycles: BackupCycles, spec: BackupSpec, record, to: Path, on_cycle,
            stop: Event) -> None:
    previous: Path | None = None
    for n in range(1, spec.cycles + 1):
        if stop.is_set():
            return
        t_start = time.monotonic()
        dest = to / f"{record.path.name}-cycle{n}"
        scratch = cycles.scratch_root / f".{to.name}-restore-{os.getpid()}-{n}"
        entry = {"cycle": n, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        try:
            entry["backup"] = cycles.backup(n, dest)
            if previous is not None:  # keep only the newest backup
                remove_tree(previous)
            previous = dest
            if spec.restore:
                entry["restore"] = cycles.restore(n, dest, scratch)
        except BaseException:
            if dest != previous:
                remove_tree(dest)
            raise
        finally:
            cycles.remove_scratch(scratch)
        record.data["cycles"].append(entry)
        record.save()
        if on_cycle:
            on_cycle(entry)
        if n < spec.cycles:
            stop.wait(max(0.0, t_start + spec.interval - time.monotonic()))
