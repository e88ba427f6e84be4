"""Host metadata recorded with every run: CPU, memory, kernel, OS, and the storage under paths.

For each path (datadir, waldir ...) we report the mount it lives on and the block device behind
it: ``st_dev`` -> ``/sys/dev/block/MAJ:MIN``, from a partition up to its disk. Nothing here
raises for an odd path or an unreadable file: what cannot be found is reported as null.
"""

from __future__ import annotations

import os
import platform
import socket
import stat
import sys
from pathlib import Path

SYS_DEV_BLOCK = Path("/sys/dev/block")


def _read(path: Path | str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _cpu_model() -> str | None:
    text = _read("/proc/cpuinfo") or ""
    for key in ("model name", "Hardware", "cpu model", "Processor"):
        for line in text.splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip() == key and value.strip():
                return value.strip()
    return platform.processor() or None


def _os_pretty_name() -> str | None:
    text = _read("/etc/os-release") or _read("/usr/lib/os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"').strip("'") or None
    return None


def _memory_total() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception:
        pass
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def _physical_cores() -> int | None:
    try:
        import psutil

        return psutil.cpu_count(logical=False)
    except Exception:
        return None


def _unescape_mount(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040 ...)."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _mounts() -> list[dict]:
    """Entries of /proc/self/mountinfo, in mount order."""
    mounts = []
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        left, sep, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if not sep or len(a) < 6 or len(b) < 2:
            continue
        mounts.append({"mount_point": _unescape_mount(a[4]), "dev": a[2], "fs_type": b[0],
                       "source": _unescape_mount(b[1]), "options": a[5],
                       "fs_options": b[2] if len(b) > 2 else None})
    return mounts


#: /proc/self/mountinfo's entries, for callers that read the table once for several lookups.
mount_table = _mounts


def _mount_of(path: Path, mounts: list[dict]) -> dict | None:
    """The mount that holds ``path``: the longest mount point above it, the latest mounted."""
    best, best_len = None, -1
    text = str(path)
    for m in mounts:
        mp = m["mount_point"]
        inside = text == mp or mp == "/" or text.startswith(mp.rstrip("/") + "/")
        if inside and len(mp) >= best_len:
            best, best_len = m, len(mp)
    return best


def _existing(path: Path) -> Path | None:
    """``path`` resolved, or its nearest existing ancestor (a datadir may not exist yet)."""
    p = Path(os.path.abspath(path))
    for candidate in (p, *p.parents):
        try:
            if candidate.exists():
                return candidate.resolve()
        except (OSError, RuntimeError):
            continue
    return None


def _disk_node(major: int, minor: int) -> tuple[Path, str | None] | None:
    """The /sys folder of the disk behind device MAJ:MIN and the partition's name when the
    device is one (walked up to its disk), or None when /sys does not know it."""
    try:
        node = (SYS_DEV_BLOCK / f"{major}:{minor}").resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if (node / "partition").exists():
        return node.parent, node.name
    return node, None


def block_device(major: int, minor: int) -> dict | None:
    """The disk behind device MAJ:MIN: a partition is walked up to its disk."""
    found = _disk_node(major, minor)
    if found is None:
        return None
    node, partition = found
    queue = node / "queue"
    size = _read(node / "size")
    rotational = _read(queue / "rotational")
    scheduler = _read(queue / "scheduler")
    if scheduler and "[" in scheduler:
        scheduler = scheduler.split("[", 1)[1].split("]", 1)[0]
    model = _read(node / "device" / "model") or _read(node / "dm" / "name")
    try:
        slaves = sorted(p.name for p in (node / "slaves").iterdir())
    except OSError:
        slaves = []
    return {
        "name": node.name,
        "partition": partition,
        "model": model or None,
        "vendor": _read(node / "device" / "vendor") or None,
        "rotational": None if rotational is None else rotational == "1",
        "size_bytes": int(size) * 512 if size and size.isdigit() else None,
        "scheduler": scheduler or None,
        "logical_block_size": _int(_read(queue / "logical_block_size")),
        "physical_block_size": _int(_read(queue / "physical_block_size")),
        "slaves": slaves,
    }


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def path_storage(path: Path | str, mounts: list[dict] | None = None) -> dict:
    """Mount point, filesystem type, source and block device of the storage under ``path``."""
    info = {"path": str(path), "exists": None, "resolved": None, "mount_point": None,
            "fs_type": None, "source": None, "mount_options": None, "fs_options": None,
            "device": None}
    try:
        real = _existing(Path(path))
        if real is None:
            return info
        info["resolved"] = str(real)
        info["exists"] = os.path.exists(path)
        mount = _mount_of(real, _mounts() if mounts is None else mounts)
        if mount:
            info.update(mount_point=mount["mount_point"], fs_type=mount["fs_type"],
                        source=mount["source"], mount_options=mount["options"],
                        fs_options=mount["fs_options"])
        st_dev = os.stat(real).st_dev
        device = block_device(os.major(st_dev), os.minor(st_dev))
        if device is None and mount and mount["source"].startswith("/dev/"):
            # btrfs, and some others, give files an anonymous st_dev: use the mount's source
            src = os.stat(mount["source"])
            device = block_device(os.major(src.st_rdev), os.minor(src.st_rdev))
        info["device"] = device
    except Exception:  # never fail a run over metadata
        pass
    return info


def _mount_disk(mount: dict) -> str | None:
    """The whole disk's name behind a mount (its MAJ:MIN, or for file systems with an
    anonymous one, such as btrfs, its source device node), or None when it is not on a block
    device."""
    try:
        major, minor = (int(x) for x in mount["dev"].split(":"))
    except ValueError:
        return None
    found = _disk_node(major, minor) if major else None
    if found is None and mount["source"].startswith("/dev/"):
        try:
            st = os.stat(mount["source"])
        except OSError:
            return None
        if stat.S_ISBLK(st.st_mode):
            found = _disk_node(os.major(st.st_rdev), os.minor(st.st_rdev))
    return found[0].name if found else None


def storage_sharing(path: Path | str, disks, mounts: list[dict] | None = None,
                    leaves=None) -> dict:
    """What else the whole ``disks`` behind ``path`` serve, whose I/O their counters count
    beside the data's: ``root`` (the file system that holds ``path`` is the root one, which
    every process writes to) and ``others`` (the mount points of the other file systems on
    those disks, one a file system: a partition of the same disk, an array or volume over
    it). ``leaves(name)``: the disks at the bottom of a device (md and device-mapper walked
    down; by default the device itself); ``mounts``: /proc/self/mountinfo's entries."""
    out: dict = {"root": False, "others": []}
    try:
        mounts = _mounts() if mounts is None else mounts
        real = _existing(Path(path))
        own = _mount_of(real, mounts) if real is not None else None
        out["root"] = bool(own and own["mount_point"] == "/")
        wanted, seen = set(disks), {own["dev"]} if own else set()
        for m in mounts:  # one a file system: its first mount (bind mounts share its dev)
            if m["dev"] in seen:
                continue
            seen.add(m["dev"])
            disk = _mount_disk(m)
            if disk is not None and wanted.intersection(leaves(disk) if leaves else [disk]):
                out["others"].append(m["mount_point"])
    except Exception:  # metadata: never fail a run over it
        pass
    return out


def host_metadata(paths: dict[str, Path] | None = None) -> dict:
    """CPU, memory, kernel, OS, hostname, Python, and the storage under each of ``paths``."""
    uname = platform.uname()
    governor = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    mounts = _mounts()
    return {
        "hostname": socket.gethostname(),
        "cpu": {"model": _cpu_model(), "logical_cores": os.cpu_count(),
                "physical_cores": _physical_cores(), "governor": governor},
        "memory": {"total_bytes": _memory_total()},
        "architecture": uname.machine or None,
        "kernel_release": uname.release or None,
        "os": _os_pretty_name(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "python_executable": sys.executable,
        "paths": {str(name): path_storage(p, mounts) if p is not None else None
                  for name, p in (paths or {}).items()},
    }
