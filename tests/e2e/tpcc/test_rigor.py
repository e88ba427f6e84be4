"""Every run shows its rigor: the workload's own TPM beside HammerDB's instance-wide TPM, the
input shares of clause 5.5 and the warnings, as a user reads them from the CLI."""

from __future__ import annotations

import json
import math

import pytest

from ..conftest import oltplab

SHARES = ("remote_order_lines", "remote_payments", "payments_by_last_name",
          "order_status_by_last_name", "rolled_back_new_orders", "skipped_deliveries")


def _run(dsn: str, results, mode: str) -> dict:
    p = oltplab("tpcc", "run", "--dsn", dsn, "--mode", mode, "--users", "2", "--rampup", "2s",
                "--duration", "8s", "--sample-interval", "0.05s", "--results-dir",
                str(results), check_rc=0)
    assert "TPM (instance)" in p.stdout and "TPM (workload)" in p.stdout
    assert "TPM (instance)" in p.stderr and "TPM (workload)" in p.stderr  # the step's line
    shown = oltplab("results", "show", "latest", "--json", "--results-dir", str(results),
                    check_rc=0)
    return json.loads(shown.stdout)


@pytest.mark.parametrize("mode", ["procedures", "sql"])
def test_the_sampler_counts_in_tpm_but_not_in_workload_tpm(quiet_w1, tmp_path, mode):
    run = _run(quiet_w1, tmp_path, mode)
    [step] = run["steps"]
    assert step["client_tpm"] > 0 and step["server"]["autovacuum_runs_delta"] == 0
    # 20 samples a second on the maintenance database: in the instance's count only
    assert step["tpm"] - step["workload_tpm"] > 500, step
    assert abs(step["workload_tpm"] - step["client_tpm"]) <= 0.005 * step["client_tpm"], step
    # to the transaction: the server also counts each retried or failed attempt and what
    # each user had in flight at measure_end
    tx = step["transactions"].values()
    extra = step["server"]["workload_xacts_delta"] - sum(t["count"] for t in tx)
    # at most two per user beyond what failed in the window: the transaction each had in
    # flight at measure_end (the server counts it, the client does not), and one more seen in
    # some sql-mode runs on a loaded host whose source is not pinned down yet
    assert 0 <= extra <= 2 * 2 + sum(t["retries"] + t["errors"] for t in tx), step["server"]
    timeline = json.loads((tmp_path / run["id"] / "timeline.json").read_text())
    assert timeline["database"]["connected_to"] == "postgres"
    assert timeline["database"]["counts_in_workload_database"] is False
    assert isinstance(step["warnings"], list)
    assert set(SHARES) <= set(step["inputs"])


def test_sql_mode_run_records_plausible_input_shares(quiet_w1, tmp_path):
    run = _run(quiet_w1, tmp_path, "sql")
    [step] = run["steps"]
    counts, shares = step["input_counts"], step["inputs"]
    # one warehouse: every order line and payment is local (clause 2.4.1.5, 2.5.1.2)
    assert shares["remote_order_lines"] == 0.0 and shares["remote_payments"] == 0.0
    assert counts["new_orders"] == step["transactions"]["new_order"]["count"]
    assert counts["payments"] == step["transactions"]["payment"]["count"]
    assert counts["order_statuses"] == step["transactions"]["order_status"]["count"]
    assert counts["deliveries"] == step["transactions"]["delivery"]["count"]

    def plausible(key, num, n, target):  # within 4 binomial standard errors of the target
        assert n > 0 and shares[key] == pytest.approx(num / n, abs=1e-6)
        assert abs(num / n - target) <= 4 * math.sqrt(target * (1 - target) / n), (key, num, n)

    plausible("payments_by_last_name", counts["payments_by_last_name"], counts["payments"], 0.6)
    plausible("order_status_by_last_name", counts["order_status_by_last_name"],
              counts["order_statuses"], 0.6)
    no = step["transactions"]["new_order"]
    plausible("rolled_back_new_orders", no["rolled_back"], no["count"], 0.01)
    assert shares["skipped_deliveries"] == 0.0  # 900 undelivered orders per district at load
    assert abs(shares["order_lines_per_order"] - 10) <= 4 * math.sqrt(10 / counts["new_orders"])
    assert step["warnings"] == []
    text = oltplab("results", "show", "latest", "--results-dir", str(tmp_path), check_rc=0)
    assert "payments by name" in text.stdout and "skipped deliveries" in text.stdout
