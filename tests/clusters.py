"""What the cluster's tests share: a hosts file, the processes a cluster left, and an sshd of
the test's own on a loopback port (key-only, its own host key and client key)."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import psutil
import pytest

SSHD = "/usr/sbin/sshd"
# how long the tests let up wait: each Dask process imports for seconds of CPU, and a machine
# whose cores are busy with other suites makes that many times longer
UP_TIMEOUT = 180.0


def write_hosts(path: Path, hosts: list[dict], scheduler: dict | None = None) -> Path:
    """A hosts.toml of ``hosts`` (each a dict of a [[hosts]] table; ``ssh`` a dict too)."""
    def value(v) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return str(v) if isinstance(v, int) else f'"{v}"'

    lines = []
    if scheduler:
        lines += ["[scheduler]"] + [f"{k} = {value(v)}" for k, v in scheduler.items()] + [""]
    for h in hosts:
        lines += ["[[hosts]]"] + [f"{k} = {value(v)}" for k, v in h.items()] + [""]
    path.write_text("\n".join(lines))
    return path


def cluster_processes(*folders: Path) -> list[psutil.Process]:
    """Running processes (zombies do not run) whose command line names one of ``folders``
    or whose working directory is in one."""
    marks = [str(f) for f in folders]
    found = []
    for p in psutil.process_iter(["cmdline", "cwd", "status"]):
        if p.info["status"] == psutil.STATUS_ZOMBIE or p.pid == os.getpid():
            continue
        text = " ".join(p.info["cmdline"] or []) + " " + (p.info["cwd"] or "")
        if any(m in text for m in marks) and "pytest" not in text:
            found.append(p)
    return found


def children_of_workers(cluster_dir: Path, marker: str) -> dict[int, str]:
    """The running processes the cluster's Dask workers started whose command line holds
    ``marker`` (e.g. ``oltplab.loadgen.worker``): pid -> host."""
    from oltplab.cluster import load_state
    owners = {w.process.pid: w.name for w in load_state(cluster_dir).workers}
    found = {}
    for p in psutil.process_iter(["ppid", "cmdline", "status"]):
        if p.info["ppid"] in owners and p.info["status"] != psutil.STATUS_ZOMBIE \
                and marker in " ".join(p.info["cmdline"] or []):
            found[p.pid] = owners[p.info["ppid"]]
    return found


def running(pids) -> list[int]:
    """Those of ``pids`` that still run (a zombie does not)."""
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def resume_workers(cluster_dir: Path) -> None:
    """SIGCONT to every worker of the cluster (a test that stopped one failed half way)."""
    import signal

    from oltplab.cluster import load_state
    for w in load_state(cluster_dir).workers:
        try:
            os.kill(w.process.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def wait_until(condition, timeout: float = 20.0, every: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()


def listening(pids: list[int]) -> list[str]:
    """The addresses the processes ``pids`` listen on (TCP)."""
    found = []
    for pid in pids:
        p = psutil.Process(pid)
        conns = p.net_connections("tcp") if hasattr(p, "net_connections") else p.connections()
        found += [c.laddr.ip for c in conns if c.status == psutil.CONN_LISTEN]
    return found


@dataclass(frozen=True)
class Sshd:
    port: int
    user: str
    key: Path  # the client's private key
    known_hosts: Path

    def ssh_table(self, **more) -> dict:
        return {"address": "127.0.0.1", "user": self.user, "key": str(self.key),
                "port": self.port, "known_hosts": str(self.known_hosts), **more}


@contextmanager
def sshd(folder: Path, port: int) -> Iterator[Sshd]:
    """``/usr/sbin/sshd -D -f CONFIG -p PORT`` on 127.0.0.1, keys only; skips the test with
    the reason when sshd is missing or cannot run here."""
    if not os.path.exists(SSHD) or shutil.which("ssh-keygen") is None or not shutil.which("ssh"):
        pytest.skip(f"{SSHD}, ssh or ssh-keygen is missing (Debian: openssh-server)")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)],
                       check=True)
    shutil.copy(folder / "client_key.pub", folder / "authorized_keys")
    (folder / "known_hosts").write_text(
        f"[127.0.0.1]:{port} {(folder / 'host_key.pub').read_text()}")
    (folder / "sshd_config").write_text(
        "ListenAddress 127.0.0.1\n"
        f"HostKey {folder / 'host_key'}\n"
        f"PidFile {folder / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
        "PermitRootLogin prohibit-password\nUsePAM no\nStrictModes no\nLogLevel ERROR\n")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # its privilege separation folder
    log = open(folder / "sshd.log", "wb")
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(folder / "sshd_config"), "-p",
                             str(port)], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    try:
        if not wait_until(lambda: proc.poll() is not None or _accepts(port), timeout=10) \
                or proc.poll() is not None:
            pytest.skip(f"sshd cannot run here: {(folder / 'sshd.log').read_text().strip()}")
        yield Sshd(port, getpass.getuser(), folder / "client_key", folder / "known_hosts")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
