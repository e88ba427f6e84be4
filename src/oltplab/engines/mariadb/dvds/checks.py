"""The consistency conditions of workloads/dvds/checks.py on MariaDB, in one snapshot
(engines/mariadb/dialect.py ``run_conditions``).

MariaDB runs DS3-DS6 as written; two it words its own way: DS1, whose column ``lines`` is a
reserved word here (quoted, so its rows read as on PostgreSQL), and DS2, for MariaDB has no
FULL JOIN, no array_agg and no IS DISTINCT FROM: the rows of ORDERLINES and CUST_HIST are
grouped by order in one pass (six times as fast as two groupings joined), the products of each
side compared as sorted GROUP_CONCAT lists with the null-safe ``<=>``, and the groups joined
to their orders, so that CUST_HIST rows without an order show too (and order lines without
their CUST_HIST rows, whether or not their order exists).
"""

from __future__ import annotations

import dataclasses

from ....errors import SchemaError
from ....workloads.dvds.checks import CONDITIONS, conditions
from ....workloads.checks import CheckResult
from ....workloads.dvds.schema import META_TABLE, no_schema
from ..dialect import run_conditions
from .schema import schema_info

DS1 = """
SELECT o.orderid, COALESCE(l.n, 0) AS `lines`, l.top AS max_orderlineid FROM orders o
  LEFT JOIN (SELECT orderid, COUNT(*) AS n, MAX(orderlineid) AS top FROM orderlines
              GROUP BY orderid) l ON l.orderid = o.orderid
 WHERE l.n IS NULL OR l.top <> l.n"""

DS2 = """
SELECT u.orderid, o.customerid, u.lp AS line_products, u.hp AS cust_hist_products,
       u.c1 AS cust_hist_customer
  FROM (SELECT orderid, GROUP_CONCAT(IF(h, NULL, prod_id) ORDER BY prod_id) AS lp,
               GROUP_CONCAT(IF(h, prod_id, NULL) ORDER BY prod_id) AS hp,
               MIN(customerid) AS c1, MAX(customerid) AS c2
          FROM (SELECT orderid, prod_id, NULL AS customerid, 0 AS h FROM orderlines
                UNION ALL
                SELECT orderid, prod_id, customerid, 1 FROM cust_hist) x
         GROUP BY orderid) u
  LEFT JOIN orders o ON o.orderid = u.orderid
 WHERE (o.orderid IS NULL AND u.hp IS NOT NULL) OR NOT (u.lp <=> u.hp)
    OR u.c1 <> o.customerid OR u.c2 <> o.customerid"""

_OWN = {"DS1": DS1, "DS2": DS2}
MARIADB_CONDITIONS = tuple(dataclasses.replace(c, sql=_OWN[c.name]) if c.name in _OWN else c
                           for c in CONDITIONS)


def run_checks(dsn: str, after_run: bool = False) -> list[CheckResult]:
    """DS1-DS6 (and DS7-DS10 on a DS3 build) in one snapshot; they hold after the build and after
    any run, so ``after_run`` changes nothing. Raises SchemaError when the database has no complete
    DVD-Store-derived schema."""
    return run_conditions(dsn, conditions(_is_ds3(dsn), MARIADB_CONDITIONS), META_TABLE,
                          no_schema, complete=True)


def _is_ds3(dsn: str) -> bool:
    """A DS3 build (no build at all is for run_conditions to report)."""
    try:
        return schema_info(dsn).ds3
    except SchemaError:
        return False
