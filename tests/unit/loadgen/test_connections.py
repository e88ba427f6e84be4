"""The server connections a run needs: its users', and the brokerage's market actors as each
worker's share of the users opens them."""

from oltplab import workloads
from oltplab.config import RunSpec
from oltplab.loadgen.step import actor_connections, deal
from oltplab.runs.lifecycle import connections_needed


def test_users_are_dealt_round_robin_over_the_workers():
    class U:
        def __init__(self, index):
            self.index = index
    shares = deal([U(i) for i in range(5)], 2)
    assert [[u.index for u in s] for s in shares] == [[0, 2, 4], [1, 3]]


def test_each_worker_opens_its_shares_actors():
    bk = workloads.get("brokerage")
    assert actor_connections(bk, 8, 2) == 2 + 2      # 4 users a worker: the minimum, 2
    assert actor_connections(bk, 20, 2) == 3 + 3     # 10 users a worker: one per 4, rounded up
    assert actor_connections(bk, 20, 1) == 5
    assert actor_connections(bk, 3, 3) == 2 + 2 + 2
    assert actor_connections(workloads.get("tpcc"), 20, 2) == 0


def test_a_run_asks_for_the_most_any_worker_count_opens():
    # 20 users over 1 or 2 workers: 5 or 6 actors; 21 more for the monitor, sampler and checks
    spec = RunSpec(users=(1, 20), workload="brokerage", workers=2)
    assert connections_needed(spec) == 20 + 6 + 21
    assert connections_needed(RunSpec(users=(4,), workload="tpcc", workers=2)) == 4 + 21
