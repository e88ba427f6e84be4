"""Per-step figures from a hand-made timeline, with answers worked out by hand."""

from __future__ import annotations

import pytest

from oltplab.telemetry.derive import (FIGURES, derive_steps, label, percentile, sample_indices,
                                      step_figures, step_windows, window_figures)
from oltplab.telemetry.sampler import Timeline

S = 1_000_000_000
N = 10  # samples ending at 1 s .. 10 s; the step measures [2 s, 8 s): samples 2..7


def timeline(**overrides) -> Timeline:
    r_s = [0, 0, 100, 100, 200, 200, 100, 100, 0, 0]
    r_await = [None, None, 1, 1, 2, 2, 1, 10, None, None]
    w_s = [0, 0, 50, 50, 0, 0, 0, 0, 0, 0]
    w_await = [None, None, 4, 4, None, None, None, None, None, None]
    cols = {
        "t_ns": [(i + 1) * S for i in range(N)],
        "dt_s": [1.0] * N,
        "cpu.idle": [90, 90, 50, 50, 50, 50, 20, 20, 90, 90],
        "cpu.iowait": [0, 0, 10, 10, 10, 10, 4, 4, 0, 0],
        "cpu.user": [5] * N, "cpu.system": [5] * N, "cpu.steal": [0] * N,
        "disk.vda.r_s": r_s, "disk.vda.w_s": w_s,
        "disk.vda.rMB_s": [0, 0, 1, 1, 1, 1, 1, 1, 0, 0],
        "disk.vda.wMB_s": [0, 0, 2, 2, 0, 0, 0, 0, 0, 0],
        "disk.vda.r_await": r_await, "disk.vda.w_await": w_await,
        "disk.vda.aqu_sz": [0, 0, 1, 1, 2, 2, 1, 1, 0, 0],
        "disk.vda.util": [0, 0, 30, 30, 60, 60, 30, 30, 0, 0],
        "disk.vda.f_s": [0] * N,
        "mem.used_bytes": [1e9] * N, "mem.cached_bytes": [2e9] * N, "mem.dirty_bytes": [0] * N,
        "net.lo.rx_bytes_s": [1000] * N, "net.lo.tx_bytes_s": [1000] * N,
        "db.commits_s": [0, 0, 100, 100, 100, 100, 100, 100, 0, 0],
        "db.rollbacks_s": [0, 0, 1, 1, 1, 1, 1, 1, 0, 0],
        "db.blks_read_s": [0, 0, 10, 10, 10, 10, 10, 10, 0, 0],
        "db.blks_hit_s": [0, 0, 990, 990, 990, 990, 990, 990, 0, 0],
        "db.wal_bytes_s": [0, 0] + [2 * 2**20] * 6 + [0, 0],
        "db.checkpoints_s": [0, 0, 0, 0, 1, 0, 0, 0, 0, 0],
        "power.watts": [100, 100, 100, 100, None, 100, 100, 100, 100, 100],
    }
    data = dict(
        interval_s=1.0, t0_ns=0, end_ns=N * S, columns=cols,
        devices={"vda": {"roles": ["datadir"]}}, interfaces=["lo"],
        marks=[{"name": "step_start", "t_ns": 0, "users": 4, "step": 0},
               {"name": "ramp_end", "t_ns": 2 * S, "step": 0},
               {"name": "measure_end", "t_ns": 8 * S, "step": 0}],
        power={"available": True, "source": "command", "reason": None},
        database={"available": True})
    data.update(overrides)
    return Timeline(**data)


def test_percentile_is_nearest_rank():
    assert percentile(range(1, 101), 99) == 99
    assert percentile(range(1, 11), 99) == 10
    assert percentile([4, 1, 3, 2], 50) == 2
    assert percentile([None, 7], 99) == 7 and percentile([], 99) is None


def test_the_window_holds_the_samples_whose_middle_is_inside():
    assert sample_indices(timeline(), 2 * S, 8 * S) == [2, 3, 4, 5, 6, 7]
    assert sample_indices(timeline(), int(2.4 * S), 8 * S) == [2, 3, 4, 5, 6, 7]
    assert sample_indices(timeline(), int(2.6 * S), 8 * S) == [3, 4, 5, 6, 7]


def test_step_figures_known_answers():
    [window] = step_windows(timeline())
    assert (window.step, window.users, window.ramp_end_ns, window.end_ns, window.complete) == (
        0, 4, 2 * S, 8 * S, True)
    f = step_figures(timeline(), window, tpm=6000, nopm=2400)
    assert f["samples"] == 6 and f["seconds"] == 6.0
    assert f["tpm_per_user"] == 1500 and f["nopm_per_user"] == 600
    assert f["cpu"]["cpu_idle_pct"] == pytest.approx(40.0)  # (4 * 50 + 2 * 20) / 6
    assert f["cpu"]["cpu_iowait_pct"] == pytest.approx(8.0)  # (4 * 10 + 2 * 4) / 6
    d = f["devices"]["vda"]
    assert d["read_iops"] == pytest.approx(800 / 6) and d["write_iops"] == pytest.approx(100 / 6)
    assert d["iops"] == pytest.approx(900 / 6)
    assert d["read_mb_s"] == 1.0 and d["write_mb_s"] == pytest.approx(4 / 6)
    # 2100 ms over 800 reads; 400 ms over 100 writes; 2500 ms over 900 I/Os
    assert d["r_await_ms"] == pytest.approx(2.625) and d["w_await_ms"] == 4.0
    assert d["await_ms"] == pytest.approx(2500 / 900)
    assert d["r_await_p99_ms"] == 10 and d["r_await_max_ms"] == 10
    assert d["w_await_p99_ms"] == 4 and d["w_await_max_ms"] == 4
    # per-interval combined latency: (1*100 + 4*50) / 150 = 2 in the first two seconds
    assert d["await_max_ms"] == 10 and d["await_p99_ms"] == 10
    assert d["read_gb"] == pytest.approx(6 / 1024) and d["written_gb"] == pytest.approx(4 / 1024)
    assert d["util_pct"] == pytest.approx(40.0) and d["aqu_sz"] == pytest.approx(8 / 6)
    db = f["db"]
    assert db["commits_s"] == 100 and db["xacts_per_min"] == pytest.approx(6060)
    assert db["hit_ratio"] == pytest.approx(0.99) and db["wal_mb_s"] == pytest.approx(2.0)
    assert db["checkpoints"] == 1 and db["sampler_xacts"] == 6
    p = f["power"]
    assert p["available"] and p["watts"] == 100 and p["coverage"] == pytest.approx(5 / 6)
    assert p["energy_j"] == pytest.approx(500) and p["orders_per_watt"] == pytest.approx(24.0)
    assert f["network"]["lo"] == {"rx_bytes_s": 1000, "tx_bytes_s": 1000}
    assert f["memory"]["used_bytes"] == 1e9


def test_short_samples_count_in_means_but_not_in_maxima():
    tl = timeline()
    cols = dict(tl.columns)
    # split the sample ending at 8 s into 7.9 s (0.9 s) and 8 s (0.1 s, r_await 50 ms)
    cols["t_ns"] = cols["t_ns"][:7] + [int(7.9 * S), 8 * S] + cols["t_ns"][8:]
    for name in cols:
        if name == "t_ns":
            continue
        v = cols[name]
        cols[name] = v[:8] + [v[7]] + v[8:]
    cols["dt_s"] = cols["dt_s"][:7] + [0.9, 0.1] + cols["dt_s"][9:]
    cols["disk.vda.r_await"] = cols["disk.vda.r_await"][:8] + [50] + cols["disk.vda.r_await"][9:]
    short = timeline(columns=cols, end_ns=N * S)
    d = step_figures(short, step_windows(short)[0])["devices"]["vda"]
    assert d["r_await_max_ms"] == 10  # the 0.1 s sample's 50 ms is left out of the maximum
    # ... but its 10 reads count in the average: 90 reads of 10 ms and 10 of 50 ms
    assert d["r_await_ms"] == pytest.approx((2100 - 1000 + 900 + 500) / 800)


def test_no_power_no_orders_per_watt():
    cols = dict(timeline().columns)
    del cols["power.watts"]
    tl = timeline(columns=cols, power={"available": False, "source": None,
                                       "reason": "ipmitool is not installed"})
    p = step_figures(tl, step_windows(tl)[0], nopm=2400)["power"]
    assert p == {"available": False, "source": None, "reason": "ipmitool is not installed",
                 "watts": None, "energy_j": None, "coverage": 0.0, "orders_per_watt": None}


def test_steps_interrupted_and_without_ramp():
    marks = [{"name": "step_start", "t_ns": 0, "users": 1, "step": 0},
             {"name": "measure_end", "t_ns": 4 * S, "step": 0},
             {"name": "step_start", "t_ns": 4 * S, "users": 2, "step": 1},
             {"name": "ramp_end", "t_ns": 5 * S, "step": 1},
             {"name": "measure_end", "t_ns": 60 * S, "step": 1}]  # never reached
    first, second = step_windows(timeline(marks=marks))
    assert (first.ramp_end_ns, first.end_ns, first.complete) == (0, 4 * S, True)
    assert (second.users, second.ramp_end_ns, second.end_ns, second.complete) == (
        2, 5 * S, 10 * S, False)


def test_derive_steps_from_the_stored_dict_and_step_records():
    tl = timeline()
    from_dict = derive_steps(tl.to_dict(), [{"users": 4, "tpm": 6000, "nopm": 2400}])
    assert from_dict == derive_steps(tl, [{"users": 4, "tpm": 6000, "nopm": 2400}])
    assert from_dict[0]["nopm_per_user"] == 600 and from_dict[0]["complete"]
    assert derive_steps(tl)[0]["tpm"] is None


def test_window_outside_the_samples_is_empty():
    f = window_figures(timeline(), 50 * S, 60 * S)
    assert f["samples"] == 0 and f["cpu"]["cpu_idle_pct"] is None
    assert f["devices"]["vda"]["read_iops"] is None and f["devices"]["vda"]["iops"] is None


def test_labels_name_the_interval():
    assert label("r_await_p99_ms") == ("read latency, 99th percentile of the per-second "
                                       "r_await values (ms)")
    assert "per-2 s" in label("await_max_ms", 2.0)
    assert label("orders_per_watt") == "orders per watt (NOPM / average watts)"
    figures = step_figures(timeline(), step_windows(timeline())[0], tpm=1, nopm=1)
    named = set(figures["devices"]["vda"]) | set(figures["cpu"]) | set(figures["memory"])
    named |= set(figures["db"]) | {"tpm_per_user", "nopm_per_user", "orders_per_watt"}
    assert named <= set(FIGURES)
