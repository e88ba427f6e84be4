"""Consistency conditions CC1-CC12 [TPC-C 3.3.2] on MariaDB, in one snapshot.

The conditions are those of workloads/tpcc/checks.py, whose queries MariaDB runs as written
(LEFT JOIN, COALESCE, window count) but for CC5: MariaDB has no FULL JOIN, so its two sides are the
orders without a matching NEW_ORDER state and the NEW_ORDER rows without an order, joined by
UNION ALL. All run in one ``START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY`` at
REPEATABLE READ (InnoDB's default), so a live system gives no false failures
(engines/mariadb/dialect.py ``run_conditions``).
"""

from __future__ import annotations

import dataclasses

from ....workloads.checks import CheckResult
from ....workloads.tpcc.checks import CONDITIONS
from ....workloads.tpcc.schema import META_TABLE, no_schema
from ..dialect import run_conditions

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
    return run_conditions(dsn, MARIADB_CONDITIONS, META_TABLE, no_schema,
                          leave_out=("CC11",) if after_run else ())
