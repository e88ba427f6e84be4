"""Starting and stopping the cluster's processes: here, or on a host over ssh.

A process here is started detached from the terminal (setsid: Ctrl-C there does not reach it)
with its output in a log file. On another host one ssh command sends the host's certificate,
key and the CA's certificate as a tar stream on its standard input (never on a command line),
unpacks them 0600 in the host's folder and starts the worker there detached (setsid),
writing its pid to ``worker.pid``; ssh runs in batch mode (keys only, no password, no prompt)
and checks the host's key. Stopping sends SIGTERM, then SIGKILL after a grace period; over
ssh it also removes the host's key and certificates.

The Dask configuration every process gets: no work stealing, no retry of a task whose worker
died (``allowed-failures`` 0: it fails, it is not re-run elsewhere), TLS required, and HTTP
servers that answer health checks only, on 127.0.0.1.
"""

from __future__ import annotations

import io
import os
import shlex
import signal
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from ..errors import OltplabError
from .hosts import HostSpec, SshSpec
from .state import Process

WORKER_THREADS = 2  # a placed task holds host-<name>=1; the other thread answers the scheduler
GRACE = 10.0  # seconds between SIGTERM and SIGKILL
SSH_TIMEOUT = 10  # seconds for ssh to connect
DASK_ENV = {
    "DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING": "False",
    "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
    "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
    "DASK_DISTRIBUTED__SCHEDULER__HTTP__ROUTES": "['distributed.http.health']",
    "DASK_DISTRIBUTED__WORKER__HTTP__ROUTES": "['distributed.http.health']",
}
HTTP = "127.0.0.1:0"  # Dask's HTTP server (health only): loopback, any port


def scheduler_argv(python: str, address: str, port: int, ca: Path, cert: Path, key: Path,
                   scheduler_file: Path) -> list[str]:
    return [python, "-m", "distributed.cli.dask_scheduler", "--protocol", "tls",
            "--host", address, "--port", str(port), "--tls-ca-file", str(ca),
            "--tls-cert", str(cert), "--tls-key", str(key), "--scheduler-file",
            str(scheduler_file), "--no-dashboard", "--dashboard-address", HTTP]


def worker_argv(host: HostSpec, scheduler: str, ca: str, cert: str, key: str,
                folder: str) -> list[str]:
    resources = " ".join(f"{k}={v}" for k, v in host.resources.items())
    return [host.python, "-m", "distributed.cli.dask_worker", scheduler, "--name", host.name,
            "--nthreads", str(WORKER_THREADS), "--nworkers", "1", "--no-nanny",
            "--resources", resources, "--host", host.address, "--tls-ca-file", ca,
            "--tls-cert", cert, "--tls-key", key, "--local-directory", folder,
            "--memory-limit", "0", "--death-timeout", "60", "--no-dashboard",
            "--dashboard-address", HTTP]


# --------------------------------------------------------------------------- here

def start_here(argv: list[str], log: Path) -> Process:
    """Start ``argv`` on this machine detached from the terminal, its output in ``log``."""
    import psutil
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 cwd=log.parent, env={**os.environ, **DASK_ENV},
                                 start_new_session=True)
        except OSError as e:
            raise OltplabError(f"cannot start {argv[0]}: {e.strerror}") from None
    try:
        started = psutil.Process(p.pid).create_time()
    except psutil.NoSuchProcess:
        started = 0.0
    return Process(p.pid, started, str(log))


def stop_here(process: Process, grace: float = GRACE) -> bool:
    """SIGTERM, then SIGKILL after ``grace`` seconds; False when it was not running."""
    if not process.alive_here():
        return False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(process.pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            _reap(process.pid)
            if not process.alive_here():  # gone, or a zombie that this machine's init keeps
                return True
            time.sleep(0.05)
    return True


def _reap(pid: int) -> None:
    """Collect the exit status of a child of this process (one started by this call)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


# --------------------------------------------------------------------------- over ssh

def ssh_argv(ssh: SshSpec, command: str) -> list[str]:
    argv = ["ssh", "-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={SSH_TIMEOUT}",
            "-o", "StrictHostKeyChecking=yes", "-o", "LogLevel=ERROR", "-p", str(ssh.port)]
    if ssh.known_hosts:
        argv += ["-o", f"UserKnownHostsFile={ssh.known_hosts}"]
    if ssh.key:
        argv += ["-i", ssh.key, "-o", "IdentitiesOnly=yes"]
    if ssh.user:
        argv += ["-l", ssh.user]
    return argv + ["--", ssh.address, command]


def run_ssh(ssh: SshSpec, command: str, stdin: bytes = b"", timeout: float = 60,
            what: str = "") -> str:
    """Run ``command`` (sh) on the host; its standard output. A failure of ssh or of the
    command is one line: the host, and the last line it printed."""
    argv = ssh_argv(ssh, f"sh -c {shlex.quote(command)}")  # whatever the user's shell there
    # the input is read from a file (unlinked, 0600), not a pipe fed while ssh runs: a Ctrl-C
    # then can not cut it short, and the command started sees all of it
    with tempfile.TemporaryFile() as given:
        given.write(stdin)
        given.seek(0)
        try:
            p = subprocess.Popen(argv, stdin=given, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise OltplabError("ssh is not installed here (Debian: openssh-client)") from None
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise OltplabError(f"{what}ssh {ssh.target} -p {ssh.port}: no answer in "
                           f"{timeout:g} s") from None
    except BaseException:  # Ctrl-C: let the command finish, so that what it started is known
        try:
            p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
        raise
    if p.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        last = lines[-1] if lines else f"exit status {p.returncode}"
        raise OltplabError(f"{what}ssh {ssh.target} -p {ssh.port}: {last}")
    return out.decode(errors="replace")


def remote_dir(host: HostSpec, cluster_id: str) -> str:
    """The host's folder there: its ``dir`` (relative: under the ssh user's home), by
    default oltplab-cluster/<cluster id>-<host>."""
    folder = host.dir or f"oltplab-cluster/{cluster_id}-{host.name}"
    return folder[2:] if folder.startswith("~/") else folder


def start_over_ssh(host: HostSpec, folder: str, files: dict[str, tuple[bytes, int]],
                   argv: list[str]) -> Process:
    """Send ``files`` (name -> content, mode) to ``folder`` on the host and start ``argv``
    there; the worker's pid there."""
    assert host.ssh is not None
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in DASK_ENV.items())
    q = shlex.quote(folder)
    command = (f"set -e; umask 077; mkdir -p {q}; cd {q}; tar -x -f -; rm -f worker.pid; "
               f"env {env} setsid {shlex.join(argv)} >>worker.log 2>&1 </dev/null & "
               "echo $! >worker.pid; cat worker.pid")
    out = run_ssh(host.ssh, command, stdin=_tar(files), what=f"{host.name}: ")
    try:
        pid = int(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise OltplabError(f"{host.name}: the worker's start printed no pid: {out!r}") from None
    return Process(pid, None, f"{folder}/worker.log")


def sent_files(host: HostSpec) -> tuple[str, str, str]:
    """The names of the files a worker over ssh is sent: the CA's certificate, the host's
    certificate and key (certs.Certs.pair's names for the role ``worker-<host>``)."""
    return ("ca.pem", f"worker-{host.name}.pem", f"worker-{host.name}-key.pem")


# a process that runs: a zombie does not (a host whose init reaps no orphans keeps them)
ALIVE = ("alive() { [ -e /proc/$1 ] && ! grep -q '^State:[[:space:]]*Z' /proc/$1/status "
         "2>/dev/null; }")


def stop_over_ssh(host: HostSpec, folder: str, grace: float = GRACE) -> bool:
    """Stop the worker whose pid ``folder``/worker.pid holds (if its command line is that
    host's worker), and remove the files ``start_over_ssh`` sent there (the CA's certificate,
    the host's key and certificate; no other file of the folder); False when none ran."""
    assert host.ssh is not None
    mark = shlex.quote(f"worker-{host.name}.pem")
    ticks = max(1, int(grace * 10))
    command = (f"cd {shlex.quote(folder)} 2>/dev/null || exit 0; ran=no; {ALIVE}; "
               "pid=$(cat worker.pid 2>/dev/null || true); "
               "if [ -n \"$pid\" ] && tr '\\0' '\\n' </proc/$pid/cmdline 2>/dev/null "
               f"| grep -qxF -- {mark}; then ran=yes; kill -TERM $pid; i=0; "
               f"while alive $pid && [ $i -lt {2 * ticks} ]; do i=$((i+1)); "
               f"if [ $i -eq {ticks} ]; then kill -KILL $pid; fi; sleep 0.1; done; fi; "
               f"rm -f worker.pid {' '.join(map(shlex.quote, sent_files(host)))}; echo $ran")
    return run_ssh(host.ssh, command, timeout=grace + 60,
                   what=f"{host.name}: ").strip().endswith("yes")


def remote_log_tail(host: HostSpec, folder: str, lines: int = 3) -> str:
    """The last lines of the worker's log there ('' when they cannot be had)."""
    assert host.ssh is not None
    try:
        return run_ssh(host.ssh, f"tail -n {lines} {shlex.quote(folder)}/worker.log",
                       timeout=20)
    except OltplabError:
        return ""


def _tar(files: dict[str, tuple[bytes, int]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
