"""Block devices, computed from /proc/diskstats as iostat -x computes them.

Per device and interval (Δ = the change of a /proc/diskstats field, dt = the interval):

    r_s     = Δreads / dt                 w_s     = Δwrites / dt
    rMB_s   = Δsectors_read / 2048 / dt   wMB_s   = Δsectors_written / 2048 / dt
    r_await = Δms_reading / Δreads        w_await = Δms_writing / Δwrites      (ms)
    aqu_sz  = Δweighted_ms / (dt in ms)   util    = Δio_ticks / (dt in ms) * 100, at most 100
    f_s     = Δflush_requests / dt        (kernels since 5.5)

Sectors are 512 bytes whatever the device's block size, so MB here is iostat -m's: 2**20
bytes. An await is null for an interval without reads (or writes): no I/O, no latency. %util
is the share of time with at least one request in flight; on devices that serve requests in
parallel (SSD, NVMe, virtual disks) 100% does not mean saturated.

Which devices: whole disks only, because a disk's counters already include its partitions
(adding both counts every I/O twice). By default: every physical disk (an entry of /sys/block
that is not under /sys/devices/virtual, so loop, ram, zram, dm and md are left out) plus the
device behind each named path (datadir, waldir, or a device node such as /dev/sdb1), walked
up from a partition to its disk; a device-mapper or md device behind a path is kept as it
is. An explicit list may name any device of /proc/diskstats, partitions included.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...errors import UsageError
from . import NAN, ProcFile, Source, counter_delta

METRICS = ("r_s", "w_s", "rMB_s", "wMB_s", "r_await", "w_await", "aqu_sz", "util", "f_s")
UNITS = {"r_s": "IO/s", "w_s": "IO/s", "rMB_s": "MiB/s", "wMB_s": "MiB/s", "r_await": "ms",
         "w_await": "ms", "aqu_sz": "requests", "util": "%", "f_s": "flushes/s"}
SKIPPED_PREFIXES = ("loop", "ram", "zram")

# indices into the fields after the device name
RD_IOS, RD_SECT, RD_TICKS = 0, 2, 3
WR_IOS, WR_SECT, WR_TICKS = 4, 6, 7
IO_TICKS, RQ_TICKS = 9, 10
FL_IOS = 15


def column(device: str, metric: str) -> str:
    return f"disk.{device}.{metric}"


def parse_diskstats(text: bytes, names=None) -> dict[str, tuple[int, ...]]:
    """{device: counters after the name}; only ``names`` when given (the rest is not split)."""
    out = {}
    for line in text.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 4:
            continue
        name = parts[2].decode()
        if names is None or name in names:
            out[name] = tuple(int(v) for v in parts[3].split())
    return out


def iostat_figures(prev: tuple[int, ...], cur: tuple[int, ...], dt_s: float) -> list[float]:
    """The nine figures of ``METRICS`` for one device over ``dt_s`` seconds."""
    if dt_s <= 0:
        return [NAN] * len(METRICS)

    def d(i: int) -> float:
        if i >= len(cur) or i >= len(prev):
            return NAN
        return counter_delta(prev[i], cur[i])

    ms = dt_s * 1000.0
    reads, writes = d(RD_IOS), d(WR_IOS)
    r_await = d(RD_TICKS) / reads if reads > 0 else NAN
    w_await = d(WR_TICKS) / writes if writes > 0 else NAN
    util = d(IO_TICKS) / ms * 100.0
    return [reads / dt_s, writes / dt_s, d(RD_SECT) / 2048.0 / dt_s, d(WR_SECT) / 2048.0 / dt_s,
            r_await, w_await, d(RQ_TICKS) / ms, min(100.0, util), d(FL_IOS) / dt_s]


def whole_disks(sys_root: str = "/sys") -> dict[str, bool]:
    """{name: is_virtual} for every entry of /sys/block (whole disks, no partitions)."""
    out = {}
    try:
        entries = sorted(os.listdir(f"{sys_root}/block"))
    except OSError:
        return out
    for name in entries:
        try:
            target = os.path.realpath(f"{sys_root}/block/{name}")
        except OSError:
            continue
        out[name] = "/devices/virtual/" in target
    return out


def path_device(path) -> dict:
    """{path, device, partition, reason}: the whole disk behind ``path``, a file or directory
    (through its filesystem, host.path_storage) or a block device node such as /dev/sdb1."""
    from ...host.facts import block_device, path_storage

    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISBLK(st.st_mode):
        dev = block_device(os.major(st.st_rdev), os.minor(st.st_rdev))
        info = {"fs_type": None}
    else:
        info = path_storage(Path(path))
        dev = info.get("device")
    if not dev:
        why = f"no block device behind {path}"
        if info.get("fs_type"):
            why += f" ({info['fs_type']})"
        return {"path": str(path), "device": None, "partition": None, "reason": why}
    return {"path": str(path), "device": dev["name"], "partition": dev.get("partition"),
            "reason": None}


def choose_devices(devices, paths: dict | None, known: set[str],
                   sys_root: str = "/sys") -> tuple[list[str], dict[str, dict]]:
    """(device names in column order, {role: path_device(...)}) for ``devices``.

    ``devices`` is "auto" (physical disks and those behind ``paths``) or a list of names, each
    of which must be in ``known`` (the names of /proc/diskstats).
    """
    roles = {str(role): path_device(p) for role, p in (paths or {}).items() if p is not None}
    behind = [r["device"] for r in roles.values() if r["device"]]
    if devices == "auto" or devices is None:
        chosen = list(dict.fromkeys(behind))
        for name, virtual in whole_disks(sys_root).items():
            if not virtual and not name.startswith(SKIPPED_PREFIXES) and name not in chosen:
                chosen.append(name)
        return [n for n in chosen if n in known], roles
    if isinstance(devices, str):
        devices = [d for d in devices.split(",") if d.strip()]
    chosen = []
    for name in devices:
        name = str(name).strip().removeprefix("/dev/")
        if name not in known:
            raise UsageError(f"device {name!r} is not in /proc/diskstats")
        if name not in chosen:
            chosen.append(name)
    return chosen, roles


class DiskSource(Source):
    name = "disks"

    def __init__(self, devices="auto", paths: dict | None = None, proc_root: str = "/proc",
                 sys_root: str = "/sys"):
        super().__init__()
        self.path = f"{proc_root}/diskstats"
        try:
            with open(self.path, "rb") as f:
                known = set(parse_diskstats(f.read()))
        except OSError:
            known = set()
        self.devices, self.roles = choose_devices(devices, paths, known, sys_root)
        self._virtual = whole_disks(sys_root)
        self.columns = [column(dev, m) for dev in self.devices for m in METRICS]
        self.units = {column(dev, m): UNITS[m] for dev in self.devices for m in METRICS}
        self._names = set(self.devices)
        self._file: ProcFile | None = None
        self._prev: dict[str, tuple[int, ...]] | None = None
        self._prev_t = 0

    def open(self) -> None:
        self._file = ProcFile(self.path)

    def read(self, t_ns: int) -> list[float]:
        cur = parse_diskstats(self._file.read(), self._names)
        prev, prev_t = self._prev, self._prev_t
        self._prev, self._prev_t = cur, t_ns
        if prev is None:
            return [NAN] * len(self.columns)
        dt_s = (t_ns - prev_t) / 1e9
        out: list[float] = []
        for dev in self.devices:
            if dev in cur and dev in prev:
                out.extend(iostat_figures(prev[dev], cur[dev], dt_s))
            else:  # the device went away
                out.extend([NAN] * len(METRICS))
        return out

    def describe(self) -> dict:
        info = {}
        for dev in self.devices:
            roles = [r for r, v in self.roles.items() if v["device"] == dev]
            info[dev] = {"roles": roles, "virtual": self._virtual.get(dev),
                         "whole_disk": dev in self._virtual}
        return info

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
