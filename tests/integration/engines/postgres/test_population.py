"""The loaded W=1 database against the population rules [TPC-C 4.3.3.1], and the build itself."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter

import asyncpg
import psutil
import pytest
from interrupts import INTERRUPTIBLE

from oltplab.config import BuildSpec
from oltplab.engines.postgres.tpcc.loader import build
from oltplab.engines.postgres.tpcc.schema import schema_info
from oltplab.errors import SchemaError
from oltplab.workloads.tpcc import random as tr
from oltplab.workloads.tpcc.schema import require_warehouses


def q(dsn: str, sql: str, *args):
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            return await conn.fetch(sql, *args)
        finally:
            await conn.close()

    return asyncio.run(go())


def val(dsn: str, sql: str, *args):
    return q(dsn, sql, *args)[0][0]


def test_cardinalities(loaded_w1):
    counts = q(
        loaded_w1, """
        SELECT (SELECT count(*) FROM warehouse) w, (SELECT count(*) FROM district) d,
               (SELECT count(*) FROM customer) c, (SELECT count(*) FROM history) h,
               (SELECT count(*) FROM orders) o, (SELECT count(*) FROM new_order) no,
               (SELECT count(*) FROM item) i, (SELECT count(*) FROM stock) s,
               (SELECT count(*) FROM order_line) ol, (SELECT sum(o_ol_cnt) FROM orders) sum_ol"""
    )[0]
    assert (counts["w"], counts["d"], counts["c"], counts["h"], counts["o"], counts["no"],
            counts["i"], counts["s"]) == (1, 10, 30_000, 30_000, 30_000, 9_000, 100_000, 100_000)
    assert counts["ol"] == counts["sum_ol"]
    assert abs(counts["ol"] - 300_000) <= 3_000  # may vary by 1% [4.3.1]
    per_district = q(loaded_w1, """
        SELECT c_d_id, count(*) FROM customer GROUP BY c_d_id
        UNION ALL SELECT 100 + o_d_id, count(*) FROM orders GROUP BY o_d_id
        UNION ALL SELECT 200 + no_d_id, count(*) FROM new_order GROUP BY no_d_id""")
    assert sorted(r[1] for r in per_district) == [900] * 10 + [3000] * 20


def test_fixed_values(loaded_w1):
    row = q(
        loaded_w1, """
        SELECT (SELECT bool_and(w_ytd = 300000.00) FROM warehouse) w_ytd,
               (SELECT bool_and(d_ytd = 30000.00 AND d_next_o_id = 3001) FROM district) d,
               (SELECT bool_and(c_balance = -10.00 AND c_ytd_payment = 10.00 AND c_payment_cnt = 1
                                AND c_delivery_cnt = 0 AND c_credit_lim = 50000.00
                                AND c_middle = 'OE' AND c_credit IN ('GC', 'BC'))
                  FROM customer) c,
               (SELECT bool_and(h_amount = 10.00 AND h_c_id BETWEEN 1 AND 3000
                                AND h_c_d_id = h_d_id AND h_c_w_id = h_w_id) FROM history) h,
               (SELECT bool_and(s_ytd = 0 AND s_order_cnt = 0 AND s_remote_cnt = 0
                                AND s_quantity BETWEEN 10 AND 100) FROM stock) s,
               (SELECT bool_and(o_all_local = 1 AND o_ol_cnt BETWEEN 5 AND 15) FROM orders) o"""
    )[0]
    assert all(row.values()), dict(row)


def test_ranges(loaded_w1):
    row = q(loaded_w1, """
        SELECT (SELECT min(w_tax) >= 0 AND max(w_tax) <= 0.2 FROM warehouse)
           AND (SELECT min(d_tax) >= 0 AND max(d_tax) <= 0.2 FROM district) AS tax,
               (SELECT min(c_discount) >= 0 AND max(c_discount) <= 0.5
                   AND max(c_discount) > 0.45 FROM customer) AS discount,
               (SELECT min(i_price) BETWEEN 1.00 AND 1.10 AND max(i_price) BETWEEN 99.90 AND 100.00
                  FROM item) AS price,
               (SELECT min(i_im_id) >= 1 AND max(i_im_id) <= 10000 FROM item) AS im_id,
               (SELECT min(length(i_name)) = 14 AND max(length(i_name)) = 24
                   AND min(length(i_data)) = 26 AND max(length(i_data)) = 50 FROM item) AS item_len,
               (SELECT min(length(c_data)) = 300 AND max(length(c_data)) = 500
                   AND min(length(c_first)) = 8 AND max(length(c_first)) = 16 FROM customer) AS c_len,
               (SELECT min(length(h_data)) = 12 AND max(length(h_data)) = 24 FROM history) AS h_len,
               (SELECT min(length(s_data)) = 26 AND max(length(s_data)) = 50 FROM stock) AS s_len""")[0]  # noqa: E501
    assert all(row.values()), dict(row)


def test_formats(loaded_w1):
    row = q(loaded_w1, r"""
        SELECT (SELECT bool_and(w_zip ~ '^[0-9]{4}11111$' AND w_state ~ '^[A-Za-z]{2}$')
                  FROM warehouse) w,
               (SELECT bool_and(d_zip ~ '^[0-9]{4}11111$' AND d_state ~ '^[A-Za-z]{2}$')
                  FROM district) d,
               (SELECT bool_and(c_zip ~ '^[0-9]{4}11111$' AND c_state ~ '^[A-Za-z]{2}$'
                                AND c_phone ~ '^[0-9]{16}$') FROM customer) c,
               (SELECT bool_and(s_dist_01 ~ '^[A-Za-z]{24}$' AND s_dist_10 ~ '^[A-Za-z]{24}$')
                  FROM stock) s,
               (SELECT bool_and(ol_dist_info ~ '^[A-Za-z]{24}$') FROM order_line
                 WHERE ol_d_id = 1) ol,
               (SELECT count(DISTINCT w_zip) FROM (SELECT c_zip AS w_zip FROM customer) z) > 5000
                  AS zips_vary""")[0]
    assert all(row.values()), dict(row)


def test_a_strings_use_at_least_128_characters(loaded_w1):
    chars = set("".join(r[0] for r in q(loaded_w1,
                                        "SELECT c_data FROM customer WHERE c_d_id = 1 LIMIT 200")))
    assert len(chars) >= 128
    assert set(tr.ALPHABET) <= chars


def test_bad_credit_is_exactly_a_tenth_of_each_district(loaded_w1):
    # 300 of each district's 3,000 customers, drawn without replacement [4.3.3.1]
    per_district = q(loaded_w1, "SELECT c_d_id, count(*) FILTER (WHERE c_credit = 'BC')"
                                " FROM customer GROUP BY c_d_id ORDER BY c_d_id")
    assert [tuple(r) for r in per_district] == [(d, 300) for d in range(1, 11)]


def test_original_is_exactly_a_tenth_of_items_and_of_stock(loaded_w1):
    # 10,000 of 100,000 rows, drawn without replacement, each with ORIGINAL once [4.3.3.1]
    row = q(
        loaded_w1, """
        SELECT (SELECT count(*) FROM item WHERE i_data LIKE '%ORIGINAL%') items,
               (SELECT count(*) FROM item WHERE i_data LIKE '%ORIGINAL%ORIGINAL%') items_twice,
               (SELECT count(*) FROM stock WHERE s_data LIKE '%ORIGINAL%') stock,
               (SELECT count(*) FROM stock WHERE s_data LIKE '%ORIGINAL%ORIGINAL%') stock_twice"""
    )[0]
    assert dict(row) == {"items": 10_000, "items_twice": 0, "stock": 10_000, "stock_twice": 0}


def test_last_names_first_thousand(loaded_w1):
    rows = q(loaded_w1, "SELECT c_id, c_last FROM customer WHERE c_id <= 1000")
    assert len(rows) == 10_000
    assert all(r["c_last"] == tr.last_name(r["c_id"] - 1) for r in rows)


def test_last_names_only_from_syllables(loaded_w1):
    pattern = "^(" + "|".join(tr.SYLLABLES) + "){3}$"
    assert val(loaded_w1, "SELECT count(*) FROM customer WHERE c_last !~ $1", pattern) == 0


def _nurand_last_names(c: int) -> dict[str, float]:
    counts = Counter(((a | b) + c) % 1000 for a in range(256) for b in range(1000))
    return {tr.last_name(v): n / 256_000 for v, n in counts.items()}


def test_last_names_follow_nurand_with_c_load(loaded_w1):
    c_load = schema_info(loaded_w1).c_last_load
    rows = q(loaded_w1, "SELECT c_last, count(*) FROM customer WHERE c_id > 1000 GROUP BY c_last")
    observed = {r[0]: r[1] / 20_000 for r in rows}

    def distance(c):
        expected = _nurand_last_names(c)
        keys = set(expected) | set(observed)
        return 0.5 * sum(abs(observed.get(k, 0) - expected.get(k, 0)) for k in keys)

    assert distance(c_load) < 0.15
    assert distance((c_load + 1) % 256) > 0.3
    assert distance((c_load + 100) % 256) > 0.3


def test_orders_customer_permutation(loaded_w1):
    rows = q(loaded_w1, """SELECT o_d_id, count(DISTINCT o_c_id), min(o_c_id), max(o_c_id)
                             FROM orders GROUP BY o_d_id""")
    assert [tuple(r)[1:] for r in rows] == [(3000, 1, 3000)] * 10


def test_delivered_and_undelivered_orders(loaded_w1):
    row = q(loaded_w1, """
        SELECT bool_and((o_carrier_id IS NULL) = (o_id >= 2101)) AS null_iff_new,
               bool_and(o_carrier_id IS NULL OR o_carrier_id BETWEEN 1 AND 10) AS carrier_range,
               count(DISTINCT o_carrier_id) AS carriers
          FROM orders""")[0]
    assert row["null_iff_new"] and row["carrier_range"] and row["carriers"] == 10
    rows = q(loaded_w1, "SELECT no_d_id, min(no_o_id), max(no_o_id), count(*) FROM new_order"
                        " GROUP BY no_d_id")
    assert [tuple(r)[1:] for r in rows] == [(2101, 3000, 900)] * 10


def test_order_lines(loaded_w1):
    row = q(loaded_w1, """
        SELECT bool_and(CASE WHEN ol.ol_o_id < 2101
                             THEN ol.ol_amount = 0 AND ol.ol_delivery_d = o.o_entry_d
                             ELSE ol.ol_amount BETWEEN 0.01 AND 9999.99
                                  AND ol.ol_delivery_d IS NULL END) AS by_delivery,
               bool_and(ol.ol_quantity = 5 AND ol.ol_supply_w_id = ol.ol_w_id) AS fixed,
               min(ol.ol_i_id) >= 1 AND max(ol.ol_i_id) <= 100000 AS item_range,
               avg(ol.ol_i_id) BETWEEN 49000 AND 51000 AS uniform_items,
               max(ol.ol_amount) > 9900 AS amounts_spread
          FROM order_line ol
          JOIN orders o ON o.o_w_id = ol.ol_w_id AND o.o_d_id = ol.ol_d_id AND o.o_id = ol.ol_o_id
         WHERE ol.ol_d_id IN (1, 2)""")[0]
    assert all(row.values()), dict(row)
    numbers = q(loaded_w1, """SELECT bool_and(n = c AND mx = c) FROM
        (SELECT count(*) c, count(DISTINCT ol_number) n, max(ol_number) mx FROM order_line
          WHERE ol_d_id = 3 GROUP BY ol_o_id) x""")
    assert numbers[0][0]


def test_keys_indexes_statistics_and_vacuum_after_build(loaded_w1):
    indexes = {r[0] for r in q(loaded_w1, "SELECT indexname FROM pg_indexes"
                                          " WHERE schemaname = current_schema()")}
    assert {"customer_last_name", "orders_customer", "order_line_pkey", "stock_pkey",
            "customer_pkey", "orders_pkey", "new_order_pkey", "district_pkey", "warehouse_pkey",
            "item_pkey"} <= indexes
    pkeys = val(loaded_w1, "SELECT count(*) FROM pg_constraint WHERE contype = 'p'"
                           " AND connamespace = current_schema()::regnamespace")
    assert pkeys == 8
    # autovacuum is back on after the load
    assert val(loaded_w1, "SELECT count(*) FROM pg_class WHERE relname = 'stock'"
                          " AND reloptions IS NOT NULL") == 0
    assert val(loaded_w1, "SELECT count(*) FROM pg_stats WHERE tablename = 'customer'") > 0
    # vacuumed and frozen by the build: nothing left for autovacuum, the pages all-visible
    # (but for the empty pages that COPY's bulk extension leaves at the end of a table)
    assert val(loaded_w1, "SELECT bool_and(relallfrozen > 0.95 * relpages AND relpages > 0)"
                          " FROM pg_class WHERE relname IN ('stock', 'order_line', 'customer')")
    assert val(loaded_w1, "SELECT bool_and(n_ins_since_vacuum = 0) FROM pg_stat_user_tables"
                          " WHERE relname IN ('stock', 'order_line')")


def test_recorded_constants(loaded_w1):
    info = schema_info(loaded_w1)
    meta = q(loaded_w1, "SELECT * FROM tpcc_meta")
    assert len(meta) == 1
    m = meta[0]
    assert info.warehouses == m["warehouses"] == 1
    assert (info.c_last_load, info.c_id_load, info.c_ol_i_id_load) == (
        m["c_last_load"], m["c_id_load"], m["c_ol_i_id_load"])
    assert 0 <= info.c_last_load <= 255 and 0 <= info.c_id_load <= 1023
    assert 0 <= info.c_ol_i_id_load <= 8191
    assert m["seed"] == 12345 and m["build_users"] == 2 and m["oltplab_version"]
    assert info.functions_installed
    c_run = tr.pick_c_run(__import__("random").Random(1), info.c_last_load)
    assert tr.c_delta_ok(c_run, info.c_last_load)
    require_warehouses(info, 1)
    with pytest.raises(SchemaError, match="--warehouses 2"):
        require_warehouses(info, 2)


def test_schema_info_on_empty_database(pg):
    dsn = pg.create_db("e")
    with pytest.raises(SchemaError,
                       match=r"no TPC-C schema in database e_\d+_\d+:"
                             r" run 'oltplab tpcc build' first"):
        schema_info(dsn)


def test_refuses_existing_schema_without_force(scratch_w1):
    with pytest.raises(SchemaError, match="--force") as err:
        build(scratch_w1, BuildSpec(warehouses=1, build_users=1))
    assert "\n" not in str(err.value)
    assert val(scratch_w1, "SELECT count(*) FROM warehouse") == 1


def _fingerprint(dsn: str) -> tuple:
    """Everything except the load timestamps."""
    return tuple(q(dsn, """
        SELECT (SELECT md5(string_agg(c_first || c_last || c_street_1 || c_phone || c_credit
                                      || c_discount || c_data, ',' ORDER BY c_w_id, c_d_id, c_id))
                  FROM customer),
               (SELECT md5(string_agg(s_quantity || s_dist_05 || s_data, ',' ORDER BY s_w_id, s_i_id))
                  FROM stock),
               (SELECT md5(string_agg(ol_i_id || ',' || ol_amount || ol_dist_info, ','
                                      ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number))
                  FROM order_line),
               (SELECT md5(string_agg(o_c_id || ',' || coalesce(o_carrier_id, 0) || ',' || o_ol_cnt,
                                      ',' ORDER BY o_w_id, o_d_id, o_id)) FROM orders),
               (SELECT md5(string_agg(i_name || i_price || i_data, ',' ORDER BY i_id)) FROM item),
               (SELECT md5(string_agg(w_name || w_zip || w_tax, ',')) FROM warehouse)""")[0])  # noqa: E501


def test_force_rebuild_by_one_user_reproduces_the_two_user_build(scratch_w1, loaded_w1):
    events = []
    summary = build(scratch_w1, BuildSpec(warehouses=1, build_users=1, force=True, seed=12345),
                    progress=lambda e, d, t: events.append((e, d, t)))
    assert summary["rows"]["stock"] == 100_000 and summary["warehouses"] == 1
    assert summary["constants"]["c_last_load"] == schema_info(loaded_w1).c_last_load
    assert _fingerprint(scratch_w1) == _fingerprint(loaded_w1)
    kinds = [e for e, _, _ in events]
    for kind in ("tables", "load", "warehouses", "indexes", "analyze"):
        assert kind in kinds
    loads = [(d, t) for e, d, t in events if e == "load"]
    assert all(d <= t for d, t in loads)
    assert [d for d, _ in loads] == sorted(d for d, _ in loads)
    assert loads[-1][0] == loads[-1][1] == sum(summary["rows"].values())
    assert events[-1][1] == events[-1][2]


_INTERRUPTED_BUILD = textwrap.dedent("""
    import sys
    from oltplab.config import BuildSpec
    from oltplab.engines.postgres.tpcc.loader import build
    try:
        build(sys.argv[1], BuildSpec(warehouses=4, build_users=2, seed=1))
    except KeyboardInterrupt:
        sys.exit(42)
    sys.exit(0)
""")


def test_ctrl_c_stops_the_workers(pg):
    dsn = pg.create_db("int")
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_BUILD, dsn],
                            start_new_session=True, **INTERRUPTIBLE)
    try:
        parent = psutil.Process(proc.pid)
        deadline = time.monotonic() + 20
        children = []
        while time.monotonic() < deadline and len(children) < 2:
            time.sleep(0.05)
            children = parent.children(recursive=True)
        assert len(children) >= 2, "the workers did not start"
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the whole group
        assert proc.wait(timeout=10) == 42
    finally:
        if proc.poll() is None:
            proc.kill()
    _, alive = psutil.wait_procs(children, timeout=5)
    assert not alive
    # the server side is not left loading
    deadline = time.monotonic() + 5
    name = dsn.split("?")[0].rsplit("/", 1)[1]
    while time.monotonic() < deadline:
        busy = val(pg.dsn("postgres"), "SELECT count(*) FROM pg_stat_activity WHERE datname = $1"
                                       " AND state = 'active'", name)
        if busy == 0:
            break
        time.sleep(0.1)
    assert busy == 0
    with pytest.raises(SchemaError, match="incomplete .*--force"):
        schema_info(dsn)


def test_build_seconds_are_recorded(loaded_w1):
    seconds = val(loaded_w1, "SELECT build_seconds FROM tpcc_meta")
    assert 0 < seconds < 120
