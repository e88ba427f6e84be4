"""Consistency conditions of a DVD-Store-derived database, as SQL run in one snapshot.

Each query returns the violating rows: none means the condition holds. An engine runs all of
them in one snapshot (engines/<name>/dvds/checks.py), so a live system gives no false failures
from snapshot skew. The loaded orders have random amounts (as DVD Store's do), so the amounts
are checked on the orders placed since the build only: those above ``dvds_meta.max_orderid``.
INVENTORY.sales holds, per product, the quantity of all its order lines: the build loads it
so and every purchase adds what it orders; ``dvds_meta.build_sales`` is the loaded total.
"""

from __future__ import annotations

from ..checks import Condition

_SINCE_BUILD = "(SELECT max_orderid FROM dvds_meta)"

# Every order has order lines, numbered 1..n.
DS1 = """
SELECT o.orderid, COALESCE(l.n, 0) AS lines, l.top AS max_orderlineid FROM orders o
  LEFT JOIN (SELECT orderid, count(*) AS n, max(orderlineid) AS top FROM orderlines
              GROUP BY orderid) l ON l.orderid = o.orderid
 WHERE l.n IS NULL OR l.top <> l.n"""

# CUST_HIST holds one row per order line, under the order's customer: per order, the sorted
# products of its lines and of its CUST_HIST rows are equal (one group per order, not per
# line: the cheaper aggregation of the two).
DS2 = """
SELECT COALESCE(o.orderid, b.orderid) AS orderid, o.customerid, a.p AS line_products,
       b.p AS cust_hist_products, b.c1 AS cust_hist_customer
  FROM orders o
  LEFT JOIN (SELECT orderid, array_agg(prod_id ORDER BY prod_id) AS p FROM orderlines
              GROUP BY orderid) a ON a.orderid = o.orderid
  FULL JOIN (SELECT orderid, array_agg(prod_id ORDER BY prod_id) AS p, min(customerid) AS c1,
                    max(customerid) AS c2 FROM cust_hist GROUP BY orderid) b
         ON b.orderid = o.orderid
 WHERE o.orderid IS NULL OR a.p IS DISTINCT FROM b.p OR b.c1 <> o.customerid
    OR b.c2 <> o.customerid"""

DS3 = f"""
SELECT o.orderid, o.netamount, COALESCE(s.net, 0) AS lines_net, o.tax, o.totalamount
  FROM orders o
  LEFT JOIN (SELECT l.orderid, sum(p.price * l.quantity) AS net FROM orderlines l
               JOIN products p ON p.prod_id = l.prod_id
              WHERE l.orderid > {_SINCE_BUILD} GROUP BY l.orderid) s ON s.orderid = o.orderid
 WHERE o.orderid > {_SINCE_BUILD}
   AND (o.netamount <> COALESCE(s.net, 0) OR o.tax <> round(o.netamount * 0.0825, 2)
        OR o.totalamount <> o.netamount + o.tax)"""

DS4 = """
SELECT i.prod_id, i.sales, COALESCE(s.q, 0) AS ordered FROM inventory i
  LEFT JOIN (SELECT prod_id, sum(quantity) AS q FROM orderlines GROUP BY prod_id) s
         ON s.prod_id = i.prod_id
 WHERE i.sales <> COALESCE(s.q, 0)"""

DS5 = """
SELECT v.sales_since_build, v.ordered_since_build FROM
  (SELECT (SELECT sum(sales) FROM inventory) - m.build_sales AS sales_since_build,
          (SELECT COALESCE(sum(quantity), 0) FROM orderlines WHERE orderid > m.max_orderid)
          AS ordered_since_build
     FROM dvds_meta m) v
 WHERE v.sales_since_build <> v.ordered_since_build"""

DS6 = """
SELECT prod_id, quan_in_stock FROM inventory WHERE quan_in_stock < 0"""

CONDITIONS = (
    Condition("DS1", "orders", "every order has order lines, numbered 1..n", DS1),
    Condition("DS2", "cust_hist", "CUST_HIST has one row per order line, under the order's "
              "customer", DS2),
    Condition("DS3", "amounts", "orders since the build: net amount = sum of price x quantity "
              "of the lines, tax 8.25%, total = net + tax", DS3),
    Condition("DS4", "sales", "INVENTORY.sales = the quantity ordered in the order lines, per "
              "product", DS4),
    Condition("DS5", "sales", "INVENTORY.sales added since the build = the quantity ordered "
              "since the build", DS5),
    Condition("DS6", "stock", "no product has a negative stock", DS6),
)


# DVD Store 3's tables (a DS3 build only): they hold after the build and after any run.
DS7 = """
SELECT m.customerid, m.membershiptype, m.n FROM
  (SELECT customerid, min(membershiptype) AS membershiptype, count(*) AS n FROM membership
    GROUP BY customerid) m
  LEFT JOIN customers c ON c.customerid = m.customerid
 WHERE m.n > 1 OR c.customerid IS NULL OR m.membershiptype NOT BETWEEN 1 AND 3"""

DS8 = """
SELECT r.review_id, r.prod_id, r.customerid, r.stars FROM reviews r
  LEFT JOIN products p ON p.prod_id = r.prod_id
  LEFT JOIN customers c ON c.customerid = r.customerid
 WHERE r.stars NOT BETWEEN 1 AND 5 OR p.prod_id IS NULL OR c.customerid IS NULL"""

DS9 = """
SELECT h.review_helpfulness_id, h.review_id, h.customerid, h.helpfulness
  FROM reviews_helpfulness h
  LEFT JOIN reviews r ON r.review_id = h.review_id
  LEFT JOIN customers c ON c.customerid = h.customerid
 WHERE h.helpfulness NOT BETWEEN 1 AND 10 OR r.review_id IS NULL OR c.customerid IS NULL"""

DS10 = """
SELECT prod_id, membership_item FROM products WHERE membership_item NOT BETWEEN 0 AND 3"""

DS3_CONDITIONS = (
    Condition("DS7", "membership", "one membership per customer at most, of an existing "
              "customer, tier 1..3", DS7),
    Condition("DS8", "reviews", "every review has 1..5 stars, an existing product and "
              "customer", DS8),
    Condition("DS9", "helpfulness", "every helpfulness rating (1..10) points at an existing "
              "review and customer", DS9),
    Condition("DS10", "membership_item", "PRODUCTS.membership_item is 0 or a tier 1..3", DS10),
)


def conditions(ds3: bool, base: tuple = CONDITIONS) -> tuple:
    """The conditions of a build: ``base`` (an engine's wording of DS1-DS6) and, on a DS3
    build, DS7-DS10."""
    return base + (DS3_CONDITIONS if ds3 else ())
