"""tpcc run --host-memory: a small host memory makes the run read from the device, and run.json
records the limit and the group's peak; --cold needs root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oltplab.host import memory as hostmem
from oltplab.errors import UsageError

from ..conftest import free_port, oltplab

MiB = 1024**2
LIMIT = 96 * MiB  # W=1 holds ~100 MB: with 16MiB of shared_buffers the data cannot stay cached


def test_small_host_memory_reads_from_the_device_and_records_limit_and_peak(server_tmp,
                                                                            built_w1):
    try:
        hostmem.create_group(LIMIT, f"probe-{free_port()}").remove()
    except UsageError as e:
        pytest.skip(str(e))
    flags = ["--datadir", str(built_w1("postgres", server_tmp / "pg")), "--port",
             str(free_port()), "--db-memory", "16MiB"]
    cold = ["--cold"] if os.geteuid() == 0 else []
    oltplab("tpcc", "run", *flags, "--host-memory", f"{LIMIT // MiB}MiB", *cold, "--users", "2",
            "--rampup", "2s", "--duration", "8s", cwd=server_tmp, check_rc=0)
    run = json.loads(oltplab("results", "show", "latest", "--json", cwd=server_tmp,
                             check_rc=0).stdout)
    mem = run["host_memory"]
    # the data fills the group up to its limit (a charge may pass it by a page or so)
    assert mem["limit_bytes"] == LIMIT and LIMIT / 2 < mem["peak_bytes"] <= LIMIT + MiB
    assert mem["cold_drops"] == len(cold)
    assert not Path(mem["cgroup"]).exists(), "the group goes when the server stops"
    step = run["steps"][0]
    assert step["host_memory"]["limit_bytes"] == LIMIT and step["host_memory"]["peak_bytes"] > 0
    figures = step["telemetry"]
    assert figures["db"]["blks_read_s"] > 0, "the data does not fit in shared_buffers"
    assert max(d["read_mb_s"] or 0 for d in figures["devices"].values()) > 0, \
        "with the page cache limited, the reads reach the device"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="runs the command as an unprivileged user")
def test_cold_without_root_is_refused_in_one_line():
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
           "-m", "oltplab", "tpcc", "run", "--cold", "--dsn", "postgresql://x@127.0.0.1:1/x"]
    p = subprocess.run(cmd, cwd="/", capture_output=True, text=True, timeout=60,
                       env={**os.environ, "HOME": "/"})
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--cold" in lines[0] and "root" in lines[0], p.stderr
