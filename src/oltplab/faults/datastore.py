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

The event records ``seconds`` (start to end), ``bytes_moved`` (the chunks the removal, the
replacement or the conversion relocated, the bytes the scrub read) and ``mb_per_s``, with the
throughput dip and recovery that every fault gets. When the run ends first, the work is cancelled
(the file system goes back as it was) and the event says so. The btrfs commands run in a session of
their own, so a Ctrl-C reaches only oltplab, which cancels them.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path

from ..config import InjectEvent
from ..datastores import service
from ..datastores.spec import PROFILES
from ..errors import DatabaseError, UsageError

MiB = 1024**2
POLL_S = 0.2


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


def device_allocated(mount: str) -> dict[str, int]:
    """Device path -> bytes of chunks allocated on it (data, metadata, system)."""
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
    """A btrfs command that the fault starts at its time and waits for."""

    lasts = False
    cancel: tuple[str, ...] = ()

    @classmethod
    def make(cls, target, event: InjectEvent, need_connections: int):
        return cls(target, event)

    def __init__(self, target, event: InjectEvent):
        self.event = event
        self.datadir = Path(target.instance.datadir) if target.instance else None

    def command(self, doc: dict) -> tuple[list[str], int, dict]:
        """(the command, the bytes it will move, fields for the record)"""
        raise NotImplementedError

    def after(self, doc: dict, out: str) -> dict:
        return {}

    def fire(self, rec: dict, stop: threading.Event) -> None:
        if self.datadir is None:
            raise DatabaseError("device faults need the managed server's data directory")
        doc = service.holding(self.datadir)
        if doc is None:
            raise DatabaseError(f"{self.datadir} is no longer on a datastore")
        cmd, moved, fields = self.command(doc)
        rec.update(fields, datastore=doc["name"], command=" ".join(cmd))
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        while proc.poll() is None:
            if stop.wait(POLL_S):
                subprocess.run(["btrfs", *self.cancel, doc["mount"]], capture_output=True,
                               timeout=600)
                proc.wait()
                rec["seconds"] = round(time.monotonic() - t0, 3)
                raise DatabaseError(f"cancelled after {rec['seconds']:.1f} s: the run ended "
                                    "before the file system was done")
        out, err = proc.communicate()
        seconds = time.monotonic() - t0
        if proc.returncode != 0:
            raise DatabaseError(f"{' '.join(cmd[:3])}: {_why(err, out, proc.returncode)}")
        extra = self.after(doc, out)
        moved = extra.pop("bytes_moved", moved)
        rec.update(extra)
        rec.update(seconds=round(seconds, 3), bytes_moved=moved,
                   mb_per_s=round(moved / MiB / seconds, 1) if seconds > 0 else None)


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
        if arg not in devices:
            raise UsageError(f"--inject {event.text}: not a device of datastore "
                             f"{doc['name']!r} ({', '.join(devices)})")
        return arg

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
        moved = device_allocated(doc["mount"]).get(device, 0)
        return (["btrfs", "device", "remove", device, doc["mount"]], moved,
                {"device": device, "devices_before": len(doc["devices"])})

    def after(self, doc: dict, out: str) -> dict:
        device = self.pick(doc, self.event)
        service.update(doc, devices=[d for d in doc["devices"] if d != device],
                       removed=doc.get("removed", []) + [device])
        return {}


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
                data_total(doc["mount"]), {"from": doc["raid"], "to": self.event.arg})

    def after(self, doc: dict, out: str) -> dict:
        service.update(doc, raid=self.event.arg)
        return {}


class Scrub(_BtrfsWork):
    cancel = ("scrub", "cancel")

    @staticmethod
    def check(db, event: InjectEvent, planned: dict | None = None) -> None:
        _datastore(db.datadir, event.text, planned)

    def command(self, doc: dict):
        return ["btrfs", "scrub", "start", "-B", "-R", doc["mount"]], 0, {}

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
        moved = device_allocated(doc["mount"]).get(device, 0)
        spare = doc["spares"][0]
        return (["btrfs", "replace", "start", "-B", "-f", device, spare, doc["mount"]], moved,
                {"device": device, "spare": spare})

    def after(self, doc: dict, out: str) -> dict:
        device = self.pick(doc, self.event)
        spare = doc["spares"][0]
        service.update(doc, devices=[spare if d == device else d for d in doc["devices"]],
                       spares=doc["spares"][1:], removed=doc.get("removed", []) + [device])
        return {}


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
            ro = read_only(self.doc["mount"])
            failed = sum(e.get("write_io_errs", 0) for e in errors.values())
            rec.update(device_errors=errors, read_only=ro,
                       outcome=("the file system went read-only" if ro else
                                f"degraded: the file system kept going read-write with "
                                f"{failed} write errors counted on the failed device"))
