"""The shop end to end as a user runs it: build 10MB, run two user counts with the checks,
read the record; and the refusals of bad input."""

from __future__ import annotations

import json
import re

import pytest
from conftest import free_port

from ..conftest import oltplab, saved_runs, scraped
from .steps import check_sql_mode_steps, check_steps, pg_shop, sql_mode_run


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A managed PostgreSQL with a 10MB shop (and nothing else), stopped afterwards."""
    root = tmp_path_factory.mktemp("dvds")
    with pg_shop(root) as (flags, p):
        yield root, flags, p


def test_build_run_check_and_the_record(shop):
    root, flags, built = shop
    assert "built the 10MB shop (20,000 customers, 12,000 orders, 10,000 products)" in built.stdout
    p = oltplab("dvds", "run", *flags, "--users", "1,2", "--rampup", "2s", "--duration", "12s",
                "--sample-interval", "0", "--power", "none", "--check", "--seed", "5",
                "--results-dir", str(root / "results"), cwd=root, check_rc=0)
    assert "OPM" in p.stdout and "consistency: all hold (DS1-DS6)" in p.stdout
    [run] = saved_runs(root / "results")
    assert run["kind"] == "dvds" and run["workload"] == "dvds" and run["status"] == "completed"
    assert run["schema"]["size"] == "10MB" and run["schema"]["customers"] == 20_000
    assert run["check"]["ok"], run["check"]
    shown = json.loads(oltplab("results", "show", "latest", "--json", "--results-dir",
                               str(root / "results"), cwd=root, check_rc=0).stdout)
    check_steps(shown, [1, 2])
    # the driver's log: per step, a line at 10 s of the window and one at its end
    [folder] = (root / "results").iterdir()
    lines = (folder / "driver.log").read_text().splitlines()
    assert [ln.split()[0] for ln in lines] == ["users=1", "users=1", "users=2", "users=2"]
    last = dict(re.findall(r"(\w+)=\s*(\S+)", lines[-1]))
    assert float(last["et"]) == 12.0 and int(last["n_overall"]) > 0
    assert abs(int(last["opm"]) - shown["steps"][1]["client_opm"]) <= \
        0.02 * shown["steps"][1]["client_opm"]
    assert "OPM" in oltplab("results", "list", "--results-dir", str(root / "results"),
                            cwd=root, check_rc=0).stdout
    assert oltplab("dvds", "check", *flags, cwd=root, check_rc=0).stdout.count("ok") >= 4


def test_sql_mode_run_agrees_with_the_server_and_records_its_mode(shop):
    """--mode sql: the calls' statements from the client; the same figures, the server's
    orders within 0.5% of the client's, the rollbacks counted, the checks kept."""
    root, flags, _ = shop
    check_sql_mode_steps(sql_mode_run(flags, root / "sql", root, "8"))


@pytest.mark.parametrize("args, rc, words", [
    (("build", "--size", "3XB"), 2, "3XB"),
    (("build", "--size", "0MB"), 2, "size"),
    (("run", "--users", "0"), 2, "users"),
    (("run", "--pct-new-customers", "120"), 2, "0..100"),
    (("run", "--pct-new-customers", "-1"), 2, "0..100"),
    (("run", "--searches", "0"), 2, "--searches"),
    (("run", "--ds3", "--pct-new-reviews", "101"), 2, "0..100"),
    (("run", "--pct-new-helpfulness", "-5"), 2, "0..100"),
    (("run", "--pct-new-members", "100.5"), 2, "0..100"),
    (("run", "--ds3", "--reviews", "0"), 2, "--reviews"),
    (("run", "--mode", "both"), 2, "--mode"),
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


def test_a_killed_backend_dips_the_orders_and_the_run_goes_on(shop):
    root, flags, _ = shop
    p = oltplab("dvds", "run", *flags, "--users", "2", "--rampup", "1s", "--duration", "10s",
                "--sample-interval", "0", "--power", "none", "--inject", "at=4s,kill-backend",
                "--results-dir", str(root / "faults"), cwd=root, check_rc=0)
    assert "event at=4s,kill-backend: at 4" in p.stdout and "OPM before" in p.stdout, p.stdout
    [run] = saved_runs(root / "faults")
    [event] = run["events"]
    step = run["steps"][0]
    assert event["before_tpm"] > 0 and step["opm"] > 0  # ORDERS' rows survive the reset
    assert len(step["throughput"]["per_s"]) == 10 and step["throughput"]["unit"] == "orders"


def test_the_metrics_endpoint_serves_the_shops_opm(shop):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    root, flags, _ = shop
    port = free_port()
    p, pages = scraped("dvds", "run", *flags, "--users", "2", "--rampup", "1s", "--duration",
                       "5s", "--power", "none", "--io-latency", "off", "--metrics-port",
                       str(port), "--results-dir", str(root / "live"), cwd=root, port=port)
    assert p.returncode == 0, p.stderr
    [run] = saved_runs(root / "live")
    kinds = {(s.labels["kind"], s.labels["run"]) for _, text in pages
             for f in text_string_to_metric_families(text)
             if f.name == "oltplab_throughput_per_minute" for s in f.samples if s.value > 0}
    assert kinds == {("tpm", run["id"]), ("opm", run["id"])}


def test_a_run_whose_check_fails_says_which_exits_1_and_keeps_its_record(shop):
    """One product's sales raised by hand before the run: the run measures, its check names
    the condition that fails, and the record keeps the figures with status check-failed."""
    import psycopg
    root, flags, _ = shop
    oltplab("db", "start", *flags, cwd=root, check_rc=0)
    dsn = json.loads(oltplab("db", "status", "--json", *flags, cwd=root, check_rc=0).stdout)["dsn"]

    def sales(delta: int) -> None:
        with psycopg.connect(dsn, dbname="dvds", autocommit=True) as conn:
            conn.execute("UPDATE inventory SET sales = sales + %s WHERE prod_id = 1", (delta,))

    sales(1)
    try:
        p = oltplab("dvds", "run", *flags, "--users", "1", "--rampup", "1s", "--duration", "2s",
                    "--sample-interval", "0", "--power", "none", "--check",
                    "--results-dir", str(root / "failing"), cwd=root)
        assert p.returncode == 1, p.stdout + p.stderr
        # DS4 (sales against the order lines) and DS5 (sales added since the build)
        assert "consistency: FAILED DS4, DS5" in p.stdout, p.stdout
        assert p.stderr.strip().splitlines()[-1].endswith("consistency checks failed: DS4, DS5")
        [run] = saved_runs(root / "failing")
        assert run["status"] == "check-failed" and run["steps"][0]["opm"] > 0
        assert [c["name"] for c in run["check"]["conditions"] if not c["ok"]] == ["DS4", "DS5"]
    finally:
        oltplab("db", "start", *flags, cwd=root)
        sales(-1)
    assert oltplab("dvds", "check", *flags, cwd=root).returncode == 0
