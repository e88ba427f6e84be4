"""What every step of a shop's run record holds, whatever the engine: the server's OPM beside
the client's, rollbacks, the order's and each phase's response times, the measured inputs;
and the managed servers with a 10MB shop the tests run on; a short run in --mode sql, which
must show the same."""

from __future__ import annotations

import json
from contextlib import contextmanager

from conftest import free_port

from ..conftest import oltplab, saved_runs


@contextmanager
def pg_shop(root, *build: str):
    """A managed PostgreSQL under ``root`` with a 10MB shop (``build``: more build flags):
    (its flags, the build's output); stopped afterwards."""
    flags = ["--datadir", str(root / "pg"), "--port", str(free_port()), "--db-memory", "256MiB"]
    try:
        yield flags, oltplab("dvds", "build", *flags, "--size", "10MB", "--build-users", "2",
                             "--seed", "3", *build, cwd=root, check_rc=0)
    finally:
        oltplab("db", "stop", *flags, cwd=root)


@contextmanager
def mariadb_shop(root, *build: str):
    """The same on a managed MariaDB."""
    flags = ["--engine", "mariadb", "--datadir", str(root / "my"), "--db-memory", "256MiB"]
    try:
        oltplab("db", "start", *flags, cwd=root, check_rc=0)
        yield flags, oltplab("dvds", "build", *flags, "--size", "10MB", "--build-users", "2",
                             "--seed", "3", *build, cwd=root, check_rc=0)
    finally:
        oltplab("db", "stop", *flags, cwd=root)


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


DS3_CALLS = ("reviews_product", "reviews_actor", "reviews_title", "new_review",
             "new_helpfulness", "new_member")


def check_ds3_steps(shown: dict, users: list[int], enough: int = 300) -> None:
    """``shown``: a DS3 run's ``results show --json`` with the default percentages; shares
    are checked in steps of at least ``enough`` orders."""
    assert [s["users"] for s in shown["steps"]] == users
    for step in shown["steps"]:
        assert step["opm"] > 0 and step["client_opm"] > 0
        assert abs(step["client_opm"] - step["opm"]) <= max(0.005 * step["opm"], 1), step
        assert set(step["phases"]) == {"login", "new_customer", "browse", "reviews", "purchase"}
        calls = {k: v for k, v in step["transactions"].items() if k != "order"}
        assert set(DS3_CALLS) - {"new_member"} <= set(calls)
        assert sum(t["errors"] for t in calls.values()) == 0, calls
        assert step["phases"]["reviews"]["count"] == sum(
            calls.get(k, {}).get("count", 0) for k in DS3_CALLS)
        inputs = step["inputs"]
        assert {"reviews_per_order", "new_reviews", "new_helpfulness", "new_members"} <= \
            set(inputs)
        if step["input_counts"]["review_orders"] >= enough:
            assert 2.6 <= inputs["reviews_per_order"] <= 3.4, inputs
            assert 0.02 <= inputs["new_reviews"] <= 0.08, inputs
            assert 0.06 <= inputs["new_helpfulness"] <= 0.14, inputs
            assert inputs["new_members"] <= 0.03, inputs
        assert not [w for w in step["warnings"] if "share" in w or "per order" in w], \
            step["warnings"]


def sql_mode_run(flags: list[str], results, cwd, seed: str, duration: str = "6s") -> dict:
    """A short ``dvds run --mode sql`` of 2 users with the checks: its ``results show --json``,
    having checked what it records beside the steps (its mode, the checks passed)."""
    oltplab("dvds", "run", *flags, "--mode", "sql", "--users", "2", "--rampup", "1s",
            "--duration", duration, "--check", "--sample-interval", "0", "--power", "none",
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
