"""Pooled latency percentiles and rates from hand-made fio json+ documents, with known answers."""

from fractions import Fraction

import pytest

from oltplab.errors import OltplabError
from oltplab.fio.parse import (latency_ms, load_output, percentile, pool_bins, read_share, series,
                               steady_state, summarize, uniform, wall_seconds)


def _dir(ios, runtime_ms, bins=None, mean=0.0, lo=0, hi=0, bs=4096):
    clat = {"N": ios, "min": lo, "max": hi, "mean": mean}
    if bins is not None:
        clat["bins"] = {str(k): v for k, v in bins.items()}
    return {"total_ios": ios, "io_bytes": ios * bs, "runtime": runtime_ms, "clat_ns": clat}


EMPTY = {"total_ios": 0, "io_bytes": 0, "runtime": 0, "clat_ns": {"N": 0, "min": 0, "max": 0,
                                                                  "mean": 0.0}}
# job A: 6 reads in 1 s; job B: 4 reads in 2 s (same group)
JOB_A = {"jobname": "a", "groupid": 0, "error": 0, "job options": {"rw": "randread", "bs": "4k"},
         "read": _dir(6, 1000, {100: 2, 200: 1, 300: 1, 500: 1, 1000: 1}, 400.0, 100, 1000),
         "write": EMPTY}
JOB_B = {"jobname": "b", "groupid": 0, "error": 0, "job options": {"rw": "randread", "bs": "4k"},
         "read": _dir(4, 2000, {150: 1, 2000: 2, 5000: 1}, 2000.0, 150, 5000),
         "write": EMPTY}
DOC = {"fio version": "fio-3.33", "jobs": [JOB_A, JOB_B]}


def test_pool_bins_adds_counts_of_every_job():
    assert pool_bins([{"100": 2, "200": 1}, {100: 3, "300": 0}, {}]) == {100: 5, 200: 1}


@pytest.mark.parametrize("pct, expected", [
    (50, 300), (60, 500), (90, 2000), (95, 5000), (99, 5000), (Fraction(999, 10), 5000),
    (10, 100), (20, 100), (30, 150), (100, 5000),
])
def test_percentile_known_answers(pct, expected):
    bins = pool_bins([JOB_A["read"]["clat_ns"]["bins"], JOB_B["read"]["clat_ns"]["bins"]])
    assert percentile(bins, pct) == expected


def test_percentile_boundary_is_exact():
    # 99.9% of 1000 IOs is exactly 999: the bin that holds the 999th IO answers
    assert percentile({1: 999, 2: 1}, Fraction(999, 10)) == 1
    assert percentile({10: 50, 20: 50}, 50) == 10
    assert percentile({10: 50, 20: 50}, Fraction(500001, 10000)) == 20


def test_percentile_of_nothing_is_none():
    assert percentile({}, 99) is None


def test_pooled_percentiles_are_not_the_mean_of_per_job_percentiles():
    lat = latency_ms([JOB_A["read"]["clat_ns"], JOB_B["read"]["clat_ns"]])
    a = percentile(pool_bins([JOB_A["read"]["clat_ns"]["bins"]]), 50)
    b = percentile(pool_bins([JOB_B["read"]["clat_ns"]["bins"]]), 50)
    assert (a, b) == (200, 2000)
    assert lat["p50"] == pytest.approx(300 / 1e6)
    assert lat["p50"] != pytest.approx((a + b) / 2 / 1e6)


def test_latency_summary_in_ms():
    lat = latency_ms([JOB_A["read"]["clat_ns"], JOB_B["read"]["clat_ns"]])
    assert lat == pytest.approx({"min": 100e-6, "mean": 1040e-6, "p50": 300e-6, "p95": 5000e-6,
                                 "p99": 5000e-6, "p99_9": 5000e-6, "max": 5000e-6})


def test_latency_without_ios_is_all_none():
    assert set(latency_ms([EMPTY["clat_ns"]]).values()) == {None}


def test_summarize_rates_over_the_longest_job():
    s = summarize(DOC, [])
    assert s["runtime_s"] == 2.0
    assert s["read"]["ios"] == 10 and s["read"]["iops"] == pytest.approx(5.0)
    assert s["read"]["mbps"] == pytest.approx(10 * 4096 / 2 / 1e6)
    assert s["write"]["iops"] == 0 and s["write"]["lat_ms"]["p99"] is None
    assert s["total_iops"] == pytest.approx(5.0)
    assert (s["bs"], s["rw"], s["rwmixread"], s["jobs"]) == (4096, "randread", 100, 2)
    assert s["fio_version"] == "fio-3.33" and s["steady_state"] is None
    assert set(s["options"]["jobs"]) == {"a", "b"}


def test_wall_time_adds_groups_that_run_one_after_another():
    later = dict(JOB_B, groupid=1)
    assert wall_seconds([JOB_A, later]) == 3.0


def test_series_sums_jobs_per_second_and_drops_partial_seconds():
    log1 = "1000, 100, 0, 0, 0\n1000, 40, 1, 0, 0\n1999, 110, 0, 0, 0\n1999, 50, 1, 0, 0\n"
    log2 = "999, 200, 0, 0, 0\n999, 60, 1, 0, 0\n2001, 210, 0, 0, 0\n2001, 70, 1, 0, 0\n" \
           "3000, 220, 0, 0, 0\n"
    assert series([log1, log2]) == {"t_s": [1, 2], "read_iops": [300.0, 320.0],
                                    "write_iops": [100.0, 120.0]}
    assert series([]) == {"t_s": [], "read_iops": [], "write_iops": []}


def test_steady_state_attained_only_when_every_job_is():
    ok = {"ss": "iops:10.000000%", "duration": 30, "attained": 1, "criterion": "3%",
          "max_deviation": 1.0, "slope": 0.0}
    jobs = [dict(JOB_A, steadystate=ok), dict(JOB_B, steadystate=dict(ok, attained=0))]
    ss = steady_state(jobs)
    assert ss["attained"] is False and ss["jobs_attained"] == 1 and ss["jobs"] == 2
    assert ss["window_s"] == 30 and ss["criterion"].startswith("iops:")
    assert steady_state([dict(JOB_A, steadystate=ok)])["attained"] is True


@pytest.mark.parametrize("rw, mixr, mixw, expected", [
    ("randread", None, None, 100), ("write", None, None, 0), ("randrw", "70", None, 70),
    ("rw", None, "30", 70), ("randrw", None, None, 50), ("trim", None, None, None),
    (None, None, None, None),
])
def test_read_share(rw, mixr, mixw, expected):
    assert read_share(rw, mixr, mixw) == expected


def test_uniform_options_use_global_and_default():
    doc = {"global options": {"bs": "8k"}, "jobs": [{"job options": {}},
                                                    {"job options": {"bs": "8k"}}]}
    assert uniform(doc, "bs") == "8k"
    assert uniform(doc, "iodepth", "1") == "1"
    doc["jobs"][1]["job options"]["bs"] = "16k"
    assert uniform(doc, "bs") is None


def test_load_output_skips_notes_before_the_json():
    assert load_output('note: something\n{"jobs": []}\n')["jobs"] == []
    with pytest.raises(OltplabError):
        load_output("fio: nothing here")
    with pytest.raises(OltplabError):
        load_output('{"jobs": [')
