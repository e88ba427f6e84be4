"""What every step of a shop's run record holds, whatever the engine: the server's OPM beside
the client's, rollbacks, the order's and each phase's response times, the measured inputs;
and a short run in --mode sql, which must show the same."""

from __future__ import annotations

import json

from ..conftest import oltplab, saved_runs


def sql_mode_run(flags: list[str], results, cwd, seed: str) -> dict:
    """A short ``dvds run --mode sql`` of 2 users with the checks: its ``results show --json``,
    having checked what it records beside the steps (its mode, the checks passed)."""
    oltplab("dvds", "run", *flags, "--mode", "sql", "--users", "2", "--rampup", "1s",
            "--duration", "6s", "--check", "--sample-interval", "0", "--power", "none",
            "--seed", seed, "--results-dir", str(results), cwd=cwd, check_rc=0)
    [run] = saved_runs(results)
    assert run["status"] == "completed" and run["driver"]["mode"] == "sql"
    assert run["check"]["ok"], run["check"]
    return json.loads(oltplab("results", "show", "latest", "--json", "--results-dir",
                              str(results), cwd=cwd, check_rc=0).stdout)


def check_sql_mode_steps(shown: dict) -> None:
    """The same figures as procedures mode, the rollbacks counted, no call failed."""
    check_steps(shown, [2])
    [step] = shown["steps"]
    assert step["rollback_pct"] > 0  # about 1% of the orders find a product short
    calls = {k: v for k, v in step["transactions"].items() if k != "order"}
    assert sum(t["errors"] for t in calls.values()) == 0, calls


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
