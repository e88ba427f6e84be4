"""Memory of the host from /proc/meminfo, in bytes, as free(1) reports it.

- ``mem.used_bytes``   MemTotal - MemAvailable (older kernels without MemAvailable:
  MemTotal - MemFree - Buffers - Cached - SReclaimable)
- ``mem.cached_bytes`` Buffers + Cached + SReclaimable (free's buff/cache). Cached includes
  shared memory, so PostgreSQL's shared_buffers show here, not in used
- ``mem.dirty_bytes``  Dirty + Writeback: written pages not yet on the device

These are levels, not rates: each sample is the reading at the end of its interval.
"""

from __future__ import annotations

from . import NAN, ProcFile, Source

COLUMNS = ("mem.used_bytes", "mem.cached_bytes", "mem.dirty_bytes")
KEYS = (b"MemTotal", b"MemFree", b"MemAvailable", b"Buffers", b"Cached", b"SReclaimable",
        b"Dirty", b"Writeback")


def parse_meminfo(text: bytes) -> dict[bytes, int]:
    """{key: bytes} for the keys free(1) uses (values are printed in kB)."""
    out = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(b":")
        if sep and key in KEYS:
            fields = rest.split()
            if fields:
                out[key] = int(fields[0]) * 1024
    return out


def memory_figures(m: dict[bytes, int]) -> list[float]:
    """(used, cached, dirty) in bytes; NaN for what the file lacks."""
    total = m.get(b"MemTotal")
    cache = m.get(b"Buffers", 0) + m.get(b"Cached", 0) + m.get(b"SReclaimable", 0)
    if total is None:
        used = NAN
    elif b"MemAvailable" in m:
        used = float(total - m[b"MemAvailable"])
    else:
        used = float(total - m.get(b"MemFree", 0) - cache)
    dirty = m.get(b"Dirty", 0) + m.get(b"Writeback", 0) if b"Dirty" in m else NAN
    return [used, float(cache), float(dirty)]


class MemorySource(Source):
    name = "memory"

    def __init__(self, proc_root: str = "/proc"):
        super().__init__()
        self.path = f"{proc_root}/meminfo"
        self.columns = list(COLUMNS)
        self.units = {c: "bytes" for c in COLUMNS}
        self._file: ProcFile | None = None
        self._total: int | None = None

    def open(self) -> None:
        self._file = ProcFile(self.path)

    def read(self, t_ns: int) -> list[float]:
        m = parse_meminfo(self._file.read())
        self._total = m.get(b"MemTotal", self._total)
        return memory_figures(m)

    def describe(self) -> dict:
        return {"total_bytes": self._total}

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
