"""What every step of a shop's run record holds, whatever the engine: the server's OPM beside
the client's, rollbacks, the order's and each phase's response times, the measured inputs."""

from __future__ import annotations


def check_steps(shown: dict, users: list[int]) -> None:
    """``shown``: ``results show --json`` of a run of ``users``."""
    assert [s["users"] for s in shown["steps"]] == users
    for step in shown["steps"]:
        assert step["opm"] > 0 and step["client_opm"] > 0
        # the users' committed orders and the rows the server added: the same orders
        assert abs(step["client_opm"] - step["opm"]) <= max(0.005 * step["opm"], 1), step
        assert step["rollback_pct"] is not None and 0 <= step["rollback_pct"] < 5
        lat = step["order_latency"]
        assert lat["count"] > 0 and 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
        assert set(step["phases"]) == {"login", "new_customer", "browse", "purchase"}
        for phase in step["phases"].values():
            assert {"count", "mean", "p50", "p95", "p99", "max"} <= set(phase)
        # an order's time is its calls' time: above the mean of its purchase alone
        assert lat["mean"] > step["phases"]["purchase"]["mean"]
        assert set(step["inputs"]) == {"new_customers", "searches_per_order", "items_per_cart"}
        assert 1 <= step["inputs"]["searches_per_order"] <= 5
        assert isinstance(step["warnings"], list)
