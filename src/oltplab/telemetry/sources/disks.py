"""Block devices, computed from /proc/diskstats as iostat -x computes them.

Per device and interval (Δ = the change of a /proc/diskstats field, dt = the interval):

    r_s     = Δreads / dt                 w_s     = Δwrites / dt
    rMB_s   = Δsectors_read / 2048 / dt   wMB_s   = Δsectors_written / 2048 / dt
    r_await = Δms_reading / Δreads        w_await = Δms_writing / Δwrites      (ms)
    aqu_sz  = Δweighted_ms / (dt in ms)   util    = Δio_ticks / (dt in ms) * 100, at most 100
    f_s     = Δflush_requests / dt        (kernels since 5.5)

Sectors are 512 bytes whatever the device's block size, so rMB_s and wMB_s are MiB/s (2**20
bytes, iostat -m's "MB"); the column names keep iostat's spelling and their unit says MiB/s.
An await is null for an interval without reads (or writes): no I/O, no latency. %util is the
share of time with at least one request in flight; on devices that serve requests in parallel
(SSD, NVMe, virtual disks) 100% does not mean saturated.

Which devices: whole disks only, because a disk's counters already include its partitions
(adding both counts every I/O twice). By default: every physical disk (an entry of /sys/block
that is not under /sys/devices/virtual, so loop, ram, zram, dm and md are left out) plus,
for each named path (datadir, waldir, or a device node such as /dev/sdb1), the device behind
it and every member disk of its storage (``member_disks``): all the devices of a btrfs file
system (/sys/fs/btrfs/<fsid>/devices, so the four loop devices of a 4-device raid1, not only
the one the mount table names), each walked down through the slaves of md and device-mapper
devices (/sys/block/X/slaves) and up from a partition to its disk. The device behind the path
(an md or dm device) is sampled as well, but only the members hold the data: their sum is what
the storage served (telemetry/derive.py ``datastore``). An explicit list may name any device
of /proc/diskstats, partitions included. A device that leaves during the run (a btrfs device
removed, a loop device detached) keeps its columns: null once /proc/diskstats no longer has it.
A device that may join during the run (a datastore's spare, which a replacement makes a member)
is named beforehand (``spares``: {role: [device names]}), sampled, and counted with the members.
"""

from __future__ import annotations

import os
import re
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
    if dt_s <= 0 or any(i < len(cur) and i < len(prev) and cur[i] < prev[i]
                        for i in (RD_IOS, RD_SECT, WR_IOS, WR_SECT)):
        # 64-bit counters that went back: the device was replaced (a loop device detached
        # and attached again); the interval is unknown, never a 2**32 "wrap"
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


def _natural(name: str) -> list:
    """A sort key that puts loop9 before loop10."""
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name)]


def _disk_dir(link: str) -> str | None:
    """The sysfs folder of the whole disk that ``link`` (a folder of /sys, or a link to one,
    of a disk or of a partition) names; None when there is no such folder."""
    real = os.path.realpath(link)
    if not os.path.isdir(real):
        return None
    if os.path.exists(os.path.join(real, "partition")):
        real = os.path.dirname(real)
    return real


def _leaves(disk: str, seen: set[str]) -> list[str]:
    """The whole disks at the bottom of ``disk``'s slaves (md, device-mapper), walked down as
    far as they go; ``disk`` itself when it has none."""
    if disk in seen:
        return []
    seen.add(disk)
    try:
        slaves = sorted(os.listdir(os.path.join(disk, "slaves")), key=_natural)
    except OSError:
        slaves = []
    below = [d for d in (_disk_dir(os.path.join(disk, "slaves", s)) for s in slaves) if d]
    if not below:
        return [os.path.basename(disk)]
    out: list[str] = []
    for d in below:  # one reached already (two volumes over one md) adds nothing again
        out.extend(leaf for leaf in _leaves(d, seen) if leaf not in out)
    return out


def btrfs_devices(name: str, sys_root: str = "/sys") -> list[str]:
    """The entries of /sys/fs/btrfs/<fsid>/devices of the mounted btrfs that has ``name`` (a
    disk or a partition) among its devices, in name order (loop9 before loop10); [] when
    none has."""
    base = os.path.join(sys_root, "fs", "btrfs")
    try:
        fsids = sorted(os.listdir(base))
    except OSError:
        return []
    for fsid in fsids:
        folder = os.path.join(base, fsid, "devices")
        if os.path.lexists(os.path.join(folder, name)):
            try:
                return [os.path.join(folder, e)
                        for e in sorted(os.listdir(folder), key=_natural)]
            except OSError:
                return []
    return []


def member_disks(device: str, partition: str | None = None, fs_type: str | None = None,
                 sys_root: str = "/sys") -> list[str]:
    """Every whole disk that holds the data of the storage on ``device`` (a whole disk's name;
    ``partition``, the partition of it that holds the file system, if any): for btrfs every
    device of the file system, else the device itself; each walked down through md and
    device-mapper slaves to the disks at the bottom. [] when /sys does not know ``device``."""
    starts = btrfs_devices(partition or device, sys_root) if fs_type == "btrfs" else []
    if not starts:
        starts = [os.path.join(sys_root, "block", device)]
    out: list[str] = []
    seen: set[str] = set()
    for link in starts:
        disk = _disk_dir(link)
        for leaf in _leaves(disk, seen) if disk else ():
            if leaf not in out:
                out.append(leaf)
    return out


def path_device(path, sys_root: str = "/sys") -> dict:
    """{path, device, partition, fs_type, members, reason, shared}: the whole disk behind
    ``path``, a file or directory (through its filesystem, host.path_storage) or a block device
    node such as /dev/sdb1, the member disks of its storage (``member_disks``), and what else
    those disks serve (host.facts.storage_sharing: the root file system, other mounts)."""
    from ...host.facts import block_device, mount_table, path_storage, storage_sharing

    try:
        st = os.stat(path)
    except OSError:
        st = None
    mounts = mount_table()  # read once, for the storage and what else shares its disks
    if st is not None and stat.S_ISBLK(st.st_mode):
        dev = block_device(os.major(st.st_rdev), os.minor(st.st_rdev))
        info = {"fs_type": None}
    else:
        info = path_storage(Path(path), mounts)
        dev = info.get("device")
    if not dev:
        why = f"no block device behind {path}"
        if info.get("fs_type"):
            why += f" ({info['fs_type']})"
        return {"path": str(path), "device": None, "partition": None,
                "fs_type": info.get("fs_type"), "members": [], "reason": why}
    members = member_disks(dev["name"], dev.get("partition"), info.get("fs_type"), sys_root)
    members = members or [dev["name"]]
    return {"path": str(path), "device": dev["name"], "partition": dev.get("partition"),
            "fs_type": info.get("fs_type"), "members": members, "reason": None,
            "shared": storage_sharing(path, members, mounts, leaves=lambda name: member_disks(
                name, sys_root=sys_root) or [name])}


def choose_devices(devices, paths: dict | None, known: set[str],
                   sys_root: str = "/sys") -> tuple[list[str], dict[str, dict]]:
    """(device names in column order, {role: path_device(...)}) for ``devices``.

    ``devices`` is "auto" (the devices behind ``paths`` and their members, then the physical
    disks) or a list of names, each of which must be in ``known`` (the names of
    /proc/diskstats).
    """
    roles = {str(role): path_device(p, sys_root) for role, p in (paths or {}).items()
             if p is not None}
    behind = [name for r in roles.values() if r["device"]
              for name in (r["device"], *r["members"])]
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
                 sys_root: str = "/sys", spares: dict | None = None):
        super().__init__()
        self.path = f"{proc_root}/diskstats"
        try:
            with open(self.path, "rb") as f:
                known = set(parse_diskstats(f.read()))
        except OSError:
            known = set()
        self.devices, self.roles = choose_devices(devices, paths, known, sys_root)
        for role, names in (spares or {}).items():
            if role not in self.roles:
                continue
            self.roles[role]["spares"] = [n for n in names if n in known]
            if devices == "auto" or devices is None:
                self.devices.extend(n for n in self.roles[role]["spares"]
                                    if n not in self.devices)
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
            roles = [r for r, v in self.roles.items()
                     if dev == v["device"] or dev in v.get("members", ())
                     or dev in v.get("spares", ())]
            info[dev] = {"roles": roles, "virtual": self._virtual.get(dev),
                         "whole_disk": dev in self._virtual}
        return info

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
