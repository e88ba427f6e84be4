"""Consistency conditions of a TPC-E-derived brokerage database, as SQL run in one snapshot.

Each query returns the violating rows: none means the condition holds. They hold after the
build and after any run (Trade-Order, Trade-Result, Market-Feed, Trade-Update, Trade-Cleanup
and Data-Maintenance keep them), and an engine runs all of them in one snapshot
(engines/<name>/brokerage/checks.py). The SQL is written for both engines (no FULL JOIN, no
boolean literals, no casts): a side that may lack its rows is reached by LEFT JOIN or by a
UNION ALL of both sides grouped.

Balances: the build records each account's ``opening`` balance (before the loaded trades)
and its ``built`` one (``ca_bal`` when the build ended) in ``brokerage_balance``; every cash
trade's Trade-Result adds its cash transaction's amount to ``ca_bal``, so the balance is the
built one plus the cash transactions of the trades entered since the build (ids above
``brokerage_meta.max_t_id``), and the built one the opening plus the loaded ones.
"""

from __future__ import annotations

from ..checks import Condition

_MAX_T_ID = "(SELECT max_t_id FROM brokerage_meta)"

# Per account and security, the summary's quantity is the sum of the open lots' (a short
# position's are negative): one summary row exactly where there are lots.
BK1 = """
SELECT ca_id, symbol, sum(hs) AS hs_qty, sum(h) AS holding_qty, count(h) AS lots FROM
  (SELECT hs_ca_id AS ca_id, hs_s_symb AS symbol, hs_qty AS hs, NULL AS h
     FROM holding_summary
   UNION ALL
   SELECT h_ca_id, h_s_symb, NULL, h_qty FROM holding) x
 GROUP BY ca_id, symbol
HAVING count(hs) <> 1 OR count(h) = 0 OR sum(hs) <> sum(h)"""

# A settlement exactly for each completed trade; a cash transaction exactly for each completed
# cash trade. No others: given the first part, one more settlement (cash transaction) than
# completed (cash) trades is one without its trade (the last row, of the counts).
BK2 = """
SELECT t.t_id, t.t_st_id, t.t_is_cash, se.se_t_id AS settlement, ct.ct_t_id AS cash_transaction
  FROM trade t
  LEFT JOIN settlement se ON se.se_t_id = t.t_id
  LEFT JOIN cash_transaction ct ON ct.ct_t_id = t.t_id
 WHERE (t.t_st_id = 'CMPT' AND se.se_t_id IS NULL)
    OR (t.t_st_id <> 'CMPT' AND se.se_t_id IS NOT NULL)
    OR (t.t_st_id = 'CMPT' AND t.t_is_cash AND ct.ct_t_id IS NULL)
    OR (NOT (t.t_st_id = 'CMPT' AND t.t_is_cash) AND ct.ct_t_id IS NOT NULL)
UNION ALL
SELECT NULL, NULL, NULL, s.n, c.n
  FROM (SELECT count(*) AS n FROM settlement) s, (SELECT count(*) AS n FROM cash_transaction) c,
       (SELECT count(*) AS n, COALESCE(sum(CASE WHEN t_is_cash THEN 1 ELSE 0 END), 0) AS cash
          FROM trade WHERE t_st_id = 'CMPT') t
 WHERE s.n <> t.n OR c.n <> t.cash"""

# A trade_request row exactly for each pending trade, which is a limit or stop-loss order, with
# the trade's type, security, quantity and limit price.
BK3 = """
SELECT t.t_id, t.t_st_id, t.t_tt_id, r.tr_t_id AS request FROM trade t
  LEFT JOIN trade_request r ON r.tr_t_id = t.t_id
 WHERE t.t_st_id = 'PNDG'
   AND (r.tr_t_id IS NULL OR r.tr_tt_id <> t.t_tt_id OR r.tr_s_symb <> t.t_s_symb
        OR r.tr_qty <> t.t_qty OR r.tr_bid_price <> t.t_bid_price
        OR NOT EXISTS (SELECT 1 FROM trade_type tt WHERE tt.tt_id = t.t_tt_id
                        AND NOT tt.tt_is_mrkt))
UNION ALL
SELECT r.tr_t_id, t.t_st_id, r.tr_tt_id, r.tr_t_id FROM trade_request r
  LEFT JOIN trade t ON t.t_id = r.tr_t_id
 WHERE t.t_id IS NULL OR t.t_st_id <> 'PNDG'"""

# The history row of the trade's status is its last (no row is later; rows of one time, as
# Trade-Cleanup's SBMT and CNCL, tie): one pass over each trade's rows.
BK4 = """
SELECT t.t_id, t.t_st_id, max(CASE WHEN h.th_st_id = t.t_st_id THEN h.th_dts END) AS status_dts,
       max(h.th_dts) AS last_dts
  FROM trade t LEFT JOIN trade_history h ON h.th_t_id = t.t_id
 GROUP BY t.t_id, t.t_st_id
HAVING max(CASE WHEN h.th_st_id = t.t_st_id THEN h.th_dts END) IS NULL
    OR max(CASE WHEN h.th_st_id = t.t_st_id THEN h.th_dts END) < max(h.th_dts)"""

# Each broker's trades and commission are those of its accounts' completed trades.
BK5 = """
SELECT b.b_id, b.b_num_trades, COALESCE(s.n, 0) AS completed, b.b_comm_total,
       COALESCE(s.comm, 0) AS commission
  FROM broker b
  LEFT JOIN (SELECT ca.ca_b_id, count(*) AS n, sum(t.t_comm) AS comm FROM trade t
               JOIN customer_account ca ON ca.ca_id = t.t_ca_id
              WHERE t.t_st_id = 'CMPT' GROUP BY ca.ca_b_id) s ON s.ca_b_id = b.b_id
 WHERE b.b_num_trades <> COALESCE(s.n, 0) OR b.b_comm_total <> COALESCE(s.comm, 0)"""

BK6 = f"""
SELECT a.ca_id, a.ca_bal, b.built, COALESCE(c.amt, 0) AS cash_since_build
  FROM customer_account a
  LEFT JOIN brokerage_balance b ON b.ca_id = a.ca_id
  LEFT JOIN (SELECT t.t_ca_id, sum(ct.ct_amt) AS amt FROM cash_transaction ct
               JOIN trade t ON t.t_id = ct.ct_t_id
              WHERE ct.ct_t_id > {_MAX_T_ID} GROUP BY t.t_ca_id) c ON c.t_ca_id = a.ca_id
 WHERE b.ca_id IS NULL OR a.ca_bal <> b.built + COALESCE(c.amt, 0)"""

BK7 = f"""
SELECT b.ca_id, b.opening, b.built, COALESCE(c.amt, 0) AS loaded_cash
  FROM brokerage_balance b
  LEFT JOIN (SELECT t.t_ca_id, sum(ct.ct_amt) AS amt FROM cash_transaction ct
               JOIN trade t ON t.t_id = ct.ct_t_id
              WHERE ct.ct_t_id <= {_MAX_T_ID} GROUP BY t.t_ca_id) c ON c.t_ca_id = b.ca_id
 WHERE b.built <> b.opening + COALESCE(c.amt, 0)
    OR NOT EXISTS (SELECT 1 FROM customer_account a WHERE a.ca_id = b.ca_id)"""

CONDITIONS = (
    Condition("BK1", "holdings", "HOLDING_SUMMARY = the sum of the open lots per account and "
              "security, one row exactly where there are lots", BK1),
    Condition("BK2", "settlement", "each completed trade has its settlement, and its cash "
              "transaction exactly when it is a cash trade; no other trade has either", BK2),
    Condition("BK3", "requests", "a TRADE_REQUEST row exactly for each pending limit trade, "
              "with its type, security, quantity and price", BK3),
    Condition("BK4", "history", "each trade's last TRADE_HISTORY row has the trade's "
              "status", BK4),
    Condition("BK5", "brokers", "each broker's trade count and commission = its accounts' "
              "completed trades'", BK5),
    Condition("BK6", "balances", "each account's balance = the build's + the cash "
              "transactions of the trades since the build", BK6),
    Condition("BK7", "balances", "each account's built balance = its opening balance + the "
              "loaded cash transactions", BK7),
)
