"""A user's fio job file, read as data before fio sees it.

oltplab owns where the IO goes (``--target``), direct IO and the outputs, so a job file may not
set those. Sections and ``key=value`` lines are read as fio reads them; fio itself then checks
the option names (``fio --parse-only``, in the runner).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from .profiles import parse_fio_size

# Options oltplab sets itself; a job file that sets them would take IO or outputs elsewhere.
RESERVED = {
    "filename": "the target is given by --target",
    "directory": "the target is given by --target",
    "filename_format": "the target is given by --target",
    "opendir": "the target is given by --target",
    "output": "oltplab reads fio's output",
    "output-format": "oltplab reads fio's output",
    "write_iops_log": "oltplab keeps the per-second IOPS log",
    "log_avg_msec": "oltplab keeps the per-second IOPS log",
    "per_job_logs": "oltplab keeps the per-second IOPS log",
}


@dataclass(frozen=True)
class JobFileInfo:
    """The sections of a job file: ``global`` options and each job's own, in file order."""

    path: Path
    global_options: dict[str, str] = field(default_factory=dict)
    jobs: tuple[tuple[str, dict[str, str]], ...] = ()

    def layout(self, default_numjobs: int = 1) -> list[tuple[int, int | None]]:
        """Per section: its number of jobs (numjobs) and per-job size in bytes (None when the
        file does not give a plain size)."""
        out = []
        for _, opts in self.jobs:
            numjobs = _int(opts.get("numjobs", self.global_options.get("numjobs")),
                           default_numjobs)
            size = opts.get("size", self.global_options.get("size"))
            out.append((numjobs, None if size is None else parse_fio_size(size)))
        return out

    def clones(self, default_numjobs: int = 1) -> int:
        """How many fio jobs the file starts (numjobs summed over its sections)."""
        return sum(n for n, _ in self.layout(default_numjobs))


def _int(value: str | None, default: int) -> int:
    if value is None:
        return default
    value = value.strip()
    if value == "$ncpus":
        return os.cpu_count() or 1
    return int(value) if value.isdigit() and int(value) > 0 else default


def read_job_file(path: Path) -> JobFileInfo:
    """Sections and options of ``path``; reserved options and includes are usage errors."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--profile: cannot read job file {path}: "
                         f"{getattr(e, 'strerror', None) or e}") from None
    sections: list[tuple[str, dict[str, str]]] = []
    current: dict[str, str] | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        where = f"job file {path} line {n}"
        m = re.fullmatch(r"\[([^\]]+)\]", line)
        if m:
            current = {}
            sections.append((m.group(1).strip(), current))
            continue
        if line.startswith("include "):
            raise UsageError(f"--profile: {where}: include is not supported; put the options "
                             "in one file")
        if current is None:
            raise UsageError(f"--profile: {where}: option outside a [section]")
        key, _, value = line.partition("=")
        key = key.strip()
        value = value.strip()
        if key in RESERVED:
            raise UsageError(f"--profile: {where}: {key} is not allowed ({RESERVED[key]})")
        if (key == "direct" and value == "0") or (key == "buffered" and value in ("", "1")):
            raise UsageError(f"--profile: {where}: {key}={value or '1'} is not allowed "
                             "(oltplab measures with direct IO)")
        current[key] = value
    glob = {}
    jobs = []
    for name, opts in sections:
        if name == "global":
            glob.update(opts)
        else:
            jobs.append((name, opts))
    if not jobs:
        raise UsageError(f"--profile: job file {path} defines no job (only [global] or nothing)")
    return JobFileInfo(path=Path(path), global_options=glob, jobs=tuple(jobs))
