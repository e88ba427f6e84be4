"""What a datastore is made of, checked before anything touches a device.

A datastore is one file system over one or more block devices (given, or loop devices over
backing files it makes), with the storage policy btrfs can set: the data and metadata profiles
(RAID level), the checksum and the compression. ext4 and xfs on one device are the baselines.
Each check raises one ``UsageError`` naming the flag.
"""

from __future__ import annotations

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

    def policy(self) -> dict:
        out = {"fs": self.fs, "raid": self.raid, "metadata": self.metadata,
               "checksum": self.checksum, "compress": self.compress}
        if self.dedupe:
            out["dedupe"] = True
        return out


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
