"""The life cycle of a recorded run, shared by the commands, plans and scenarios.

A recorded run owns, from start to end: the database session (a managed server started and
stopped around the run, or an existing server by DSN), the telemetry sampler, the run folder
(``run.json`` rewritten after every step, so a failed or interrupted run keeps what it
measured), the server log, and the consistency check. What the run tells its caller while it
goes (the live line, the step lines) goes through a progress object whose hooks do nothing
here: the CLI passes one that prints, a plan may pass one that prints less.

Nothing here prints or exits: failures end up in the record's ``status`` and ``error``, and
``raise_for_status`` turns a record that did not complete into the error the CLI reports.

Repeats: ``run_group`` makes N runs of one kind into one group; each record then carries
``group: {id, index, of}`` (index from 1).
"""

from __future__ import annotations

import dataclasses
import random
import secrets
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

from .. import __version__
from .timeline import make_sampler, save_timeline
from ..config import DbSpec, RunSpec
from ..errors import Interrupted, OltplabError


#: run.json's ``database.engine`` (kept as written by earlier versions for PostgreSQL).
ENGINE_RECORD_NAMES = {"postgres": "postgresql", "mariadb": "mariadb"}


class WorkloadProgress:
    """Hooks a workload's run (tpcc, dvds) calls while it goes; every one does nothing
    here."""

    def started(self, run_dir: Path) -> None:
        """The run folder exists and the workload is about to start."""

    def tick(self, tick: Any) -> None:
        """About once a second: a ``loadgen.step.Tick`` (step, users, phase, TPM and the
        workload's headline unit per minute)."""

    def step(self, step: dict) -> None:
        """A step ended; its record is about to be saved."""

    def finished(self) -> None:
        """The workload ended (in any way); the record is about to be closed."""


class FioProgress:
    """Hooks a fio run calls while it goes; every one does nothing here."""

    def started(self, run_dir: Path, jobs: list[str]) -> None:
        """The run folder exists and fio is about to run these jobs."""

    def tick(self, progress: Any) -> None:
        """fio's status: a ``storage.runner`` progress record."""

    def precondition(self, rec: dict) -> None:
        """The target was preconditioned (bytes, seconds, mbps)."""

    def step(self, step: dict) -> None:
        """A profile ended; its record is about to be saved."""

    def finished(self) -> None:
        """fio ended (in any way); the record is about to be closed."""


def spec_dict(spec) -> dict:
    """A frozen spec as JSON-ready data (paths as strings, a DSN without its password: a
    record is read by others)."""
    from ..engines.session import redact
    out = {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(spec).items()}
    if isinstance(out.get("dsn"), str):
        out["dsn"] = redact(out["dsn"])
    return out


def raise_for_status(run: dict) -> None:
    """Raise the error a run that did not complete ends with (Interrupted for Ctrl-C)."""
    status = run.get("status")
    if status == "interrupted":
        raise Interrupted(run.get("error") or "interrupted")
    if status != "completed":
        raise OltplabError(f"run {status}: {run.get('error')}")


def check_record(dsn: str, after_run: bool, engine: str = "postgres",
                 workload: str | None = None) -> dict:
    """The consistency conditions as a record: ``{ok, after_run, conditions: [...]}``."""
    from .. import engines
    results = engines.get(engine).dialect_for(workload).run_checks(dsn, after_run=after_run)
    conds = [{"name": c.name, "clause": c.clause, "description": c.description, "ok": c.ok,
              "violations": c.violations, "sample": c.sample} for c in results]
    return {"ok": all(c["ok"] for c in conds), "after_run": after_run, "conditions": conds}


# --------------------------------------------------------------------------- a workload

def run_workload_recorded(spec: DbSpec, rspec: RunSpec, progress: WorkloadProgress | None = None,
                          labels: dict | None = None, stop: threading.Event | None = None,
                          metrics=None, loadgen=None) -> dict:
    """Run the user sequence of ``rspec.workload`` against the (managed) database and keep
    the record on disk (its kind is the workload's name).

    ``labels`` are extra top-level fields of the record (e.g. ``group``, ``plan``); ``stop``,
    when set, ends the run as Ctrl-C does (run_workload); ``metrics`` (a config.MetricsSpec, or
    a running telemetry.openmetrics.Endpoint) serves the run's live figures, bound before
    anything starts; ``loadgen`` (a config.LoadgenSpec) runs the users on the cluster's hosts
    (loadgen/remote.py): an unknown host, no cluster, a host not alive or a database the
    hosts cannot reach is refused before anything is recorded. Returns the record as saved,
    whatever the run's status."""
    from ..telemetry.openmetrics import endpoint
    with endpoint(metrics) as live, _fleets(loadgen) as fleets:
        here = cluster_here(loadgen.cluster_dir) if loadgen is not None else None
        return _run_workload(spec, rspec, progress, labels, stop, live, fleets, here)


def cluster_here(cluster_dir: Path) -> str | None:
    """This machine's name in the cluster of ``cluster_dir`` (cluster.hosts.here): the one
    its records and live figures carry in a run on that cluster."""
    from ..cluster import load_state
    from ..cluster.hosts import here
    return here(w.host for w in load_state(cluster_dir).workers)


def _host_samplers(fleets, rspec: RunSpec):
    """The load generating hosts' samplers (their CPU, devices, memory and power on this
    run's timeline), or None: no --loadgen, or no telemetry."""
    if fleets is None or not rspec.sample_interval:
        return None
    from ..cluster.sampling import HostSamplers
    return HostSamplers(fleets.client, fleets.names, rspec.sample_interval, rspec.power)


@contextmanager
def _fleets(loadgen):
    """The cluster's hosts of ``--loadgen`` (loadgen.remote.Fleets), or None."""
    if loadgen is None:
        yield None
        return
    from ..loadgen.remote import open_loadgen
    with open_loadgen(loadgen.hosts, loadgen.cluster_dir) as fleets:
        yield fleets


def connections_needed(rspec: RunSpec) -> int:
    """The server's connections a run needs: its users', its actors' (the most a step's
    users dealt over any number of workers up to the run's open: ``actor_connections``),
    and 21 for the monitor, the sampler and the checks."""
    import os
    from .. import workloads
    from ..loadgen.step import actor_connections
    users = max(rspec.users)
    wl = workloads.get(rspec.workload)
    actors = 0
    if wl.market is not None:
        workers = min(users, rspec.workers or os.cpu_count() or 1)
        actors = max(actor_connections(wl, users, w) for w in range(1, workers + 1))
    return users + actors + 21


def _run_workload(spec: DbSpec, rspec: RunSpec, progress: WorkloadProgress | None,
                  labels: dict | None, stop: threading.Event | None, live,
                  fleets=None, here: str | None = None) -> dict:
    from .. import engines
    from ..engines.base import restart_note
    from ..host.memory import RunMemory
    from ..loadgen.manager import effective_spec, run_workload
    from ..loadgen.sequence import summary
    from ..workloads.tpcc.schema import require_warehouses
    from .. import workloads

    progress = progress or WorkloadProgress()
    wl = workloads.get(rspec.workload)
    labels = dict(labels or {})
    restarted = labels.pop("restarted", None)  # by a plan's cell, before its runs
    engine = engines.get(spec.engine)
    engine.driver  # noqa: B018 - an engine without a driver fails here, before anything starts
    with engine.database(spec, need_connections=connections_needed(rspec)) as target:
        restarted = getattr(target.instance, "restarted", None) or restarted
        if fleets is not None:
            from ..loadgen.remote import hosts_dsn
            fleets = fleets.with_dsn(hosts_dsn(target, fleets.specs))
        info = engine.schema_info(target.dsn, wl.name)
        before_run = engine.dialect_for(wl.name).before_run(target.dsn, info)
        if rspec.warehouses is not None:
            require_warehouses(info, rspec.warehouses)
        # a run the schema cannot serve (the shop's --ds3 on a DS2 build) fails here, before
        # its folder is made; the record's config is what runs (DS3's steps on a DS3 build)
        rspec = effective_spec(rspec, wl.draw_constants(random.Random(rspec.seed), info, rspec))
        paths = {"datadir": spec.datadir} if target.instance else {}
        if target.instance and spec.waldir:
            paths["waldir"] = spec.waldir
        server = engine.server_record(target.dsn)
        datadir = server["settings"].get("data_directory") or server["settings"].get("datadir")
        if not paths and datadir:
            paths["datadir"] = Path(datadir)
        sampler = make_sampler(rspec.sample_interval, paths, rspec.power, target.dsn, engine.name,
                               rspec.io_latency)
        record = new_record(
            rspec.results_dir, wl.name, rspec.name, paths,
            engine=engine.name, workload=wl.name,
            config={"db": spec_dict(spec), "run": spec_dict(rspec),
                    **({"loadgen": fleets.record()} if fleets is not None else {})},
            database={"engine": ENGINE_RECORD_NAMES.get(engine.name, engine.name),
                      "version": server["server_version"],
                      "version_num": server["server_version_num"], "settings": server["settings"],
                      "managed": target.instance is not None, **wl.schema_record(info, True),
                      **({"restarted": restarted} if restarted else {})},
            schema=wl.schema_record(info),
            **({"before_run": before_run} if before_run else {}),
            **labels,
        )
        log_offset = _log_size(target)
        memory = RunMemory(target.instance.memory_group()
                           if hasattr(target.instance, "memory_group") else None,
                           rspec.cold, sampler.mark if sampler else None)
        progress.started(record.path)

        def on_step(step: dict) -> None:
            if live is not None:
                live.figures.step_done(len(record.data["steps"]), step)
            if restarted:
                step.setdefault("warnings", []).append(restart_note(spec.datadir, restarted))
            progress.step(step)
            memory.step(step)
            record.add_step(step)

        def after() -> None:
            if (host_memory := memory.record()) is not None:
                record.data["host_memory"] = host_memory
            _copy_log(target, record.path, log_offset)

        injector = _injector(rspec, target, memory.mark)
        with recording(record, sampler, progress, after=after, metrics=live,
                       unit=wl.unit_key, hosts=_host_samplers(fleets, rspec), here=here) as end:
            memory.begin()
            try:
                outcome = run_workload(target.dsn, rspec, on_tick=_ticks(progress, live),
                                       on_step=on_step,
                                       on_mark=injector.mark if injector else memory.mark,
                                       sampler_db=sampler.database if sampler else None,
                                       engine=engine.name, stop=stop,
                                       on_log=_driver_log(record.path) if wl.unit_row else None,
                                       fleets=fleets)
            finally:
                if injector is not None:  # a restart under way ends before anything else
                    injector.close()
            end.status, end.error = outcome.status, outcome.error
            record.data["constants"] = {**outcome.constants, **(
                {"c_last_load": info.c_last_load} if hasattr(info, "c_last_load") else {})}
            record.data["driver"] = {"workers": outcome.workers, "mode": rspec.mode}
            if rspec.users_auto is not None:
                record.data["users_auto"] = summary(outcome.steps, rspec.users_auto,
                                                    outcome.stopped_because,
                                                    unit_key=wl.unit_key)
            if injector is not None:
                _record_events(record, injector, outcome.steps)
            _sync_steps(record, outcome.steps)
            if rspec.check and end.status == "completed":
                record.data["check"] = check_record(target.dsn, after_run=True,
                                                    engine=engine.name, workload=wl.name)
                if not record.data["check"]["ok"]:
                    end.status, end.error = "check-failed", "consistency checks failed: " + \
                        ", ".join(c["name"] for c in record.data["check"]["conditions"]
                                  if not c["ok"])
    return {**record.data, "_path": str(record.path)}


def _ticks(progress: WorkloadProgress, live) -> Callable[[Any], None]:
    """The manager's ticks to the progress object and the metrics endpoint, if any."""
    if live is None:
        return progress.tick

    def tick(t) -> None:
        live.figures.tick(t)
        progress.tick(t)
    return tick


def _driver_log(run_dir: Path) -> Callable[[str], None]:
    """Appends a line to the run folder's driver.log (each line whole, flushed)."""
    path = Path(run_dir) / "driver.log"

    def write(line: str) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    return write


def _injector(rspec: RunSpec, target, on_mark):
    """The run's faults (--inject), or None."""
    if not rspec.inject:
        return None
    from ..faults.inject import Injector
    return Injector(rspec.inject, target, connections_needed(rspec), on_mark)


def _record_events(record, injector, steps: list[dict]) -> None:
    """run.json's ``events``, with the dips from the step's completions per second; a kill
    leaves the server-side TPM out (crash recovery reset the server's statistics)."""
    from ..faults.inject import crash_note
    per_s = steps[0].get("throughput", {}).get("per_s") if steps else None
    record.data["events"] = injector.events(per_s)
    failed = [f"--inject {e['event']}: {e['error']}" for e in record.data["events"]
              if e.get("error")]
    for step in steps if failed else ():
        step.setdefault("warnings", []).extend(failed)
    note = crash_note(record.data["events"])
    for step in steps if note else ():
        step["tpm"] = step["workload_tpm"] = None
        # the comparison with the server's TPM compares with counts a crash reset
        step["warnings"] = [w for w in step.get("warnings", []) if "server TPM" not in w]
        step["warnings"].append(note)


# --------------------------------------------------------------------------- any recorded run

def new_record(results_dir: Path, kind: str, name: str, paths: dict, **fields):
    """A new run folder whose record carries what every run records (oltplab's version, the
    command line, the host with the storage under each of ``paths``) beside ``fields``."""
    from ..results.store import RunRecord
    from ..host.facts import host_metadata
    given = {k: v for k, v in paths.items() if v is not None}
    stores = datastores_under(given)
    if stores:
        fields["datastores"] = stores
    return RunRecord.create(results_dir, kind, name, oltplab_version=__version__,
                            command=sys.argv, host=host_metadata(given), **fields)


def datastores_under(paths: dict) -> dict:
    """For each of ``paths`` on a datastore: what the datastore is made of and the space its
    files take now (``space_before``); ``space_after`` is added when the run ends."""
    from ..datastores.service import describe, holding
    out = {}
    for name, path in paths.items():
        try:
            doc = holding(Path(path))
            if doc is not None:
                out[name] = {"path": str(path), **describe(doc)}
                out[name]["space_before"] = out[name].pop("space")
        except Exception as e:  # a run is not refused over its metadata; say what was missed
            out[name] = {"path": str(path), "error": f"cannot describe the datastore: {e}"}
    return out


def _datastores_after(record) -> None:
    from ..datastores.service import holding
    from ..datastores.space import measure
    for entry in (record.data.get("datastores") or {}).values():
        try:
            doc = holding(Path(entry["path"]))
            entry["space_after"] = (measure(doc["fs"], Path(doc["mount"]), doc["empty_used_bytes"])
                                    if doc else None)
        except Exception as e:
            entry["space_after"] = None
            entry["error"] = f"cannot measure the space after the run: {e}"


class _Ending:
    """How a recorded run ends: failed unless the body says otherwise."""

    status: str = "failed"
    error: str | None = None


@contextmanager
def recording(record, sampler, progress=None, after: Callable[[], None] | None = None,
              metrics=None, unit: str | None = None, hosts=None, here: str | None = None):
    """Start the sampler, run the body, and close the record however the body ends: Ctrl-C
    is "interrupted", an OltplabError "failed" with its message (raised again when the sampler's
    start raised it, before the body); the body sets ``status`` (and ``error``) of the object
    it is given when it ends otherwise. The progress object's
    ``finished``, the timeline, ``after`` and the final record are written in every case.
    ``metrics``, a running telemetry.openmetrics.Endpoint, serves the run's figures (the
    sampler's, the headline ``unit``'s) meanwhile; the record names it (``metrics``).
    ``hosts`` (cluster.sampling.HostSamplers, not started) samples other hosts beside this
    one's sampler, and the timeline keeps theirs too. ``here``: this machine's name in the
    cluster the run uses (its hosts.toml name, cluster_here), in the record's ``host.name``
    and the live figures' ``host`` label; a run a host's part makes is named by its host."""
    end, started = _Ending(), False
    here = here or placed_on(record.data)
    if here is not None:
        record.data.setdefault("host", {})["name"] = here
    if metrics is not None:
        record.data["metrics"] = metrics.record()
        metrics.figures.begin(record.data["id"], unit, sampler, hosts, here)
    try:
        if sampler is not None:
            sampler.start()
            if hosts is not None:
                hosts.start()
        started = True
        yield end
    except KeyboardInterrupt:
        end.status, end.error = "interrupted", "interrupted by the user"
        if not started:  # before the body: the caller's with statement raises it
            raise
    except OltplabError as e:
        end.status, end.error = "failed", str(e)
        if not started:
            raise
    finally:
        if metrics is not None:
            metrics.figures.end()
        if progress is not None:
            progress.finished()
        save_timeline(sampler, record, hosts if sampler is not None else None)
        if after is not None:
            after()
        _datastores_after(record)
        record.finish(end.status, end.error)


def placed_on(data: dict) -> str | None:
    """The cluster's host a run's record was made on by a host's part (its labels: a plan's
    cell placed there, ``plan.host``; a neighbours run's share, ``share.host``), or None."""
    for label in ("plan", "share"):
        placed = data.get(label)
        if isinstance(placed, dict) and placed.get("host"):
            return str(placed["host"])
    return None


def _sync_steps(record, steps: list[dict]) -> None:
    """The outcome's steps are authoritative (a partial step is only known at the end)."""
    if steps and len(steps) >= len(record.data["steps"]):
        record.data["steps"] = list(steps)
    record.save()


def _log_size(target) -> int:
    try:
        return target.instance.log_path.stat().st_size if target.instance else 0
    except (OSError, AttributeError):
        return 0


def _copy_log(target, run_dir: Path, offset: int) -> None:
    """The server log written during the run, beside run.json."""
    from ..results.store import atomic_write
    if not target.instance:
        return
    try:
        with open(target.instance.log_path, "rb") as f:
            f.seek(offset)
            atomic_write(run_dir / "server.log", f.read())
    except OSError:
        pass


# --------------------------------------------------------------------------- fio

def run_fio_recorded(spec, sample_interval: float = 1.0, power: str = "auto",
                     progress: FioProgress | None = None, labels: dict | None = None,
                     io_latency: str = "auto", metrics=None) -> dict:
    """Check everything, then run the fio plan and keep the record (and fio's raw json+) on
    disk. ``spec`` is a ``storage.spec.FioSpec``; ``labels`` as for ``run_workload_recorded``;
    ``metrics``, a running telemetry.openmetrics.Endpoint, serves the sampler's figures."""
    from ..results.store import atomic_write
    from ..fio.steps import plan_jobs, run_plan
    from ..fio.process import find_fio
    from ..fio.target import prepared

    progress = progress or FioProgress()
    fio_bin = find_fio()
    with prepared(spec.target, spec.size) as target:
        jobs = plan_jobs(spec, target, fio_bin)
        sampler = make_sampler(sample_interval, {"target": spec.target}, power,
                               io_latency=io_latency)
        record = new_record(
            spec.results_dir, "fio", spec.name, {"target": spec.target},
            config={"fio": spec.as_dict()},
            target=target.as_dict(),
            fio={"path": fio_bin.path, "version": fio_bin.version},
            jobs=[j.name for j in jobs],
            **(labels or {}),
        )
        progress.started(record.path, [j.name for j in jobs])

        def on_precondition(rec: dict) -> None:
            progress.precondition(rec)
            record.data["precondition"] = rec
            record.save()

        def on_step(step: dict, raw_json: str) -> None:
            if sampler is not None:
                _mark_fio_step(sampler, step, spec)
            name = f"fio/{step['index'] + 1:02d}-{_safe(step['profile'])}.json"
            atomic_write(record.path / name, raw_json)
            step["raw_file"] = name
            progress.step(step)
            record.add_step(step)

        with recording(record, sampler, progress, metrics=metrics) as end:
            run_plan(spec, target, fio_bin, jobs, on_progress=progress.tick,
                     on_precondition=on_precondition, on_step=on_step)
            end.status = "completed"
    return {**record.data, "_path": str(record.path)}


def _safe(name: str) -> str:
    import re
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)[:64] or "step"


def _mark_fio_step(sampler, step: dict, spec) -> None:
    """The step's windows on the telemetry timeline, placed when fio has finished: its measured
    runtime ends now and fio's ramp precedes it (file layout, before the ramp, is left out)."""
    end = time.monotonic_ns()
    ramp_end = end - int((step.get("runtime_s") or 0) * 1e9)
    attrs = {"step": step["index"], "profile": step.get("profile")}
    sampler.mark("step_start", ramp_end - int(spec.ramp * 1e9), **attrs)
    sampler.mark("ramp_end", ramp_end, **attrs)
    sampler.mark("measure_end", end, **attrs)


# --------------------------------------------------------------------------- repeats

def new_group_id(label: str) -> str:
    """A group id unique enough to tell groups apart in one results folder."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{label}-{secrets.token_hex(3)}"


def run_group(repeat: int, label: str, run_one: Callable[[dict, Any], dict],
              labels: dict | None = None, metrics=None) -> list[dict]:
    """``repeat`` runs as one group: ``run_one(labels, endpoint)`` makes one recorded run and
    returns its record; each gets ``group: {id, index, of}`` beside ``labels``. A single run
    gets no group. Stops after the first run that did not complete (an interrupt or a failure
    ends the group; the records made so far are kept and returned). ``metrics`` (a
    config.MetricsSpec) opens one live metrics endpoint for the whole group, handed to each
    run (None without it)."""
    from ..telemetry.openmetrics import endpoint
    if repeat < 1:
        from ..errors import UsageError
        raise UsageError(f"--repeat must be at least 1 (got {repeat})")
    base = dict(labels or {})
    with endpoint(metrics) as live:
        if repeat == 1:
            return [run_one(base, live)]
        gid = new_group_id(label)
        runs: list[dict] = []
        for i in range(repeat):
            run = run_one({**base, "group": {"id": gid, "index": i + 1, "of": repeat}}, live)
            runs.append(run)
            if run.get("status") != "completed":
                break
        return runs
