"""``run_group``: repeats as one group, and one live metrics endpoint open across them."""

from __future__ import annotations

import socket
import urllib.request

from oltplab.config import MetricsSpec
from oltplab.runs.lifecycle import run_group


def test_repeats_share_one_endpoint_closed_after_the_group():
    seen = []

    def run_one(labels: dict, endpoint) -> dict:
        host, port = endpoint.address
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5) as r:
            assert r.read().endswith(b"# EOF\n")
        seen.append((labels["group"]["index"], endpoint, (host, port)))
        return {"status": "completed"}

    runs = run_group(2, "x", run_one, metrics=MetricsSpec(0))
    assert len(runs) == 2 and [i for i, _, _ in seen] == [1, 2]
    assert seen[0][1] is seen[1][1] and seen[0][2] == seen[1][2] and seen[0][2][1] > 0
    with socket.socket() as s:
        assert s.connect_ex(seen[0][2]) != 0


def test_without_a_port_there_is_no_endpoint():
    assert run_group(1, "x", lambda labels, endpoint: {"endpoint": endpoint}) == \
        [{"endpoint": None}]
