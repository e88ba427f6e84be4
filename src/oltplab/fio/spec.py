"""The options of ``oltplab fio run``, described once in one table that drives parsing, help and
validation (fio's own habit), and the frozen ``FioSpec`` built from them at the edge.

The rows are options.py's; unlike the other commands' they are parsed here, after click
(``spec_from_options``), with ``default`` the effective default that help shows, so that rows
with ``explicit`` keep None when not given and a job file's own setting can win. A plan's fio
step takes the rows with ``toml`` and gives their values to the same parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..config import format_size, parse_duration, parse_size
from ..errors import UsageError
from ..options import NUM, Option
from .profiles import DEFAULT_PROFILE, PROFILES, Profile, resolve

STEADY_CRITERION = "iops:10%"
MAX_STEADY_WINDOW = 60.0
MIN_STEADY_WINDOW = 2.0  # fio samples once a second: one sample is always "steady"


def _count(lo: int, hi: int) -> Callable[[Any, str], int]:
    def parse(text: Any, flag: str) -> int:
        s = str(text).strip()
        if not re.fullmatch(r"\d+", s) or not lo <= int(s) <= hi:
            raise UsageError(f"{flag}: {text!r} is not a whole number from {lo} to {hi}")
        return int(s)
    return parse


def _size(text: Any, flag: str) -> int:
    return parse_size(text, flag)


def _duration(text: Any, flag: str) -> float:
    return parse_duration(text, flag)


def _positive_duration(text: Any, flag: str) -> float:
    return parse_duration(text, flag, allow_zero=False)


def _path(text: Any, flag: str) -> Path:
    if not str(text).strip():
        raise UsageError(f"{flag}: give a path")
    return Path(text)


def _label(text: Any, flag: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", str(text)):
        raise UsageError(f"{flag}: {text!r} may hold letters, digits, '.', '_' and '-' only")
    return str(text)


def _engine(text: Any, flag: str) -> str:
    if not re.fullmatch(r"[a-z0-9_]{1,32}", str(text)):
        raise UsageError(f"{flag}: {text!r} is not an fio ioengine name (e.g. libaio, io_uring)")
    return str(text)


def _criterion(text: Any, flag: str) -> str:
    """fio's ``steadystate`` value: iops|bw|iops_slope|bw_slope, a colon, a limit (% optional)."""
    s = str(text).strip()
    if not re.fullmatch(r"(iops|bw)(_slope)?:\d+(\.\d+)?%?", s):
        raise UsageError(f"{flag}: {text!r} is not a steady-state criterion "
                         "(examples: iops:10%, iops_slope:0.5%, bw:5%)")
    return s


OPTIONS: tuple[Option, ...] = (
    Option("target", "fio", "Directory (test files are made in a private folder and removed) "
           "or block device (its data is overwritten) under test.", ("--target",),
           metavar="DIR|BLOCKDEVICE", parse=_path),
    Option("profiles", "fio", "A named profile or group (see 'oltplab fio profiles'), or the "
           "path of an fio job file; repeat for several, run in order.", ("--profile",),
           metavar="NAME|JOBFILE", default=(DEFAULT_PROFILE,), multiple=True),
    Option("size", "fio", "Working set, split evenly over the jobs.", ("--size",),
           metavar="SIZE", parse=_size, default="4GiB", toml=NUM),
    Option("duration", "fio", "Measured time per profile.", ("--duration",), metavar="TIME",
           parse=_positive_duration, default="60s", toml=NUM),
    Option("ramp", "fio", "Time per profile before measuring starts (fio ramp_time).",
           ("--ramp",), metavar="TIME", parse=_duration, default="10s", toml=NUM),
    Option("jobs", "fio", "fio jobs (numjobs) per profile; for job files a default, only when "
           "given.", ("--jobs",), metavar="N", parse=_count(1, 1024), default=4, explicit=True,
           toml=NUM),
    Option("iodepth", "fio", "Outstanding IOs per job; for job files a default, only when "
           "given.", ("--iodepth",), metavar="N", parse=_count(1, 65536), default=8,
           explicit=True, toml=NUM),
    Option("ioengine", "fio", "fio ioengine; for job files a default, only when given.",
           ("--ioengine",), metavar="ENGINE", parse=_engine, default="libaio", explicit=True,
           toml=NUM),
    Option("precondition", "fio", "Fill the working set with one sequential write pass before "
           "the first profile.", ("--precondition",), default=False, is_flag=True,
           toml=(bool,)),
    Option("steady_state", "fio", "Let fio stop a profile once steady (fio steadystate; bare "
           f"flag: {STEADY_CRITERION}) and record whether it was.", ("--steady-state",),
           metavar="[CRITERION]", parse=_criterion, flag_value=STEADY_CRITERION, toml=NUM),
    Option("steady_window", "fio", "Window of the steady-state test [default: half of "
           f"--duration, at most {MAX_STEADY_WINDOW:.0f}s].", ("--steady-window",),
           metavar="TIME", parse=_positive_duration, toml=NUM),
    Option("name", "fio", "Label of the run.", ("--name",), metavar="LABEL", parse=_label,
           default="fio"),
    Option("results_dir", "fio", "Where runs are saved.", ("--results-dir",), metavar="DIR",
           parse=_path, default="results"),
)


@dataclass(frozen=True)
class JobFile:
    """A user's fio job file, run as one step named after the file."""

    path: Path

    @property
    def name(self) -> str:
        return self.path.stem


@dataclass(frozen=True)
class FioSpec:
    """Everything ``oltplab fio run`` needs, validated. Sizes in bytes, times in seconds.

    ``jobs``, ``iodepth`` and ``ioengine`` are None when not given: built-in profiles then use the
    table's defaults, and job files keep their own settings (or fio's).
    """

    target: Path
    steps: tuple[Profile | JobFile, ...]
    size: int = 4 * 1024**3
    duration: float = 60.0
    ramp: float = 10.0
    jobs: int | None = None
    iodepth: int | None = None
    ioengine: str | None = None
    precondition: bool = False
    steady_state: str | None = None
    steady_window: float | None = None
    name: str = "fio"
    results_dir: Path = Path("results")

    def __post_init__(self):
        if not self.steps:
            raise UsageError("--profile: give at least one profile or job file")
        if self.steady_window is not None and self.steady_state is None:
            raise UsageError("--steady-window applies only with --steady-state")
        if self.steady_state is not None:
            window = self.window_s
            if window < MIN_STEADY_WINDOW or window > self.duration:
                raise UsageError(f"--steady-window: {window:g} s must lie between "
                                 f"{MIN_STEADY_WINDOW:g} s and --duration ({self.duration:g} s)"
                                 + ("" if self.steady_window else "; it defaults to half of "
                                    "--duration"))
        layout_jobs = self.jobs_for_profiles
        if any(isinstance(s, Profile) for s in self.steps) and self.size // layout_jobs < 1024**2:
            raise UsageError(f"--size {format_size(self.size)} is too small for {layout_jobs} "
                             "jobs (at least 1MiB per job)")

    @property
    def jobs_for_profiles(self) -> int:
        return self.jobs or option("jobs").default

    @property
    def iodepth_for_profiles(self) -> int:
        return self.iodepth or option("iodepth").default

    @property
    def ioengine_for_profiles(self) -> str:
        return self.ioengine or option("ioengine").default

    @property
    def window_s(self) -> float:
        """The steady-state window: given, or half of the duration (whole seconds, at most 60)."""
        if self.steady_window is not None:
            return self.steady_window
        return float(min(int(MAX_STEADY_WINDOW), int(self.duration // 2)))

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": str(self.target),
            "steps": [s.name if isinstance(s, Profile) else str(s.path) for s in self.steps],
            "size": self.size, "duration": self.duration, "ramp": self.ramp,
            "jobs": self.jobs, "iodepth": self.iodepth, "ioengine": self.ioengine,
            "jobs_for_profiles": self.jobs_for_profiles,
            "iodepth_for_profiles": self.iodepth_for_profiles,
            "ioengine_for_profiles": self.ioengine_for_profiles,
            "precondition": self.precondition, "steady_state": self.steady_state,
            "steady_window": self.window_s if self.steady_state else None,
            "name": self.name, "results_dir": str(self.results_dir),
        }


def option(name: str) -> Option:
    for o in OPTIONS:
        if o.name == name:
            return o
    raise KeyError(name)


def is_job_file(text: str) -> bool:
    """A --profile value names a job file when it is a path (has a '/' or ends in .fio)."""
    return "/" in text or text.endswith(".fio") or (text not in PROFILES and Path(text).is_file())


def _steps(values: tuple[str, ...]) -> tuple[Profile | JobFile, ...]:
    steps: list[Profile | JobFile] = []
    for v in values:
        if is_job_file(v):
            path = Path(v)
            if not path.is_file():
                raise UsageError(f"--profile: job file {v} does not exist")
            steps.append(JobFile(path))
        else:
            steps.extend(resolve([v]))
    return tuple(steps)


def spec_from_options(raw: dict[str, Any]) -> FioSpec:
    """Parse the raw option values (strings, as the command line gives them) into a FioSpec."""
    values: dict[str, Any] = {}
    for o in OPTIONS:
        given = raw.get(o.name)
        if o.multiple:
            given = tuple(given or ()) or None
        if given is None and o.explicit:
            values[o.name] = None
            continue
        if given is None:
            given = o.default
        if given is None or o.parse is None or o.is_flag:
            values[o.name] = bool(given) if o.is_flag else given
        else:
            values[o.name] = o.parse(given, o.flag)
    if values["target"] is None:
        raise UsageError("--target: give the directory or block device to test")
    profiles = values.pop("profiles")
    return FioSpec(steps=_steps(tuple(profiles)), **values)
