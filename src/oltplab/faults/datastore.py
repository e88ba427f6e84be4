"""Faults of the datastore under the data directory (a btrfs made by ``oltplab datastore``),
run while the workload runs; each waits for the file system's work to end and records it:

- ``remove-device=N``: ``btrfs device remove``; the data leaves device N (1 is the first of
  the datastore's devices, or give its path) and is rebuilt on the others.
- ``replace-device=N``: ``btrfs replace start``; device N's data is copied onto the
  datastore's first spare (``datastore create --spares``), which takes its place.
- ``convert=PROFILE``: ``btrfs balance start -dconvert=PROFILE``, an online change of the data
  profile (the RAID level); every data chunk is rewritten.
- ``scrub``: ``btrfs scrub start -B``: every copy is read and its checksum verified.
- ``fail-device=N`` (``for=`` optional: else until the run ends): device N, a loop device,
  fails every write with EIO (its backing file is made immutable, ``chattr +i``: the loop
  device writes with direct IO, which the kernel then refuses); the event records what the
  file system did: the errors btrfs counted per device, and whether it went read-only.

The event records ``seconds`` (start to end of the btrfs command) and what the devices did
meanwhile, from their own counters (/proc/diskstats, sectors of 512 bytes), read just before
the command starts and just after it ends:

- ``bytes_moved``: for a removal, a replacement or a conversion, the bytes written by the
  remaining devices during the work (the workload's writes in that time included): the
  members that stay, and the spare of a replacement; ``devices_written_bytes`` holds each
  one's share (they add up to ``bytes_moved``). For a scrub, the bytes it read and verified,
  as its own summary counts them (data_bytes_scrubbed + tree_bytes_scrubbed).
- ``bytes_read``: the bytes read from all the devices involved during the work (the one that
  leaves included: the rebuild reads the surviving copies), ``devices_read_bytes`` per device.
- ``background_write_bytes_s``: the write rate of the devices counted in ``bytes_moved`` from
  the moment the fault was made ready (before the run's ramp-up) to the moment it fired, over
  ``background_s`` seconds: the workload's own writes, to tell from the rebuild's.
- ``allocated_bytes``: the chunks allocated on the device that leaves, before it leaves (data,
  metadata and system, as ``btrfs device usage`` counts them); for a conversion, the data
  chunks' total before it (what it rewrites).
- ``mb_per_s``: ``bytes_moved`` / 10^6 / ``seconds`` (MB = 10^6 bytes).

with the throughput dip and recovery that every fault gets. The record names what its
``bytes_moved`` counts (``bytes_moved_counts``). btrfs names devices its own way (the path it
was given, or another link to the same node): they are matched to the datastore's by the node
they resolve to, and to /proc/diskstats by that node's name (loop3 for /dev/loop3). When the
run ends first, the work is cancelled (the file system goes back as it was) and the event says
so, with the counters up to then. The btrfs commands run in a session of their own, so a Ctrl-C
reaches only oltplab, which cancels them.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path

from ..config import InjectEvent
from ..datastores import service
from ..datastores.spec import PROFILES
from ..errors import DatabaseError, UsageError
from ..telemetry.sources.disks import RD_SECT, WR_SECT, parse_diskstats

MB = 10**6
SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size
POLL_S = 0.2
# how long a fault's btrfs work may take to end once the run is over and it is cancelled
CANCEL_WAIT_S = 60.0
STILL_RUNNING = "still running"
WRITTEN_BY_REMAINING = ("bytes written by the remaining devices during the work (the "
                        "workload's writes in that time included)")
SCRUBBED = "bytes the scrub read and verified (data_bytes_scrubbed + tree_bytes_scrubbed)"


def planned(spec) -> dict:
    """What the checks need of a datastore a plan will make (a DatastoreSpec): its name, file
    system, profiles and devices (a loop device by its number until it exists)."""
    devices = [str(d) for d in spec.devices] or [f"loop device {i + 1}"
                                                  for i in range(spec.loop_count)]
    spares = [str(d) for d in spec.spares] or [f"spare loop device {i + 1}"
                                               for i in range(spec.spare_loops)]
    return {"name": spec.name, "fs": spec.fs, "raid": spec.raid, "metadata": spec.metadata,
            "devices": devices, "spares": spares}


def _datastore(datadir: Path, what: str, planned: dict | None = None) -> dict:
    """The datastore under ``datadir`` (or the one a plan will make there), checked."""
    doc = planned or service.holding(Path(datadir))
    if doc is None:
        raise UsageError(f"--inject {what}: the data directory {datadir} is on no datastore "
                         "(make one with oltplab datastore create)")
    if doc["fs"] != "btrfs":
        raise UsageError(f"--inject {what}: datastore {doc['name']!r} is {doc['fs']}; "
                         "device faults need btrfs")
    if planned is None and not service.mounted(doc):
        raise UsageError(f"--inject {what}: datastore {doc['name']!r} is not mounted")
    return doc


def _why(err: str, out: str, code: int) -> str:
    """btrfs' own reason: its ERROR line (a hint to read dmesg follows it), else its last."""
    lines = (err.strip() or out.strip() or f"exit code {code}").splitlines()
    found = [line for line in lines if line.startswith("ERROR:")]
    return (found or lines)[-1].removeprefix("ERROR: ")


def _btrfs(*args: str) -> str:
    p = subprocess.run(["btrfs", *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise DatabaseError(f"btrfs {args[0]} {args[1]}: {_why(p.stderr, p.stdout, p.returncode)}")
    return p.stdout


def block_name(device: str) -> str:
    """The name /proc/diskstats gives the node ``device`` resolves to (loop3, sdb1, dm-0)."""
    return os.path.basename(os.path.realpath(device))


def io_bytes(devices, diskstats: str = "/proc/diskstats") -> dict[str, tuple[int, int]]:
    """Device (as given) -> (bytes read, bytes written) since it appeared; a device that
    /proc/diskstats does not list is left out."""
    names = {d: block_name(d) for d in devices}
    with open(diskstats, "rb") as f:
        stats = parse_diskstats(f.read(), set(names.values()))
    return {d: (stats[n][RD_SECT] * SECTOR, stats[n][WR_SECT] * SECTOR)
            for d, n in names.items() if n in stats}


def io_delta(before: dict, after: dict) -> dict[str, tuple[int, int]]:
    """Per device in both readings: (bytes read, bytes written) between them; a device whose
    counters went back (detached and attached again meanwhile) is left out."""
    out = {}
    for d, (r0, w0) in before.items():
        if d in after and after[d][0] >= r0 and after[d][1] >= w0:
            out[d] = (after[d][0] - r0, after[d][1] - w0)
    return out


def same_device(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def allocated_on(mount: str, device: str) -> int:
    """Bytes of the chunks allocated on ``device`` (named as btrfs names it or otherwise)."""
    return sum(v for d, v in device_allocated(mount).items() if same_device(d, device))


def device_allocated(mount: str) -> dict[str, int]:
    """Device path (as btrfs prints it) -> bytes of chunks allocated on it (data, metadata,
    system)."""
    out: dict[str, int] = {}
    current = None
    for line in _btrfs("device", "usage", "-b", mount).splitlines():
        if line and not line[0].isspace():
            current = line.split(",")[0].strip()
            out[current] = 0
            continue
        name, _, value = line.strip().rpartition(":")
        if current and name.split(",")[0] in ("Data", "Metadata", "System"):
            out[current] += int(value.strip())
    return out


def data_total(mount: str) -> int:
    """Bytes of the data chunks (as btrfs filesystem df's Data total)."""
    for line in _btrfs("filesystem", "df", "-b", mount).splitlines():
        m = re.match(r"Data, \w+: total=(\d+)", line)
        if m:
            return int(m.group(1))
    return 0


class _BtrfsWork:
    """A btrfs command that the fault starts at its time and waits for, with what the
    datastore's devices read and wrote meanwhile."""

    lasts = False
    cancel: tuple[str, ...] = ()
    counts = WRITTEN_BY_REMAINING

    @classmethod
    def make(cls, target, event: InjectEvent, need_connections: int):
        return cls(target, event)

    def __init__(self, target, event: InjectEvent):
        self.event = event
        self.datadir = Path(target.instance.datadir) if target.instance else None
        self.ready = self._reading()  # the background: from now to the fault

    def _reading(self) -> tuple[float, dict] | None:
        """(now, the counters of every device and spare of the datastore), or None."""
        try:
            doc = service.holding(self.datadir) if self.datadir else None
            if doc is None:
                return None
            return time.monotonic(), io_bytes(doc["devices"] + doc.get("spares", []))
        except Exception:  # noqa: BLE001 - without it the event only lacks its background
            return None

    def command(self, doc: dict) -> tuple[list[str], dict]:
        """(the command, fields for the record)"""
        raise NotImplementedError

    def devices(self, doc: dict) -> tuple[list[str], list[str]]:
        """(the devices whose writes make ``bytes_moved``, every device the work reads)"""
        return list(doc["devices"]), list(doc["devices"])

    def after(self, doc: dict, out: str) -> dict:
        return {}

    def fire(self, rec: dict, stop: threading.Event) -> None:
        if self.datadir is None:
            raise DatabaseError("device faults need the managed server's data directory")
        doc = service.holding(self.datadir)
        if doc is None:
            raise DatabaseError(f"{self.datadir} is no longer on a datastore")
        cmd, fields = self.command(doc)
        writers, readers = self.devices(doc)
        rec.update(fields, datastore=doc["name"], command=" ".join(cmd))
        before = io_bytes(dict.fromkeys(writers + readers))
        t0 = time.monotonic()
        self._background(rec, writers, t0, before)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        ended = None
        while proc.poll() is None:
            if stop.wait(POLL_S):  # the run ended first
                ended = self._stop(proc, doc)
                break
        out, err = proc.communicate() if ended != STILL_RUNNING else ("", "")
        self._measured(rec, writers, readers, before, time.monotonic() - t0)
        rec["ended"] = ended or ("done" if proc.returncode == 0 else "failed")
        self._settle(rec, doc)
        if ended == STILL_RUNNING:
            raise DatabaseError(f"still running {CANCEL_WAIT_S:g} s after the run ended "
                                f"(btrfs {' '.join(self.cancel)} did not stop it): left running, "
                                "the datastore recorded as it was then")
        if ended == "cancelled":
            raise DatabaseError(f"cancelled after {rec['seconds']:.1f} s: the run ended "
                                "before the file system was done")
        if proc.returncode != 0:
            raise DatabaseError(f"{' '.join(cmd[:3])}: {_why(err, out, proc.returncode)}")
        rec.update(self.after(doc, out))
        rec["mb_per_s"] = rate(rec["bytes_moved"], rec["seconds"])

    def _stop(self, proc: subprocess.Popen, doc: dict) -> str:
        """Cancel the work (the run ended before it), waiting CANCEL_WAIT_S at most in all for
        the command to end; how it ended: "cancelled", "done" (it finished before the cancel
        took) or STILL_RUNNING (left running: btrfs cannot stop a removal mid-chunk)."""
        deadline = time.monotonic() + CANCEL_WAIT_S
        try:
            subprocess.run(["btrfs", *self.cancel, doc["mount"]], capture_output=True,
                           timeout=CANCEL_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return STILL_RUNNING
        return "done" if proc.returncode == 0 else "cancelled"

    @staticmethod
    def _settle(rec: dict, doc: dict) -> None:
        """The datastore's record made to say what the file system has now (its members, its
        profiles), by the datastore's owner, whatever became of the work."""
        try:
            changed = service.reconcile(doc)
        except Exception as e:  # noqa: BLE001 - the measurement is kept; the reason recorded
            rec["datastore_record"] = f"not brought up to date: {e}"
            return
        rec["devices_after"] = len(doc["devices"])
        if "raid" in changed:
            rec["raid_after"] = doc["raid"]

    def _background(self, rec: dict, writers: list[str], now: float, counters: dict) -> None:
        """The write rate of ``writers`` from the fault's making to now."""
        if self.ready is None or now <= self.ready[0]:
            return
        moved = io_delta({d: v for d, v in self.ready[1].items() if d in writers}, counters)
        if moved:
            rec.update(background_s=round(now - self.ready[0], 3),
                       background_write_bytes_s=round(sum(w for _, w in moved.values())
                                                      / (now - self.ready[0])))

    def _measured(self, rec: dict, writers: list[str], readers: list[str], before: dict,
                  seconds: float) -> None:
        moved = io_delta(before, io_bytes(dict.fromkeys(writers + readers)))
        written = {d: moved[d][1] for d in writers if d in moved}
        read = {d: moved[d][0] for d in readers if d in moved}
        by_writes = self.counts == WRITTEN_BY_REMAINING  # a scrub's come from its summary
        rec.update(seconds=round(seconds, 3), bytes_moved_counts=self.counts,
                   bytes_moved=sum(written.values()) if written and by_writes else None,
                   devices_written_bytes=written,
                   bytes_read=sum(read.values()) if read else None, devices_read_bytes=read)
        rec["mb_per_s"] = rate(rec["bytes_moved"], rec["seconds"])


def rate(nbytes: int | None, seconds: float) -> float | None:
    """MB/s, MB = 10^6 bytes."""
    return round(nbytes / MB / seconds, 1) if nbytes is not None and seconds > 0 else None


class RemoveDevice(_BtrfsWork):
    cancel = ("device", "remove", "cancel")

    @staticmethod
    def pick(doc: dict, event: InjectEvent) -> str:
        devices, arg = doc["devices"], event.arg
        if arg.isdigit():
            if not 1 <= int(arg) <= len(devices):
                raise UsageError(f"--inject {event.text}: datastore {doc['name']!r} has "
                                 f"devices 1 to {len(devices)}")
            return devices[int(arg) - 1]
        found = [d for d in devices if same_device(d, arg)]  # by any of its names
        if not found:
            raise UsageError(f"--inject {event.text}: not a device of datastore "
                             f"{doc['name']!r} ({', '.join(devices)})")
        return found[0]

    @classmethod
    def check(cls, db, event: InjectEvent, planned: dict | None = None) -> None:
        doc = _datastore(db.datadir, event.text, planned)
        cls.pick(doc, event)
        left = len(doc["devices"]) - 1
        for part in ("raid", "metadata"):
            need = PROFILES.get(doc[part] or "single", 1)
            if left < need:
                raise UsageError(f"--inject {event.text}: {doc[part]} {part} needs {need} "
                                 f"devices; {left} would be left")

    def command(self, doc: dict):
        device = self.pick(doc, self.event)
        return (["btrfs", "device", "remove", device, doc["mount"]],
                {"device": device, "devices_before": len(doc["devices"]),
                 "allocated_bytes": allocated_on(doc["mount"], device)})

    def devices(self, doc: dict):
        device = self.pick(doc, self.event)
        return [d for d in doc["devices"] if d != device], list(doc["devices"])


class Convert(_BtrfsWork):
    cancel = ("balance", "cancel")

    @staticmethod
    def check(db, event: InjectEvent, planned: dict | None = None) -> None:
        if event.arg not in PROFILES:
            raise UsageError(f"--inject {event.text}: {event.arg!r} is not one of "
                             f"{', '.join(PROFILES)}")
        doc = _datastore(db.datadir, event.text, planned)
        need = PROFILES[event.arg]
        if len(doc["devices"]) < need:
            raise UsageError(f"--inject {event.text}: {event.arg} needs {need} devices; "
                             f"datastore {doc['name']!r} has {len(doc['devices'])}")

    def command(self, doc: dict):
        # -f: no 10-second warning before a conversion to RAID-5/6 (the record says it)
        force = ["-f"] if self.event.arg in ("raid5", "raid6") else []
        return (["btrfs", "balance", "start", *force, f"-dconvert={self.event.arg}",
                 doc["mount"]],
                {"from": doc["raid"], "to": self.event.arg,
                 "allocated_bytes": data_total(doc["mount"])})


class Scrub(_BtrfsWork):
    cancel = ("scrub", "cancel")

    @staticmethod
    def check(db, event: InjectEvent, planned: dict | None = None) -> None:
        _datastore(db.datadir, event.text, planned)

    counts = SCRUBBED

    def command(self, doc: dict):
        return ["btrfs", "scrub", "start", "-B", "-R", doc["mount"]], {}

    def after(self, doc: dict, out: str) -> dict:
        stats = dict(re.findall(r"^\s*(\w+):\s*(\d+)\s*$", out, re.M))
        moved = int(stats.get("data_bytes_scrubbed", 0)) + int(stats.get("tree_bytes_scrubbed", 0))
        errors = sum(int(v) for k, v in stats.items() if k.endswith("_errors"))
        return {"bytes_moved": moved, "errors": errors}


class ReplaceDevice(RemoveDevice):
    cancel = ("replace", "cancel")

    @classmethod
    def check(cls, db, event: InjectEvent, planned: dict | None = None) -> None:
        doc = _datastore(db.datadir, event.text, planned)
        cls.pick(doc, event)
        if not doc.get("spares"):
            raise UsageError(f"--inject {event.text}: datastore {doc['name']!r} has no spare "
                             "(datastore create --spares)")

    def command(self, doc: dict):
        device = self.pick(doc, self.event)
        if not doc.get("spares"):
            raise DatabaseError(f"datastore {doc['name']!r} has no spare left")
        spare = doc["spares"][0]
        return (["btrfs", "replace", "start", "-B", "-f", device, spare, doc["mount"]],
                {"device": device, "spare": spare,
                 "allocated_bytes": allocated_on(doc["mount"], device)})

    def devices(self, doc: dict):
        device, spare = self.pick(doc, self.event), doc["spares"][0]
        return ([spare if d == device else d for d in doc["devices"]],
                doc["devices"] + [spare])


def device_stats(mount: str) -> dict[str, dict[str, int]]:
    """btrfs device stats: device -> {write_io_errs: n, read_io_errs: n, ...}."""
    out: dict[str, dict[str, int]] = {}
    for line in _btrfs("device", "stats", mount).splitlines():
        m = re.match(r"\[(.+)\]\.(\w+)\s+(\d+)", line)
        if m:
            out.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3))
    return out


def read_only(mount: str) -> bool:
    from ..host.facts import path_storage
    return "ro" in (path_storage(mount).get("mount_options") or "").split(",")


class FailDevice(RemoveDevice):
    """A loop device that fails its writes, as a dying disk does, for ``for_s`` or until the
    run ends; what btrfs did is recorded."""

    lasts = True

    @classmethod
    def check(cls, db, event: InjectEvent, planned: dict | None = None) -> None:
        doc = _datastore(db.datadir, event.text, planned)
        cls.pick(doc, event)
        if planned is None and not doc.get("loop"):
            raise UsageError(f"--inject {event.text}: datastore {doc['name']!r} is on real "
                             "devices; fail-device fails a loop device's writes")
        if planned is not None and not planned["devices"][0].startswith("loop device"):
            raise UsageError(f"--inject {event.text}: fail-device fails a loop device's "
                             "writes; give the datastore loop devices")

    def __init__(self, target, event: InjectEvent):
        super().__init__(target, event)
        self._lock = threading.Lock()
        self.image: str | None = None
        self.doc: dict | None = None
        self.before: dict = {}

    def fire(self, rec: dict, stop: threading.Event) -> None:
        from ..datastores.devices import loop_backing
        with self._lock:
            self.doc = doc = service.holding(self.datadir) if self.datadir else None
            if doc is None:
                raise DatabaseError(f"{self.datadir} is no longer on a datastore")
            device = self.pick(doc, self.event)
            self.image = (loop_backing(Path(device)) or "").removesuffix(" (deleted)") or None
            if self.image is None:
                raise DatabaseError(f"{device} is not a loop device")
            self.before = device_stats(doc["mount"])
            subprocess.run(["chattr", "+i", self.image], check=True, capture_output=True)
            rec.update(device=device, datastore=doc["name"], backing_file=self.image)
        if not self.event.for_s:
            stop.wait()  # until the run ends

    def end(self, rec: dict) -> None:
        with self._lock:
            if self.image is None:
                return
            image, self.image = self.image, None
            subprocess.run(["chattr", "-i", image], capture_output=True)
            after = device_stats(self.doc["mount"])
            errors = {d: {k: v - self.before.get(d, {}).get(k, 0) for k, v in stats.items()
                          if v - self.before.get(d, {}).get(k, 0)}
                      for d, stats in after.items()}
            errors = {d: e for d, e in errors.items() if e}
            self._settle(rec, self.doc)
            ro = read_only(self.doc["mount"])
            failed = sum(e.get("write_io_errs", 0) for e in errors.values())
            rec.update(device_errors=errors, read_only=ro,
                       outcome=("the file system went read-only" if ro else
                                f"degraded: the file system kept going read-write with "
                                f"{failed} write errors counted on the failed device"))
