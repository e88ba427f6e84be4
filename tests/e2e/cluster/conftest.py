"""The two "hosts" of the experiments over a cluster (Dask workers on 127.0.0.1 and
127.0.0.2), one cluster per test module."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from clusters import UP_TIMEOUT, resume_workers, write_hosts

from oltplab.cluster import load_hosts, service
from oltplab.cluster.parts import KEEP_ROOT

from ..conftest import oltplab

HOSTS = [{"name": "h1", "address": "127.0.0.1"}, {"name": "h2", "address": "127.0.0.2"}]


@pytest.fixture(scope="module")
def site():
    """A cluster of two "hosts", and a folder outside pytest's 0700 base directory for the
    instances' data (see tests/conftest.py)."""
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))
    kept = set(KEEP_ROOT.glob("neighbours-*"))
    service.up(load_hosts(write_hosts(root / "hosts.toml", HOSTS)), root / "cluster",
               timeout=UP_TIMEOUT)
    try:
        yield root
    finally:
        resume_workers(root / "cluster")
        service.down(root / "cluster")
        for d in [*((root / "nb").glob("h*/*")), *(root / "plan-data").glob("*/pg")]:
            if (d / "postmaster.pid").exists():
                oltplab("db", "stop", "--datadir", str(d), cwd=root)
        shutil.rmtree(root, ignore_errors=True)
        # what the neighbours runs' failed parts kept on the "hosts" (this machine), which no
        # test fetches (a plan's are fetched by its --resume test)
        for folder in set(KEEP_ROOT.glob("neighbours-*")) - kept:
            shutil.rmtree(folder, ignore_errors=True)
