"""Run folders: ``run.json`` (schema-versioned), ``steps.csv`` and the server log,
written atomically.

A run folder is ``<results_dir>/<YYYYmmddTHHMMSS>-<label>/``. The record is rewritten after every
step, so an interrupted or failed run keeps what it measured.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable

from ..errors import OltplabError, UsageError

SCHEMA_VERSION = 3  # 2: a fio run's job list is ``jobs`` (was ``plan``, now a plan's label)
# 3: a run on a database names its ``engine``, a run of a workload's users its ``workload``
# The kinds of record that ran on a database before version 3, all on PostgreSQL.
V2_DATABASE_KINDS = ("tpcc", "backup", "neighbours")
LATENCY_KEYS = ("mean", "p50", "p95", "p99", "max")


@contextmanager
def held_lock(path: Path, busy: Callable[[str], OltplabError]):
    """Hold the lock file ``path`` (with our process id in it) while the body runs; when
    another process holds it, raise ``busy(its process id)``."""
    import fcntl
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise busy(f.read().strip() or "unknown") from None
        f.truncate(0)
        f.write(f"{os.getpid()}\n")
        f.flush()
        yield


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write to a temporary file beside ``path``, fsync it, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def new_run_dir(results_dir: Path, label: str) -> Path:
    """A fresh, unique run folder named after the local time and the label."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    results_dir = Path(results_dir)
    if results_dir.exists() and not results_dir.is_dir():
        raise UsageError(f"results directory {results_dir} is a file")
    for n in range(1000):
        suffix = f"-{n}" if n else ""
        path = results_dir / f"{stamp}-{label}{suffix}"
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            continue
        except PermissionError as e:
            raise UsageError(f"cannot create a run folder in {results_dir}: "
                             f"{e.strerror}") from None
    raise UsageError(f"too many runs named {label!r} this second in {results_dir}")


def steps_csv(steps: list[dict[str, Any]], workload) -> str:
    """One row per step: users, server and client TPM and headline (NOPM, the shop's OPM), per
    type counts and latencies (ms), the input shares of the workload
    (``workloads.base.Workload``) and the number of warnings."""
    key = workload.unit_key
    header = ["users", "tpm", "workload_tpm", key, "client_tpm", f"client_{key}", "measured_s",
              "partial"]
    for t in workload.transactions:
        header += [f"{t}_count", f"{t}_rolled_back", f"{t}_errors", f"{t}_retries"]
        header += [f"{t}_{k}_ms" for k in LATENCY_KEYS]
    header += list(workload.share_keys) + ["warnings"]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for s in steps:
        row = [s.get("users"), s.get("tpm"), s.get("workload_tpm"), s.get(key),
               s.get("client_tpm"), s.get(f"client_{key}"), s.get("measured_s"),
               int(bool(s.get("partial")))]
        for t in workload.transactions:
            x = s.get("transactions", {}).get(t, {})
            row += [x.get("count"), x.get("rolled_back"), x.get("errors"), x.get("retries")]
            row += [x.get(k) for k in LATENCY_KEYS]
        row += [(s.get("inputs") or {}).get(k) for k in workload.share_keys]
        row.append(len(s.get("warnings") or ()))
        w.writerow(row)
    return out.getvalue()


class RunRecord:
    """The mutable record of one run while it is being made; ``save()`` writes it atomically."""

    def __init__(self, path: Path, record: dict[str, Any]):
        self.path = Path(path)
        self.data = record

    @classmethod
    def create(cls, results_dir: Path, kind: str, label: str, **fields: Any) -> "RunRecord":
        path = new_run_dir(results_dir, label)
        record = {
            "schema_version": SCHEMA_VERSION,
            "kind": kind,
            "id": path.name,
            "name": label,
            "status": "running",
            "error": None,
            "started_at": _now_iso(),
            "ended_at": None,
            "steps": [],
        }
        record.update(fields)
        rec = cls(path, record)
        rec.save()
        return rec

    def add_step(self, step: dict[str, Any]) -> None:
        self.data["steps"].append(step)
        self.save()

    def finish(self, status: str, error: str | None = None) -> None:
        self.data["status"] = status
        self.data["error"] = error
        self.data["ended_at"] = _now_iso()
        self.save()

    def save(self) -> None:
        atomic_write(self.path / "run.json", json.dumps(self.data, indent=2, default=str) + "\n")
        if self.data.get("workload"):  # steps of a workload's users
            from .. import workloads
            atomic_write(self.path / "steps.csv",
                         steps_csv(self.data["steps"], workloads.of_record(self.data)))


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def list_runs(results_dir: Path) -> list[dict[str, Any]]:
    """Every readable run record under ``results_dir``, oldest first."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        return []
    runs = []
    for p in sorted(results_dir.iterdir()):
        f = p / "run.json"
        if f.is_file():
            try:
                data = upgrade(json.loads(f.read_text()))
            except (OSError, ValueError):
                continue
            data["_path"] = str(p)
            runs.append(data)
    return runs


def load_run(results_dir: Path, ref: str) -> dict[str, Any]:
    """A run by folder name, unique prefix, path, or ``latest``."""
    p = Path(ref)
    if (p / "run.json").is_file():
        data = upgrade(json.loads((p / "run.json").read_text()))
        data["_path"] = str(p)
        return data
    runs = list_runs(results_dir)
    if not runs:
        raise UsageError(f"no runs in {results_dir}")
    if ref == "latest":
        return runs[-1]
    exact = [r for r in runs if r["id"] == ref]
    if exact:
        return exact[0]
    matches = [r for r in runs if r["id"].startswith(ref) or r.get("name") == ref]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no run {ref!r} in {results_dir} (see 'oltplab results list')")
    return matches[-1] if all(m.get("name") == ref for m in matches) else _ambiguous(ref, matches)


def _ambiguous(ref: str, matches: list[dict[str, Any]]):
    raise UsageError(f"{ref!r} matches {len(matches)} runs: "
                     f"{', '.join(m['id'] for m in matches[:5])}")


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older record to the current schema version."""
    version = data.get("schema_version")
    if version is None or version > SCHEMA_VERSION:
        raise ValueError(f"unsupported run schema version {version}")
    if version < 2:
        if data.get("kind") == "fio" and isinstance(data.get("plan"), list):
            data["jobs"] = data.pop("plan")
        data["schema_version"] = 2
    if data["schema_version"] < 3:
        if not data.get("engine") and data.get("kind") in V2_DATABASE_KINDS:
            db, server = (data.get("config") or {}).get("db"), data.get("database")
            named = db.get("engine") if isinstance(db, dict) else None
            served = str(server.get("engine") or "") if isinstance(server, dict) else ""
            data["engine"] = named or ("mariadb" if served.lower() == "mariadb" else "postgres")
        if data.get("kind") == "tpcc" and not data.get("workload"):
            data["workload"] = "tpcc"
            run = (data.get("config") or {}).get("run")
            if isinstance(run, dict):
                run.setdefault("workload", "tpcc")
        data["schema_version"] = 3
    _device_fault_figures(data)
    return data


OLD_REBUILDS = ("remove-device", "replace-device", "convert")


def _device_fault_figures(data: dict[str, Any]) -> None:
    """Device faults recorded before their bytes were measured (no ``bytes_moved_counts``):
    a removal's, a replacement's or a conversion's ``bytes_moved`` was the chunks allocated
    (now ``allocated_bytes``; the bytes written were not measured), and every ``mb_per_s`` was
    in MiB/s; a scrub's bytes were what it read, its rate is given again in MB/s (10^6 bytes).
    Keyed on the field rather than a version: records of every version may hold such events."""
    for e in data.get("events") or ():
        if not isinstance(e, dict) or "bytes_moved" not in e or "bytes_moved_counts" in e:
            continue
        if e.get("kind") in OLD_REBUILDS:
            e.update(allocated_bytes=e["bytes_moved"], bytes_moved=None, mb_per_s=None,
                     bytes_moved_counts="not measured by the version that made this record")
        elif e.get("kind") == "scrub":
            seconds, moved = e.get("seconds"), e.get("bytes_moved")
            e.update(bytes_moved_counts=("bytes the scrub read and verified "
                                         "(data_bytes_scrubbed + tree_bytes_scrubbed)"),
                     mb_per_s=(round(moved / 1e6 / seconds, 1)
                               if moved is not None and seconds else None))
