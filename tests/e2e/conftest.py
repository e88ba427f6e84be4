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
