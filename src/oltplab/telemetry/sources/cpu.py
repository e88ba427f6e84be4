"""CPU time of the whole host, in percent of all CPUs, from the first line of /proc/stat.

The line counts clock ticks in ``user nice system idle iowait irq softirq steal guest
guest_nice``; guest time is already part of user time, so the total is the sum of the first
eight. The five columns add up to 100:

- ``cpu.user``   user + nice
- ``cpu.system`` system + irq + softirq
- ``cpu.idle``   idle
- ``cpu.iowait`` iowait: idle time with I/O outstanding. The kernel documents it as unreliable
  (a CPU does not wait for I/O; on a busy host the same wait shows as other work), so read it
  beside ``cpu.idle``, never alone
- ``cpu.steal``  time the hypervisor gave to others

A counter that went backwards (iowait does on some kernels) counts as zero for that interval.
"""

from __future__ import annotations

from . import NAN, ProcFile, Source

COLUMNS = ("cpu.user", "cpu.system", "cpu.idle", "cpu.iowait", "cpu.steal")


def parse_stat(text: bytes) -> tuple[int, ...]:
    """The eight tick counters of the aggregate ``cpu`` line (missing ones are 0)."""
    end = text.find(b"\n")
    fields = text[:end if end >= 0 else len(text)].split()
    if not fields or fields[0] != b"cpu":
        raise ValueError("/proc/stat does not start with the aggregate 'cpu' line")
    values = [int(v) for v in fields[1:9]]
    return tuple(values + [0] * (8 - len(values)))


def cpu_percent(prev: tuple[int, ...], cur: tuple[int, ...]) -> tuple[float, ...]:
    """(user, system, idle, iowait, steal) in percent of the ticks between two readings."""
    d = [max(0, c - p) for p, c in zip(prev, cur)]
    total = sum(d)
    if total <= 0:
        return (NAN,) * 5
    user, nice, system, idle, iowait, irq, softirq, steal = d
    scale = 100.0 / total
    return ((user + nice) * scale, (system + irq + softirq) * scale, idle * scale,
            iowait * scale, steal * scale)


class CpuSource(Source):
    name = "cpu"

    def __init__(self, proc_root: str = "/proc"):
        super().__init__()
        self.path = f"{proc_root}/stat"
        self.columns = list(COLUMNS)
        self.units = {c: "%" for c in COLUMNS}
        self._file: ProcFile | None = None
        self._prev: tuple[int, ...] | None = None

    def open(self) -> None:
        self._file = ProcFile(self.path)

    def read(self, t_ns: int) -> list[float]:
        cur = parse_stat(self._file.read())
        prev, self._prev = self._prev, cur
        if prev is None:
            return [NAN] * 5
        return list(cpu_percent(prev, cur))

    def describe(self) -> dict:
        return {"path": self.path,
                "definitions": {"cpu.user": "user + nice", "cpu.system": "system + irq + softirq"}}

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
