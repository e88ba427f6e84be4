"""Noisy neighbours (experiment E5): N managed PostgreSQL instances on one datastore, N - K of
them running the TPC-C-derived workload at the same time while K take a backup every interval;
recorded as one run of kind "neighbours".

Layout under ``root``: ``template/`` holds the schema, built once (``template.json`` names its
warehouses; a different ``warehouses`` rebuilds it); every run copies the stopped template into
``pg1/`` .. ``pgN/`` afresh (``cp -a``), so baseline and noisy runs start from the same data.
Instance i listens on its private socket with port ``port + i`` and gets ``db_memory / N`` of
shared_buffers. The last K instances are the backup ones, so a baseline (K = 0) and a noisy run
of the same N share the names of their workload instances.

Each instance runs through the services the commands use, in a thread (the workload's drivers
are processes of their own): ``run_workload_recorded`` and ``run_backup`` (``pg_basebackup``, no
restore, as E5 only backs up), each with a run folder of its own under the neighbours run's
``instances/`` and no sampler; one sampler records the host for the whole run. Backups start
when every workload measures and stop, after the cycle under way, when the workloads end.

Every server is stopped however the run ends. A failure of one instance (at its start or
during the run) is recorded in its entry and stops the others; Ctrl-C stops all, and the record
keeps what was measured.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import engines
from ..config import DbSpec, RunSpec
from ..errors import DatabaseError, OltplabError, UsageError
from ..results.store import atomic_write
from ..runs.lifecycle import WorkloadProgress, new_record, recording, spec_dict
from ..workloads import get as get_workload
from ..workloads import of_record
from .backup import BackupSpec, remove_tree
from ..report.units import headline_unit
from .neighbours_spec import NeighboursSpec

ENGINE = "postgres"  # neighbours run managed PostgreSQL servers
TEMPLATE = "template"
TEMPLATE_FILE = "template.json"
INSTANCES_DIR = "instances"  # the instances' own run folders, inside the neighbours run's
TICK_S = 1.0
JOIN_TIMEOUT_S = 60.0
LATENCY_KEYS = ("mean", "p50", "p95", "p99", "max")


@dataclass(frozen=True)
class Member:
    """One instance of the run."""

    index: int  # from 1
    role: str  # the workload it runs ("tpcc", "dvds", "brokerage") | "backup"
    db: DbSpec

    @property
    def name(self) -> str:
        return f"pg{self.index}"


def members(spec: NeighboursSpec, only: tuple[int, ...] | None = None) -> list[Member]:
    """The run's instances (``only``: those of these numbers, a host's share)."""
    root = Path(os.path.abspath(spec.root))
    first_backup = spec.instances - spec.backup
    return [Member(i, "backup" if i > first_backup else spec.workload,
                   spec.db(root / f"pg{i}", spec.port + i))
            for i in range(1, spec.instances + 1) if only is None or i in only]


@dataclass
class Share:
    """One host's share of a run over several hosts (scenarios/spread.py): its instances,
    and the coordinator's word on when they all go (``ready`` blocks until then), when every
    workload of the run measures (backups may begin), when all have ended (backups stop),
    and when to stop (``stop_why``, after an instance elsewhere failed)."""

    indices: tuple[int, ...]
    ready: Callable[[], None]
    measuring: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)
    stop_why: str | None = None


class NeighboursProgress:
    """Hooks a neighbours run calls while it goes; every one does nothing here."""

    def preparing(self, what: str) -> None:
        """A preparation step begins: building the template, copying it, starting servers."""

    def started(self, run_dir: Path) -> None:
        """The run folder exists; the servers are about to start."""

    def tick(self, elapsed_s: float, tpm: int, headline: int, measuring: int, workloads: int,
             cycles: int) -> None:
        """About once a second: summed client TPM and headline (NOPM, the shop's OPM) per
        minute of the workloads, how many of them measure, and the backup cycles done."""

    def ticks(self, ticks: list) -> None:
        """With each tick: the last tick of each workload still running (WorkloadProgress's)."""

    def mark(self, name: str, t_ns: int, **attrs) -> None:
        """A backup cycle's instant (``t_ns`` on the monotonic clock), as the timeline's
        sampler records it."""

    def instance(self, entry: dict) -> None:
        """An instance ended; its entry is about to be saved."""

    def finished(self) -> None:
        """The run ended (in any way); the record is about to be closed."""


# --------------------------------------------------------------------------- the data


def prepare(spec: NeighboursSpec, mems: list[Member],
            progress: NeighboursProgress) -> dict:
    """The template with the schema (built when missing or of another size), copied into each
    instance's data directory; what was done, for the record."""
    engine = engines.get(ENGINE)
    root = Path(os.path.abspath(spec.root))
    template = root / TEMPLATE
    marker = root / TEMPLATE_FILE
    out: dict = {"template": str(template), **spec.schema,
                 "method": "copy of the stopped template's data directory (cp -a)"}
    if _template_schema(marker, template) != spec.schema:
        what = spec.schema_name
        progress.preparing(f"building {what} in {template}")
        marker.unlink(missing_ok=True)
        remove_tree(template)
        root.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        bspec = spec.build_spec()
        with engine.database(spec.db(template, spec.port),
                             need_connections=bspec.build_users + 10) as target:
            engine.dialect_for(spec.workload).build(target.dsn, bspec)
        atomic_write(marker, json.dumps(spec.schema) + "\n")
        out.update(built=True, build_seconds=round(time.monotonic() - t0, 3))
    else:
        out["built"] = False
    progress.preparing(f"copying the template into {len(mems)} data directories")
    t0 = time.monotonic()
    for m in mems:
        clone(template, Path(os.path.abspath(m.db.datadir)))
    out["copy_seconds"] = round(time.monotonic() - t0, 3)
    return out


def _template_schema(marker: Path, template: Path) -> dict | None:
    """The template's schema as ``NeighboursSpec.schema`` gives it, None when it has none (or
    no template.json); a template with a running server is refused (it is neither copied nor
    replaced while it runs)."""
    _refuse_running(template)
    try:
        return json.loads(marker.read_text())
    except (OSError, ValueError, AttributeError):
        return None


def _refuse_running(datadir: Path) -> None:
    if engines.get(ENGINE).instance(DbSpec(datadir=datadir)).is_running():
        raise UsageError(f"{datadir} has a running server; stop it first "
                         f"(oltplab db stop --datadir {datadir})")


def clone(template: Path, datadir: Path) -> None:
    """``datadir`` becomes a copy of the (stopped) template, owner and modes kept."""
    _refuse_running(datadir)
    remove_tree(datadir)
    res = subprocess.run(["cp", "-a", str(template), str(datadir)], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True)
    if res.returncode != 0:
        lines = res.stderr.strip().splitlines()
        raise DatabaseError(f"copying {template} to {datadir} failed: "
                            f"{lines[-1] if lines else f'exit {res.returncode}'}")
    (datadir / "postmaster.pid").unlink(missing_ok=True)


# --------------------------------------------------------------------------- the instances


class _Ticks(WorkloadProgress):
    def __init__(self):
        self.last = None

    def tick(self, tick) -> None:
        self.last = tick


@dataclass
class _Runner:
    """One instance's run in a thread; ``result`` is its record, ``error`` what it raised."""

    member: Member
    body: Callable[["_Runner"], dict]
    ticks: _Ticks = field(default_factory=_Ticks)
    cycles: int = 0
    result: dict | None = None
    error: str | None = None
    stopped_by: str | None = None  # why we stopped it, when we did
    thread: threading.Thread | None = None
    reported: bool = False

    def start(self) -> None:
        self.thread = threading.Thread(target=self._main, name=self.member.name, daemon=True)
        self.thread.start()

    def _main(self) -> None:
        try:
            self.result = self.body(self)
        except KeyboardInterrupt:
            self.error = "interrupted"
        except OltplabError as e:
            self.error = str(e)
        except BaseException as e:  # a thread must not die silently: the entry says why
            self.error = f"{type(e).__name__}: {e}"

    @property
    def done(self) -> bool:
        return self.thread is not None and not self.thread.is_alive()

    @property
    def status(self) -> str:
        if self.result is not None:
            status = self.result.get("status") or "failed"
        else:
            status = "interrupted" if self.error == "interrupted" else "failed"
        return "stopped" if self.stopped_by and status != "completed" else status


class _Race:
    """The instances' threads from start to end, and the live figures."""

    def __init__(self, spec: NeighboursSpec, mems: list[Member], run_dir: Path, sampler,
                 progress: NeighboursProgress, entries: list[dict], save: Callable[[], None],
                 live=None, share: Share | None = None):
        self.spec, self.progress, self.entries, self.save = spec, progress, entries, save
        self.sampler, self.live, self.share = sampler, live, share
        self.by_index = {m.index: i for i, m in enumerate(mems)}
        self.sub_dir = run_dir / INSTANCES_DIR
        self.measuring = threading.Event()  # every workload measures: backups may begin
        self.stop_backups = threading.Event()
        self.cancel = threading.Event()
        self.runners = [_Runner(m, self._backup if m.role == "backup" else self._tpcc)
                        for m in mems]

    # ----- the bodies, in the threads

    def _tpcc(self, r: _Runner) -> dict:
        from ..runs.lifecycle import run_workload_recorded
        s = self.spec
        index = r.member.index
        rspec = RunSpec(users=(s.users,), rampup=s.rampup, duration=s.duration, mode=s.mode,
                        name=r.member.name, results_dir=self.sub_dir, sample_interval=0,
                        power="none", seed=None if s.seed is None else s.seed + index,
                        workload=s.workload)
        return run_workload_recorded(r.member.db, rspec, r.ticks, {"neighbours": self._label(r)},
                                     stop=self.cancel)

    def _backup(self, r: _Runner) -> dict:
        from .backup import run_backup
        s = self.spec
        while not self.measuring.wait(0.2):
            if self.cancel.is_set() or self.stop_backups.is_set():
                raise KeyboardInterrupt
        datadir = Path(os.path.abspath(r.member.db.datadir))
        bspec = BackupSpec(cycles=s.backup_cycles, interval=s.backup_interval, restore=False,
                           to=Path(f"{datadir}-backup"), name=r.member.name,
                           results_dir=self.sub_dir, sample_interval=0, power="none")

        def on_cycle(entry: dict) -> None:
            r.cycles += 1

        def mark(name: str, **attrs) -> None:
            t = time.monotonic_ns()
            if self.sampler is not None:
                self.sampler.mark(name, t_ns=t, instance=r.member.name, **attrs)
            self.progress.mark(name, t, instance=r.member.name, **attrs)

        try:
            return run_backup(r.member.db, bspec, on_cycle=on_cycle, stop=self.stop_backups,
                              cancel=self.cancel, mark=mark,
                              labels={"neighbours": self._label(r)})
        finally:
            remove_tree(bspec.to)

    def _label(self, r: _Runner) -> dict:
        return {"run": self.sub_dir.parent.name, "instance": r.member.name, "role": r.member.role}

    # ----- the main thread

    def run(self) -> tuple[str, str | None]:
        """Run every instance to its end; the run's status and error."""
        t0 = time.monotonic()
        for r in self.runners:
            r.start()
        workloads = [r for r in self.runners if r.member.role != "backup"]
        failure: str | None = None
        share, told = self.share, False
        try:
            while True:
                self._tick(time.monotonic() - t0, workloads)
                for r in self.runners:
                    if r.done and not r.reported:
                        self._enter(r)
                        if failure is None and r.status in ("failed", "check-failed"):
                            failure = f"{r.member.name}: {self._error(r)}"
                            self.stop_all(f"stopped after {r.member.name} failed")
                if share is not None and share.stop_why and not told:
                    told = True
                    self.stop_all(share.stop_why)
                if all(r.done for r in workloads) if share is None else share.ended.is_set():
                    self.stop_backups.set()
                if all(r.done for r in self.runners):
                    break
                time.sleep(TICK_S)
        except KeyboardInterrupt:
            self.stop_all(None)
            raise
        if failure:
            return "failed", failure
        bad = [r for r in self.runners if r.status != "completed"]
        if bad:
            return "failed", "; ".join(f"{r.member.name} {r.status}: {self._error(r)}"
                                       for r in bad)
        return "completed", None

    def _tick(self, elapsed: float, workloads: list[_Runner]) -> None:
        ticks = [r.ticks.last for r in workloads if not r.done and r.ticks.last is not None]
        measuring = sum(1 for t in ticks if t.phase == "measure")
        if self.share is not None:  # the run's workloads are on several hosts: it says
            if self.share.measuring.is_set():
                self.measuring.set()
        elif measuring == len(workloads) or any(r.done for r in workloads):
            self.measuring.set()
        self.progress.tick(elapsed, sum(t.tpm for t in ticks), sum(t.headline for t in ticks),
                           measuring, len(workloads), sum(r.cycles for r in self.runners))
        self.progress.ticks(ticks)
        if self.live is not None and ticks:
            self.live.figures.tick_sum(ticks)

    def _enter(self, r: _Runner) -> None:
        """Enter a finished instance in the record."""
        r.reported = True
        entry = self.entries[self.by_index[r.member.index]]
        entry.update(instance_entry(r.member, r.result, r.status, self._error(r), r.stopped_by,
                                    self.sub_dir.parent))
        self.progress.instance(entry)
        self.save()

    @staticmethod
    def _error(r: _Runner) -> str | None:
        return (r.result or {}).get("error") or r.error

    def stop_all(self, why: str | None) -> None:
        """Stop every instance that still runs and wait for its thread (bounded); ``why`` is
        entered as their error (None: Ctrl-C, and they say "interrupted" themselves). The
        workloads stop as on Ctrl-C at their next turn, the backups' tools at once."""
        self.stop_backups.set()
        self.cancel.set()
        for r in self.runners:
            if r.thread is not None and not r.done:
                r.stopped_by = r.stopped_by or why
        deadline = time.monotonic() + JOIN_TIMEOUT_S
        for r in self.runners:
            if r.thread is not None:
                r.thread.join(max(0.0, deadline - time.monotonic()))

    def enter_all(self) -> None:
        """Every instance not entered yet (after Ctrl-C), as far as it got."""
        for r in self.runners:
            if r.done and not r.reported:
                self._enter(r)


def instance_entry(m: Member, run: dict | None, status: str, error: str | None,
                   stopped_by: str | None, run_dir: Path) -> dict:
    """The record's entry of one instance: its status and figures, from its own run record."""
    entry: dict = {"status": status, "error": error}
    if stopped_by and status == "stopped":
        entry["error"] = stopped_by
    if run is None:
        return entry
    entry["run"] = os.path.relpath(run["_path"], run_dir)
    if m.role == "backup":
        entry["cycles"] = [{**c, "backup": {k: v for k, v in c["backup"].items() if k != "path"}}
                           if isinstance(c.get("backup"), dict) else c
                           for c in run.get("cycles") or []]  # the backups are removed
        return entry
    steps = run.get("steps") or []
    if steps:
        s = steps[-1]
        unit = of_record(run).unit_key
        entry.update({k: s.get(k) for k in ("tpm", unit, "workload_tpm", "client_tpm",
                                            f"client_{unit}", "measured_s", "partial")})
        entry.update({k: s[k] for k in ("trps", "client_trps") if k in s})  # the brokerage's
        entry["transactions"] = {
            t: {k: v.get(k) for k in ("count", "errors", *LATENCY_KEYS)}
            for t, v in (s.get("transactions") or {}).items()}
        entry["warnings"] = s.get("warnings") or []
    return entry


def averages(entries: list[dict], unit: str = "nopm") -> dict:
    """The mean and the sum of TPM and the headline (``unit``: NOPM, the shop's OPM, the
    brokerage's trps) over the workload instances that measured; a mean of whole numbers is
    rounded to a whole number, another to 3 places."""
    out: dict = {}
    for key in ("tpm", unit):
        vals = [e[key] for e in entries if e["role"] != "backup" and e.get(key) is not None]
        whole = all(isinstance(v, int) for v in vals)
        out[key] = round(sum(vals) / len(vals), None if whole else 3) if vals else None
        out[f"total_{key}"] = sum(vals) if vals else None
    out["instances"] = sum(1 for e in entries if e["role"] != "backup" and e.get(unit) is not None)
    return out


# --------------------------------------------------------------------------- the run


def start_all(mems: list[Member], entries: list[dict], connections: int, save) -> None:
    """Start every server (one after the other, so that a failure stops the run before any
    workload begins) for ``connections`` (a workload instance's); a failure is entered in its
    instance's entry and raised."""
    for m, entry in zip(mems, entries):
        inst = engines.get(ENGINE).instance(m.db)
        try:
            inst.start(need_connections=max(connections, 100))  # 100: what a backup asks
            inst.ensure_database(m.db.dbname)
        except OltplabError as e:
            entry.update(status="failed", error=str(e))
            save()
            raise DatabaseError(f"{m.name} did not start: {e}") from e
        entry["status"] = "started"
        save()


def stop_servers(mems: list[Member]) -> list[str]:
    """Stop every instance's server that runs; the errors of those that would not stop."""
    errors = []
    for m in mems:
        try:
            engines.get(ENGINE).instance(m.db).stop()
        except OltplabError as e:
            errors.append(f"{m.name}: {e}")
    return errors


def run_neighbours(spec: NeighboursSpec, progress: NeighboursProgress | None = None,
                   labels: dict | None = None, metrics=None, share: Share | None = None) -> dict:
    """Prepare the instances, run them together, and keep the record on disk; the record's
    data with ``_path``. Every server is stopped on the way out. ``labels`` go into the record
    as they are (a plan's ``plan`` and ``group``); the instances' own runs do not carry them.
    ``metrics`` (a config.MetricsSpec, or a running telemetry.openmetrics.Endpoint) serves
    the host's figures and the instances' summed throughput while they run. ``share``: only
    a host's share of a run over several hosts, as its coordinator directs."""
    from ..telemetry.openmetrics import endpoint
    with endpoint(metrics) as live:
        return _run_neighbours(spec, progress, labels, live, share)


def _run_neighbours(spec: NeighboursSpec, progress: NeighboursProgress | None,
                    labels: dict | None, live, share: Share | None) -> dict:
    from ..runs.timeline import make_sampler

    progress = progress or NeighboursProgress()
    mems = members(spec, share.indices if share is not None else None)
    root = Path(os.path.abspath(spec.root))
    _check_binaries(spec)
    schema = prepare(spec, mems, progress)
    sampler = make_sampler(spec.sample_interval, {"datadir": root}, spec.power,
                           io_latency=spec.io_latency)
    entries = [{"name": m.name, "role": m.role, "datadir": str(m.db.datadir), "port": m.db.port,
                "db_memory": m.db.db_memory, "status": "pending", "error": None} for m in mems]
    record = new_record(spec.results_dir, "neighbours", spec.name, {"datadir": root},
                        config={"neighbours": spec_dict(spec)}, schema=schema,
                        workload=spec.workload,
                        instances=entries, **(labels or {}))
    race = _Race(spec, mems, record.path, sampler, progress, entries, record.save, live, share)

    def after() -> None:
        race.enter_all()
        errors = stop_servers(mems)
        for e in entries:
            if e["status"] in ("pending", "started"):
                e["status"] = "not run"
        record.data["average"] = averages(entries, headline_unit(spec.workload)[0])
        if errors:
            record.data["stop_errors"] = errors

    try:
        progress.started(record.path)
        with recording(record, sampler, progress, after=after, metrics=live,
                       unit=get_workload(spec.workload).unit_key) as end:
            progress.preparing(f"starting {len(mems)} servers")
            start_all(mems, entries, spec.connections, record.save)
            if share is not None:
                share.ready()
            end.status, end.error = race.run()
    finally:
        race.stop_all("stopped")
        stop_servers(mems)
    return {**record.data, "_path": str(record.path)}


def _check_binaries(spec: NeighboursSpec) -> None:
    if spec.backup:
        engines.get(ENGINE).backup.check(BackupSpec(method="basebackup", restore=False),
                                         spec.db(Path(spec.root), spec.port))
    if shutil.which("cp") is None:
        raise UsageError("the cp program is missing (coreutils)")
