"""DVD Store 3's parts of the shop end to end on PostgreSQL, as a user runs them: build 10MB
with --ds3, run with --ds3 (and without it on the DS3 build, and in --mode sql), check; a
--ds3 run on a DS2 build is refused in one line, touching nothing."""

from __future__ import annotations

import json

import pytest

from ..conftest import oltplab, saved_runs
from .steps import check_ds3_steps, pg_shop, sql_mode_run


@pytest.fixture(scope="module")
def shop3(tmp_path_factory):
    """A managed PostgreSQL with a 10MB DS3 shop, stopped afterwards."""
    root = tmp_path_factory.mktemp("dvds3")
    with pg_shop(root, "--ds3") as (flags, p):
        yield root, flags, p


def show(results) -> dict:
    return json.loads(oltplab("results", "show", "latest", "--json", "--results-dir",
                              str(results), check_rc=0).stdout)


def test_ds3_build_run_and_check(shop3):
    root, flags, built = shop3
    assert ("built the 10MB shop (20,000 customers, 12,000 orders, 10,000 products, DS3: 2,000 "
            "members, 50,000 reviews, 100,000 ratings)") in built.stdout
    results = root / "results"
    p = oltplab("dvds", "run", *flags, "--ds3", "--users", "2", "--rampup", "2s", "--duration",
                "15s", "--sample-interval", "0", "--power", "none", "--check", "--seed", "5",
                "--pct-new-members", "1", "--reviews", "3", "--pct-new-reviews", "5",
                "--pct-new-helpfulness", "10", "--results-dir", str(results), cwd=root,
                check_rc=0)
    assert "OPM" in p.stdout and "reviews" in p.stdout
    [run] = saved_runs(results)
    assert run["status"] == "completed" and run["check"]["ok"], run["check"]
    assert run["schema"]["ds3"] is True and run["schema"]["reviews"] == 50_000
    assert [c["name"] for c in run["check"]["conditions"]][-4:] == ["DS7", "DS8", "DS9", "DS10"]
    shown = show(results)
    check_ds3_steps(shown, [2])
    checked = oltplab("dvds", "check", *flags, cwd=root, check_rc=0).stdout
    assert "DS9" in checked and "DS10" in checked


def test_a_run_on_a_ds3_build_draws_ds3_without_the_flag(shop3):
    root, flags, _ = shop3
    results = root / "plain"
    oltplab("dvds", "run", *flags, "--users", "1", "--rampup", "1s", "--duration", "4s",
            "--sample-interval", "0", "--power", "none", "--results-dir", str(results),
            cwd=root, check_rc=0)
    [step] = show(results)["steps"]
    assert step["phases"]["reviews"]["count"] > 0 and step["input_counts"]["review_orders"] > 0
    [run] = saved_runs(results)  # the record says what ran
    assert run["config"]["run"]["params"]["ds3"] is True and run["constants"]["ds3"] is True


def test_a_ds3_run_on_a_ds2_build_is_refused_touching_nothing(shop3):
    root, flags, _ = shop3
    oltplab("dvds", "build", *flags, "--dbname", "ds2", "--size", "1MB", "--build-users", "1",
            cwd=root, check_rc=0)
    p = oltplab("dvds", "run", *flags, "--dbname", "ds2", "--ds3", "--duration", "1s",
                "--results-dir", str(root / "none"), cwd=root)
    assert p.returncode == 1 and "--ds3" in p.stderr and "DS2 build" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert not (root / "none").exists()
    # the DS2 shop's own rules hold (DS1-DS6; DS7-DS10 are a DS3 build's)
    checked = oltplab("dvds", "check", *flags, "--dbname", "ds2", cwd=root, check_rc=0).stdout
    assert "DS6" in checked and "DS7" not in checked, checked


def test_sql_mode_on_a_ds3_build_sends_ds3s_calls_from_the_client(shop3):
    """--mode sql on a DS3 shop: DVD Store 3's calls too as their statements, the same figures
    as procedures mode (server and client OPM agree, the shares, no call failed, the checks)."""
    root, flags, _ = shop3
    shown = sql_mode_run(flags, root / "sql", root, "5", duration="12s")
    check_ds3_steps(shown, [2])
    [step] = shown["steps"]
    assert step["input_counts"]["review_orders"] >= 300, step["input_counts"]  # shares checked
