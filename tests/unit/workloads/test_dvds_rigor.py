"""The shop's step figures with known answers: OPM arithmetic, the measured inputs and their
warnings, the order's and the phases' response times, and the workload's declaration."""

from __future__ import annotations

import pytest

from oltplab import _native, workloads
from oltplab.metrics.histogram import new_histogram
from oltplab.metrics.summary import TypeCounts, rate
from oltplab.workloads.dvds import rigor
from oltplab.workloads.dvds.params import DvdsParams
from oltplab.errors import UsageError

S = 10**9


def _inputs(**kw) -> dict:
    return {**{k: 0 for k in rigor.INPUT_KEYS}, **kw}


def test_the_workload_matches_the_c_loop():
    wl = workloads.get("dvds")
    assert wl.calls == tuple(_native.DVDS_NAMES) and wl.transactions[-1] == "order"
    assert wl.unit_transaction == _native.DVDS_UNIT_NAME and wl.unit == "OPM"
    assert wl.input_keys == tuple(_native.DVDS_INPUT_KEYS)
    assert {k for kinds in wl.phases.values() for k in kinds} == set(wl.calls)


def test_opm_is_committed_orders_per_minute_of_the_window():
    # 1,234 orders in a 40 s window: 1,851 per minute, rounded as NOPM is
    assert rate(1234, 40.0) == 1851
    assert rate(0, 40.0) == 0 and rate(5, 0.0) == 0


def test_measured_inputs_and_their_ranges():
    ok = _inputs(logins=8000, new_customers=2000, searches=30_000, purchases=10_000,
                 cart_items=50_000)
    assert rigor.measured_inputs(ok) == {"new_customers": 0.2, "searches_per_order": 3.0,
                                         "items_per_cart": 5.0}
    assert rigor.input_warnings(ok, DvdsParams()) == []
    off = dict(ok, new_customers=3000, logins=7000)  # 30%: far outside 18..22% at n=10,000
    [line] = rigor.input_warnings(off, DvdsParams())
    assert line.startswith("new-customer share 30.00% over 10,000 outside 18.00%..22.00%")
    # a few orders: the same 30% is within sampling noise
    assert rigor.input_warnings(_inputs(logins=7, new_customers=3), DvdsParams()) == []
    assert rigor.measured_inputs(_inputs())["new_customers"] is None


def test_expected_items_per_cart_caps_at_ten():
    mean, var = rigor.uniform_moments(2 * 8 - 1, 10)  # 1..15, each capped at 10
    assert mean == pytest.approx((sum(range(1, 11)) + 5 * 10) / 15)
    assert DvdsParams(line_items=8).mean_items == pytest.approx(mean)
    assert rigor.uniform_moments(5) == (3.0, 2.0)


def test_client_and_server_opm_and_failures_warn():
    counts = {k: TypeCounts() for k in workloads.get("dvds").transactions}
    counts["purchase"] = TypeCounts(committed=990, rolled_back=10, errors=50)
    counts["order"] = TypeCounts(committed=990, rolled_back=10)
    out = rigor.step_rigor(counts, _inputs(unknown_logins=3), client_tpm=None, server_tpm=None,
                           series=[[(0, 0), (20 * S, 200), (40 * S, 400)]], start_ns=0,
                           end_ns=40 * S, client_unit=1000, server_unit=1010)
    warnings = out["warnings"]
    assert any(w.startswith("client OPM 1,000 and server OPM 1,010 differ by 0.99%") for w in
               warnings)
    assert any("3 logins found no such customer" in w for w in warnings)
    assert any(w.startswith("errors 4.76% (50 of 1,050 calls)") for w in warnings)
    assert out["throughput"]["completed"] == [100, 100, 100, 100]
    assert out["throughput"]["unit"] == "orders"
    ok = rigor.step_rigor(counts, _inputs(), client_tpm=None, server_tpm=None, series=[],
                          start_ns=0, end_ns=S, client_unit=1000, server_unit=1004)
    assert not any("OPM" in w for w in ok["warnings"])


def test_step_fields_the_order_and_the_phases():
    names = workloads.get("dvds").transactions
    counts = {k: TypeCounts() for k in names}
    hists = {k: new_histogram() for k in names}
    for kind, us, n in (("login", 200, 8), ("new_customer", 500, 2), ("browse_title", 100, 10),
                        ("browse_actor", 300, 10), ("purchase", 1000, 10), ("order", 2000, 10)):
        for _ in range(n):
            hists[kind].record_value(us)
        counts[kind] = TypeCounts(committed=n, total_us=us * n)
    counts["purchase"] = TypeCounts(committed=8, rolled_back=2, total_us=10_000)
    counts["order"] = TypeCounts(committed=8, rolled_back=2, total_us=20_000)
    f = rigor.step_fields(counts, hists)
    assert f["rollback_pct"] == 20.0
    assert f["order_latency"]["count"] == 10 and f["order_latency"]["mean"] == 2.0
    browse = f["phases"]["browse"]
    assert browse["count"] == 20 and browse["mean"] == 0.2  # 10 x 0.1 ms and 10 x 0.3 ms
    assert f["phases"]["login"]["p99"] == pytest.approx(0.2, rel=0.01)
    assert set(f["phases"]) == {"login", "new_customer", "browse", "purchase"}


@pytest.mark.parametrize("kw, flag", [({"pct_new_customers": 101}, "--pct-new-customers"),
                                      ({"pct_new_customers": -1}, "--pct-new-customers"),
                                      ({"searches": 0}, "--searches"),
                                      ({"search_batch": 0}, "--search-batch"),
                                      ({"line_items": 0}, "--line-items"),
                                      ({"think_time": -1}, "--think-time")])
def test_bad_parameters_are_one_line(kw, flag):
    with pytest.raises(UsageError, match=flag):
        DvdsParams(**kw)
