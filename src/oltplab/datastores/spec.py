"""What a datastore is made of, checked before anything touches a device.

A datastore is one file system over one or more block devices (given, or loop devices over
backing files it makes), with the storage policy btrfs can set: the data and metadata profiles
(RAID level), the checksum and the compression. ext4 and xfs on one device are the baselines.
Each check raises one ``UsageError`` naming the flag.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..config import format_size, parse_size
from ..errors import UsageError

FILESYSTEMS = ("btrfs", "xfs", "ext4")
# btrfs' block-group profiles and the fewest devices mkfs.btrfs takes for each
PROFILES = {"single": 1, "dup": 1, "raid0": 1, "raid1": 2, "raid1c3": 3, "raid1c4": 4,
            "raid10": 2, "raid5": 2, "raid6": 3}
CHECKSUMS = ("crc32c", "xxhash", "sha256", "blake2", "off")
COMPRESSIONS = {"zstd": (1, 15), "zlib": (1, 9), "lzo": None, "none": None}
DEFAULT_ROOT = Path("oltplab-data/datastores")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
MIN_LOOP_BYTES = 300 * 1024**2  # mkfs.btrfs refuses devices under about 114 MiB; xfs 300 MiB
DEFAULT_LEVELS = {"zstd": 3, "zlib": 3}  # the level btrfs compresses at where none is given
# the faults (--inject) after which a datastore is no longer as it was made: a device gone or
# replaced, another data profile, a device whose writes failed
ALTERING_FAULTS = ("remove-device", "replace-device", "convert", "fail-device")


@dataclass(frozen=True)
class Difference:
    """One way a datastore differs from a spec: ``key`` (raid, metadata, devices ...), what
    the datastore has and what the spec asks, each as words."""

    key: str
    have: str
    want: str

    def text(self, name: str, who: str = "the plan asks") -> str:
        """"datastore 'r1' has metadata raid1, the plan asks dup"."""
        return f"datastore {name!r} has {self.have}, {who} {self.want}"


@dataclass(frozen=True)
class DatastoreSpec:
    name: str
    fs: str = "btrfs"
    raid: str | None = None  # btrfs data profile (mkfs' default: single, raid0 over several)
    metadata: str | None = None  # btrfs metadata profile (mkfs' default: dup, raid1 over several)
    checksum: str | None = None  # btrfs checksum; "off" mounts with nodatasum
    compress: str | None = None  # "zstd:3", "lzo", "zlib:6", "none"
    devices: tuple[Path, ...] = ()
    loop_count: int = 0
    loop_bytes: int = 0
    force: bool = False
    mount_options: tuple[str, ...] = ()
    dedupe: bool = False  # duperemove after each build on it
    spares: tuple[Path, ...] = ()  # devices kept out of the file system, for replace-device
    spare_loops: int = 0  # or that many more loop devices
    root: Path = field(default=DEFAULT_ROOT)

    @property
    def device_count(self) -> int:
        return len(self.devices) or self.loop_count

    def mount_opts(self) -> list[str]:
        """The mount options the policy needs, then the user's."""
        opts = []
        if self.compress and self.compress != "none":
            opts.append(f"compress={self.compress}")
        if self.checksum == "off":
            opts.append("nodatasum")
        return opts + list(self.mount_options)

    def describe(self) -> str:
        """"btrfs raid5/raid1, zstd:3 on 4 loop devices of 2GiB"."""
        what = self.fs
        if self.fs == "btrfs":
            what += f" {self.raid or 'default'}/{self.metadata or 'default'}"
            extra = [x for x in (f"checksum {self.checksum}" if self.checksum else None,
                                 self.compress if self.compress not in (None, "none") else None)
                     if x]
            what += f", {', '.join(extra)}" if extra else ""
        what += ", dedupe" if self.dedupe else ""
        on = (f"{self.loop_count} loop devices of {format_size(self.loop_bytes)}"
              if self.loop_count else ", ".join(map(str, self.devices)))
        if self.spares or self.spare_loops:
            on += f", {len(self.spares) or self.spare_loops} spare"
        return f"{what} on {on}"

    def differences(self, doc: dict) -> list[Difference]:
        """How the datastore of record ``doc`` (datastore.json) differs from this spec, in
        what it is now: the profiles, checksum and compression the file system has (the
        record's top-level keys, as mkfs chose them where none was asked, as a fault left
        them), its devices, spares and mount options. A policy this spec leaves unset (mkfs'
        choice) is not compared; a compression without a level is btrfs' default level."""
        out = []
        if doc.get("fs") != self.fs:
            out.append(Difference("fs", f"file system {doc.get('fs')}", self.fs))
        for key in ("raid", "metadata", "checksum"):
            want = getattr(self, key)
            if want is not None and doc.get(key) != want:
                out.append(Difference(key, f"{key} {doc.get(key) or 'unknown'}", want))
        if self.compress is not None and (_leveled(doc.get("compress") or "none")
                                          != _leveled(self.compress)):
            out.append(Difference("compress", f"compress {doc.get('compress') or 'none'}",
                                  self.compress))
        if bool(doc.get("dedupe")) != self.dedupe:
            out.append(Difference("dedupe", f"dedupe {'on' if doc.get('dedupe') else 'off'}",
                                  "on" if self.dedupe else "off"))
        devices = list(doc.get("devices") or ())
        if len(devices) != self.device_count:
            out.append(Difference("devices", _count(len(devices), "device"),
                                  str(self.device_count)))
        elif self.devices and same_set(devices) != same_set(self.devices):
            out.append(Difference("devices", f"devices {', '.join(devices)}",
                                  ", ".join(map(str, self.devices))))
        loop = doc.get("loop") or {}
        if self.loop_count and loop.get("bytes") != self.loop_bytes:
            have = (f"loop devices of {format_size(loop['bytes'])}" if loop.get("bytes")
                    else "devices that are not loop devices")
            out.append(Difference("loop", have, f"loop devices of {format_size(self.loop_bytes)}"))
        spares = len(doc.get("spares") or ())
        if spares != (len(self.spares) or self.spare_loops):
            out.append(Difference("spares", _count(spares, "spare"),
                                  str(len(self.spares) or self.spare_loops)))
        missing = [o for o in self.mount_options if o not in (doc.get("mount_options") or ())]
        if missing:
            out.append(Difference("mount_options", "mount options "
                                  f"{','.join(doc.get('mount_options') or ()) or 'none'}",
                                  ",".join(missing)))
        return out

    def policy(self) -> dict:
        out = {"fs": self.fs, "raid": self.raid, "metadata": self.metadata,
               "checksum": self.checksum, "compress": self.compress}
        if self.dedupe:
            out["dedupe"] = True
        return out


def _leveled(compress: str) -> str:
    """"zstd" -> "zstd:3": a compression with btrfs' default level written out."""
    algo, sep, level = compress.partition(":")
    return f"{algo}:{level or DEFAULT_LEVELS[algo]}" if algo in DEFAULT_LEVELS else algo


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def altering(events) -> list[str]:
    """The texts of the events (config.InjectEvent) that leave a datastore otherwise than it
    was made (``ALTERING_FAULTS``)."""
    return [e.text or e.kind for e in events or () if e.kind in ALTERING_FAULTS]


def parse_loop(text: str, flag: str = "--loop") -> tuple[int, int]:
    """``4x8GiB`` -> (4, 8 GiB): that many loop devices over backing files of that size."""
    count, sep, size = text.lower().partition("x")
    if not sep or not count.strip().isdigit() or not 1 <= int(count) <= 16:
        raise UsageError(f"{flag}: {text!r} is not COUNTxSIZE with a count of 1 to 16, "
                         "e.g. 4x8GiB")
    nbytes = parse_size(size.strip(), flag)
    if nbytes < MIN_LOOP_BYTES:
        raise UsageError(f"{flag}: {format_size(nbytes)} per device is too small; "
                         f"give at least {format_size(MIN_LOOP_BYTES)}")
    return int(count), nbytes


def parse_compress(text: str, flag: str = "--compress") -> str:
    algo, sep, level = text.partition(":")
    if algo not in COMPRESSIONS:
        raise UsageError(f"{flag}: {text!r} is not one of zstd[:LEVEL], zlib[:LEVEL], lzo, none")
    bounds = COMPRESSIONS[algo]
    if sep:
        if bounds is None or not level.isdigit() or not bounds[0] <= int(level) <= bounds[1]:
            what = "takes no level" if bounds is None else f"levels are {bounds[0]}-{bounds[1]}"
            raise UsageError(f"{flag}: {text!r}: {algo} {what}")
    return text


def same_set(devices) -> list[str]:
    """The device nodes ``devices`` name, symlinks (/dev/disk/by-id/...) resolved, sorted: a
    datastore records its devices resolved, as btrfs names them."""
    return sorted(os.path.realpath(d) for d in devices)


def parse_devices(text: str, flag: str = "--devices") -> tuple[Path, ...]:
    devices = tuple(Path(d.strip()) for d in text.split(",") if d.strip())
    if not devices:
        raise UsageError(f"{flag}: give one or more block devices, comma-separated")
    if len({str(d) for d in devices}) != len(devices):
        raise UsageError(f"{flag}: a device is named twice")
    return devices


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise UsageError(f"datastore name {name!r}: use letters, digits, '_', '.' and '-' "
                         "(63 at most, starting with a letter or digit)")
    return name


def make_spec(name: str, fs: str = "btrfs", raid: str | None = None,
              metadata: str | None = None, checksum: str | None = None,
              compress: str | None = None, devices: str | None = None, loop: str | None = None,
              force: bool = False, mount_options: str | None = None,
              root: Path | None = None, dedupe: bool = False,
              spares: str | None = None) -> DatastoreSpec:
    """The spec of ``datastore create``'s options; every inconsistency is a UsageError."""
    check_name(name)
    if fs not in FILESYSTEMS:
        raise UsageError(f"--fs: {fs!r} is not one of {', '.join(FILESYSTEMS)}")
    if (devices is None) == (loop is None):
        raise UsageError("give either --devices DEV[,DEV...] or --loop COUNTxSIZE")
    devs = parse_devices(devices) if devices is not None else ()
    count, size = parse_loop(loop) if loop is not None else (0, 0)
    n = len(devs) or count
    for flag, value, choices in (("--raid", raid, PROFILES), ("--metadata", metadata, PROFILES),
                                 ("--checksum", checksum, CHECKSUMS)):
        if value is not None and value not in choices:
            raise UsageError(f"{flag}: {value!r} is not one of {', '.join(choices)}")
    if compress is not None:
        parse_compress(compress)
    if fs != "btrfs":
        given = [f for f, v in (("--raid", raid), ("--metadata", metadata),
                                ("--checksum", checksum), ("--compress", compress)) if v]
        if given:
            raise UsageError(f"{given[0]} is a btrfs policy; {fs} has none (use --fs btrfs)")
        if n != 1:
            raise UsageError(f"--fs {fs} takes exactly one device, not {n} (btrfs spans several)")
    for flag, profile in (("--raid", raid), ("--metadata", metadata)):
        if profile is not None and n < PROFILES[profile]:
            raise UsageError(f"{flag} {profile} needs at least {PROFILES[profile]} devices; "
                             f"{n} given")
    spare_devs, spare_loops = (), 0
    if spares is not None:
        if fs != "btrfs":
            raise UsageError(f"--spares: {fs} replaces no device; spares are for btrfs")
        if spares.strip().isdigit():
            spare_loops = int(spares)
            if not loop or not 1 <= spare_loops <= 4:
                raise UsageError("--spares N makes N (1 to 4) more loop devices: give --loop "
                                 "too, or name the spare devices")
        else:
            spare_devs = parse_devices(spares, "--spares")
            if loop or {str(d) for d in spare_devs} & {str(d) for d in devs}:
                raise UsageError("--spares: give devices that are not in --devices (with --loop,"
                                 " a number of spare loop devices)")
    if dedupe and fs == "ext4":
        raise UsageError("--dedupe needs shared extents (btrfs, or xfs with reflink); ext4 has "
                         "none")
    if raid == "dup" and n > 1:
        raise UsageError("--raid dup keeps both copies on one device; give one device")
    opts = tuple(o for o in (mount_options or "").split(",") if o)
    return DatastoreSpec(name=name, fs=fs, raid=raid, metadata=metadata, checksum=checksum,
                         compress=compress, devices=devs, loop_count=count, loop_bytes=size,
                         force=force, mount_options=opts, root=root or DEFAULT_ROOT,
                         dedupe=dedupe, spares=spare_devs, spare_loops=spare_loops)
