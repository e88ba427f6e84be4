"""Consistency conditions CC1-CC12 [TPC-C 3.3.2] on MariaDB, in one snapshot.

The conditions are those of workloads/tpcc/checks.py, whose queries MariaDB runs as written
(LEFT JOIN, COALESCE, window count) but for CC5: MariaDB has no FULL JOIN, so its two sides are the
orders without a matching NEW_ORDER state and the NEW_ORDER rows without an order, joined by
UNION ALL. All run in one ``START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY`` at
REPEATABLE READ (InnoDB's default), so a live system gives no false failures.
"""

from __future__ import annotations

import dataclasses

from ....errors import DatabaseError
from ....workloads.tpcc.checks import CONDITIONS, SAMPLE_ROWS, CheckResult
from ....workloads.tpcc.schema import META_TABLE, no_schema
from .. import client

CC5 = """
SELECT o.o_w_id AS w_id, o.o_d_id AS d_id, o.o_id, o.o_carrier_id, 1 AS order_exists,
       (n.no_o_id IS NOT NULL) AS new_order_exists
  FROM orders o
  LEFT JOIN new_order n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id
 WHERE (o.o_carrier_id IS NULL) <> (n.no_o_id IS NOT NULL)
UNION ALL
SELECT n.no_w_id, n.no_d_id, n.no_o_id, NULL, 0, 1
  FROM new_order n
  LEFT JOIN orders o ON o.o_w_id = n.no_w_id AND o.o_d_id = n.no_d_id AND o.o_id = n.no_o_id
 WHERE o.o_id IS NULL"""

MARIADB_CONDITIONS = tuple(dataclasses.replace(c, sql=CC5) if c.name == "CC5" else c
                           for c in CONDITIONS)


def run_checks(dsn: str, after_run: bool = False) -> list[CheckResult]:
    """CC1-CC12 in one snapshot; with ``after_run`` CC11 is left out (it fails after any
    Delivery). Raises SchemaError when the database has no TPC-C schema."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            if not cur.execute("SELECT 1 FROM information_schema.tables"
                               " WHERE table_schema = DATABASE() AND table_name = %s",
                               (META_TABLE,)):
                cur.execute("SELECT DATABASE()")
                raise no_schema(cur.fetchone()[0])
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
            results = []
            for cond in MARIADB_CONDITIONS:
                if after_run and cond.name == "CC11":
                    continue
                cur.execute(f"SELECT COUNT(*) OVER () AS _violations, v.* FROM ({cond.sql}) v"
                            f" LIMIT {SAMPLE_ROWS}")
                names = [d[0] for d in cur.description]
                rows = cur.fetchall()
                violations = rows[0][0] if rows else 0
                results.append(CheckResult(
                    name=cond.name, clause=cond.clause, description=cond.description,
                    ok=violations == 0, violations=violations,
                    sample=[" ".join(f"{k}={v}" for k, v in zip(names[1:], r[1:]))
                            for r in rows]))
            cur.execute("COMMIT")
        return results
    except client.Error as exc:
        raise DatabaseError(f"consistency checks failed to run: {client.error_text(exc)}") \
            from exc
    finally:
        conn.close()
