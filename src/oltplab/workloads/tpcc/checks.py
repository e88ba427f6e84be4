"""Consistency conditions CC1-CC12 [TPC-C 3.3.2] as SQL, run in one snapshot.

Each query returns the violating rows: none means the condition holds. An engine runs all of
them in one snapshot (engines/<name>/tpcc/checks.py), so a live system gives no false failures
from snapshot skew; the queries are written for PostgreSQL, and an engine replaces those its
SQL lacks (MariaDB: CC5's FULL JOIN). Sums are compared through COALESCE, so a district or
customer with nothing to sum is compared with 0 instead of silently passing as NULL.

CC11 (ORDERS - NEW_ORDER = 2100) holds only until the first Delivery commits; ``run_checks``
leaves it out when ``after_run`` is set.
"""

from __future__ import annotations

from .. import checks as shared

#: What every workload's checks are made of (workloads/checks.py), as engines import them here.
SAMPLE_ROWS, CheckResult, Condition = shared.SAMPLE_ROWS, shared.CheckResult, shared.Condition

# Per-district and per-customer sums of delivered order lines (CC10, CC12).
_DELIVERED = """
    SELECT o.o_w_id, o.o_d_id, o.o_c_id, SUM(ol.ol_amount) AS s
      FROM orders o JOIN order_line ol
        ON ol.ol_w_id = o.o_w_id AND ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id
     WHERE ol.ol_delivery_d IS NOT NULL
     GROUP BY o.o_w_id, o.o_d_id, o.o_c_id"""

CC1 = """
SELECT w.w_id, w.w_ytd, COALESCE(d.s, 0) AS sum_d_ytd FROM warehouse w
  LEFT JOIN (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
 WHERE w.w_ytd <> COALESCE(d.s, 0)"""

CC2 = """
SELECT d.d_w_id, d.d_id, d.d_next_o_id, o.mo AS max_o_id, n.mno AS max_no_o_id FROM district d
  LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS mo FROM orders GROUP BY o_w_id, o_d_id) o
         ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
  LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS mno FROM new_order
              GROUP BY no_w_id, no_d_id) n
         ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
 WHERE o.mo IS NULL OR d.d_next_o_id - 1 <> o.mo
    OR (n.mno IS NOT NULL AND d.d_next_o_id - 1 <> n.mno)"""

CC3 = """
SELECT no_w_id, no_d_id, MIN(no_o_id) AS min_no_o_id, MAX(no_o_id) AS max_no_o_id,
       COUNT(*) AS new_order_rows
  FROM new_order GROUP BY no_w_id, no_d_id
HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)"""

CC4 = """
SELECT o.o_w_id, o.o_d_id, o.s AS sum_o_ol_cnt, COALESCE(l.c, 0) AS order_line_rows FROM
  (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o
  LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) l
         ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
 WHERE o.s <> COALESCE(l.c, 0)"""

# Also catches NEW_ORDER rows without an order (implied by CC5).
CC5 = """
SELECT COALESCE(o.o_w_id, n.no_w_id) AS w_id, COALESCE(o.o_d_id, n.no_d_id) AS d_id,
       COALESCE(o.o_id, n.no_o_id) AS o_id, o.o_carrier_id,
       (o.o_id IS NOT NULL) AS order_exists, (n.no_o_id IS NOT NULL) AS new_order_exists
  FROM orders o
  FULL JOIN new_order n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id
 WHERE o.o_id IS NULL OR (o.o_carrier_id IS NULL) <> (n.no_o_id IS NOT NULL)"""

CC6 = """
SELECT o.o_w_id, o.o_d_id, o.o_id, o.o_ol_cnt, COALESCE(l.c, 0) AS order_line_rows FROM orders o
  LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS c FROM order_line
              GROUP BY ol_w_id, ol_d_id, ol_o_id) l
         ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
 WHERE COALESCE(l.c, 0) <> o.o_ol_cnt"""

CC7 = """
SELECT ol.ol_w_id, ol.ol_d_id, ol.ol_o_id, ol.ol_number, ol.ol_delivery_d, o.o_carrier_id
  FROM order_line ol
  JOIN orders o ON o.o_w_id = ol.ol_w_id AND o.o_d_id = ol.ol_d_id AND o.o_id = ol.ol_o_id
 WHERE (ol.ol_delivery_d IS NULL) <> (o.o_carrier_id IS NULL)"""

CC8 = """
SELECT w.w_id, w.w_ytd, COALESCE(h.s, 0) AS sum_h_amount FROM warehouse w
  LEFT JOIN (SELECT h_w_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id) h
         ON h.h_w_id = w.w_id
 WHERE w.w_ytd <> COALESCE(h.s, 0)"""

CC9 = """
SELECT d.d_w_id, d.d_id, d.d_ytd, COALESCE(h.s, 0) AS sum_h_amount FROM district d
  LEFT JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id, h_d_id) h
         ON h.h_w_id = d.d_w_id AND h.h_d_id = d.d_id
 WHERE d.d_ytd <> COALESCE(h.s, 0)"""

CC10 = f"""
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_balance, COALESCE(a.s, 0) AS delivered,
       COALESCE(h.s, 0) AS paid
  FROM customer c
  LEFT JOIN ({_DELIVERED}) a ON a.o_w_id = c.c_w_id AND a.o_d_id = c.c_d_id AND a.o_c_id = c.c_id
  LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) AS s FROM history
              GROUP BY h_c_w_id, h_c_d_id, h_c_id) h
         ON h.h_c_w_id = c.c_w_id AND h.h_c_d_id = c.c_d_id AND h.h_c_id = c.c_id
 WHERE c.c_balance <> COALESCE(a.s, 0) - COALESCE(h.s, 0)"""

CC11 = """
SELECT d.d_w_id, d.d_id, COALESCE(o.c, 0) AS orders_rows, COALESCE(n.c, 0) AS new_order_rows
  FROM district d
  LEFT JOIN (SELECT o_w_id, o_d_id, COUNT(*) AS c FROM orders GROUP BY o_w_id, o_d_id) o
         ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
  LEFT JOIN (SELECT no_w_id, no_d_id, COUNT(*) AS c FROM new_order GROUP BY no_w_id, no_d_id) n
         ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
 WHERE COALESCE(o.c, 0) - COALESCE(n.c, 0) <> 2100"""

CC12 = f"""
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_balance, c.c_ytd_payment, COALESCE(a.s, 0) AS delivered
  FROM customer c
  LEFT JOIN ({_DELIVERED}) a ON a.o_w_id = c.c_w_id AND a.o_d_id = c.c_d_id AND a.o_c_id = c.c_id
 WHERE c.c_balance + c.c_ytd_payment <> COALESCE(a.s, 0)"""


CONDITIONS = (
    Condition("CC1", "3.3.2.1", "W_YTD = sum of D_YTD, per warehouse", CC1),
    Condition("CC2", "3.3.2.2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID), per district", CC2),
    Condition("CC3", "3.3.2.3",
              "max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW_ORDER rows, per district", CC3),
    Condition("CC4", "3.3.2.4", "sum of O_OL_CNT = number of ORDER_LINE rows, per district", CC4),
    Condition("CC5", "3.3.2.5",
              "O_CARRIER_ID is null exactly when the order has a NEW_ORDER row", CC5),
    Condition("CC6", "3.3.2.6", "O_OL_CNT = number of the order's ORDER_LINE rows", CC6),
    Condition("CC7", "3.3.2.7",
              "OL_DELIVERY_D is null exactly when the order's O_CARRIER_ID is null", CC7),
    Condition("CC8", "3.3.2.8", "W_YTD = sum of H_AMOUNT, per warehouse", CC8),
    Condition("CC9", "3.3.2.9", "D_YTD = sum of H_AMOUNT, per district", CC9),
    Condition("CC10", "3.3.2.10",
              "C_BALANCE = sum of delivered OL_AMOUNT - sum of H_AMOUNT, per customer", CC10),
    Condition("CC11", "3.3.2.11",
              "ORDERS rows - NEW_ORDER rows = 2100, per district (holds until the first Delivery)",
              CC11),
    Condition("CC12", "3.3.2.12",
              "C_BALANCE + C_YTD_PAYMENT = sum of delivered OL_AMOUNT, per customer", CC12),
)
