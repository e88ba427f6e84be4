"""Every IO's latency per device, from the block layer, into per-step histograms.

bpftrace times each request from ``block:block_rq_issue`` to ``block:block_rq_complete`` (in
microseconds, keyed by device and sector; requests without data, such as flushes, are left
out) of the devices the sampler samples (the datastore's members and the physical disks; every
block device of the host only when no list is given) and counts it in the kernel under
(device, read/write/other, bucket), the bucket keeping
ten significant bits of the latency (0.1% at worst). Every ``DUMP_S`` seconds it prints the
counts and clears them; the counts go into the histograms (HdrHistogram) of the step whose
measured window holds the dump's time (bpftrace's ``nsecs`` is the monotonic clock the driver
marks its windows on), so a window's edges are exact to within one dump interval. Each step
gets p50, p99, p99.9 and max per device, reads and writes apart.

Where bpftrace cannot run (not root, not installed, no BPF, no tracefs) nothing is estimated:
the record says unavailable, with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from hdrh.histogram import HdrHistogram

DUMP_S = 0.25
OPS = ("read", "write", "other")
MAX_US = 3_600_000_000  # an hour: anything longer is clamped
START_WAIT_S = 20.0
FEW_LATENCIES = 256  # distinct latencies of a device kept as counts before a histogram
ATTACH_WAIT_S = 60.0  # bpftrace compiles and attaches in a second or two; a hung one is left

PROGRAM = """
tracepoint:block:block_rq_issue /args->nr_sector > 0%(only)s/ {
  @start[args->dev, args->sector] = nsecs;
}
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
  $us = (nsecs - @start[args->dev, args->sector]) / 1000;
  delete(@start[args->dev, args->sector]);
  $op = strncmp(args->rwbs, "R", 1) == 0 ? 0 : (strncmp(args->rwbs, "W", 1) == 0 ? 1 : 2);
  $b = $us; $s = 0;
  while ($b >= 1024) { $b = $b >> 1; $s = $s + 1; }
  @c[args->dev, $op, $s, $b] = count();
}
interval:ms:%(ms)d { printf("T %%lld\\n", nsecs); print(@c); clear(@c); }
"""
_COUNT = re.compile(r"@c\[(\d+), (\d+), (\d+), (\d+)\]: (\d+)")


def bucket_value(shift: int, base: int) -> int:
    """The latency (us) a bucket stands for: the middle of the values it holds."""
    return (base << shift) + ((1 << shift) >> 1)


def device_name(dev: int, sys_root: str = "/sys") -> str:
    """The kernel's dev_t in a block tracepoint (major << 20 | minor) -> 'nvme0n1'."""
    major, minor = dev >> 20, dev & ((1 << 20) - 1)
    try:
        return Path(os.path.realpath(f"{sys_root}/dev/block/{major}:{minor}")).name
    except OSError:
        return f"{major}:{minor}"


def device_number(name: str, sys_root: str = "/sys") -> int | None:
    """'loop3' -> its dev_t as a block tracepoint gives it (major << 20 | minor); a partition's
    requests are its disk's; None for a name that is not a block device."""
    try:
        path = Path(os.path.realpath(f"{sys_root}/class/block/{name}"))
        if (path / "partition").exists():
            path = path.parent
        major, minor = (path / "dev").read_text().split(":")
        return (int(major) << 20) | int(minor)
    except (OSError, ValueError):
        return None


def program(dev_numbers: list[int] | None, dump_ms: int) -> str:
    """The bpftrace program: every device's requests, or only those of ``dev_numbers``."""
    only = "" if dev_numbers is None else " && (" + " || ".join(
        f"args->dev == {n}" for n in dev_numbers) + ")"
    return PROGRAM % {"only": only, "ms": dump_ms}


def why_unavailable() -> str | None:
    """Why bpftrace cannot trace the block layer here, or None. As root, a missing tracefs is
    mounted at /sys/kernel/tracing (where systemd mounts it)."""
    if os.geteuid() != 0:
        return "needs root (BPF)"
    if shutil.which("bpftrace") is None:
        return "bpftrace is not installed"
    tracing = Path("/sys/kernel/tracing")
    if not (tracing / "events" / "block").is_dir():
        subprocess.run(["mount", "-t", "tracefs", "tracefs", str(tracing)], capture_output=True,
                       timeout=30)
        if not (tracing / "events" / "block").is_dir():
            return "no tracefs with the block tracepoints (/sys/kernel/tracing)"
    return None


def _first_line(proc: subprocess.Popen, within_s: float) -> str | None:
    """The first line ``proc`` prints (empty at its end), or None when none came in
    ``within_s`` seconds (the reading thread ends when the process is killed)."""
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline().decode(
        "ascii", "replace")), daemon=True, name="oltplab-iolatency-start")
    reader.start()
    reader.join(within_s)
    return got[0] if got else None


class IoLatency:
    """The bpftrace process, its reader thread and the per-step histograms."""

    def __init__(self, mode: str = "auto", devices: list[str] | None = None):
        """``devices``: the names of the devices whose IOs are timed (None: all the host's).
        Another's loop device with a few hundred IOs would otherwise get histograms in this
        process (190 kB each, for the run's length) and rows in the record."""
        self.mode = mode
        self.devices = None if devices is None else list(dict.fromkeys(devices))
        self.reason: str | None = None
        self.proc: subprocess.Popen | None = None
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._windows: list[tuple[int, int, int]] = []  # (step, start_ns, end_ns)
        self._open: dict[int, int] = {}  # step -> its ramp_end, until its measure_end
        # (step, dev, op) -> {latency us: IOs} while they are few (another's loop device with
        # a handful of IOs), then an HDR histogram (190 kB whatever it holds): never both
        self._counts: dict[tuple[int, int, int], dict[int, int] | HdrHistogram] = {}
        self._ios = 0
        self._dumps = 0

    def start(self) -> None:
        if self.mode == "off":
            self.reason = "off (--io-latency off)"
            return
        self.reason = why_unavailable()
        if self.reason:
            return
        numbers = None
        if self.devices is not None:
            numbers = [n for n in map(device_number, self.devices) if n is not None]
            if not numbers:
                self.reason = "no block device is sampled"
                return
        text = program(numbers, int(DUMP_S * 1000))
        self._stderr = tempfile.TemporaryFile(mode="w+")  # never a pipe that could fill
        # bytes, a line at a time out of the pipe's one buffer (_read): read as text, each
        # read of part of a dump made a block of up to 8 kB and its decoded copy in the
        # reader's malloc arena, which grew for as long as the run lasted (0.11 MiB a minute
        # at 64 users; tests/integration/telemetry/test_io_latency_memory.py)
        self.proc = subprocess.Popen(["bpftrace", "-e", text], stdout=subprocess.PIPE,
                                     stderr=self._stderr, start_new_session=True)
        first = _first_line(self.proc, ATTACH_WAIT_S)  # "Attaching 3 probes..." once it runs
        if first is None or not first.startswith("Attaching"):
            self.proc.kill()
            self.proc.wait(timeout=10)
            self._stderr.seek(0)
            err = (self._stderr.read() or first or "").strip().splitlines()
            useful = [line for line in err if "RLIMIT_MEMLOCK" not in line] or err or [""]
            self.reason = (f"bpftrace did not attach within {ATTACH_WAIT_S:g} s" if first is None
                           else f"bpftrace did not start: {useful[0][:200]}")
            self.proc = None
            return
        self.thread = threading.Thread(target=self._read, name="oltplab-iolatency",
                                       daemon=True)
        self.thread.start()

    def mark(self, name: str, t_ns: int, attrs: dict) -> None:
        """The sampler's marks: ramp_end opens a step's window, measure_end closes it."""
        step = attrs.get("step")
        if not isinstance(step, int):
            return
        with self._lock:
            if name == "ramp_end":
                self._open[step] = t_ns
            elif name == "measure_end" and step in self._open:
                self._windows.append((step, self._open.pop(step), t_ns))

    def _step_at(self, t_ns: int) -> int | None:
        half = int(DUMP_S * 1e9 / 2)
        for step, start, end in self._windows:
            if start + half < t_ns <= end + half:
                return step
        for step, start in self._open.items():
            if start + half < t_ns:
                return step
        return None

    def _read(self) -> None:
        self.feed(line.decode("ascii", "replace") for line in self.proc.stdout)

    def feed(self, lines) -> None:
        """Count bpftrace's dumps (``T <nsecs>`` lines, then ``@c[dev, op, shift, base]: n``
        lines) into the step whose window holds each dump."""
        step = None
        for line in lines:
            if line.startswith("T "):
                with self._lock:
                    step = self._step_at(int(line.split()[1]))
                    self._dumps += 1
                continue
            m = _COUNT.match(line)
            if not m or step is None:
                continue
            dev, op, shift, base, n = map(int, m.groups())
            us = min(max(bucket_value(shift, base), 1), MAX_US)
            with self._lock:
                key = (step, dev, min(op, 2))
                counts = self._counts.get(key)
                if counts is None:
                    counts = self._counts[key] = {}
                if isinstance(counts, dict):
                    counts[us] = counts.get(us, 0) + n
                    if len(counts) > FEW_LATENCIES:
                        self._counts[key] = _histogram(counts)
                else:
                    counts.record_value(us, n)
                self._ios += n

    def stop(self) -> dict:
        """Stop bpftrace; what the timeline records (``steps``: per step, per device, per
        read/write: ios, p50_us, p99_us, p999_us, max_us)."""
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.thread is not None and self.thread.ident is not None:  # started
                self.thread.join(timeout=10)
        out = {"available": self.proc is not None, "reason": self.reason,
               "tool": "bpftrace block_rq_issue/complete", "dump_interval_s": DUMP_S,
               "devices": self.devices, "ios": self._ios, "steps": {}}
        names: dict[int, str] = {}
        with self._lock:
            for (step, dev, op), counts in sorted(self._counts.items()):
                name = names.setdefault(dev, device_name(dev))
                h = _histogram(counts) if isinstance(counts, dict) else counts
                per = out["steps"].setdefault(str(step), {}).setdefault(name, {})
                per[OPS[op]] = {"ios": h.get_total_count(),
                                "p50_us": h.get_value_at_percentile(50),
                                "p99_us": h.get_value_at_percentile(99),
                                "p999_us": h.get_value_at_percentile(99.9),
                                "max_us": h.get_max_value()}
        return out


def _histogram(counts: dict[int, int]) -> HdrHistogram:
    h = HdrHistogram(1, MAX_US, 3)
    for us, n in counts.items():
        h.record_value(us, n)
    return h


def wait_started(lat: IoLatency, timeout: float = START_WAIT_S) -> None:
    """For tests and benches: wait until the first dump arrived."""
    deadline = time.monotonic() + timeout
    while lat.proc is not None and lat._dumps == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
