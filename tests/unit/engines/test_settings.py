"""derive_settings: what --db-memory, the connection count and -c overrides produce."""

import pytest

from oltplab.engines.postgres.instance import _meaningful_log_line
from oltplab.engines.postgres.settings import derive_settings, pg_size
from oltplab.errors import UsageError

MiB, GiB = 1024**2, 1024**3


def test_pg_size_picks_the_largest_exact_unit():
    assert pg_size(2 * GiB) == "2GB"
    assert pg_size(1536 * MiB) == "1536MB"
    assert pg_size(4 * 1024**4) == "4TB"
    assert pg_size(1000) == "1kB"  # below a unit: whole kB, never zero


def test_one_gib_gives_the_documented_values():
    s = derive_settings(GiB)
    assert s["shared_buffers"] == "1GB"
    assert s["effective_cache_size"] == "3GB"
    assert s["maintenance_work_mem"] == "64MB"  # 1GiB/16 = 64MiB, the floor
    assert s["wal_buffers"] == "32MB"
    assert s["max_wal_size"] == "4GB"
    assert s["max_connections"] == "120"
    assert s["checkpoint_completion_target"] == "0.9"
    assert s["random_page_cost"] == "1.1"
    assert s["synchronous_commit"] == "on" and s["fsync"] == "on"
    assert s["full_page_writes"] == "on"


def test_memory_scales_derived_settings_within_their_bounds():
    small = derive_settings(128 * MiB)
    assert small["shared_buffers"] == "128MB"
    assert small["maintenance_work_mem"] == "64MB"
    assert small["wal_buffers"] == "4MB"
    assert small["max_wal_size"] == "4GB"
    big = derive_settings(64 * GiB)
    assert big["shared_buffers"] == "64GB"
    assert big["effective_cache_size"] == "192GB"
    assert big["maintenance_work_mem"] == "2GB"
    assert big["wal_buffers"] == "64MB"
    assert big["max_wal_size"] == "64GB"
    mid = derive_settings(4 * GiB)
    assert mid["maintenance_work_mem"] == "256MB"
    assert mid["max_wal_size"] == "16GB"


def test_shared_buffers_is_rounded_down_to_whole_pages():
    s = derive_settings(100_000_001)
    assert s["shared_buffers"] == "97656kB"  # 12207 pages of 8kB


def test_connections_leave_room_for_monitors():
    assert derive_settings(GiB, need_connections=10)["max_connections"] == "100"
    assert derive_settings(GiB, need_connections=500)["max_connections"] == "520"


def test_overrides_win_in_order_and_case_insensitively():
    s = derive_settings(GiB, 500, (("Shared_Buffers", "3GB"), ("max_connections", "50"),
                                   ("work_mem", "8MB"), ("work_mem", "16MB"),
                                   ("my.custom", "x")))
    assert s["shared_buffers"] == "3GB"
    assert "Shared_Buffers" not in s
    assert s["max_connections"] == "50"  # -c wins over the connection hint
    assert s["work_mem"] == "16MB"
    assert s["my.custom"] == "x"
    assert list(s)[-1] == "my.custom"  # overrides come last in the file


def test_overrides_may_be_a_mapping():
    assert derive_settings(GiB, overrides={"jit": "on"})["jit"] == "on"


def test_too_little_memory_is_a_usage_error():
    with pytest.raises(UsageError, match="at least 16MiB"):
        derive_settings(1024 * 1024)


def test_derivation_is_pure():
    overrides = {"Work_Mem": "8MB"}
    first = derive_settings(2 * GiB, 64, overrides)
    assert overrides == {"Work_Mem": "8MB"}  # the input is left alone
    first["shared_buffers"] = "1kB"  # a result shares nothing with the next one
    assert derive_settings(2 * GiB, 64, overrides) == {**first, "shared_buffers": "2GB"}


def test_failed_start_reports_the_cause_before_the_fatal_line():
    log = (
        '2026-01-01 00:00:00.000 UTC [1] LOG:  unrecognized configuration parameter "nope" '
        'in file "/d/oltplab.conf" line 3\n'
        '2026-01-01 00:00:00.000 UTC [1] FATAL:  configuration file "/d/postgresql.conf" '
        "contains errors\n")
    line = _meaningful_log_line(log)
    assert 'unrecognized configuration parameter "nope"' in line
    assert line.endswith("contains errors")


def test_failed_start_skips_hints_and_boilerplate():
    log = ("x LOG:  starting PostgreSQL 18.6\n"
           "x FATAL:  could not map anonymous shared memory: Cannot allocate memory\n"
           "x HINT:  This error usually means ...\n"
           "x LOG:  database system is shut down\n")
    assert _meaningful_log_line(log) == ("could not map anonymous shared memory:"
                                         " Cannot allocate memory")
    assert _meaningful_log_line("") is None
