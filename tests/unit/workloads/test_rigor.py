"""The step's rigor figures: input shares, completions per 10 s, warnings (known answers)."""

from __future__ import annotations

import math

import pytest

from oltplab.metrics.throughput import per_interval
from oltplab.workloads.tpcc.rigor import (INPUT_KEYS, input_shares, noise_range,
                                          SHARES, step_warnings, variation, zero_inputs)
from oltplab.engines.common.recorder import Recorder

S = 10**9


def counts(**kw) -> dict:
    c = zero_inputs()
    c.update(kw)
    return c


def warnings(**kw) -> list[str]:
    args = dict(client_tpm=6000, server_tpm=6000, completed=1000, errors=0, retries=0,
                inputs=zero_inputs(), committed_new_orders=0, rolled_back_new_orders=0,
                warehouses=4, cv=None)
    args.update(kw)
    return step_warnings(**args)


# a window in which every share sits on its target
ON_TARGET = counts(new_orders=1000, order_lines=10_000, remote_order_lines=100, payments=1000,
                   remote_payments=150, payments_by_last_name=600, order_statuses=100,
                   order_status_by_last_name=60, deliveries=100, skipped_deliveries=0)


def test_input_shares_known_answer():
    shares = input_shares(ON_TARGET, committed_new_orders=990, rolled_back_new_orders=10)
    assert shares == {"remote_order_lines": 0.01, "remote_payments": 0.15,
                      "payments_by_last_name": 0.6, "order_status_by_last_name": 0.6,
                      "rolled_back_new_orders": 0.01, "skipped_deliveries": 0.0,
                      "order_lines_per_order": 10.0}
    skipped = input_shares(counts(deliveries=4, skipped_deliveries=3), 0, 0)
    assert skipped["skipped_deliveries"] == 3 / 40  # districts: 10 per delivery


def test_a_share_with_no_transactions_is_null_not_zero():
    shares = input_shares(zero_inputs(), 0, 0)
    assert set(shares.values()) == {None}
    assert input_shares(counts(payments=5), 0, 0)["remote_payments"] == 0.0


def test_no_warning_when_every_figure_holds():
    assert warnings(inputs=ON_TARGET, committed_new_orders=990, rolled_back_new_orders=10,
                    cv=0.05, intervals=12) == []


def test_tpm_disagreement_warns_above_one_percent_with_the_figures():
    assert warnings(client_tpm=6060, server_tpm=6000) == []
    [w] = warnings(client_tpm=6070, server_tpm=6000)
    assert "6,070" in w and "6,000" in w and "1.17%" in w and "bound 1.00%" in w
    assert warnings(client_tpm=6000, server_tpm=None) == []
    [w] = warnings(client_tpm=5900, server_tpm=6000, autovacuum_runs=14)
    assert w.endswith("(bound 1.00%); 14 autovacuum runs in the window count on the server")


def test_noise_range_is_three_binomial_standard_errors_at_the_target():
    r = next(r for r in SHARES if r.key == "payments_by_last_name")
    lo, hi = noise_range(r, 2400)  # se = sqrt(0.6 * 0.4 / 2400) = 0.01
    assert lo == pytest.approx(0.54) and hi == pytest.approx(0.66)


def test_a_share_warns_only_beyond_sampling_noise():
    # 65% of 2,400 payments by name: outside 57..63%, inside 54..66% - noise, no warning
    near = counts(payments=2400, payments_by_last_name=1560, remote_payments=360)
    assert warnings(inputs=near) == []
    # 67%: outside the widened range as well
    far = counts(payments=2400, payments_by_last_name=1608, remote_payments=360)
    [w] = warnings(inputs=far)
    assert w.startswith("payments by last name 67.00% (1,608 of 2,400) outside 57.00%..63.00%")
    assert "54.00%..66.00%" in w
    # the same 67% of only 100 payments is noise
    assert warnings(inputs=counts(payments=100, payments_by_last_name=67,
                                  remote_payments=15)) == []


def test_remote_shares_do_not_warn_with_one_warehouse():
    local = counts(payments=5000, payments_by_last_name=3000, order_lines=50_000,
                   new_orders=5000)
    ws = warnings(inputs=local, warehouses=4)
    assert [w.split(" 0.00%")[0] for w in ws] == ["remote order lines", "remote payments"]
    assert warnings(inputs=local, warehouses=1) == []


def test_rolled_back_new_orders_and_order_lines_per_order_warn():
    [w] = warnings(committed_new_orders=9500, rolled_back_new_orders=500)
    assert w.startswith("rolled-back New-Orders 5.00% (500 of 10,000)")
    [w] = warnings(inputs=counts(new_orders=1000, order_lines=9000), warehouses=1)
    assert w.startswith("order lines per order 9.00 over 1,000 New-Orders outside 9.5..10.5")


def test_skipped_deliveries_warn_above_one_percent_and_one_district():
    assert warnings(inputs=counts(deliveries=5, skipped_deliveries=1)) == []  # 2%, but one
    assert warnings(inputs=counts(deliveries=1000, skipped_deliveries=100)) == []  # 1%
    [w] = warnings(inputs=counts(deliveries=1000, skipped_deliveries=101))
    assert w == ("skipped deliveries 1.01% (101 of 10,000 districts) above 1.00% "
                 "(clause 5.4.5)")


def test_errors_and_retries_warn_above_one_percent():
    assert warnings(completed=990, errors=10, retries=10) == []
    ws = warnings(completed=980, errors=20, retries=11)
    assert ws == ["errors 2.00% (20 of 1,000 transactions) above 1.00%",
                  "retries 1.10% (11 per 1,000 transactions) above 1.00%"]


def test_unstable_throughput_warns_with_the_coefficient():
    assert warnings(cv=0.10, intervals=6) == []
    [w] = warnings(cv=0.123, intervals=6)
    assert w == ("throughput per 10 s varies by 12.30% (coefficient of variation over 6 "
                 "intervals) above 10.00%")


def test_variation_is_the_sample_coefficient_of_variation():
    assert variation([]) is None and variation([100]) is None and variation([0, 0]) is None
    assert variation([90, 110]) == pytest.approx(math.sqrt(200) / 100)
    assert variation([100, 100, 100]) == 0.0


def test_per_interval_interpolates_each_source_and_sums():
    # source a: 10 per second from t=0; source b: 5 per second, points half a second off
    a = [(t * S, 10 * t) for t in range(0, 31)]
    b = [(t * S + S // 2, 5 * t) for t in range(0, 31)]
    assert per_interval([a, b], 2 * S, 32 * S) == [150, 150]  # 32 s: beyond a's last point
    assert per_interval([a, b], 0, 30 * S) == []  # b has no point at 0 s
    assert per_interval([a, b], 1 * S, 30 * S) == [150, 150]  # the 3rd would end at 31 s
    assert per_interval([a], 0, 30 * S) == [100, 100, 100]
    assert per_interval([a], 0, 25 * S) == [100, 100]  # a trailing part is dropped


def test_recorder_merges_the_loops_inputs_when_present():
    rec = Recorder(0, 1)
    base = {"committed": [0] * 5, "rolled_back": [0] * 5, "errors": [0] * 5,
            "retries": [0] * 5, "total_us": [0] * 5, "completed": 0,
            "headline": 0, "cross_ns": ([], [])}
    rec.add_counts(base)  # a loop that does not count inputs
    assert rec.inputs == zero_inputs()
    drawn = {k: i + 1 for i, k in enumerate(INPUT_KEYS)}
    rec.add_counts({**base, "inputs": drawn})
    rec.add_counts({**base, "inputs": drawn})
    assert rec.inputs == {k: 2 * v for k, v in drawn.items()}
