"""The cluster's state file, ``<cluster dir>/state.json``: what ``cluster up`` started, where.

It is written atomically after each process starts, so that ``status``, ``down``, a later
``up`` (which attaches to what is alive) and the cleanup after Ctrl-C know every process,
whatever moment the command stopped at. A process on this machine is known by its pid and
its start time (a reused pid is not taken for it); one on another host by its pid there and
the folder that holds its pid file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import OltplabError, UsageError
from ..results.store import atomic_write
from .hosts import HostSpec

STATE_VERSION = 1
DEFAULT_DIR = Path("oltplab-cluster")  # beside where the command runs, as results/ is
STATE_FILE = "state.json"


@dataclass(frozen=True)
class Process:
    pid: int
    started: float | None  # its start time (psutil) on this machine; None on another host
    log: str  # its log file, on the host it runs on

    def alive_here(self) -> bool:
        """Whether this process of this machine still runs (not a zombie, not a reused pid)."""
        import psutil
        try:
            p = psutil.Process(self.pid)
            return (abs(p.create_time() - (self.started or 0)) < 0.05
                    and p.status() != psutil.STATUS_ZOMBIE)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return False


@dataclass(frozen=True)
class Worker:
    """One host's worker: its spec as hosts.toml gave it, its process, its folder there."""

    host: HostSpec
    process: Process
    dir: str
    address: str | None = None  # tls://...: where the scheduler reaches it, once it did

    @property
    def name(self) -> str:
        return self.host.name

    @property
    def via(self) -> str:
        return "local" if self.host.ssh is None else "ssh"


@dataclass(frozen=True)
class ClusterState:
    folder: Path
    hosts_file: str
    cluster_id: str
    scheduler: Process
    scheduler_address: str | None = None  # tls://host:port once it listens
    workers: tuple[Worker, ...] = field(default_factory=tuple)

    @property
    def certs_folder(self) -> Path:
        return self.folder / "certs"

    def worker(self, name: str) -> Worker:
        for w in self.workers:
            if w.name == name:
                return w
        raise UsageError(f"the cluster in {self.folder} has no host named {name!r} "
                         f"(hosts: {', '.join(w.name for w in self.workers) or 'none'})")

    def host_with(self, datastore: str) -> str:
        """The name of the host that has ``datastore``: work on it goes there and nowhere
        else."""
        for w in self.workers:
            if datastore in w.host.datastores:
                return w.name
        raise UsageError(f"no host of the cluster in {self.folder} has datastore {datastore!r}")

    def with_worker(self, worker: Worker) -> ClusterState:
        others = tuple(w for w in self.workers if w.name != worker.name)
        return replace(self, workers=others + (worker,))

    def without_worker(self, name: str) -> ClusterState:
        return replace(self, workers=tuple(w for w in self.workers if w.name != name))

    def to_json(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "hosts_file": self.hosts_file,
                "cluster_id": self.cluster_id, "scheduler": asdict(self.scheduler),
                "scheduler_address": self.scheduler_address,
                "workers": [{"host": w.host.as_dict(), "process": asdict(w.process),
                             "dir": w.dir, "address": w.address} for w in self.workers]}

    @classmethod
    def from_json(cls, folder: Path, doc: dict[str, Any]) -> ClusterState:
        if doc.get("version") != STATE_VERSION:
            raise OltplabError(f"{folder / STATE_FILE}: state version {doc.get('version')!r} "
                               f"is not {STATE_VERSION}; stop its processes by hand")
        workers = tuple(Worker(HostSpec.from_dict(w["host"]), Process(**w["process"]), w["dir"],
                               w.get("address")) for w in doc["workers"])
        return cls(Path(folder), doc["hosts_file"], doc["cluster_id"],
                   Process(**doc["scheduler"]), doc.get("scheduler_address"), workers)


def read_state(folder: Path) -> ClusterState | None:
    """The state in ``folder``, or None when no cluster was started there."""
    path = Path(folder) / STATE_FILE
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise OltplabError(f"{path}: cannot read it: {e}") from None
    try:
        return ClusterState.from_json(Path(folder), doc)
    except (KeyError, TypeError) as e:
        raise OltplabError(f"{path}: not a cluster state file ({e})") from None


def load_state(folder: Path = DEFAULT_DIR) -> ClusterState:
    """The state of the cluster that ``cluster up`` started in ``folder``."""
    state = read_state(folder)
    if state is None:
        raise OltplabError(f"no cluster is up in {folder} (oltplab cluster up HOSTS.toml "
                           "starts one)")
    return state


def write_state(state: ClusterState) -> None:
    atomic_write(state.folder / STATE_FILE, json.dumps(state.to_json(), indent=2) + "\n")


def remove_state(folder: Path) -> None:
    (Path(folder) / STATE_FILE).unlink(missing_ok=True)
