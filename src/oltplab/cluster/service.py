"""``cluster up``, ``status`` and ``down``: the scheduler here, one worker per host.

``up`` starts a Dask scheduler on this machine (TLS, on ``[scheduler] address``: 127.0.0.1
unless hosts.toml says) and one Dask worker per host: here when the host has no ssh table,
else over ssh. It attaches to what the state file says is alive and starts the rest, and
waits until the scheduler knows every worker. Whatever stops it (an error, Ctrl-C) stops what
this call started before the error goes up. ``status`` asks the scheduler which workers it
knows; ``down`` stops the workers, then the scheduler.
"""

from __future__ import annotations

import json
import signal
import socket
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from ..errors import OltplabError
from ..results.store import held_lock
from .certs import Certs, ensure_certs
from .client import client_of
from .clocks import Offset, probe_hosts
from .hosts import ClusterSpec, HostSpec
from .launch import (remote_dir, remote_log_tail, scheduler_argv, sent_files, start_here,
                     start_over_ssh, stop_here, stop_over_ssh, worker_argv)
from .protocol import PROBE_TIMEOUT_S
from .state import (ClusterState, Process, Worker, load_state, read_state, remove_state,
                    write_state)

Say = Callable[[str], None]
LOCK = ".lock"  # held by up and down in the cluster's folder


def _quiet(text: str) -> None:
    pass


@dataclass(frozen=True)
class HostStatus:
    name: str
    via: str  # "local" or "ssh"
    alive: bool  # the scheduler knows its worker (and, here, its process runs)
    address: str | None  # tls://...: where its worker listens
    resources: dict[str, float]
    clock: Offset | str | None = None  # its clocks against this host's, or why not known


@dataclass(frozen=True)
class Status:
    folder: Path
    hosts_file: str
    scheduler_address: str | None
    scheduler_alive: bool
    hosts: tuple[HostStatus, ...]


# --------------------------------------------------------------------------- up

def up(spec: ClusterSpec, folder: Path, timeout: float = 60.0, on_step: Say = _quiet
       ) -> ClusterState:
    """Start (or attach to) the cluster ``spec`` describes; its state once every worker is
    known to the scheduler."""
    folder = Path(folder).absolute()
    with _locked(folder):
        return _up(spec, folder, timeout, on_step)


def _up(spec: ClusterSpec, folder: Path, timeout: float, on_step: Say) -> ClusterState:
    old = read_state(folder)
    known = _known_workers(old) if old is not None else None
    state: ClusterState | None = None
    attached: set[str] = set()
    if old is not None and known is not None:
        attached = _attachable(old, spec, known)
        # a recorded worker the scheduler does not know (hung, cut off, still starting) is
        # stopped before another starts in its place; one that cannot be stopped stays
        # recorded, and up stops there, as down does
        failed = _stop_workers([w for w in old.workers if w.name not in attached], on_step)
        state = replace(old, workers=tuple(w for w in old.workers
                                           if w.name in attached or w.name in failed))
        if failed:
            write_state(state)
            raise _not_stopped(failed)
    elif old is not None:
        on_step("stopping what is left of an earlier cluster")
        failed = _stop_all(old, on_step)
        if failed:
            write_state(replace(old, workers=tuple(w for w in old.workers if w.name in failed)))
            raise _not_stopped(failed)
        remove_state(folder)
    certs = ensure_certs(folder / "certs", spec.scheduler_address,
                         {h.name: h.address for h in spec.hosts})
    own_scheduler = state is None
    started: list[HostSpec] = []
    try:
        if state is None:
            state = _start_scheduler(spec, folder, certs, timeout, on_step)
        for host in spec.hosts:
            if host.name in attached:
                on_step(f"{host.name}: attached to its worker at {known[host.name]}")
                continue
            started.append(host)
            state = _start_worker(state, host, certs, on_step)
        state = _wait_workers(state, [h.name for h in started], timeout, on_step)
        state = replace(state, hosts_file=str(spec.path.absolute()))
        write_state(state)
        return state
    except BaseException:
        _undo(folder, started, own_scheduler)
        raise


def _attachable(old: ClusterState, spec: ClusterSpec, known: dict[str, str]) -> set[str]:
    """The hosts whose running worker serves ``spec`` as it is; an error for a running
    scheduler or worker that hosts.toml no longer gives so."""
    host, _, port = (old.scheduler_address or "").removeprefix("tls://").rpartition(":")
    if host.strip("[]") != spec.scheduler_address or spec.scheduler_port not in (0, int(port)):
        raise OltplabError(f"the scheduler runs at {old.scheduler_address}, not where "
                           f"{spec.path} puts it: oltplab cluster down first")
    names = {h.name for h in spec.hosts}
    for w in old.workers:
        if w.name not in known:
            continue
        if w.name not in names:
            raise OltplabError(f"{w.name}'s worker runs, but {spec.path} names no such host: "
                               "oltplab cluster down first")
        if spec.host(w.name) != w.host:
            raise OltplabError(f"{w.name}'s worker runs with other settings than {spec.path} "
                               "gives: oltplab cluster down first")
    return {w.name for w in old.workers if w.name in known}


def _start_scheduler(spec: ClusterSpec, folder: Path, certs: Certs, timeout: float,
                     on_step: Say) -> ClusterState:
    if spec.scheduler_port and not _bindable(spec.scheduler_address, spec.scheduler_port):
        raise OltplabError(f"{spec.scheduler_address}:{spec.scheduler_port} is in use (or not "
                           "an address of this machine): give another [scheduler] port")
    on_step(f"starting the scheduler on {spec.scheduler_address}")
    sched_file = folder / "scheduler.json"
    sched_file.unlink(missing_ok=True)
    pair = certs.pair("scheduler")
    argv = scheduler_argv(sys.executable, spec.scheduler_address, spec.scheduler_port,
                          certs.ca, pair.cert, pair.key, sched_file)
    with _recorded():
        state = ClusterState(folder, str(spec.path.absolute()), certs.cluster_id(),
                             start_here(argv, folder / "scheduler.log"))
        write_state(state)
    deadline = time.monotonic() + timeout
    while True:
        try:
            address = json.loads(sched_file.read_text())["address"]
            break
        except (OSError, ValueError, KeyError):
            pass
        if not state.scheduler.alive_here():
            raise OltplabError(f"the scheduler did not start: {_tail(state.scheduler.log)}")
        if time.monotonic() > deadline:
            raise OltplabError(f"the scheduler did not listen within {timeout:g} s (its log: "
                               f"{state.scheduler.log})")
        time.sleep(0.1)
    state = replace(state, scheduler_address=address)
    write_state(state)
    on_step(f"scheduler at {address}")
    return state


def _start_worker(state: ClusterState, host: HostSpec, certs: Certs, on_step: Say
                  ) -> ClusterState:
    assert state.scheduler_address is not None
    pair = certs.pair(f"worker-{host.name}")
    if host.ssh is None:
        folder = Path(host.dir) if host.dir else state.folder / "hosts" / host.name
        on_step(f"{host.name}: starting its worker here, on {host.address}")
        argv = worker_argv(host, state.scheduler_address, str(certs.ca), str(pair.cert),
                           str(pair.key), str(folder))
        with _recorded():
            state = state.with_worker(Worker(host, start_here(argv, folder / "worker.log"),
                                             str(folder)))
            write_state(state)
        return state
    there = remote_dir(host, state.cluster_id)
    on_step(f"{host.name}: starting its worker over ssh ({host.ssh.target}, port "
            f"{host.ssh.port}), on {host.address}")
    ca_name, cert_name, key_name = sent_files(host)
    files = {ca_name: (certs.ca.read_bytes(), 0o644),
             cert_name: (pair.cert.read_bytes(), 0o644),
             key_name: (pair.key.read_bytes(), 0o600)}
    argv = worker_argv(host, state.scheduler_address, ca_name, cert_name, key_name, ".")
    # its pid is known once ssh returns: until then the state file knows its folder there,
    # and Ctrl-C waits until ssh has returned and the pid is recorded (ssh gives up after its
    # connect timeout, the command after 60 s)
    write_state(state.with_worker(Worker(host, Process(0, None, ""), there)))
    with _recorded():
        state = state.with_worker(Worker(host, start_over_ssh(host, there, files, argv),
                                         there))
        write_state(state)
    return state


def _wait_workers(state: ClusterState, names: list[str], timeout: float, on_step: Say
                  ) -> ClusterState:
    """Wait until the scheduler knows the workers ``names``; their addresses recorded."""
    assert state.scheduler_address is not None
    deadline = time.monotonic() + timeout
    waiting = set(names)
    with client_of(state.scheduler_address, state.certs_folder, max(5.0, timeout)) as client:
        while True:
            try:
                known = _by_name(client.scheduler_info())
            except (OSError, TimeoutError) as e:
                if not state.scheduler.alive_here():
                    raise OltplabError("the scheduler stopped: "
                                       f"{_tail(state.scheduler.log)}") from None
                raise OltplabError(f"the scheduler does not answer: {e}") from None
            for name in sorted(waiting & set(known)):
                on_step(f"{name}: up at {known[name]}")
                waiting.discard(name)
            state = replace(state, workers=tuple(
                replace(w, address=known.get(w.name, w.address)) for w in state.workers))
            if not waiting:
                return state
            for name in sorted(waiting):
                w = state.worker(name)
                if w.via == "local" and not w.process.alive_here():
                    raise OltplabError(f"{name}: its worker stopped: {_tail(w.process.log)}")
            if time.monotonic() > deadline:
                name = sorted(waiting)[0]
                w = state.worker(name)
                log = (_tail(w.process.log) if w.via == "local"
                       else remote_log_tail(w.host, w.dir).strip().replace("\n", " | "))
                raise OltplabError(f"{name}: its worker did not reach the scheduler within "
                                   f"{timeout:g} s{': ' + log if log else ''}")
            time.sleep(0.2)


def _undo(folder: Path, started: list[HostSpec], own_scheduler: bool) -> None:
    """Stop the workers of ``started`` and the scheduler when this call started it, as the
    state file knows them (each process is recorded there as it starts; a worker half
    started over ssh is known by its folder's pid file); the state file keeps what remains."""
    state = read_state(folder)
    if state is None:
        return
    for host in reversed(started):
        worker = next((w for w in state.workers if w.name == host.name), None)
        try:
            if worker is not None:
                _stop_worker(worker, _quiet)
            elif host.ssh is not None:
                stop_over_ssh(host, remote_dir(host, state.cluster_id))
        except OltplabError:
            pass  # the error that stopped up is the one to tell
        state = state.without_worker(host.name)
    if own_scheduler:
        stop_here(state.scheduler)
        remove_state(state.folder)
    else:
        write_state(state)


@contextmanager
def _recorded():
    """A block that starts a process and records it: Ctrl-C and SIGTERM wait until it ends
    (then take effect as they would have), so that no process runs unrecorded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    held = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in held:
        signal.signal(s, lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        for s, handler in held.items():
            signal.signal(s, handler)
    if got:
        signal.raise_signal(got[0])


# --------------------------------------------------------------------------- status

def status(state: ClusterState, clocks: bool = True) -> Status:
    """Which workers the scheduler knows, at which address, with which resources, and (with
    ``clocks``) each live host's clocks against this one's."""
    offsets: dict = {}
    info = _scheduler_info(state, _probe_clocks(state, offsets) if clocks else None)
    known, resources = _by_name(info or {}), _resources(info or {})
    hosts = []
    for w in state.workers:
        alive = w.name in known and (w.via == "ssh" or w.process.alive_here())
        hosts.append(HostStatus(w.name, w.via, alive, known.get(w.name, w.address),
                                resources.get(w.name) or {k: float(v) for k, v
                                                          in w.host.resources.items()},
                                offsets.get(w.name)))
    return Status(state.folder, state.hosts_file, state.scheduler_address, info is not None,
                  tuple(hosts))


def _probe_clocks(state: ClusterState, into: dict):
    """What ``_scheduler_info`` does with its client: probe the clocks of the hosts whose
    workers the scheduler knows and whose processes run."""
    def probe(client, info: dict) -> None:
        known = _by_name(info)
        live = [w.name for w in state.workers
                if w.name in known and (w.via == "ssh" or w.process.alive_here())]
        into.update(probe_hosts(client, live, timeout=PROBE_TIMEOUT_S))
    return probe


def _known_workers(state: ClusterState) -> dict[str, str] | None:
    """Worker name -> address, as the scheduler knows them; None when it is not reached."""
    info = _scheduler_info(state)
    return None if info is None else _by_name(info)


def _scheduler_info(state: ClusterState, then=None) -> dict | None:
    """The scheduler's ``identity`` (its workers); None when it is not reached. ``then``
    is called with the client and the identity before the client closes."""
    if not state.scheduler_address or not state.scheduler.alive_here():
        return None
    try:
        with client_of(state.scheduler_address, state.certs_folder, 5) as client:
            info = client.scheduler_info()
            if then is not None:
                then(client, info)
            return info
    except (OltplabError, OSError, TimeoutError):
        return None


def _by_name(info: dict) -> dict[str, str]:
    """Worker name -> address, of the scheduler's ``identity``."""
    return {str(w["name"]): address for address, w in info.get("workers", {}).items()}


def _resources(info: dict) -> dict[str, dict[str, float]]:
    """Worker name -> the resources the scheduler counts for it."""
    return {str(w["name"]): dict(w.get("resources") or {})
            for w in info.get("workers", {}).values()}


# --------------------------------------------------------------------------- down

def down(folder: Path, on_step: Say = _quiet) -> None:
    """Stop every worker of the cluster in ``folder``, then the scheduler; the state file
    goes when all are stopped."""
    load_state(folder)  # none there: the error, before the lock makes the folder
    with _locked(folder):
        state = load_state(folder)
        failed = _stop_all(state, on_step)
        if failed:
            write_state(replace(state, workers=tuple(w for w in state.workers
                                                     if w.name in failed)))
            raise _not_stopped(failed)
        remove_state(state.folder)
        (state.folder / "scheduler.json").unlink(missing_ok=True)


def _stop_all(state: ClusterState, on_step: Say) -> dict[str, str]:
    """Stop the workers and the scheduler; the hosts whose worker could not be stopped."""
    failed = _stop_workers(state.workers, on_step)
    if stop_here(state.scheduler):
        on_step("scheduler stopped")
    return failed


def _stop_workers(workers, on_step: Say) -> dict[str, str]:
    """Stop ``workers`` (last first); host name -> why, for those that could not be."""
    failed = {}
    for w in reversed(tuple(workers)):
        try:
            if _stop_worker(w, on_step):
                on_step(f"{w.name}: worker stopped")
        except OltplabError as e:
            failed[w.name] = str(e)
    return failed


def _not_stopped(failed: dict[str, str]) -> OltplabError:
    return OltplabError(f"could not stop the worker of {', '.join(failed)}: "
                        f"{'; '.join(failed.values())}")


def _stop_worker(w: Worker, on_step: Say) -> bool:
    if w.via == "local":
        return stop_here(w.process)
    return stop_over_ssh(w.host, w.dir)


# --------------------------------------------------------------------------- helpers

def _locked(folder: Path):
    """One up or down at a time in a cluster's folder."""
    return held_lock(Path(folder) / LOCK, lambda holder: OltplabError(
        f"another oltplab cluster up or down (process {holder}) works in {folder}: wait for "
        "it to end"))


def _bindable(address: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family) as s:
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def _tail(log: str) -> str:
    """The last line of a log worth showing (an error's, where there is one)."""
    try:
        lines = [ln.strip() for ln in Path(log).read_text(errors="replace").splitlines()
                 if ln.strip()]
    except OSError:
        return f"no log at {log}"
    errors = [ln for ln in lines if "Error" in ln or "error" in ln]
    return (errors or lines or [f"nothing in {log}"])[-1]
