"""tpcc run --io-latency: every IO's latency per device in each step's telemetry, beside the
per-second figures; where it is off, the step says so."""

from __future__ import annotations

import pytest

from oltplab.telemetry.iolatency import why_unavailable

from ..conftest import free_port, oltplab, saved_runs


def test_each_step_has_per_io_percentiles_of_the_data_device(server_tmp, built_w1):
    reason = why_unavailable()
    if reason:
        pytest.skip(f"per-IO latency: {reason}")
    flags = ["--datadir", str(built_w1("postgres", server_tmp / "pg")), "--port",
             str(free_port()), "--db-memory", "32MiB"]
    try:
        oltplab("tpcc", "run", *flags, "--users", "1,2", "--rampup", "1s", "--duration", "3s",
                "--power", "none", "--io-latency", "on", cwd=server_tmp, check_rc=0)
        oltplab("tpcc", "run", *flags, "--users", "1", "--rampup", "0s", "--duration", "1s",
                "--power", "none", "--io-latency", "off", cwd=server_tmp, check_rc=0)
    finally:
        oltplab("db", "stop", *flags, cwd=server_tmp)
    on, off = saved_runs(server_tmp / "results")
    data_device = on["host"]["paths"]["datadir"]["device"]["name"]
    for step in on["steps"]:
        per_device = step["telemetry"]["io_latency"]
        writes = per_device[data_device]["write"]  # WAL and data pages, each one timed
        assert writes["ios"] > 0 and 0 < writes["p99_us"] <= writes["max_us"], per_device
    assert off["steps"][0]["telemetry"]["io_latency"] == {"unavailable": "off (--io-latency off)"}
    oltplab("report", on["id"], "--out", str(server_tmp / "rep"), cwd=server_tmp, check_rc=0)
    html = (server_tmp / "rep" / "report.html").read_text()
    assert "Per-IO latency per step (block layer)" in html and data_device in html
