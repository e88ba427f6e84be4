"""Histogram merge and summary math, TPM/NOPM arithmetic: known answers."""

import pytest

from oltplab.engines.postgres.counters import ServerCounters, delta
from oltplab.metrics import histogram as H
from oltplab.metrics.summary import (TypeCounts, client_rates, per_minute, rate, server_rates,
                                     transaction_entry)


def test_summary_of_1_to_1000_ms():
    h = H.new_histogram()
    total = 0
    for ms in range(1, 1001):
        H.record(h, ms * 1000)
        total += ms * 1000
    s = H.summarize(h, total)
    assert s.count == 1000
    assert s.mean == 500.5  # exact, from the sum
    assert s.p50 == pytest.approx(500, rel=0.001)
    assert s.p95 == pytest.approx(950, rel=0.001)
    assert s.p99 == pytest.approx(990, rel=0.001)
    assert s.max == pytest.approx(1000, rel=0.001)


def test_merged_encodings_equal_one_histogram_of_everything():
    a, b, whole = H.new_histogram(), H.new_histogram(), H.new_histogram()
    for v in range(100, 5100, 10):
        (a if v % 20 else b).record_value(v)
        whole.record_value(v)
    merged = H.merge([H.encode(a), H.encode(b)])
    assert merged.get_total_count() == whole.get_total_count() == 500
    for p in (50, 90, 95, 99, 100):
        assert merged.get_value_at_percentile(p) == whole.get_value_at_percentile(p)
    assert H.summarize(merged) == H.summarize(whole)


def test_pooled_percentile_is_not_the_mean_of_percentiles():
    fast, slow = H.new_histogram(), H.new_histogram()
    for _ in range(99):
        fast.record_value(1_000)
    slow.record_value(100_000)
    pooled = H.summarize(H.merge([fast, slow]))
    assert pooled.p95 == pytest.approx(1.0, rel=0.001)
    assert pooled.max == pytest.approx(100.0, rel=0.001)


def test_empty_histogram_round_trips_and_summarizes_to_none():
    h = H.decode(H.encode(H.new_histogram()))
    assert h.get_total_count() == 0
    s = H.summarize(h)
    assert s.count == 0 and s.mean is None and s.p99 is None


def test_record_clamps_out_of_range_values():
    h = H.new_histogram()
    H.record(h, 0)
    H.record(h, 10 * H.HIGHEST_US)
    assert h.get_total_count() == 2
    assert h.get_min_value() == 1
    assert h.get_max_value() >= H.HIGHEST_US


def test_rates_per_minute():
    assert per_minute(1000, 30) == 2000.0
    assert per_minute(5, 0) == 0.0
    assert rate(7, 4) == 105  # 7 per 4 s -> 105 per minute
    assert rate(1, 7) == 9  # 8.57 rounds to 9


def test_server_rates_known_answer():
    start = ServerCounters(t_ns=0, xacts=10_000, d_next_o_id=30_010, workload_xacts=9_000,
                           autovacuum_runs=4)
    end = ServerCounters(t_ns=120 * 10**9, xacts=34_000, d_next_o_id=40_510,
                         workload_xacts=32_880, autovacuum_runs=7)
    d = delta(start, end)
    assert d == {"xacts_delta": 24_000, "workload_xacts_delta": 23_880,
                 "d_next_o_id_delta": 10_500, "autovacuum_runs_delta": 3}
    assert server_rates(d["xacts_delta"], d["d_next_o_id_delta"], 120.0) == (12_000, 5_250)


def test_client_rates_count_rollbacks_in_tpm_but_not_in_nopm():
    counts = {
        "new_order": TypeCounts(committed=99, rolled_back=1),
        "payment": TypeCounts(committed=86, errors=3, retries=2),
        "order_status": TypeCounts(committed=8),
        "delivery": TypeCounts(committed=8),
        "stock_level": TypeCounts(committed=8),
    }
    # 210 completed (errors excluded) in 30 s -> 420 TPM; 99 committed New-Orders -> 198 NOPM
    assert client_rates(counts, 30.0, "new_order") == (420, 198)


def test_type_counts_add_and_entry():
    a = TypeCounts(10, 1, 2, 3, 11_000)
    b = TypeCounts(5, 0, 0, 1, 4_000)
    c = a + b
    assert (c.committed, c.rolled_back, c.errors, c.retries, c.total_us) == (15, 1, 2, 4, 15_000)
    assert c.count == 16
    h = H.new_histogram()
    for _ in range(16):
        h.record_value(937)
    e = transaction_entry(c, h)
    assert e["count"] == 16 and e["committed"] == 15 and e["rolled_back"] == 1
    assert e["errors"] == 2 and e["retries"] == 4
    assert e["mean"] == pytest.approx(0.938, abs=0.001)  # 15,000 us / 16 = 937.5 us
    assert e["p50"] == pytest.approx(0.937, abs=0.001)


def test_default_workers_leave_cpu_to_a_local_server():
    from oltplab.loadgen.manager import default_workers, is_local
    assert default_workers(1, 8) == 1
    assert default_workers(16, 8) == 8
    assert default_workers(16, 2, local_server=True) == 2  # an explicit request is kept
    assert is_local("postgresql://postgres@/tpcc?host=/tmp&port=5432")
    assert is_local("postgresql://u@127.0.0.1:5432/db") and is_local("postgresql://u@localhost/db")
    assert not is_local("postgresql://u@db.example:5432/db")


def test_a_local_mariadbs_users_get_a_worker_each_while_they_fit_the_cpus(monkeypatch):
    import os
    from oltplab import engines
    from oltplab.loadgen.manager import default_workers
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    per_user = engines.get("mariadb").worker_per_local_user
    assert per_user and not engines.get("postgres").worker_per_local_user
    assert [default_workers(u, None, True, per_user) for u in (1, 2, 4, 5, 16)] == [1, 2, 4, 2, 2]
    assert [default_workers(u, None, True) for u in (1, 2, 4, 5, 16)] == [1, 2, 2, 2, 2]
    assert [default_workers(u, None, False, per_user) for u in (2, 16)] == [2, 4]


def test_recorder_bulk_histograms_match_direct_recording():
    from oltplab.metrics.histogram import new_histogram, summarize
    from oltplab.engines.common.recorder import Recorder
    rec = Recorder(ramp_end_ns=1_000, measure_end_ns=10**15)
    direct = new_histogram()
    for i, us in enumerate([5, 5, 7, 1200, 0, 33_000, 7, 7]):
        rec.done(1, 10_000 + i, 10_000 + i + us * 1000, False, 0)
        direct.record_value(max(us, 1))
    rec.done(1, 0, 5_000, False, 0)  # started before ramp_end: not counted
    from oltplab.metrics.histogram import decode
    got = decode(rec.encoded()[1])
    assert got.get_total_count() == 8
    assert summarize(got).as_dict() == summarize(direct).as_dict()


def test_recorder_sample_buffers_stay_bounded_over_a_long_run():
    """The worker's RSS grew with the run's length: the Recorder held up to a million response
    times per type (8 MiB each, and the array's spare room) before they entered the
    histogram. Three million transactions handed over as the C loop does (65,536 at a time)
    never make a type's buffer hold more than 1 MiB, and every one is in the histogram."""
    from array import array

    from oltplab.metrics.histogram import decode
    from oltplab.engines.common.loop import LOOP_SAMPLES
    from oltplab.engines.common.recorder import Recorder

    rec = Recorder(ramp_end_ns=0, measure_end_ns=10**15)
    chunk = array("q", range(1, LOOP_SAMPLES + 1))
    largest = 0
    for _ in range(3_000_000 // LOOP_SAMPLES):
        rec.add_samples(0, chunk)
        largest = max(largest, rec._samples[0].buffer_info()[1] * chunk.itemsize)
    assert largest <= 1 << 20
    assert decode(rec.encoded()[0]).get_total_count() == 3_000_000 // LOOP_SAMPLES * LOOP_SAMPLES
