"""The shop end to end as a user runs it: build 10MB, run two user counts with the checks,
read the record; and the refusals of bad input."""

from __future__ import annotations

import json

import pytest
from conftest import free_port

from ..conftest import oltplab, saved_runs


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A managed PostgreSQL with a 10MB shop (and nothing else), stopped afterwards."""
    root = tmp_path_factory.mktemp("dvds")
    flags = ["--datadir", str(root / "pg"), "--port", str(free_port()), "--db-memory", "256MiB"]
    try:
        p = oltplab("dvds", "build", *flags, "--size", "10MB", "--build-users", "2", "--seed",
                    "3", cwd=root, check_rc=0)
        yield root, flags, p
    finally:
        oltplab("db", "stop", *flags, cwd=root)


def test_build_run_check_and_the_record(shop):
    root, flags, built = shop
    assert "built the 10MB shop (20,000 customers, 12,000 orders, 10,000 products)" in built.stdout
    p = oltplab("dvds", "run", *flags, "--users", "1,2", "--rampup", "2s", "--duration", "12s",
                "--sample-interval", "0", "--power", "none", "--check", "--seed", "5",
                "--results-dir", str(root / "results"), cwd=root, check_rc=0)
    assert "OPM" in p.stdout
    [run] = saved_runs(root / "results")
    assert run["kind"] == "dvds" and run["workload"] == "dvds" and run["status"] == "completed"
    assert run["schema"]["size"] == "10MB" and run["schema"]["customers"] == 20_000
    assert run["check"]["ok"], run["check"]
    shown = json.loads(oltplab("results", "show", "latest", "--json", "--results-dir",
                               str(root / "results"), cwd=root, check_rc=0).stdout)
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
    assert [s["users"] for s in shown["steps"]] == [1, 2]
    assert "OPM" in oltplab("results", "list", "--results-dir", str(root / "results"),
                            cwd=root, check_rc=0).stdout
    assert oltplab("dvds", "check", *flags, cwd=root, check_rc=0).stdout.count("ok") >= 4


@pytest.mark.parametrize("args, rc, words", [
    (("build", "--size", "3XB"), 2, "3XB"),
    (("build", "--size", "0MB"), 2, "size"),
    (("run", "--users", "0"), 2, "users"),
    (("run", "--pct-new-customers", "120"), 2, "0..100"),
    (("run", "--pct-new-customers", "-1"), 2, "0..100"),
    (("run", "--searches", "0"), 2, "--searches"),
    (("run", "--mode", "sql"), 2, "--mode sql"),
])
def test_bad_input_is_one_line(tmp_path, args, rc, words):
    p = oltplab("dvds", *args, "--datadir", str(tmp_path / "pg"), cwd=tmp_path)
    assert p.returncode == rc, (p.stdout, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1 and words in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "pg").exists()


def test_a_run_needs_the_shop_and_a_tpcc_database_is_not_one(shop):
    root, flags, _ = shop
    p = oltplab("dvds", "run", *flags, "--dbname", "empty", "--duration", "1s",
                "--results-dir", str(root / "none"), cwd=root)
    assert p.returncode == 1 and "oltplab dvds build" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    p = oltplab("tpcc", "run", *flags, "--dbname", "dvds", "--duration", "1s",
                "--results-dir", str(root / "none"), cwd=root)
    assert p.returncode == 1 and "DVD-Store-derived" in p.stderr, p.stderr
    assert not (root / "none").exists() or not saved_runs(root / "none")
