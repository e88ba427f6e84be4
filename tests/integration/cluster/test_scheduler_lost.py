"""The scheduler killed: status shows it and every worker dead; the next up stops the workers
left from before and starts the cluster afresh."""

from __future__ import annotations

import os
import signal

import psutil
from clusters import UP_TIMEOUT, cluster_processes, wait_until, write_hosts

from oltplab.cluster import load_hosts, load_state, service


def test_up_after_the_scheduler_died_starts_afresh(tmp_path):
    spec = load_hosts(write_hosts(tmp_path / "hosts.toml",
                                  [{"name": "h1", "address": "127.0.0.1"}]))
    folder = tmp_path / "cluster"
    first = service.up(spec, folder, timeout=UP_TIMEOUT)
    try:
        # the worker frozen first: a Dask worker that sees its scheduler go closes itself
        # within a second or two, and then there would be no worker left over to stop
        os.kill(first.worker("h1").process.pid, signal.SIGSTOP)
        psutil.Process(first.scheduler.pid).kill()
        assert wait_until(lambda: not first.scheduler.alive_here())
        status = service.status(load_state(folder))
        assert not status.scheduler_alive and [h.alive for h in status.hosts] == [False]
        steps: list[str] = []
        second = service.up(spec, folder, timeout=UP_TIMEOUT, on_step=steps.append)
        assert steps[:2] == ["stopping what is left of an earlier cluster", "h1: worker stopped"]
        assert not first.worker("h1").process.alive_here()
        assert second.scheduler.pid != first.scheduler.pid
        assert [h.alive for h in service.status(second).hosts] == [True]
    finally:
        service.down(folder)
    assert cluster_processes(folder) == []
