from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
from conftest import free_port


def oltplab(*args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None,
            check_rc: int | None = None) -> subprocess.CompletedProcess:
    """Run the CLI as a user does, in a child process."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    full_env.pop("OLTPLAB_DSN", None)
    p = subprocess.run([sys.executable, "-m", "oltplab", *args], cwd=cwd, env=full_env,
                       capture_output=True, text=True, timeout=timeout)
    if check_rc is not None:
        assert p.returncode == check_rc, f"rc={p.returncode}\nstdout:{p.stdout}\nstderr:{p.stderr}"
    return p


def scraped(*args: str, port: int, cwd: Path | None = None, timeout: float = 240,
            every: float = 0.5) -> tuple[subprocess.CompletedProcess, list[tuple[str, str]]]:
    """Run the CLI in a child process and fetch http://127.0.0.1:PORT/metrics every ``every``
    seconds while it runs: the finished process and each page (content type, text) fetched."""
    import time
    import urllib.error
    import urllib.request
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("OLTPLAB_DSN", None)
    proc = subprocess.Popen([sys.executable, "-m", "oltplab", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pages = []
    try:
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    pages.append((r.headers["Content-Type"], r.read().decode()))
            except (urllib.error.URLError, ConnectionError, OSError):
                pass  # not listening yet, or any more
            time.sleep(every)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), pages


def saved_runs(results: Path) -> list[dict]:
    """The records in a results folder, oldest first (none when there is no folder)."""
    if not results.is_dir():
        return []
    return [json.loads((p / "run.json").read_text()) for p in sorted(results.iterdir())
            if (p / "run.json").is_file()]


@pytest.fixture
def cli():
    return oltplab


@pytest.fixture(scope="session")
def built_w1():
    """``built_w1(engine, datadir)``: ``datadir`` becomes a stopped managed server with a W=1
    schema. Each engine's is built once per session by ``tpcc build`` (seed 7) and copied with
    ``cp -a`` (owner and modes kept), as neighbours copies its template; tests of the build
    itself build their own."""
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))  # outside pytest's 0700 base
    built: dict[str, Path] = {}

    def copy(engine: str, datadir: Path) -> Path:
        if engine not in built:
            template = root / engine
            flags = ["--engine", engine, "--datadir", str(template), "--port", str(free_port()),
                     "--db-memory", "256MiB"]
            try:
                oltplab("tpcc", "build", *flags, "-w", "1", "--build-users", "2", "--seed", "7",
                        cwd=root, check_rc=0)
            finally:
                oltplab("db", "stop", *flags, cwd=root, check_rc=0)
            built[engine] = template
        subprocess.run(["cp", "-a", str(built[engine]), str(datadir)], check=True)
        return datadir

    yield copy
    shutil.rmtree(root, ignore_errors=True)


def server_pids(path: Path) -> list[int]:
    """Servers (postmasters) whose command line names ``path``: a data directory, or a folder
    that holds data directories."""
    found = []
    for p in psutil.process_iter(["name", "cmdline"]):
        try:
            if p.info["name"] == "postgres" and str(path) in " ".join(p.info["cmdline"] or []):
                found.append(p.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


def loops_over(folder: Path) -> list[str]:
    """The loop devices whose backing file is under ``folder``."""
    from oltplab.datastores.devices import loops_under
    return [str(p) for p in loops_under(folder)]


def mounts_under(folder: Path) -> list[str]:
    text = Path("/proc/self/mountinfo").read_text()
    points = [line.split()[4] for line in text.splitlines()]
    return [p for p in points if p.startswith(str(folder))]


def datastore(root: Path, *args: str, rc: int = 0) -> subprocess.CompletedProcess:
    """``oltplab datastore ARGS --root ROOT``, expecting exit code ``rc``."""
    return oltplab("datastore", *args, "--root", str(root), check_rc=rc)


@pytest.fixture
def datastore_root(server_tmp):
    """A datastore root outside pytest's 0700 base (a server's OS user goes into it), where
    root may make loop devices and mount; whatever a test leaves in it is destroyed after."""
    if os.geteuid() != 0:
        pytest.skip("datastores need root (losetup, mkfs, mount)")
    for tool in ("losetup", "mkfs.btrfs", "mkfs.xfs", "btrfs"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    probe = server_tmp / "probe.img"
    probe.write_bytes(b"\0" * 1024**2)
    p = subprocess.run(["losetup", "--find", "--show", str(probe)], capture_output=True,
                       text=True)
    if p.returncode != 0:
        pytest.skip(f"no loop devices here: {p.stderr.strip()}")
    subprocess.run(["losetup", "--detach", p.stdout.strip()])
    probe.unlink()
    root = server_tmp / "ds"
    yield root
    for name in (sorted(root.iterdir()) if root.is_dir() else []):
        oltplab("datastore", "destroy", name.name, "--root", str(root))
    for mount in mounts_under(server_tmp):
        subprocess.run(["umount", "-l", mount])
    for loop in loops_over(server_tmp):
        subprocess.run(["losetup", "--detach", loop])
