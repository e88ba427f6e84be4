"""A step split over hosts: the same users and seeds as on one machine, worker processes
dealt over the hosts, instants translated, each host's part (its clock: cluster.clocks)."""

from __future__ import annotations

import pytest

from oltplab.cluster.clocks import Offset
from oltplab.config import RunSpec
from oltplab.loadgen import split
from oltplab.loadgen.messages import Final, Progress, Start, Stop
from oltplab.loadgen.step import Step
from oltplab.metrics.summary import TypeCounts
from oltplab.workloads import get as get_workload


class Monitor:
    flush_stats = True


class Placed:
    """What remote.Fleets gives a Step, without a cluster."""

    def __init__(self, hosts):
        self.hosts = hosts
        self.placed = None

    def workers(self, users, default):
        return split.workers_for(users, default, len(self.hosts))

    def fleet(self, plans):
        self.placed = split.split(plans, self.hosts)
        return self


def _step(users: int, fleets=None, workers: int | None = None) -> Step:
    spec = RunSpec(users=(users,), workers=workers, seed=5)
    return Step(0, "postgresql://u@/db?host=/tmp", spec, users, 4, None, 99, Monitor(), None,
                fleets=fleets)


@pytest.mark.parametrize("users,hosts", [(4, ("h1", "h2")), (7, ("a", "b", "c")), (1, ("a", "b"))])
def test_the_hosts_run_exactly_the_users_of_one_machine(users, hosts):
    here = _step(users, workers=1)
    placed = Placed(hosts)
    there = _step(users, placed)
    mine = sorted((u for p in here.plans for u in p.users), key=lambda u: u.index)
    theirs = sorted((u for ps in placed.placed.values() for p in ps for u in p.users),
                    key=lambda u: u.index)
    assert theirs == mine and len(mine) == users
    workers = [p.worker for ps in placed.placed.values() for p in ps]
    assert sorted(workers) == list(range(len(workers)))  # unique across hosts
    assert len(workers) == there.nworkers >= min(users, len(hosts))
    assert all(ps for ps in placed.placed.values()) == (users >= len(hosts))


def test_workers_go_round_robin_over_the_hosts():
    plans = _step(8, workers=5).plans
    got = split.split(plans, ("h1", "h2"))
    assert [p.worker for p in got["h1"]] == [0, 2, 4] and [p.worker for p in got["h2"]] == [1, 3]


def test_workers_for_gives_each_host_one_and_no_user_two():
    assert split.workers_for(100, 1, 2) == 2
    assert split.workers_for(100, 4, 2) == 4
    assert split.workers_for(1, 1, 3) == 1
    assert split.workers_for(2, 8, 3) == 2


def test_host_names():
    assert split.host_names(" h1, h2 ") == ("h1", "h2")
    for bad in ("", "h1,", "a,b,a"):
        with pytest.raises(ValueError):
            split.host_names(bad)


def test_instants_are_translated_both_ways():
    assert split.to_host(Start(10, 20), 5) == Start(15, 25)
    assert split.to_host(Stop(), 5) == Stop()
    p = Progress(3, 1_000, 7, 2)
    assert split.from_host(p, 400) == Progress(3, 600, 7, 2)
    f = Final(1, (), (), 0, 0, False, ((100, 200), (300,)))
    assert split.from_host(f, 50).crossings == ((50, 150), (250,))


def _final(worker: int, counts: list[int], cpu: float) -> Final:
    wl = get_workload("tpcc")
    tc = tuple(TypeCounts(committed=c) for c in counts)
    assert len(tc) == len(wl.transactions)
    return Final(worker, tc, (), 0, 0, False, cpu_s=cpu)


def test_a_host_part_sums_its_workers_and_a_failed_one_says_so():
    wl = get_workload("tpcc")
    plans = split.split(_step(6, workers=4).plans, ("h1", "h2"))
    finals = {0: _final(0, [10, 9, 1, 1, 1], 0.5), 2: _final(2, [5, 4, 0, 1, 0], 0.25),
              1: _final(1, [3, 3, 0, 0, 0], 0.1)}
    clk = Offset("h1", wall_offset_ns=7, mono_offset_ns=1_234_567, bound_ns=445_062,
                 rtt_ns=890_123, probes=5)
    h1 = split.host_part("h1", plans["h1"], finals, {}, wl, clk, None)
    assert h1 == {"host": "h1", "users": 3, "workers": 2, "completed": 32, "units": 15,
                  "cpu_s": 0.75, "reported": 2, "clock_offset_ms": 1.235, "round_trip_ms": 0.89,
                  "status": "completed"}
    h2 = split.host_part("h2", plans["h2"], finals, {1: (40, 12), 3: (8, 2)}, wl, None,
                         "host h2: gone")
    assert h2["status"] == "failed" and h2["error"] == "host h2: gone"
    assert (h2["completed"], h2["reported"], h2["completed_so_far"]) == (6, 1, 48)
    assert h2["clock_offset_ms"] is None
