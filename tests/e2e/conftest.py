from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest


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


@pytest.fixture
def cli():
    return oltplab


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
