"""Running fio: find it, check a job file, run one invocation with live progress.

fio runs in its own session, so a Ctrl-C reaches oltplab only; oltplab then stops fio (SIGTERM,
then SIGKILL), keeps what fio reported on its way out as a partial step, and lets the interrupt
go on. fio also dies with oltplab (PR_SET_PDEATHSIG), and its jobs run as threads (``--thread``)
so that none outlives it. Live progress comes from fio's eta lines (``--eta=always``).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import OltplabError, UsageError
from .jobs import FioJob
from .parse import load_output

STOP_GRACE_S = 5.0
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Fio:
    """The fio binary and its version string (e.g. ``fio-3.33``)."""

    path: str
    version: str


def find_fio() -> Fio:
    """fio on PATH, with its version; missing fio is one clear error."""
    path = shutil.which("fio")
    if not path:
        raise OltplabError("fio is not installed (Debian: apt-get install fio; or 'make install')")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise OltplabError(f"cannot run {path}: {e}") from None
    version = out.stdout.strip() or out.stderr.strip()
    if out.returncode != 0 or not version.startswith("fio-"):
        raise OltplabError(f"{path} does not answer as fio ({version or 'no version'})")
    return Fio(path=path, version=version)


def check_job_file(fio: Fio, path: Path) -> None:
    """fio's own check of a job file's option names and values (``--parse-only``)."""
    p = subprocess.run([fio.path, "--parse-only", str(path)], capture_output=True, text=True,
                       timeout=30)
    if p.returncode != 0:
        lines = [ln.strip() for ln in (p.stderr + "\n" + p.stdout).splitlines() if ln.strip()]
        raise UsageError(f"--profile: job file {path}: {lines[0] if lines else 'fio refuses it'}")


_ETA_PCT = re.compile(r"\]\[(\d+(?:\.\d+)?)%\]")
_ETA_IOPS = re.compile(r"\[([^\[\]]*) IOPS\]")
_ETA_LEFT = re.compile(r"\[eta (?:(\d+)d:)?(?:(\d+)h:)?(\d+)m:(\d+)s\]")
_SCALE = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}


def parse_eta(line: str) -> dict[str, Any]:
    """Percent, read/write IOPS and seconds left from a line such as
    ``Jobs: 4 (f=4): [m(4)][57.1%][r=166MiB/s,w=70.6MiB/s][r=42.4k,w=18.1k IOPS][eta 00m:03s]``.
    """
    out: dict[str, Any] = {"percent": None, "read_iops": None, "write_iops": None, "eta_s": None}
    if m := _ETA_PCT.search(line):
        out["percent"] = float(m.group(1))
    if m := _ETA_IOPS.search(line):
        for part in m.group(1).split(","):
            k, _, v = part.strip().partition("=")
            vm = re.fullmatch(r"(\d+(?:\.\d+)?)([kMG]?)", v.strip())
            if vm and k in ("r", "w"):
                value = float(vm.group(1)) * _SCALE[vm.group(2)]
                out["read_iops" if k == "r" else "write_iops"] = value
    if m := _ETA_LEFT.search(line):
        d, h, mi, s = (int(x) if x else 0 for x in m.groups())
        out["eta_s"] = ((d * 24 + h) * 60 + mi) * 60 + s
    return out


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except Exception:
        pass


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM, a grace period, then SIGKILL; always reaps fio."""
    if proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except ProcessLookupError:
        pass


@dataclass(frozen=True)
class FioOutput:
    doc: dict[str, Any]
    raw: str
    iops_logs: list[str]
    argv: list[str]
    seconds: float  # wall time of the fio process


class FioInterrupted(KeyboardInterrupt):
    """The user interrupted fio; ``output`` holds what fio reported when stopped, if anything."""

    def __init__(self, output: FioOutput | None):
        super().__init__("interrupted")
        self.output = output


def run_fio(fio: Fio, job: FioJob, scratch: Path,
            on_line: Callable[[dict[str, Any]], None] | None = None) -> FioOutput:
    """Run one fio invocation; outputs go to ``scratch`` (emptied first).

    Raises OltplabError with fio's first error line when it fails.
    """
    for p in scratch.iterdir() if scratch.exists() else ():
        if p.is_file():
            p.unlink()
    scratch.mkdir(parents=True, exist_ok=True)
    out_file, err_file = scratch / "out.json", scratch / "stderr.txt"
    argv = [fio.path, "--output-format=json+", f"--output={out_file}", "--eta=always",
            "--eta-newline=1", "--thread", *job.args]
    if job.kind != "precondition":
        argv[4:4] = [f"--write_iops_log={scratch / 'iops'}", "--log_avg_msec=1000"]
    t0 = time.monotonic()
    with open(err_file, "wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=err, start_new_session=True, preexec_fn=_die_with_parent)
    try:
        _follow(proc, on_line)
        rc = proc.wait()
    except KeyboardInterrupt:
        _stop(proc)
        raise FioInterrupted(_collect(scratch, argv, t0)) from None
    except BaseException:
        _stop(proc)
        raise
    raw = out_file.read_text(errors="replace") if out_file.exists() else ""
    if rc != 0:
        raise OltplabError(f"fio failed in {job.name}: {_first_error(err_file, raw, rc)}")
    out = _collect(scratch, argv, t0)
    if out is None:
        load_output(raw)  # raises the reason when the JSON is at fault
        raise OltplabError(f"cannot read fio's output in {scratch}")
    return out


def _collect(scratch: Path, argv: list[str], t0: float) -> FioOutput | None:
    """fio's JSON result and IOPS logs in ``scratch``, or None when there is no readable result."""
    seconds = time.monotonic() - t0
    out_file = scratch / "out.json"
    try:
        raw = out_file.read_text(errors="replace")
        doc = load_output(raw)
        logs = [p.read_text(errors="replace") for p in sorted(scratch.glob("iops_iops.*.log"))]
    except (OSError, OltplabError):
        return None
    return FioOutput(doc=doc, raw=raw, iops_logs=logs, argv=argv, seconds=seconds)


def _follow(proc: subprocess.Popen, on_line: Callable[[dict[str, Any]], None] | None) -> None:
    """Read fio's stdout (eta lines end in CR or LF) until it closes."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
        *lines, buf = re.split(rb"[\r\n]", buf)
        for line in lines:
            text = line.decode(errors="replace").strip()
            if text.startswith("Jobs:") and on_line:
                on_line(parse_eta(text))
    proc.stdout.close()


def _first_error(err_file: Path, raw: str, rc: int) -> str:
    try:
        text = err_file.read_text(errors="replace")
    except OSError:
        text = ""
    lines = [ln.strip() for ln in (text + "\n" + raw).splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower() or ln.startswith("fio:"):
            return ln
    return lines[0] if lines else f"exit code {rc}"
