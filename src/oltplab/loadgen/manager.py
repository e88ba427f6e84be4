"""The manager of a workload's run (``tpcc run``, ``dvds run``): the user sequence, one step
after another (step.py).

For each user count of the sequence (HammerDB's autopilot) a new ``Step`` starts its worker
processes, measures, and hands its record to ``on_step``; the next step starts with new
processes. With ``--users auto[:MAX]`` the sequence doubles (1, 2, 4 ...) and the manager
decides after each step, from its measured TPM, whether to run the next one (sequence.py).

The engine's monitor (engines/<name>/monitor.py) checks the database before the run and
snapshots the server's counters at each step's boundaries. A step that fails fails the run; Ctrl-C
(KeyboardInterrupt, which the CLI also raises for SIGTERM) stops the workers, keeps the
completed steps, and adds the current step marked partial when its measurement had started.
Workers never outlive the manager.
"""

from __future__ import annotations

import dataclasses
import random
import threading
from dataclasses import dataclass, field

from .. import engines
from ..config import RunSpec
from .. import workloads
from . import sequence
from .step import Step, StepFailed, Tick, default_workers, is_local  # noqa: F401 (re-exported)


@dataclass(frozen=True)
class RunOutcome:
    status: str  # 'completed' | 'interrupted' | 'failed'
    error: str | None
    constants: dict
    steps: list = field(default_factory=list)
    workers: int = 0
    stopped_because: str | None = None  # --users auto: why the search ended (sequence.py)


def effective_spec(spec: RunSpec, constants) -> RunSpec:
    """``spec`` with the workload parameters its run's ``constants`` run (the shop's: DS3's
    steps on a DS3 build): what the monitor checks for, the steps run and the record says."""
    params = getattr(constants, "params", None)
    if params is None or params == spec.params:
        return spec
    return dataclasses.replace(spec, params=params)


def run_workload(dsn: str, spec: RunSpec, on_tick=None, on_step=None, on_mark=None,
                 sampler_db=None, engine: str = engines.DEFAULT,
                 stop: threading.Event | None = None, on_log=None, fleets=None) -> RunOutcome:
    """Run the steps of ``spec.users`` against the loaded database at ``dsn``: every one, or
    with ``spec.users_auto`` those the search decides after each step (sequence.py).

    ``engine`` names the engine (engines.get): its monitor, schema and driver serve the run.
    ``sampler_db`` is the telemetry sampler's database source (the engine's telemetry.py):
    its samples that count in the workload database's row are subtracted from
    ``workload_tpm``, and the snapshots take its lock.

    ``on_mark(name, t_ns, **attrs)`` hears the step boundaries on the monotonic clock, for a
    telemetry timeline: ``step_start`` (workers spawned), ``ramp_end`` and ``measure_end``
    (announced in advance, with their future instants) and ``step_end`` (after ``on_step``,
    with ``last`` true when no step follows).

    ``on_log(line)`` hears the driver's log lines (a workload with a unit row: the shop's
    orders every 10 s of the window, loadgen/step.py).

    ``stop``, when set, ends the run as Ctrl-C does (the step under way stops its workers and
    is kept partial once it measures), for runs in a thread, which Ctrl-C does not reach.

    ``fleets`` (remote.Fleets, ``--loadgen``) runs each step's worker processes on the
    cluster's hosts instead of here; a step that fails there keeps, partial, what the hosts
    measured until then.
    """
    eng = engines.get(engine)
    info = eng.schema_info(dsn, spec.workload)
    rng = random.Random(spec.seed)
    constants = workloads.get(spec.workload).draw_constants(rng, info, spec)
    spec = effective_spec(spec, constants)
    eng.driver  # noqa: B018 - an engine without a driver fails here, before anything starts
    monitor = eng.monitor(dsn, sampler_db, patient=bool(spec.inject), workload=spec.workload)
    steps: list[dict] = []
    status, error, most_workers, stopped = "completed", None, 0, None
    try:
        monitor.precheck(spec)
        index, users = 0, spec.users[0]
        while users is not None:
            step = Step(index, dsn, spec, users, getattr(info, "warehouses", 0), constants,
                        rng.getrandbits(63), monitor, on_tick, on_mark, engine=eng.name,
                        stop=stop, on_log=on_log, fleets=fleets)
            most_workers = max(most_workers, step.nworkers)
            try:
                record = step.run()
            except StepFailed as e:
                status, error = "failed", str(e)
                partial = step.failed()
                if partial is not None:
                    steps.append(partial)
                break
            except KeyboardInterrupt:
                status, error = "interrupted", "interrupted by the user"
                partial = step.interrupted()
                if partial is not None:
                    steps.append(partial)
                break
            finally:
                step.cleanup()
            steps.append(record)
            if on_step is not None:
                on_step(record)
            users, stopped = sequence.next_users(spec.users, spec.users_auto, steps)
            if on_mark is not None:
                on_mark("step_end", None, step=index, users=record["users"], last=users is None)
            index += 1
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
    finally:
        monitor.close()
    if spec.users_auto is not None and status != "completed":
        stopped = status
    return RunOutcome(status, error, constants.as_dict(), steps, most_workers, stopped)
