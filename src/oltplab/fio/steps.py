"""A plan of steps: every step's fio invocation built and checked first, then the optional
precondition pass and each step in order, each summarised into the step dict kept in run.json.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import UsageError
from .jobfile import read_job_file
from .jobs import JOB_NAME, FioJob, job_file_job, precondition_job, profile_job
from .parse import summarize
from .profiles import Profile
from .process import Fio, FioInterrupted, FioOutput, check_job_file, run_fio
from .spec import FioSpec
from .target import Target


@dataclass(frozen=True)
class Progress:
    """One eta line of fio: percent done, current IOPS, seconds left (None when not shown)."""

    step: int  # index of the step in the plan (0-based); -1 for the precondition pass
    name: str
    elapsed_s: float
    percent: float | None = None
    read_iops: float | None = None
    write_iops: float | None = None
    eta_s: int | None = None


def plan_jobs(spec: FioSpec, target: Target, fio: Fio) -> list[FioJob]:
    """Every step's fio invocation, built and checked before anything runs."""
    if spec.precondition and target.kind == "directory" \
            and not any(isinstance(s, Profile) for s in spec.steps):
        raise UsageError("--precondition fills the built-in profiles' files; a job file lays out "
                         "its own files in a directory (fio writes them in full)")
    jobs = []
    for step in spec.steps:
        if isinstance(step, Profile):
            jobs.append(profile_job(spec, target, step))
        else:
            check_job_file(fio, step.path)
            jobs.append(job_file_job(spec, target, read_job_file(step.path)))
    for job in jobs:
        if job.kind == "job-file" and job.size_bytes and target.capacity_bytes \
                and job.size_bytes > target.capacity_bytes:
            raise UsageError(f"job file {job.job_file} needs {job.size_bytes:,} bytes; "
                             f"{target.path} has {target.capacity_bytes:,}")
    return jobs


def _measured(out: FioOutput) -> bool:
    return any(int((j.get(d) or {}).get("total_ios") or 0) > 0
               for j in out.doc.get("jobs", []) for d in ("read", "write"))


def step_record(job: FioJob, out: FioOutput, index: int, partial: bool = False) -> dict[str, Any]:
    """The step dict kept in run.json.

    Keys: index, profile, kind (profile | job-file), job_file, bs (bytes), rw, rwmixread (% reads),
    iodepth, jobs, size_bytes, runtime_s, read and write ({ios, bytes, iops, mbps, lat_ms: {min,
    mean, p50, p95, p99, p99_9, max}}), total_iops, total_mbps, series ({t_s, read_iops,
    write_iops}), steady_state (None or {criterion, window_s, attained, jobs_attained, jobs,
    per_job}), errors, fio_version, options ({global, jobs}), fio_args, wall_s, partial (True
    when the user stopped fio during the step).
    """
    m = summarize(out.doc, out.iops_logs)
    p = job.profile
    return {
        "index": index,
        "profile": job.name,
        "kind": job.kind,
        "job_file": str(job.job_file) if job.job_file else None,
        "bs": p.bs_bytes if p else m["bs"],
        "rw": p.rw if p else m["rw"],
        "rwmixread": p.rwmixread if p else m["rwmixread"],
        "iodepth": job.iodepth or m["iodepth"],
        "jobs": job.jobs or m["jobs"],
        "size_bytes": job.size_bytes,
        "runtime_s": m["runtime_s"],
        "read": m["read"],
        "write": m["write"],
        "total_iops": m["total_iops"],
        "total_mbps": m["total_mbps"],
        "series": m["series"],
        "steady_state": m["steady_state"],
        "errors": m["errors"],
        "fio_version": m["fio_version"],
        "options": m["options"],
        "fio_args": out.argv[1:],
        "wall_s": out.seconds,
        "partial": partial,
    }


def precondition_record(out: FioOutput) -> dict[str, Any]:
    m = summarize(out.doc, [])
    return {"bytes": m["write"]["bytes"], "seconds": out.seconds, "mbps": m["write"]["mbps"],
            "fio_args": out.argv[1:]}


def run_plan(spec: FioSpec, target: Target, fio: Fio, jobs: list[FioJob],
             on_progress: Callable[[Progress], None] | None = None,
             on_precondition: Callable[[dict[str, Any]], None] | None = None,
             on_step: Callable[[dict[str, Any], str], None] | None = None) -> None:
    """Precondition (when asked), then each step in order; ``on_step(step, raw_json)`` after each.

    fio's scratch outputs live in a temporary folder removed on the way out; built-in profiles'
    files stay in the target's private folder for the next profile, job files' files do not.
    """
    scratch_root = Path(tempfile.mkdtemp(prefix="oltplab-fio-out-"))
    try:
        if spec.precondition:
            job = precondition_job(spec, target)
            out = _run_one(fio, job, scratch_root, -1, on_progress)
            if on_precondition:
                on_precondition(precondition_record(out))
        for i, job in enumerate(jobs):
            try:
                out = _run_one(fio, job, scratch_root, i, on_progress)
            except FioInterrupted as e:
                if on_step and e.output is not None and _measured(e.output):
                    on_step(step_record(job, e.output, i, partial=True), e.output.raw)
                raise
            if job.kind == "job-file":
                _remove_job_file_files(target)
            if on_step:
                on_step(step_record(job, out, i), out.raw)
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)


def _run_one(fio: Fio, job: FioJob, scratch_root: Path, index: int,
             on_progress: Callable[[Progress], None] | None) -> FioOutput:
    t0 = time.monotonic()

    def on_line(eta: dict[str, Any]) -> None:
        if on_progress:
            on_progress(Progress(step=index, name=job.name, elapsed_s=time.monotonic() - t0,
                                 **eta))

    return run_fio(fio, job, scratch_root / "step", on_line)


def _remove_job_file_files(target: Target) -> None:
    """A job file's own files go once it has run; the built-in profiles' files stay."""
    if target.kind != "directory" or target.workdir is None:
        return
    for p in target.workdir.iterdir():
        if not p.name.startswith(JOB_NAME + "."):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
