"""fio arguments for one step, built from the validated ``FioSpec``: argv is data, nothing is
written as a job file.

Placement: a directory target gets one file per job in oltplab's private folder, each
``size / jobs`` bytes (rounded down to whole MiB), named ``oltplab.<job>.0`` so that every built-in
profile, and the precondition pass, work on the same files. A block device is split into
``jobs`` consecutive regions of the same size (``offset_increment``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import format_size
from ..errors import UsageError
from .jobfile import JobFileInfo
from .profiles import Profile
from .spec import FioSpec
from .target import Target

JOB_NAME = "oltplab"
MIB = 1024**2
PRECONDITION_BS = "1m"
PRECONDITION_IODEPTH = 16


@dataclass(frozen=True)
class FioJob:
    """One fio invocation: a step's name and kind, its arguments, and what it asked for."""

    name: str
    kind: str  # "profile", "job-file" or "precondition"
    args: tuple[str, ...]
    size_bytes: int | None  # the working set it touches, when known
    profile: Profile | None = None
    job_file: Path | None = None
    jobs: int | None = None
    iodepth: int | None = None


def fio_time(seconds: float) -> str:
    """A time as fio takes it; milliseconds keep fractions of a second."""
    ms = int(round(seconds * 1000))
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def per_job_bytes(size: int, jobs: int) -> int:
    per = (size // jobs) // MIB * MIB
    if per < MIB:
        raise UsageError(f"--size {format_size(size)} is too small for {jobs} jobs "
                         "(at least 1MiB per job)")
    return per


def _placement(target: Target, per_job: int | None) -> list[str]:
    if target.kind == "directory":
        return [f"--directory={target.workdir}"]
    args = [f"--filename={target.device}"]
    if per_job is not None:
        args.append(f"--offset_increment={per_job}")
    return args


def _timing(spec: FioSpec) -> list[str]:
    args = ["--time_based", f"--runtime={fio_time(spec.duration)}",
            f"--ramp_time={fio_time(spec.ramp)}"]
    if spec.steady_state:
        args += [f"--steadystate={spec.steady_state}",
                 f"--steadystate_duration={fio_time(spec.window_s)}"]
    return args


def profile_job(spec: FioSpec, target: Target, profile: Profile) -> FioJob:
    """A built-in profile at the run's jobs, iodepth and working set."""
    jobs, depth = spec.jobs_for_profiles, spec.iodepth_for_profiles
    per_job = per_job_bytes(spec.size, jobs)
    args = [f"--name={JOB_NAME}", *_placement(target, per_job), f"--rw={profile.rw}",
            f"--bs={profile.bs}"]
    if profile.rw in ("randrw", "rw", "readwrite"):
        args.append(f"--rwmixread={profile.rwmixread}")
    args += [f"--ioengine={spec.ioengine_for_profiles}", "--direct=1", f"--iodepth={depth}",
             f"--numjobs={jobs}", f"--size={per_job}", *_timing(spec)]
    return FioJob(name=profile.name, kind="profile", args=tuple(args),
                  size_bytes=per_job * jobs, profile=profile, jobs=jobs, iodepth=depth)


def precondition_job(spec: FioSpec, target: Target) -> FioJob:
    """One sequential write pass over the built-in profiles' working set."""
    jobs = spec.jobs_for_profiles
    per_job = per_job_bytes(spec.size, jobs)
    args = [f"--name={JOB_NAME}", *_placement(target, per_job), "--rw=write",
            f"--bs={PRECONDITION_BS}", f"--ioengine={spec.ioengine_for_profiles}", "--direct=1",
            f"--iodepth={PRECONDITION_IODEPTH}", f"--numjobs={jobs}", f"--size={per_job}"]
    return FioJob(name="precondition", kind="precondition", args=tuple(args),
                  size_bytes=per_job * jobs, jobs=jobs, iodepth=PRECONDITION_IODEPTH)


def job_file_job(spec: FioSpec, target: Target, info: JobFileInfo) -> FioJob:
    """A user's job file; oltplab's options come first, as globals the file may override.

    Jobs, iodepth and ioengine are passed only when given on the command line; the working set
    is split over the file's jobs unless the file sets ``size`` itself.
    """
    clones = info.clones(spec.jobs or 1)
    per_job = per_job_bytes(spec.size, clones)
    args = [*_placement(target, None), "--direct=1", f"--size={per_job}"]
    if spec.ioengine:
        args.append(f"--ioengine={spec.ioengine}")
    if spec.iodepth:
        args.append(f"--iodepth={spec.iodepth}")
    if spec.jobs:
        args.append(f"--numjobs={spec.jobs}")
    args += [*_timing(spec), str(info.path)]
    touched = sum(n * (per_job if size is None else size)
                  for n, size in info.layout(spec.jobs or 1))
    return FioJob(name=info.path.stem, kind="job-file", args=tuple(args), size_bytes=touched,
                  job_file=info.path, jobs=clones, iodepth=spec.iodepth)
