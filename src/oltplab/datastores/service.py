"""Create, describe, list and destroy datastores.

Each datastore lives in ``<root>/<name>/``: ``datastore.json`` (what it is made of, written
atomically), ``mnt/`` (where it is mounted: the folder to put a data directory in) and, for
loop devices, ``images/`` (their backing files). ``create`` keeps a list of what it did and
undoes it in reverse when anything fails or the user presses Ctrl-C, so a failed create leaves
nothing behind; ``destroy`` unmounts, wipes the signatures the file system wrote, detaches the
loop devices and removes their files.

A device given with ``--devices`` is wiped at destroy only when it still carries the file
system made on it (blkid's UUID equal to the one recorded at create, with each device's
UUID_SUB and /dev/disk/by-id names in ``identity``): a name that now stands for another disk
(names shifted at a reboot) or a device a fault removed (btrfs erased its super block then,
and another datastore may have it since) is left alone and named.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..errors import OltplabError, UsageError
from ..results.store import atomic_write
from . import devices as dev
from .space import measure, used_bytes
from .spec import DEFAULT_ROOT, DatastoreSpec, check_name

FORMAT = "oltplab-datastore"
RAID56_WARNING = ("btrfs RAID-5/6 is marked unstable upstream (the write hole, slow scrub): "
                  "measure it, do not keep data on it")
LOOP_WARNING = ("loop devices over files of one disk measure the storage stack (file system, "
                "RAID, checksums, compression), not the media")


def folder(name: str, root: Path = DEFAULT_ROOT) -> Path:
    return root / check_name(name)


def load(name: str, root: Path = DEFAULT_ROOT) -> dict:
    path = folder(name, root) / "datastore.json"
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"no datastore {name!r} in {root}") from None
    except (OSError, ValueError) as e:
        raise OltplabError(f"{path}: cannot read it ({e})") from None
    if doc.get("format") != FORMAT:
        raise OltplabError(f"{path} is not a datastore record")
    return doc


def names(root: Path = DEFAULT_ROOT) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "datastore.json").is_file())


def owned_devices(root: Path = DEFAULT_ROOT) -> dict[str, str]:
    """Real device path -> datastore name, for every datastore in ``root``."""
    out = {}
    for name in names(root):
        try:
            doc = load(name, root)
        except OltplabError:
            continue
        for d in doc["devices"] + doc.get("spares", []):
            out[os.path.realpath(d)] = name
    return out


@contextmanager
def _no_interrupts() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the undo runs; they arrive afterwards."""
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _mkfs(spec: DatastoreSpec, devices: list[Path]) -> list[str]:
    paths = [str(d) for d in devices]
    if spec.fs == "btrfs":
        cmd = ["mkfs.btrfs", "--quiet"]
        if spec.raid:
            cmd += ["--data", spec.raid]
        if spec.metadata:
            cmd += ["--metadata", spec.metadata]
        if spec.checksum and spec.checksum != "off":
            cmd += ["--csum", spec.checksum]
        return cmd + (["--force"] if spec.force else []) + paths
    if spec.fs == "xfs":
        return ["mkfs.xfs", "-q"] + (["-f"] if spec.force else []) + paths
    # no lazy init: ext4lazyinit would write the inode tables in the background of a run
    return (["mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"]
            + (["-F"] if spec.force else []) + paths)


def btrfs_made(mount: Path, device: Path) -> dict:
    """The profiles and checksum the file system has (which mkfs chose where none was asked)."""
    made: dict = {**data_profiles(str(mount)), "checksum": None}
    sb = dev.run_tool(["btrfs", "inspect-internal", "dump-super", str(device)], "btrfs dump-super")
    for line in sb.splitlines():
        if line.startswith("csum_type"):
            made["checksum"] = line.split("(")[-1].rstrip(")").replace("xxhash64", "xxhash")
    return made


def create(spec: DatastoreSpec, on_step: Callable[[str], None] = lambda s: None) -> dict:
    """Make the datastore; its record. Bad input is refused before any device is touched."""
    home = folder(spec.name, spec.root)
    if home.exists():
        raise UsageError(f"datastore {spec.name!r} exists ({home}); destroy it first")
    owned = owned_devices(spec.root)
    for d in (*spec.devices, *spec.spares):
        dev.check_device(d, spec.force, owned)
    if spec.loop_count:
        dev.check_free_space(spec.root, spec.loop_count + spec.spare_loops, spec.loop_bytes)
    undo: list[Callable[[], None]] = []
    try:
        home.mkdir(parents=True)
        undo.append(lambda: shutil.rmtree(home, ignore_errors=True))
        # every loop device over our files, found afresh: Ctrl-C may land after losetup
        # attached one, before it answered
        undo.append(lambda: dev.detach_all(home / "images"))
        # a device named by a symlink (/dev/disk/by-id/...) is resolved once, here: the
        # record, btrfs and /proc/diskstats then name it alike; ``named`` keeps the names given
        devices = [Path(os.path.realpath(d)) for d in spec.devices]
        if spec.loop_count:
            images = home / "images"
            images.mkdir()
            for i in range(spec.loop_count):
                image = images / f"disk{i}.img"
                on_step(f"allocating {image.name}")
                dev.make_backing_file(image, spec.loop_bytes)
                devices.append(dev.attach_loop(image))
            spares = [Path(os.path.realpath(d)) for d in spec.spares]
            for i in range(spec.spare_loops):
                image = images / f"spare{i}.img"
                on_step(f"allocating {image.name}")
                dev.make_backing_file(image, spec.loop_bytes)
                spares.append(dev.attach_loop(image))
        else:
            spares = [Path(os.path.realpath(d)) for d in spec.spares]
        on_step(f"making {spec.fs} on {len(devices)} device(s)")
        mkfs = _mkfs(spec, devices)
        # the undo that wipes comes only once mkfs has written: a refused or failed mkfs
        # leaves the devices' old signatures as they were
        dev.run_tool(mkfs, mkfs[0])
        undo.append(lambda: [dev.wipe(d) for d in devices])
        mount = home / "mnt"
        mount.mkdir()
        opts = spec.mount_opts()
        cmd = ["mount", "-t", spec.fs] + (["-o", ",".join(opts)] if opts else [])
        if spec.fs == "btrfs":  # a multi-device btrfs needs every member known first
            dev.run_tool(["btrfs", "device", "scan"] + [str(d) for d in devices], "btrfs scan")
        undo.append(lambda: subprocess.run(["umount", str(mount)], capture_output=True))
        dev.run_tool(cmd + [str(devices[0]), str(mount)], "mount")
        doc = {"format": FORMAT, "version": 1, "name": spec.name, "dedupe": spec.dedupe,
               "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               "asked": spec.policy(), **spec.policy(),
               "mount": str(mount.absolute()), "mount_options": opts,
               "devices": [str(d) for d in devices], "spares": [str(d) for d in spares],
               "loop": ({"count": spec.loop_count, "bytes": spec.loop_bytes}
                        if spec.loop_count else None),
               "named": {os.path.realpath(d): str(d) for d in (*spec.devices, *spec.spares)
                         if os.path.realpath(d) != str(d)},
               "mkfs": mkfs, "warnings": warnings(spec)}
        # what proves at destroy that a device is still this datastore's (names shift)
        doc["identity"] = {str(d): dev.identity(d) for d in devices}
        doc["fs_uuid"] = doc["identity"][str(devices[0])]["uuid"]
        if spec.fs == "btrfs":
            doc.update(btrfs_made(mount, devices[0]))
            if spec.checksum == "off":
                doc["checksum"] = "off"
        if not spec.compress and spec.fs == "btrfs":
            doc["compress"] = "none"
        doc["empty_used_bytes"] = used_bytes(spec.fs, mount)
        atomic_write(home / "datastore.json", json.dumps(doc, indent=2) + "\n")
        return doc
    except BaseException:
        with _no_interrupts():
            for step in reversed(undo):
                try:
                    step()
                except Exception:
                    pass
        raise


def warnings(spec: DatastoreSpec) -> list[str]:
    out = []
    if spec.fs == "btrfs" and {"raid5", "raid6"} & {spec.raid, spec.metadata}:
        out.append(RAID56_WARNING)
    if spec.loop_count:
        out.append(LOOP_WARNING)
    return out


def mounted(doc: dict) -> bool:
    return os.path.ismount(doc["mount"])


def show(name: str, root: Path = DEFAULT_ROOT) -> dict:
    """The record with the devices' facts, the live mount options and the space figures."""
    doc = load(name, root)
    reconcile(doc)
    out = {k: doc[k] for k in ("name", "fs", "raid", "metadata", "checksum", "compress",
                               "mount", "created", "warnings")}
    out["mounted"] = mounted(doc)
    out["dedupe"] = doc.get("dedupe", False)
    out["dedupe_runs"] = doc.get("dedupe_runs", [])
    out["builds"] = doc.get("builds", [])
    out["mount_options"] = doc["mount_options"]
    out["mount_options_in_force"] = _live_options(doc["mount"])
    out["devices"] = [dev.facts(Path(d)) for d in doc["devices"]]
    out["loop"] = doc["loop"]
    out["space"] = measure(doc["fs"], Path(doc["mount"]), doc["empty_used_bytes"]) \
        if out["mounted"] else None
    return out


def destroy(name: str, root: Path = DEFAULT_ROOT,
            on_step: Callable[[str], None] = lambda s: None) -> None:
    doc = load(name, root)
    home = folder(name, root)
    mount = Path(doc["mount"])
    try:
        reconcile(doc)  # a device btrfs let go of meanwhile is not its to wipe
    except OltplabError:
        pass  # each device's identity is checked before a wipe all the same
    if os.path.ismount(mount):
        on_step(f"unmounting {mount}")
        p = subprocess.run(["umount", str(mount)], capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            why = ((p.stderr.strip() or "umount failed").splitlines()[-1]
                   .split(": ")[-1].rstrip("."))
            raise OltplabError(f"datastore {name!r}: cannot unmount {mount}: {why} "
                               "(stop what uses it: a server, a shell inside it)")
    if doc["loop"]:  # loop devices over our files: whichever still serve them
        # a fail-device fault that died with its process leaves its backing file immutable
        dev.clear_immutable(home / "images")
        for loop in dev.loops_under(home / "images"):
            dev.wipe(loop)
        dev.detach_all(home / "images")
    else:  # the devices it has that still carry its file system: nothing else is wiped
        # (a device a fault removed was released then; a spare never used holds nothing)
        for d in map(Path, doc["devices"] + doc.get("spares", [])):
            if not os.path.exists(d):
                continue
            why = dev.not_ours(d, doc.get("fs_uuid"))
            if why is None:
                dev.wipe(d)
            elif d in map(Path, doc["devices"]):
                on_step(f"{d} left alone: {why}")
    shutil.rmtree(home)


def holding(path: Path) -> dict | None:
    """The record of the datastore whose mount holds ``path`` (which may not exist yet), or
    None: the mount's parent folder has the datastore.json that names that mount."""
    from ..host.facts import path_storage
    mount = path_storage(path).get("mount_point")
    if not mount:
        return None
    home = Path(mount).parent
    try:
        doc = load(home.name, home.parent)
    except OltplabError:
        return None
    return doc if os.path.realpath(doc["mount"]) == os.path.realpath(mount) else None


def describe(doc: dict, with_space: bool = True) -> dict:
    """What a run records of the datastore under it: the policy, the devices' facts, the mount
    options in force and (``with_space``) the space figures now."""
    try:
        reconcile(doc)
        unchecked = None
    except OltplabError as e:  # the run is recorded all the same, with why
        unchecked = str(e)
    out = {k: doc[k] for k in ("name", "fs", "raid", "metadata", "checksum", "compress",
                               "mount")}
    out["dedupe"] = doc.get("dedupe", False)
    out["dedupe_runs"] = doc.get("dedupe_runs", [])
    out["mount_options"] = _live_options(doc["mount"])
    out["devices"] = [dev.facts(Path(d)) for d in doc["devices"]]
    out["loop"] = doc["loop"]
    if unchecked:
        out["record_unchecked"] = unchecked
    if with_space:
        out["space"] = measure(doc["fs"], Path(doc["mount"]), doc["empty_used_bytes"])
    return out


def _live_options(mount: str) -> str | None:
    """The mount's options as the kernel has them now (mountinfo's per-mount and super block
    options), or None where it is not mounted."""
    from ..host.facts import path_storage
    info = path_storage(mount)
    if info.get("mount_point") != os.path.realpath(mount):
        return None
    return ",".join(x for x in (info.get("mount_options"), info.get("fs_options")) if x)


def members(mount: str) -> list[str]:
    """The devices ``btrfs filesystem show`` lists as the file system's members now, as it
    names them (a device it reports missing is left out)."""
    out = dev.run_tool(["btrfs", "filesystem", "show", "--raw", str(mount)],
                       "btrfs filesystem show")
    found = [m.group(1) for m in re.finditer(r"^\s*devid\s+\d+\s.*?\bpath (.+?)\s*$", out, re.M)]
    return [p for p in found if not p.startswith("<")]  # "<missing disk>"


def data_profiles(mount: str) -> dict[str, str]:
    """{"raid": data profile, "metadata": metadata profile} as ``btrfs filesystem df`` has them
    now; where chunks of two profiles hold data (a conversion stopped half way), both, joined
    with "+" ("raid1+raid5")."""
    out = dev.run_tool(["btrfs", "filesystem", "df", "-b", str(mount)], "btrfs filesystem df")
    totals: dict[str, dict[str, int]] = {"Data": {}, "Metadata": {}}
    for m in re.finditer(r"^(Data|Metadata), (\w+): total=(\d+)", out, re.M):
        totals[m.group(1)][m.group(2).lower()] = int(m.group(3))

    def held(kind: str) -> str | None:  # the profiles with chunks, else all it lists
        names = sorted(p for p, n in totals[kind].items() if n) or sorted(totals[kind])
        return "+".join(names) or None
    return {"raid": held("Data"), "metadata": held("Metadata")}


def reconcile(doc: dict) -> dict:
    """Make a mounted btrfs datastore's record say what the file system has, and write it
    (atomically) where it differs: its members as ``btrfs filesystem show`` lists them (named
    as the record names them), a member it no longer lists moved to ``removed``, a spare it
    took in the place of the device it replaced, and the profiles of its chunks. The one
    writer of a datastore's members and profiles after create: faults call it when their
    work has ended, however it ended. Returns the fields that changed ({} when none)."""
    if doc["fs"] != "btrfs" or not mounted(doc):
        return {}
    known = [*doc["devices"], *doc.get("spares", []), *doc.get("removed", [])]
    by_real = {os.path.realpath(d): d for d in reversed(known)}
    now = [by_real.get(os.path.realpath(p), p) for p in members(doc["mount"])]
    new = [d for d in now if d not in doc["devices"]]
    devices, gone = [], []
    for d in doc["devices"]:
        if d in now:
            devices.append(d)
        elif new:  # a replace: the spare takes the place of the device it replaced
            devices.append(new.pop(0))
            gone.append(d)
        else:
            gone.append(d)
    devices += new
    fields = {"devices": devices,
              "spares": [s for s in doc.get("spares", []) if s not in devices],
              "removed": list(dict.fromkeys([*doc.get("removed", []), *gone]))}
    fields.update(data_profiles(doc["mount"]))
    changed = {k: v for k, v in fields.items() if doc.get(k, [] if k == "removed" else None) != v}
    if changed:
        update(doc, **changed)
    return changed


def update(doc: dict, **fields) -> dict:
    """Change the record of the datastore ``doc`` describes (after a device left it, a profile
    changed) and write it atomically."""
    doc.update(fields)
    home = Path(doc["mount"]).parent
    atomic_write(home / "datastore.json", json.dumps(doc, indent=2) + "\n")
    return doc


def dedupe(name: str, root: Path = DEFAULT_ROOT, doc: dict | None = None) -> dict:
    """Run duperemove over the datastore's files (``-dr``: find duplicate extents, share
    them), timed; the space before and after; the entry added to ``dedupe_runs``."""
    import tempfile
    doc = doc or load(name, root)
    if not mounted(doc):
        raise OltplabError(f"datastore {doc['name']!r} is not mounted")
    mount = Path(doc["mount"])
    # data still in the page cache has no extents yet: duperemove would find nothing to share
    # (measure syncs the file system first)
    before = measure(doc["fs"], mount, doc["empty_used_bytes"])
    with tempfile.TemporaryDirectory(prefix="oltplab-dedupe-") as scratch:
        t0 = time.monotonic()
        out = dev.run_tool(["duperemove", "-dr", "-q", f"--hashfile={scratch}/hashes",
                            str(mount)], "duperemove", timeout=24 * 3600)
        seconds = time.monotonic() - t0
    after = measure(doc["fs"], mount, doc["empty_used_bytes"])
    entry = {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "seconds": round(seconds, 3),
             "allocated_before_bytes": before["allocated_bytes"],
             "allocated_after_bytes": after["allocated_bytes"],
             "dedupe_saved_bytes": after["dedupe_saved_bytes"],
             "duperemove_shared_bytes": duperemove_shared(out)}
    update(doc, dedupe_runs=doc.get("dedupe_runs", []) + [entry])
    return entry


def duperemove_shared(output: str) -> int | None:
    """duperemove's own count of the bytes its run newly shared (its summary's "net change in
    shared extents"), or None when it printed none."""
    for line in output.splitlines():
        if "net change in shared extents" in line:
            words = line.rsplit(":", 1)[-1].split()
            if words and words[0].lstrip("-").isdigit():
                return int(words[0])
    return None


def after_build(datadir: Path) -> dict | None:
    """After a build into ``datadir`` on a datastore: the space its files take, kept in the
    record's ``builds`` (the last 20), then duperemove when it was made with --dedupe; the
    dedupe's entry, or None."""
    doc = holding(Path(datadir))
    if doc is None:
        return None
    space = measure(doc["fs"], Path(doc["mount"]), doc["empty_used_bytes"])
    builds = doc.get("builds", []) + [{"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                       "datadir": str(datadir), "space": space}]
    update(doc, builds=builds[-20:])
    if not doc.get("dedupe"):
        return None
    return dedupe(doc["name"], doc=doc)
