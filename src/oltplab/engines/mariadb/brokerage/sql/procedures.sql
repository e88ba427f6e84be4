-- The TPC-E-derived brokerage's transactions as MariaDB stored procedures, the twin of
-- PostgreSQL's engines/postgres/brokerage/sql/functions.sql: one procedure per frame
-- (<transaction>_f1, _f2 ...) and one per transaction (broker_volume, customer_position,
-- market_feed, market_watch, security_detail, trade_lookup, trade_order, trade_result,
-- trade_status, trade_update, data_maintenance, trade_cleanup) that runs its frames in order.
-- workloads/brokerage/frames.py lists the transactions, their arguments in order and what
-- each returns. Differences from PostgreSQL's:
-- - A transaction procedure is the whole transaction, one round trip: it sets its isolation
--   level (Trade-Result SERIALIZABLE; Trade-Order, Trade-Update and Market-Feed REPEATABLE
--   READ; the rest READ COMMITTED), runs START TRANSACTION (READ ONLY for the read-only
--   ones), its frames, and COMMIT; any error rolls it back and is raised again with its code
--   (the driver retries deadlocks, 1213, and lock wait timeouts, 1205). So Com_commit +
--   Com_rollback moves by one per call, as for the other workloads' procedures.
-- - Trade-Order's deliberate rollback is the procedure's: with p_roll_it_back it ends in
--   ROLLBACK instead of COMMIT (the trade id taken from the sequence stays used) and returns
--   the trade with roll_it_back true, as PostgreSQL's function undoes its own frames.
-- - What a transaction returns comes back as the CALL's result set: one row of frames.py's
--   columns, in its order (Market-Feed: a row per triggered trade), selected after COMMIT.
-- - An array argument (a list of broker names, trade ids, Market-Feed's symbols, prices and
--   quantities) is a JSON array in a string: '["Broker One","Broker Two"]', '[3,1]'; a list
--   returned (Security-Detail's competitors and headlines) is a JSON array too.
-- - A frame is a procedure whose results are OUT parameters; the rows a frame reads for its
--   client (Trade-Status' 50 trades, Trade-Lookup's trades ...) come out as one JSON array of
--   arrays (p_rows), from which the transaction counts what it returns.
-- Every text parameter is of the columns' character set and collation (latin1_bin), so that
-- comparisons use the columns' keys and are case-sensitive as PostgreSQL's. New trade ids come
-- from the sequence seq_trade_id; money is rounded to the cent where it is stored (ROUND, half
-- away from zero, as PostgreSQL's). Times are the server's NOW() (whole seconds: the columns
-- are DATETIME). Statements are separated by lines holding only '//'.

-- Swaps the case of the first letter of p (unchanged without a letter): the toggling edits
-- of Trade-Update and Data-Maintenance.
CREATE OR REPLACE FUNCTION brokerage_swap_case(p VARCHAR(255) CHARSET latin1 COLLATE latin1_bin)
RETURNS VARCHAR(255) CHARSET latin1 COLLATE latin1_bin
DETERMINISTIC NO SQL
BEGIN
    DECLARE v_at INT DEFAULT REGEXP_INSTR(p, '[A-Za-z]');
    DECLARE v_c CHAR(1) CHARSET latin1 COLLATE latin1_bin;
    IF p IS NULL OR v_at = 0 THEN
        RETURN p;
    END IF;
    SET v_c = SUBSTRING(p, v_at, 1);
    RETURN INSERT(p, v_at, 1, IF(v_c = UPPER(v_c), LOWER(v_c), UPPER(v_c)));
END
//

-- One day later when the day of the month is even, one day earlier when odd.
CREATE OR REPLACE FUNCTION brokerage_toggle_day(p DATE) RETURNS DATE
DETERMINISTIC NO SQL
RETURN IF(DAYOFMONTH(p) % 2 = 0, p + INTERVAL 1 DAY, p - INTERVAL 1 DAY)
//

-- ---------------------------------------------------------------------------------------
-- Broker-Volume frame 1 (read-only): the value of the pending limit orders of each named
-- broker in securities of one sector, largest first: p_rows [[broker name, volume] ...],
-- p_list_len rows, p_volume_total their sum.
CREATE OR REPLACE PROCEDURE broker_volume_f1(
    IN p_broker_list TEXT, IN p_sector_name VARCHAR(30) CHARSET latin1 COLLATE latin1_bin,
    OUT p_rows JSON, OUT p_list_len INT, OUT p_volume_total DECIMAL(20,2))
READS SQL DATA
BEGIN
    SELECT JSON_ARRAYAGG(JSON_ARRAY(v.b_name, v.volume) ORDER BY v.volume DESC, v.b_name),
           COUNT(*), COALESCE(SUM(v.volume), 0)
      INTO p_rows, p_list_len, p_volume_total
      FROM (SELECT b.b_name, SUM(r.tr_qty * r.tr_bid_price) AS volume
              FROM trade_request r
              JOIN broker b ON b.b_id = r.tr_b_id
              JOIN security s ON s.s_symb = r.tr_s_symb
              JOIN company co ON co.co_id = s.s_co_id
              JOIN industry i ON i.in_id = co.co_in_id
              JOIN sector sc ON sc.sc_id = i.in_sc_id
             WHERE sc.sc_name = p_sector_name
               AND b.b_name IN (SELECT l.name FROM JSON_TABLE(p_broker_list, '$[*]' COLUMNS (
                                    name VARCHAR(49) CHARSET latin1 COLLATE latin1_bin
                                    PATH '$')) l)
             GROUP BY b.b_name) v;
END
//

CREATE OR REPLACE PROCEDURE broker_volume(
    IN p_broker_list TEXT, IN p_sector_name VARCHAR(30) CHARSET latin1 COLLATE latin1_bin)
READS SQL DATA
BEGIN
    DECLARE v_rows JSON;
    DECLARE v_len INT;
    DECLARE v_total DECIMAL(20,2);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION READ ONLY;
    CALL broker_volume_f1(p_broker_list, p_sector_name, v_rows, v_len, v_total);
    COMMIT;
    SELECT v_len AS list_len, v_total AS volume_total;
END
//

-- ---------------------------------------------------------------------------------------
-- Customer-Position frame 1 (read-only): the customer (by p_cust_id, or by p_tax_id when
-- p_cust_id is 0) and up to 10 of its accounts, the smallest total first: p_rows
-- [[account, cash balance, market value of its holdings] ...].
CREATE OR REPLACE PROCEDURE customer_position_f1(
    IN p_cust_id BIGINT, IN p_tax_id VARCHAR(20) CHARSET latin1 COLLATE latin1_bin,
    OUT p_c_id BIGINT, OUT p_rows JSON)
READS SQL DATA
BEGIN
    IF p_cust_id = 0 THEN
        SELECT MIN(c_id) INTO p_c_id FROM customer WHERE c_tax_id = p_tax_id;
    ELSE
        SELECT MIN(c_id) INTO p_c_id FROM customer WHERE c_id = p_cust_id;
    END IF;
    IF p_c_id IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'customer_position: no such customer';
    END IF;
    SELECT JSON_ARRAYAGG(JSON_ARRAY(x.ca_id, x.ca_bal, x.assets) ORDER BY x.assets, x.ca_id)
      INTO p_rows
      FROM (SELECT a.ca_id, a.ca_bal, COALESCE(SUM(h.hs_qty * l.lt_price), 0) AS assets
              FROM customer_account a
              LEFT JOIN holding_summary h ON h.hs_ca_id = a.ca_id
              LEFT JOIN last_trade l ON l.lt_s_symb = h.hs_s_symb
             WHERE a.ca_c_id = p_c_id
             GROUP BY a.ca_id, a.ca_bal
             ORDER BY 3, 1
             LIMIT 10) x;
END
//

-- Customer-Position frame 2 (read-only): the account's 10 latest trades with their history,
-- the latest event first, 30 rows at most: p_rows [[trade, symbol, qty, status name, time]].
CREATE OR REPLACE PROCEDURE customer_position_f2(IN p_acct_id BIGINT, OUT p_rows JSON)
READS SQL DATA
BEGIN
    SELECT JSON_ARRAYAGG(JSON_ARRAY(x.t_id, x.t_s_symb, x.t_qty, x.st_name, x.th_dts)
                         ORDER BY x.th_dts DESC, x.t_id DESC, x.th_st_id DESC)
      INTO p_rows
      FROM (SELECT t.t_id, t.t_s_symb, t.t_qty, st.st_name, h.th_dts, h.th_st_id
              FROM (SELECT t_id FROM trade WHERE t_ca_id = p_acct_id
                     ORDER BY t_dts DESC, t_id DESC LIMIT 10) last10
              JOIN trade t ON t.t_id = last10.t_id
              JOIN trade_history h ON h.th_t_id = t.t_id
              JOIN status_type st ON st.st_id = h.th_st_id
             ORDER BY h.th_dts DESC, t.t_id DESC, h.th_st_id DESC
             LIMIT 30) x;
END
//

-- Customer-Position: frame 1, then with p_get_history frame 2 on the account at position
-- p_acct_idx (modulo the accounts found, from 0) of frame 1's list.
CREATE OR REPLACE PROCEDURE customer_position(
    IN p_cust_id BIGINT, IN p_tax_id VARCHAR(20) CHARSET latin1 COLLATE latin1_bin,
    IN p_get_history BOOLEAN, IN p_acct_idx INT)
READS SQL DATA
BEGIN
    DECLARE v_c_id BIGINT;
    DECLARE v_accts, v_hist JSON;
    DECLARE v_len, v_hist_len INT DEFAULT 0;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION READ ONLY;
    CALL customer_position_f1(p_cust_id, p_tax_id, v_c_id, v_accts);
    SET v_len = COALESCE(JSON_LENGTH(v_accts), 0);
    IF p_get_history AND v_len > 0 THEN
        CALL customer_position_f2(
            JSON_VALUE(v_accts, CONCAT('$[', p_acct_idx % v_len, '][0]')), v_hist);
        SET v_hist_len = COALESCE(JSON_LENGTH(v_hist), 0);
    END IF;
    COMMIT;
    SELECT v_c_id AS cust_id, v_len AS acct_len, v_hist_len AS hist_len;
END
//

-- ---------------------------------------------------------------------------------------
-- Market-Feed frame 1: a batch of ticker entries (JSON arrays of symbols, prices and
-- quantities traded). Each entry updates its last_trade row and fires the limit orders its
-- price triggers (stop-loss when the order's price is at or above the ticker's, limit-sell
-- at or below, limit-buy at or above): the trade becomes SBMT with a history row and its
-- trade_request row goes. p_rows: the fired trades [[trade, symbol, entry's price, qty,
-- type] ...], for the market emulator to complete. The entries are taken in symbol order, so
-- that two batches lock their last_trade rows in the same order; each entry's requests are
-- read with a locking read (the latest committed ones, as the DELETE that follows sees them).
CREATE OR REPLACE PROCEDURE market_feed_f1(IN p_symbols TEXT, IN p_prices TEXT,
                                           IN p_qtys TEXT, OUT p_rows JSON)
MODIFIES SQL DATA
BEGIN
    DECLARE v_now DATETIME DEFAULT NOW();
    DECLARE v_s VARCHAR(15) CHARSET latin1 COLLATE latin1_bin;
    DECLARE v_p DECIMAL(12,2);
    DECLARE v_q INT;
    DECLARE v_fired JSON;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE entries CURSOR FOR
        SELECT s.symb, p.price, q.qty
          FROM JSON_TABLE(p_symbols, '$[*]' COLUMNS (
                   n FOR ORDINALITY,
                   symb VARCHAR(15) CHARSET latin1 COLLATE latin1_bin PATH '$')) s
          JOIN JSON_TABLE(p_prices, '$[*]' COLUMNS (
                   n FOR ORDINALITY, price DECIMAL(12,2) PATH '$')) p ON p.n = s.n
          JOIN JSON_TABLE(p_qtys, '$[*]' COLUMNS (
                   n FOR ORDINALITY, qty INT PATH '$')) q ON q.n = s.n
         ORDER BY s.symb, s.n;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    IF JSON_LENGTH(p_symbols) <> JSON_LENGTH(p_prices)
       OR JSON_LENGTH(p_symbols) <> JSON_LENGTH(p_qtys) THEN
        SIGNAL SQLSTATE '45000'
            SET MESSAGE_TEXT = 'market_feed: as many symbols, prices and quantities needed';
    END IF;
    SET p_rows = JSON_ARRAY();
    OPEN entries;
    feed: LOOP
        FETCH entries INTO v_s, v_p, v_q;
        IF v_done THEN
            LEAVE feed;
        END IF;
        UPDATE last_trade SET lt_price = v_p, lt_vol = lt_vol + v_q, lt_dts = v_now
         WHERE lt_s_symb = v_s;
        SELECT JSON_ARRAYAGG(JSON_ARRAY(r.tr_t_id, r.tr_s_symb, v_p, r.tr_qty, r.tr_tt_id)
                             ORDER BY r.tr_t_id)
          INTO v_fired
          FROM (SELECT tr_t_id, tr_s_symb, tr_qty, tr_tt_id FROM trade_request
                 WHERE tr_s_symb = v_s
                   AND ((tr_tt_id = 'TSL' AND tr_bid_price >= v_p)
                        OR (tr_tt_id = 'TLS' AND tr_bid_price <= v_p)
                        OR (tr_tt_id = 'TLB' AND tr_bid_price >= v_p))
                 FOR UPDATE) r;
        IF v_fired IS NOT NULL THEN
            UPDATE trade t
              JOIN JSON_TABLE(v_fired, '$[*]' COLUMNS (id BIGINT PATH '$[0]')) f
                ON t.t_id = f.id
               SET t.t_dts = v_now, t.t_st_id = 'SBMT';
            INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
            SELECT f.id, v_now, 'SBMT'
              FROM JSON_TABLE(v_fired, '$[*]' COLUMNS (id BIGINT PATH '$[0]')) f;
            DELETE r FROM JSON_TABLE(v_fired, '$[*]' COLUMNS (id BIGINT PATH '$[0]')) f
              JOIN trade_request r ON r.tr_t_id = f.id;
            SET p_rows = JSON_MERGE_PRESERVE(p_rows, v_fired);
        END IF;
    END LOOP;
    CLOSE entries;
END
//

-- Market-Feed: frame 1's fired trades, a row each.
CREATE OR REPLACE PROCEDURE market_feed(IN p_symbols TEXT, IN p_prices TEXT, IN p_qtys TEXT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_rows JSON;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
    START TRANSACTION;
    CALL market_feed_f1(p_symbols, p_prices, p_qtys, v_rows);
    COMMIT;
    SELECT f.trade_id, f.symbol, f.price, f.qty, f.type_id
      FROM JSON_TABLE(v_rows, '$[*]' COLUMNS (
               n FOR ORDINALITY, trade_id BIGINT PATH '$[0]',
               symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin PATH '$[1]',
               price DECIMAL(12,2) PATH '$[2]', qty INT PATH '$[3]',
               type_id VARCHAR(3) CHARSET latin1 COLLATE latin1_bin PATH '$[4]')) f
     ORDER BY f.n;
END
//

-- ---------------------------------------------------------------------------------------
-- Market-Watch frame 1 (read-only): the securities of the customer's watch list (p_cust_id
-- not 0), else of an industry's companies with ids in p_starting_co_id..p_ending_co_id
-- (p_industry_name not empty), else of the account's holdings (p_acct_id): p_rows
-- [[symbol, last price, close on p_start_day (null without a row), shares outstanding]].
CREATE OR REPLACE PROCEDURE market_watch_f1(
    IN p_acct_id BIGINT, IN p_cust_id BIGINT, IN p_ending_co_id BIGINT,
    IN p_industry_name VARCHAR(50) CHARSET latin1 COLLATE latin1_bin,
    IN p_starting_co_id BIGINT, IN p_start_day DATE, OUT p_rows JSON)
READS SQL DATA
BEGIN
    DECLARE v_symbols JSON;
    IF p_cust_id <> 0 THEN
        SELECT JSON_ARRAYAGG(i.wi_s_symb) INTO v_symbols
          FROM watch_list w JOIN watch_item i ON i.wi_wl_id = w.wl_id
         WHERE w.wl_c_id = p_cust_id;
    ELSEIF COALESCE(p_industry_name, '') <> '' THEN
        SELECT JSON_ARRAYAGG(s.s_symb) INTO v_symbols
          FROM industry i
          JOIN company co ON co.co_in_id = i.in_id
          JOIN security s ON s.s_co_id = co.co_id
         WHERE i.in_name = p_industry_name
           AND co.co_id BETWEEN p_starting_co_id AND p_ending_co_id;
    ELSE
        SELECT JSON_ARRAYAGG(h.hs_s_symb) INTO v_symbols
          FROM holding_summary h WHERE h.hs_ca_id = p_acct_id;
    END IF;
    SELECT JSON_ARRAYAGG(JSON_ARRAY(s.s_symb, l.lt_price, d.dm_close, s.s_num_out)
                         ORDER BY s.s_symb)
      INTO p_rows
      FROM JSON_TABLE(COALESCE(v_symbols, '[]'), '$[*]' COLUMNS (
               symb VARCHAR(15) CHARSET latin1 COLLATE latin1_bin PATH '$')) u
      JOIN security s ON s.s_symb = u.symb
      JOIN last_trade l ON l.lt_s_symb = u.symb
      LEFT JOIN daily_market d ON d.dm_s_symb = u.symb AND d.dm_date = p_start_day;
END
//

-- Market-Watch: the securities' count and the percent change of their market value since
-- the start day (over the securities with a close that day; 0 without any).
CREATE OR REPLACE PROCEDURE market_watch(
    IN p_acct_id BIGINT, IN p_cust_id BIGINT, IN p_ending_co_id BIGINT,
    IN p_industry_name VARCHAR(50) CHARSET latin1 COLLATE latin1_bin,
    IN p_starting_co_id BIGINT, IN p_start_day DATE)
READS SQL DATA
BEGIN
    DECLARE v_rows JSON;
    DECLARE v_symbols INT;
    DECLARE v_old, v_new DECIMAL(30,2);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION READ ONLY;
    CALL market_watch_f1(p_acct_id, p_cust_id, p_ending_co_id, p_industry_name,
                         p_starting_co_id, p_start_day, v_rows);
    COMMIT;
    SELECT COUNT(*), SUM(f.old_price * f.num_out),
           SUM(IF(f.old_price IS NULL, NULL, f.new_price * f.num_out))
      INTO v_symbols, v_old, v_new
      FROM JSON_TABLE(COALESCE(v_rows, '[]'), '$[*]' COLUMNS (
               new_price DECIMAL(12,2) PATH '$[1]', old_price DECIMAL(12,2) PATH '$[2]',
               num_out BIGINT PATH '$[3]')) f;
    SELECT v_symbols AS symbols,
           IF(COALESCE(v_old, 0) = 0, 0, ROUND(100 * v_new / v_old - 100, 2)) AS pct_change;
END
//

-- ---------------------------------------------------------------------------------------
-- Security-Detail frame 1 (read-only): the security, its company and exchange with their
-- towns, 3 competitors (a JSON array of names), the company's 20 latest financial quarters
-- and up to p_max_rows days of daily_market from p_start_day (their counts), the last
-- trade, and 2 news items (headlines as a JSON array; their text read only with
-- p_access_lob, else their summaries: the characters read).
CREATE OR REPLACE PROCEDURE security_detail_f1(
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_start_day DATE,
    IN p_max_rows INT, IN p_access_lob BOOLEAN,
    OUT p_sec_name VARCHAR(70), OUT p_company_name VARCHAR(60), OUT p_ceo VARCHAR(46),
    OUT p_co_town VARCHAR(80), OUT p_exchange_name VARCHAR(100), OUT p_ex_town VARCHAR(80),
    OUT p_competitors JSON, OUT p_fin_len INT, OUT p_day_len INT,
    OUT p_last_price DECIMAL(12,2), OUT p_news_headlines JSON, OUT p_news_chars INT)
READS SQL DATA
BEGIN
    DECLARE v_co_id BIGINT;
    SELECT s.s_name, co.co_id, co.co_name, co.co_ceo, zc.zc_town, ex.ex_name, ezc.zc_town
      INTO p_sec_name, v_co_id, p_company_name, p_ceo, p_co_town, p_exchange_name, p_ex_town
      FROM security s
      JOIN company co ON co.co_id = s.s_co_id
      JOIN address ca ON ca.ad_id = co.co_ad_id
      JOIN zip_code zc ON zc.zc_code = ca.ad_zc_code
      JOIN exchange ex ON ex.ex_id = s.s_ex_id
      JOIN address ea ON ea.ad_id = ex.ex_ad_id
      JOIN zip_code ezc ON ezc.zc_code = ea.ad_zc_code
     WHERE s.s_symb = p_symbol;
    IF v_co_id IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'security_detail: no such security';
    END IF;
    SELECT JSON_ARRAYAGG(c.co_name ORDER BY c.co_id) INTO p_competitors
      FROM (SELECT co.co_id, co.co_name FROM company_competitor cp
              JOIN company co ON co.co_id = cp.cp_comp_co_id
             WHERE cp.cp_co_id = v_co_id ORDER BY co.co_id LIMIT 3) c;
    SELECT COUNT(*) INTO p_fin_len
      FROM (SELECT fi.* FROM financial fi WHERE fi.fi_co_id = v_co_id
             ORDER BY fi.fi_year DESC, fi.fi_qtr DESC LIMIT 20) f;
    SELECT COUNT(*) INTO p_day_len
      FROM (SELECT dm.* FROM daily_market dm
             WHERE dm.dm_s_symb = p_symbol AND dm.dm_date >= p_start_day
             ORDER BY dm.dm_date LIMIT p_max_rows) d;
    SELECT l.lt_price INTO p_last_price FROM last_trade l WHERE l.lt_s_symb = p_symbol;
    SELECT JSON_ARRAYAGG(n.ni_headline ORDER BY n.ni_id),
           COALESCE(SUM(IF(p_access_lob, CHAR_LENGTH(n.ni_item),
                           CHAR_LENGTH(n.ni_summary))), 0)
      INTO p_news_headlines, p_news_chars
      FROM (SELECT ni.* FROM news_xref x JOIN news_item ni ON ni.ni_id = x.nx_ni_id
             WHERE x.nx_co_id = v_co_id ORDER BY ni.ni_id LIMIT 2) n;
END
//

-- Security-Detail: frame 1's row.
CREATE OR REPLACE PROCEDURE security_detail(
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_start_day DATE,
    IN p_max_rows INT, IN p_access_lob BOOLEAN)
READS SQL DATA
BEGIN
    DECLARE v_sec_name VARCHAR(70);
    DECLARE v_company_name VARCHAR(60);
    DECLARE v_ceo VARCHAR(46);
    DECLARE v_co_town, v_ex_town VARCHAR(80);
    DECLARE v_exchange_name VARCHAR(100);
    DECLARE v_competitors, v_news_headlines JSON;
    DECLARE v_fin_len, v_day_len, v_news_chars INT;
    DECLARE v_last_price DECIMAL(12,2);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION READ ONLY;
    CALL security_detail_f1(p_symbol, p_start_day, p_max_rows, p_access_lob, v_sec_name,
                            v_company_name, v_ceo, v_co_town, v_exchange_name, v_ex_town,
                            v_competitors, v_fin_len, v_day_len, v_last_price,
                            v_news_headlines, v_news_chars);
    COMMIT;
    SELECT v_sec_name AS sec_name, v_company_name AS company_name, v_ceo AS ceo,
           v_co_town AS co_town, v_exchange_name AS exchange_name, v_ex_town AS ex_town,
           v_competitors AS competitors, v_fin_len AS fin_len, v_day_len AS day_len,
           v_last_price AS last_price, v_news_headlines AS news_headlines,
           v_news_chars AS news_chars;
END
//

-- ---------------------------------------------------------------------------------------
-- The trades of p_trade_ids (a JSON array), in that order (ids without a trade left out), as
-- Trade-Lookup and Trade-Update frames 1-3 read them: p_rows [[trade, account, symbol, qty,
-- type, time, bid price, executor, is cash, is market, trade price, settlement amount, due
-- date, cash type, cash amount, cash time, cash name, [first 3 history times], [their
-- statuses]] ...] (a margin trade's cash fields null).
CREATE OR REPLACE PROCEDURE brokerage_trade_rows(IN p_trade_ids TEXT, OUT p_rows JSON)
READS SQL DATA
BEGIN
    SELECT JSON_ARRAYAGG(JSON_ARRAY(
               t.t_id, t.t_ca_id, t.t_s_symb, t.t_qty, t.t_tt_id, t.t_dts, t.t_bid_price,
               t.t_exec_name, t.t_is_cash IS TRUE, tt.tt_is_mrkt IS TRUE, t.t_trade_price,
               se.se_amt, se.se_cash_due_date, se.se_cash_type, ct.ct_amt, ct.ct_dts,
               ct.ct_name,
               JSON_QUERY((SELECT JSON_ARRAYAGG(h.th_dts ORDER BY h.th_dts, h.th_st_id LIMIT 3)
                             FROM trade_history h WHERE h.th_t_id = t.t_id), '$'),
               JSON_QUERY((SELECT JSON_ARRAYAGG(h.th_st_id ORDER BY h.th_dts, h.th_st_id
                                                LIMIT 3)
                             FROM trade_history h WHERE h.th_t_id = t.t_id), '$'))
               ORDER BY u.n)
      INTO p_rows
      FROM JSON_TABLE(p_trade_ids, '$[*]' COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$')) u
      JOIN trade t ON t.t_id = u.id
      JOIN trade_type tt ON tt.tt_id = t.t_tt_id
      LEFT JOIN settlement se ON se.se_t_id = t.t_id
      LEFT JOIN cash_transaction ct ON ct.ct_t_id = t.t_id;
END
//

-- The ids (a JSON array) of up to p_max_trades trades of account p_acct_id (p_symbol null)
-- or of security p_symbol, made in p_start_dts..p_end_dts, the oldest first.
CREATE OR REPLACE PROCEDURE brokerage_trades_in(
    IN p_acct_id BIGINT, IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin,
    IN p_start_dts DATETIME, IN p_end_dts DATETIME, IN p_max_trades INT, OUT p_ids JSON)
READS SQL DATA
BEGIN
    IF p_symbol IS NULL THEN
        SELECT JSON_ARRAYAGG(x.t_id ORDER BY x.t_dts, x.t_id) INTO p_ids
          FROM (SELECT t.t_id, t.t_dts FROM trade t
                 WHERE t.t_ca_id = p_acct_id AND t.t_dts BETWEEN p_start_dts AND p_end_dts
                 ORDER BY t.t_dts, t.t_id LIMIT p_max_trades) x;
    ELSE
        SELECT JSON_ARRAYAGG(x.t_id ORDER BY x.t_dts, x.t_id) INTO p_ids
          FROM (SELECT t.t_id, t.t_dts FROM trade t
                 WHERE t.t_s_symb = p_symbol AND t.t_dts BETWEEN p_start_dts AND p_end_dts
                 ORDER BY t.t_dts, t.t_id LIMIT p_max_trades) x;
    END IF;
    SET p_ids = COALESCE(p_ids, JSON_ARRAY());
END
//

-- Trade-Lookup frame 1 (read-only): the given trades.
CREATE OR REPLACE PROCEDURE trade_lookup_f1(IN p_trade_ids TEXT, OUT p_rows JSON)
READS SQL DATA
CALL brokerage_trade_rows(p_trade_ids, p_rows)
//

-- Trade-Lookup frame 2 (read-only): up to p_max_trades of the account's trades in the
-- window, the oldest first.
CREATE OR REPLACE PROCEDURE trade_lookup_f2(IN p_acct_id BIGINT, IN p_start_dts DATETIME,
                                            IN p_end_dts DATETIME, IN p_max_trades INT,
                                            OUT p_rows JSON)
READS SQL DATA
BEGIN
    DECLARE v_ids JSON;
    CALL brokerage_trades_in(p_acct_id, NULL, p_start_dts, p_end_dts, p_max_trades, v_ids);
    CALL brokerage_trade_rows(v_ids, p_rows);
END
//

-- Trade-Lookup frame 3 (read-only): up to p_max_trades trades of the security in the
-- window, the oldest first.
CREATE OR REPLACE PROCEDURE trade_lookup_f3(
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_start_dts DATETIME,
    IN p_end_dts DATETIME, IN p_max_trades INT, OUT p_rows JSON)
READS SQL DATA
BEGIN
    DECLARE v_ids JSON;
    CALL brokerage_trades_in(0, p_symbol, p_start_dts, p_end_dts, p_max_trades, v_ids);
    CALL brokerage_trade_rows(v_ids, p_rows);
END
//

-- Trade-Lookup frame 4 (read-only): the account's first trade at or after p_start_dts and
-- up to 20 holding_history rows of the lots that trade changed: p_rows [[trade, lot, the
-- lot's changing trade, before qty, after qty] ...].
CREATE OR REPLACE PROCEDURE trade_lookup_f4(IN p_acct_id BIGINT, IN p_start_dts DATETIME,
                                            OUT p_rows JSON)
READS SQL DATA
BEGIN
    DECLARE v_t_id BIGINT;
    SELECT MIN(x.t_id) INTO v_t_id
      FROM (SELECT t.t_id FROM trade t
             WHERE t.t_ca_id = p_acct_id AND t.t_dts >= p_start_dts
             ORDER BY t.t_dts, t.t_id LIMIT 1) x;
    SET p_rows = NULL;
    IF v_t_id IS NOT NULL THEN
        SELECT JSON_ARRAYAGG(JSON_ARRAY(v_t_id + 0, x.hh_h_t_id, x.hh_t_id, x.hh_before_qty,
                                        x.hh_after_qty) ORDER BY x.hh_h_t_id, x.hh_t_id)
          INTO p_rows
          FROM (SELECT hh.* FROM holding_history hh
                 WHERE hh.hh_h_t_id IN (SELECT y.hh_h_t_id FROM holding_history y
                                         WHERE y.hh_t_id = v_t_id)
                 ORDER BY hh.hh_h_t_id, hh.hh_t_id LIMIT 20) x;
    END IF;
END
//

-- Trade-Lookup: frame p_frame (1-4) with its inputs (the others ignored); how many trades
-- (frames 1-3) or holding_history rows (frame 4) it found.
CREATE OR REPLACE PROCEDURE trade_lookup(
    IN p_frame INT, IN p_trade_ids TEXT, IN p_acct_id BIGINT,
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_start_dts DATETIME,
    IN p_end_dts DATETIME, IN p_max_trades INT)
READS SQL DATA
BEGIN
    DECLARE v_rows JSON;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    IF p_frame NOT BETWEEN 1 AND 4 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'trade_lookup has frames 1 to 4';
    END IF;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION READ ONLY;
    CASE p_frame
    WHEN 1 THEN CALL trade_lookup_f1(p_trade_ids, v_rows);
    WHEN 2 THEN CALL trade_lookup_f2(p_acct_id, p_start_dts, p_end_dts, p_max_trades, v_rows);
    WHEN 3 THEN CALL trade_lookup_f3(p_symbol, p_start_dts, p_end_dts, p_max_trades, v_rows);
    ELSE CALL trade_lookup_f4(p_acct_id, p_start_dts, v_rows);
    END CASE;
    COMMIT;
    SELECT p_frame AS frame, COALESCE(JSON_LENGTH(v_rows), 0) AS num_found;
END
//

-- ---------------------------------------------------------------------------------------
-- Trade-Status frame 1 (read-only): the account's 50 latest trades with their status,
-- type, security and exchange names, and the account's customer and broker: p_rows
-- [[trade, time, status, type, symbol, qty, executor, charge, security name, exchange
-- name, customer's last name, first name, broker] ...], the latest first.
CREATE OR REPLACE PROCEDURE trade_status_f1(IN p_acct_id BIGINT, OUT p_rows JSON)
READS SQL DATA
BEGIN
    SELECT JSON_ARRAYAGG(JSON_ARRAY(
               t.t_id, t.t_dts, st.st_name, tt.tt_name, t.t_s_symb, t.t_qty, t.t_exec_name,
               t.t_chrg, s.s_name, ex.ex_name, c.c_l_name, c.c_f_name, b.b_name)
               ORDER BY t.t_dts DESC, t.t_id DESC)
      INTO p_rows
      FROM (SELECT x.* FROM trade x WHERE x.t_ca_id = p_acct_id
             ORDER BY x.t_dts DESC, x.t_id DESC LIMIT 50) t
      JOIN status_type st ON st.st_id = t.t_st_id
      JOIN trade_type tt ON tt.tt_id = t.t_tt_id
      JOIN security s ON s.s_symb = t.t_s_symb
      JOIN exchange ex ON ex.ex_id = s.s_ex_id
      JOIN customer_account ca ON ca.ca_id = t.t_ca_id
      JOIN customer c ON c.c_id = ca.ca_c_id
      JOIN broker b ON b.b_id = ca.ca_b_id;
END
//

-- Trade-Status: how many trades frame 1 found.
CREATE OR REPLACE PROCEDURE trade_status(IN p_acct_id BIGINT)
READS SQL DATA
BEGIN
    DECLARE v_rows JSON;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION READ ONLY;
    CALL trade_status_f1(p_acct_id, v_rows);
    COMMIT;
    SELECT COALESCE(JSON_LENGTH(v_rows), 0) AS num_found;
END
//

-- ---------------------------------------------------------------------------------------
-- Trade-Update frame 1: Trade-Lookup's frame 1, after toggling the executor's name
-- (brokerage_swap_case) of the first p_max_updates of the trades; p_updated: rows changed.
CREATE OR REPLACE PROCEDURE trade_update_f1(IN p_trade_ids TEXT, IN p_max_updates INT,
                                            OUT p_rows JSON, OUT p_updated INT)
MODIFIES SQL DATA
BEGIN
    UPDATE JSON_TABLE(p_trade_ids, '$[*]' COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$')) u
      JOIN trade t ON t.t_id = u.id
       SET t.t_exec_name = brokerage_swap_case(t.t_exec_name)
     WHERE u.n <= p_max_updates;
    SET p_updated = ROW_COUNT();
    CALL brokerage_trade_rows(p_trade_ids, p_rows);
END
//

-- Trade-Update frame 2: Trade-Lookup's frame 2, after toggling the settlement's cash type
-- (Cash Account / Cash, Margin / Margin Account) of the first p_max_updates trades.
CREATE OR REPLACE PROCEDURE trade_update_f2(IN p_acct_id BIGINT, IN p_start_dts DATETIME,
                                            IN p_end_dts DATETIME, IN p_max_trades INT,
                                            IN p_max_updates INT,
                                            OUT p_rows JSON, OUT p_updated INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_ids JSON;
    CALL brokerage_trades_in(p_acct_id, NULL, p_start_dts, p_end_dts, p_max_trades, v_ids);
    UPDATE JSON_TABLE(v_ids, '$[*]' COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$')) u
      JOIN settlement s ON s.se_t_id = u.id
       SET s.se_cash_type = CASE s.se_cash_type
               WHEN 'Cash Account' THEN 'Cash' WHEN 'Cash' THEN 'Cash Account'
               WHEN 'Margin' THEN 'Margin Account' WHEN 'Margin Account' THEN 'Margin'
               ELSE brokerage_swap_case(s.se_cash_type) END
     WHERE u.n <= p_max_updates;
    SET p_updated = ROW_COUNT();
    CALL brokerage_trade_rows(v_ids, p_rows);
END
//

-- Trade-Update frame 3: Trade-Lookup's frame 3, after toggling the cash transaction's name
-- (brokerage_swap_case) of the first p_max_updates trades (cash trades have one).
CREATE OR REPLACE PROCEDURE trade_update_f3(
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_start_dts DATETIME,
    IN p_end_dts DATETIME, IN p_max_trades INT, IN p_max_updates INT,
    OUT p_rows JSON, OUT p_updated INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_ids JSON;
    CALL brokerage_trades_in(0, p_symbol, p_start_dts, p_end_dts, p_max_trades, v_ids);
    UPDATE JSON_TABLE(v_ids, '$[*]' COLUMNS (n FOR ORDINALITY, id BIGINT PATH '$')) u
      JOIN cash_transaction c ON c.ct_t_id = u.id
       SET c.ct_name = brokerage_swap_case(c.ct_name)
     WHERE u.n <= p_max_updates;
    SET p_updated = ROW_COUNT();
    CALL brokerage_trade_rows(v_ids, p_rows);
END
//

-- Trade-Update: frame p_frame (1-3) with its inputs; how many trades it found and how many
-- rows it changed.
CREATE OR REPLACE PROCEDURE trade_update(
    IN p_frame INT, IN p_trade_ids TEXT, IN p_acct_id BIGINT,
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_start_dts DATETIME,
    IN p_end_dts DATETIME, IN p_max_trades INT, IN p_max_updates INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_rows JSON;
    DECLARE v_updated INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    IF p_frame NOT BETWEEN 1 AND 3 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'trade_update has frames 1 to 3';
    END IF;
    SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
    START TRANSACTION;
    CASE p_frame
    WHEN 1 THEN CALL trade_update_f1(p_trade_ids, p_max_updates, v_rows, v_updated);
    WHEN 2 THEN CALL trade_update_f2(p_acct_id, p_start_dts, p_end_dts, p_max_trades,
                                     p_max_updates, v_rows, v_updated);
    ELSE CALL trade_update_f3(p_symbol, p_start_dts, p_end_dts, p_max_trades, p_max_updates,
                              v_rows, v_updated);
    END CASE;
    COMMIT;
    SELECT p_frame AS frame, COALESCE(JSON_LENGTH(v_rows), 0) AS num_found,
           v_updated AS num_updated;
END
//

-- ---------------------------------------------------------------------------------------
-- Trade-Order frame 1 (read-only): the account, its customer and its broker.
CREATE OR REPLACE PROCEDURE trade_order_f1(
    IN p_acct_id BIGINT, OUT p_acct_name VARCHAR(50), OUT p_broker_id BIGINT,
    OUT p_broker_name VARCHAR(49), OUT p_cust_id BIGINT, OUT p_cust_f_name VARCHAR(20),
    OUT p_cust_l_name VARCHAR(25), OUT p_cust_tier INT, OUT p_tax_id VARCHAR(20),
    OUT p_tax_status INT)
READS SQL DATA
BEGIN
    SET p_cust_id = NULL;
    SELECT a.ca_name, a.ca_b_id, b.b_name, c.c_id, c.c_f_name, c.c_l_name, c.c_tier,
           c.c_tax_id, a.ca_tax_st
      INTO p_acct_name, p_broker_id, p_broker_name, p_cust_id, p_cust_f_name, p_cust_l_name,
           p_cust_tier, p_tax_id, p_tax_status
      FROM customer_account a
      JOIN customer c ON c.c_id = a.ca_c_id
      JOIN broker b ON b.b_id = a.ca_b_id
     WHERE a.ca_id = p_acct_id;
    IF p_cust_id IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'trade_order: no such customer account';
    END IF;
END
//

-- Trade-Order frame 2 (read-only): the executor's permission on the account (its ap_acl),
-- null when the executor has none.
CREATE OR REPLACE PROCEDURE trade_order_f2(
    IN p_acct_id BIGINT, IN p_exec_f_name VARCHAR(20) CHARSET latin1 COLLATE latin1_bin,
    IN p_exec_l_name VARCHAR(25) CHARSET latin1 COLLATE latin1_bin,
    IN p_exec_tax_id VARCHAR(20) CHARSET latin1 COLLATE latin1_bin, OUT p_acl CHAR(4))
READS SQL DATA
BEGIN
    SELECT MIN(ap.ap_acl) INTO p_acl FROM account_permission ap
     WHERE ap.ap_ca_id = p_acct_id AND ap.ap_tax_id = p_exec_tax_id
       AND ap.ap_f_name = p_exec_f_name AND ap.ap_l_name = p_exec_l_name;
END
//

-- Trade-Order frame 3 (read-only): the security (by p_symbol, or by the company's name and
-- the issue when p_symbol is empty), its last price, the trade type; what the order would
-- buy and sell against the account's lots of the security (walked newest first with
-- p_is_lifo, else oldest first) and the tax on a gain; the commission rate, the charge,
-- the account's assets for a margin order, and the new trade's status (SBMT for a market
-- order, which takes the last price; PNDG for a limit order, at p_requested_price).
CREATE OR REPLACE PROCEDURE trade_order_f3(
    IN p_acct_id BIGINT, IN p_cust_id BIGINT, IN p_cust_tier INT, IN p_is_lifo BOOLEAN,
    IN p_issue CHAR(6) CHARSET latin1 COLLATE latin1_bin, IN p_tax_status INT,
    IN p_trade_qty INT, IN p_trade_type_id CHAR(3) CHARSET latin1 COLLATE latin1_bin,
    IN p_type_is_margin BOOLEAN, IN p_co_name VARCHAR(60) CHARSET latin1 COLLATE latin1_bin,
    IN p_requested_price DECIMAL(12,2),
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin,
    OUT p_company_name VARCHAR(60), OUT p_out_price DECIMAL(12,2),
    OUT p_out_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin,
    OUT p_sec_name VARCHAR(70), OUT p_buy_value DECIMAL(20,2), OUT p_sell_value DECIMAL(20,2),
    OUT p_charge_amount DECIMAL(12,2), OUT p_comm_rate DECIMAL(5,2),
    OUT p_acct_assets DECIMAL(20,2), OUT p_market_price DECIMAL(12,2),
    OUT p_status_id CHAR(4), OUT p_tax_amount DECIMAL(20,2), OUT p_type_is_market BOOLEAN,
    OUT p_type_is_sell BOOLEAN)
READS SQL DATA
BEGIN
    DECLARE v_ex_id VARCHAR(6) CHARSET latin1 COLLATE latin1_bin;
    DECLARE v_hs_qty, v_take, v_h_qty INT;
    DECLARE v_needed INT DEFAULT p_trade_qty;
    DECLARE v_lots, v_here DECIMAL(20,2) DEFAULT 0;
    DECLARE v_h_price DECIMAL(12,2);
    DECLARE v_rates DECIMAL(10,5);
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE lots CURSOR FOR
        SELECT h.h_qty, h.h_price FROM holding h
         WHERE h.h_ca_id = p_acct_id AND h.h_s_symb = p_out_symbol
         ORDER BY IF(p_is_lifo, h.h_dts, NULL) DESC, IF(p_is_lifo, h.h_t_id, NULL) DESC,
                  h.h_dts, h.h_t_id;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    SET p_out_symbol = NULL;
    IF COALESCE(p_symbol, '') = '' THEN
        SELECT s.s_symb, s.s_name, s.s_ex_id, co.co_name
          INTO p_out_symbol, p_sec_name, v_ex_id, p_company_name
          FROM company co JOIN security s ON s.s_co_id = co.co_id
         WHERE co.co_name = p_co_name AND s.s_issue = p_issue;
    ELSE
        SELECT s.s_symb, s.s_name, s.s_ex_id, co.co_name
          INTO p_out_symbol, p_sec_name, v_ex_id, p_company_name
          FROM security s JOIN company co ON co.co_id = s.s_co_id
         WHERE s.s_symb = p_symbol;
    END IF;
    IF p_out_symbol IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'trade_order: no such security';
    END IF;
    SELECT l.lt_price INTO p_market_price FROM last_trade l WHERE l.lt_s_symb = p_out_symbol;
    SET p_type_is_market = NULL;
    SELECT tt.tt_is_mrkt, tt.tt_is_sell INTO p_type_is_market, p_type_is_sell
      FROM trade_type tt WHERE tt.tt_id = p_trade_type_id;
    IF p_type_is_market IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'trade_order: no such trade type';
    END IF;
    SET p_out_price = IF(p_type_is_market, p_market_price, p_requested_price);
    SELECT COALESCE(MIN(h.hs_qty), 0) INTO v_hs_qty FROM holding_summary h
     WHERE h.hs_ca_id = p_acct_id AND h.hs_s_symb = p_out_symbol;
    -- a sale takes from long lots, a purchase covers short ones
    IF (p_type_is_sell AND v_hs_qty > 0) OR (NOT p_type_is_sell AND v_hs_qty < 0) THEN
        SET v_done = FALSE;
        OPEN lots;
        walk: LOOP
            FETCH lots INTO v_h_qty, v_h_price;
            IF v_done OR v_needed = 0 THEN
                LEAVE walk;
            END IF;
            SET v_take = LEAST(ABS(v_h_qty), v_needed);
            SET v_lots = v_lots + v_take * v_h_price;
            SET v_here = v_here + v_take * p_out_price;
            SET v_needed = v_needed - v_take;
        END LOOP;
        CLOSE lots;
    END IF;
    SET p_buy_value = IF(p_type_is_sell, v_lots, v_here);
    SET p_sell_value = IF(p_type_is_sell, v_here, v_lots);
    SET p_tax_amount = 0;
    IF p_sell_value > p_buy_value AND p_tax_status IN (1, 2) THEN
        SELECT SUM(tx.tx_rate) INTO v_rates
          FROM customer_taxrate cx JOIN taxrate tx ON tx.tx_id = cx.cx_tx_id
         WHERE cx.cx_c_id = p_cust_id;
        SET p_tax_amount = ROUND((p_sell_value - p_buy_value) * COALESCE(v_rates, 0), 2);
    END IF;
    SELECT MIN(cr.cr_rate) INTO p_comm_rate FROM commission_rate cr
     WHERE cr.cr_c_tier = p_cust_tier AND cr.cr_tt_id = p_trade_type_id
       AND cr.cr_ex_id = v_ex_id AND p_trade_qty BETWEEN cr.cr_from_qty AND cr.cr_to_qty;
    SELECT MIN(ch.ch_chrg) INTO p_charge_amount FROM charge ch
     WHERE ch.ch_c_tier = p_cust_tier AND ch.ch_tt_id = p_trade_type_id;
    SET p_acct_assets = NULL;
    IF p_type_is_margin THEN
        SELECT a.ca_bal + COALESCE((SELECT SUM(h.hs_qty * l.lt_price)
                                      FROM holding_summary h
                                      JOIN last_trade l ON l.lt_s_symb = h.hs_s_symb
                                     WHERE h.hs_ca_id = p_acct_id), 0)
          INTO p_acct_assets FROM customer_account a WHERE a.ca_id = p_acct_id;
    END IF;
    SET p_status_id = IF(p_type_is_market, 'SBMT', 'PNDG');
END
//

-- Trade-Order frame 4: the new trade (its id from seq_trade_id) in status p_status_id with
-- its history row, and a limit order's trade_request row; p_trade_id its id.
CREATE OR REPLACE PROCEDURE trade_order_f4(
    IN p_acct_id BIGINT, IN p_broker_id BIGINT, IN p_charge_amount DECIMAL(12,2),
    IN p_comm_amount DECIMAL(12,2), IN p_exec_name VARCHAR(49) CHARSET latin1 COLLATE latin1_bin,
    IN p_is_cash BOOLEAN, IN p_is_lifo BOOLEAN, IN p_requested_price DECIMAL(12,2),
    IN p_status_id CHAR(4) CHARSET latin1 COLLATE latin1_bin,
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_trade_qty INT,
    IN p_trade_type_id CHAR(3) CHARSET latin1 COLLATE latin1_bin, IN p_type_is_market BOOLEAN,
    OUT p_trade_id BIGINT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_now DATETIME DEFAULT NOW();
    SET p_trade_id = NEXTVAL(seq_trade_id);
    INSERT INTO trade (t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty,
                       t_bid_price, t_ca_id, t_exec_name, t_trade_price, t_chrg, t_comm,
                       t_tax, t_lifo)
    VALUES (p_trade_id, v_now, p_status_id, p_trade_type_id, p_is_cash, p_symbol, p_trade_qty,
            p_requested_price, p_acct_id, p_exec_name, NULL, p_charge_amount, p_comm_amount,
            0, p_is_lifo);
    IF NOT p_type_is_market THEN
        INSERT INTO trade_request (tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price,
                                   tr_b_id)
        VALUES (p_trade_id, p_trade_type_id, p_symbol, p_trade_qty, p_requested_price,
                p_broker_id);
    END IF;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
    VALUES (p_trade_id, v_now, p_status_id);
END
//

-- Trade-Order: frames 1 to 4, then frame 5 (ROLLBACK, with p_roll_it_back) or 6 (COMMIT).
-- The executor is the account's customer, or must hold a permission on the account (frame
-- 2): without one, trade_id is 0 and nothing is written. The order is a cash one unless
-- p_type_is_margin (a margin purchase). Returns what the market emulator needs: the new
-- trade's id and status, its security, type, price (the last price for a market order) and
-- quantity, and whether it was rolled back (then the client sends it nowhere).
CREATE OR REPLACE PROCEDURE trade_order(
    IN p_acct_id BIGINT, IN p_exec_f_name VARCHAR(20) CHARSET latin1 COLLATE latin1_bin,
    IN p_exec_l_name VARCHAR(25) CHARSET latin1 COLLATE latin1_bin,
    IN p_exec_tax_id VARCHAR(20) CHARSET latin1 COLLATE latin1_bin,
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin,
    IN p_co_name VARCHAR(60) CHARSET latin1 COLLATE latin1_bin,
    IN p_issue CHAR(6) CHARSET latin1 COLLATE latin1_bin,
    IN p_trade_type_id CHAR(3) CHARSET latin1 COLLATE latin1_bin, IN p_trade_qty INT,
    IN p_requested_price DECIMAL(12,2), IN p_type_is_margin BOOLEAN, IN p_is_lifo BOOLEAN,
    IN p_roll_it_back BOOLEAN)
MODIFIES SQL DATA
BEGIN
    DECLARE v_acct_name VARCHAR(50);
    DECLARE v_broker_id, v_cust_id, v_trade_id BIGINT;
    DECLARE v_broker_name VARCHAR(49);
    DECLARE v_cust_f_name VARCHAR(20);
    DECLARE v_cust_l_name VARCHAR(25);
    DECLARE v_tax_id VARCHAR(20);
    DECLARE v_cust_tier, v_tax_status INT;
    DECLARE v_acl CHAR(4);
    DECLARE v_company_name VARCHAR(60);
    DECLARE v_price, v_charge, v_market_price DECIMAL(12,2);
    DECLARE v_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin;
    DECLARE v_sec_name VARCHAR(70);
    DECLARE v_buy, v_sell, v_assets, v_tax DECIMAL(20,2);
    DECLARE v_comm_rate DECIMAL(5,2);
    DECLARE v_status CHAR(4);
    DECLARE v_is_market, v_is_sell BOOLEAN;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
    START TRANSACTION;
    CALL trade_order_f1(p_acct_id, v_acct_name, v_broker_id, v_broker_name, v_cust_id,
                        v_cust_f_name, v_cust_l_name, v_cust_tier, v_tax_id, v_tax_status);
    IF NOT (p_exec_f_name <=> v_cust_f_name AND p_exec_l_name <=> v_cust_l_name
            AND p_exec_tax_id <=> v_tax_id) THEN
        CALL trade_order_f2(p_acct_id, p_exec_f_name, p_exec_l_name, p_exec_tax_id, v_acl);
    ELSE
        SET v_acl = '';
    END IF;
    IF v_acl IS NULL THEN
        IF p_roll_it_back THEN  -- as PostgreSQL's client ends it
            ROLLBACK;
        ELSE
            COMMIT;
        END IF;
        SELECT 0 AS trade_id, NULL AS status_id, NULL AS symbol, p_trade_type_id AS type_id,
               NULL AS bid_price, p_trade_qty AS trade_qty, NULL AS is_market,
               p_roll_it_back AS roll_it_back;
    ELSE
        CALL trade_order_f3(p_acct_id, v_cust_id, v_cust_tier, p_is_lifo, p_issue,
                            v_tax_status, p_trade_qty, p_trade_type_id, p_type_is_margin,
                            p_co_name, p_requested_price, p_symbol, v_company_name, v_price,
                            v_symbol, v_sec_name, v_buy, v_sell, v_charge, v_comm_rate,
                            v_assets, v_market_price, v_status, v_tax, v_is_market,
                            v_is_sell);
        CALL trade_order_f4(p_acct_id, v_broker_id, v_charge,
                            ROUND(v_comm_rate / 100 * p_trade_qty * v_price, 2),
                            CONCAT(p_exec_f_name, ' ', p_exec_l_name), NOT p_type_is_margin,
                            p_is_lifo, v_price, v_status, v_symbol, p_trade_qty,
                            p_trade_type_id, v_is_market, v_trade_id);
        IF p_roll_it_back THEN
            ROLLBACK;
        ELSE
            COMMIT;
        END IF;
        SELECT v_trade_id AS trade_id, v_status AS status_id, v_symbol AS symbol,
               p_trade_type_id AS type_id, v_price AS bid_price, p_trade_qty AS trade_qty,
               v_is_market AS is_market, p_roll_it_back AS roll_it_back;
    END IF;
END
//

-- ---------------------------------------------------------------------------------------
-- Trade-Result frame 1: the submitted trade, its type, and the account's holding of the
-- security (hs_qty, 0 without a holding_summary row). The rows this transaction writes later
-- (the trade's, the account's, the summary's) are read with FOR UPDATE: SERIALIZABLE's plain
-- reads take shared locks, and two results on one row that both held one would deadlock on
-- their updates; with FOR UPDATE the second waits for the first's commit. The account's row
-- is locked before the summary is read: a summary not there yet is locked as a gap of the
-- index, which two results opening positions in one account share, and each would then
-- keep the other's insert out. (The trade type is read apart: locked with the trade, its row
-- would make every result of that type wait for the others.)
CREATE OR REPLACE PROCEDURE trade_result_f1(
    IN p_trade_id BIGINT, OUT p_acct_id BIGINT, OUT p_charge DECIMAL(12,2), OUT p_hs_qty INT,
    OUT p_is_lifo BOOLEAN, OUT p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin,
    OUT p_trade_is_cash BOOLEAN, OUT p_trade_qty INT,
    OUT p_type_id CHAR(3) CHARSET latin1 COLLATE latin1_bin, OUT p_type_is_market BOOLEAN,
    OUT p_type_is_sell BOOLEAN, OUT p_type_name VARCHAR(12))
MODIFIES SQL DATA
BEGIN
    DECLARE v_status CHAR(4);
    DECLARE v_locked INT;
    SET p_acct_id = NULL;
    SELECT t.t_ca_id, t.t_chrg, t.t_lifo, t.t_s_symb, t.t_is_cash, t.t_qty, t.t_tt_id,
           t.t_st_id
      INTO p_acct_id, p_charge, p_is_lifo, p_symbol, p_trade_is_cash, p_trade_qty, p_type_id,
           v_status
      FROM trade t
     WHERE t.t_id = p_trade_id
       FOR UPDATE;
    IF p_acct_id IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'trade_result: no such trade';
    END IF;
    SELECT tt.tt_is_mrkt, tt.tt_is_sell, tt.tt_name
      INTO p_type_is_market, p_type_is_sell, p_type_name
      FROM trade_type tt WHERE tt.tt_id = p_type_id;
    IF v_status <> 'SBMT' THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'trade_result: the trade is not submitted';
    END IF;
    SELECT COUNT(*) INTO v_locked FROM (SELECT ca_id FROM customer_account
                                         WHERE ca_id = p_acct_id FOR UPDATE) a;
    SELECT COALESCE(MIN(h.hs_qty), 0) INTO p_hs_qty
      FROM (SELECT hs_qty FROM holding_summary
             WHERE hs_ca_id = p_acct_id AND hs_s_symb = p_symbol FOR UPDATE) h;
END
//

-- Trade-Result frame 2: the account's holdings of the security after the trade. The
-- summary is inserted, updated, or deleted when it comes to 0. A sale takes from the long
-- lots and a purchase covers the short ones, newest first (p_is_lifo) or oldest first: a
-- lot taken whole is deleted, the last one taken in part is updated, each logged in
-- holding_history (before and after quantities); what is left of the trade opens a lot of
-- its own (h_t_id = the trade; short, negative, for a sale beyond the holding). buy_value
-- and sell_value: what the lots taken cost and what they fetch (a purchase covering a short
-- position buys at the trade's price what was sold at the lots' prices).
CREATE OR REPLACE PROCEDURE trade_result_f2(
    IN p_acct_id BIGINT, IN p_hs_qty INT, IN p_is_lifo BOOLEAN,
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_trade_id BIGINT,
    IN p_trade_price DECIMAL(12,2), IN p_trade_qty INT, IN p_type_is_sell BOOLEAN,
    OUT p_broker_id BIGINT, OUT p_cust_id BIGINT, OUT p_tax_status INT,
    OUT p_buy_value DECIMAL(20,2), OUT p_sell_value DECIMAL(20,2), OUT p_trade_dts DATETIME)
MODIFIES SQL DATA
BEGIN
    DECLARE v_dir INT DEFAULT IF(p_type_is_sell, -1, 1);
    DECLARE v_new_qty INT DEFAULT p_hs_qty + v_dir * p_trade_qty;
    DECLARE v_needed INT DEFAULT p_trade_qty;
    DECLARE v_take, v_h_qty INT;
    DECLARE v_h_t_id BIGINT;
    DECLARE v_h_price DECIMAL(12,2);
    DECLARE v_lots, v_here DECIMAL(20,2) DEFAULT 0;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE lots CURSOR FOR
        SELECT h.h_t_id, h.h_qty, h.h_price FROM holding h
         WHERE h.h_ca_id = p_acct_id AND h.h_s_symb = p_symbol
         ORDER BY IF(p_is_lifo, h.h_dts, NULL) DESC, IF(p_is_lifo, h.h_t_id, NULL) DESC,
                  h.h_dts, h.h_t_id
           FOR UPDATE;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    SET p_trade_dts = NOW();
    SELECT a.ca_b_id, a.ca_c_id, a.ca_tax_st INTO p_broker_id, p_cust_id, p_tax_status
      FROM customer_account a WHERE a.ca_id = p_acct_id
       FOR UPDATE;
    IF p_hs_qty = 0 THEN
        INSERT INTO holding_summary (hs_ca_id, hs_s_symb, hs_qty)
        VALUES (p_acct_id, p_symbol, v_new_qty);
    ELSEIF v_new_qty = 0 THEN
        DELETE FROM holding_summary WHERE hs_ca_id = p_acct_id AND hs_s_symb = p_symbol;
    ELSE
        UPDATE holding_summary SET hs_qty = v_new_qty
         WHERE hs_ca_id = p_acct_id AND hs_s_symb = p_symbol;
    END IF;
    IF p_hs_qty * v_dir < 0 THEN
        SET v_done = FALSE;
        OPEN lots;
        walk: LOOP
            FETCH lots INTO v_h_t_id, v_h_qty, v_h_price;
            IF v_done OR v_needed = 0 THEN
                LEAVE walk;
            END IF;
            SET v_take = LEAST(ABS(v_h_qty), v_needed);
            INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
            VALUES (v_h_t_id, p_trade_id, v_h_qty, v_h_qty + v_dir * v_take);
            IF v_take = ABS(v_h_qty) THEN
                DELETE FROM holding WHERE h_t_id = v_h_t_id;
            ELSE
                UPDATE holding SET h_qty = h_qty + v_dir * v_take WHERE h_t_id = v_h_t_id;
            END IF;
            SET v_lots = v_lots + v_take * v_h_price;
            SET v_here = v_here + v_take * p_trade_price;
            SET v_needed = v_needed - v_take;
        END LOOP;
        CLOSE lots;
    END IF;
    IF v_needed > 0 THEN
        INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
        VALUES (p_trade_id, p_trade_id, 0, v_dir * v_needed);
        INSERT INTO holding (h_t_id, h_ca_id, h_s_symb, h_dts, h_price, h_qty)
        VALUES (p_trade_id, p_acct_id, p_symbol, p_trade_dts, p_trade_price,
                v_dir * v_needed);
    END IF;
    SET p_buy_value = IF(p_type_is_sell, v_lots, v_here);
    SET p_sell_value = IF(p_type_is_sell, v_here, v_lots);
END
//

-- Trade-Result frame 3 (a gain, tax status 1 or 2): the tax on the gain at the sum of the
-- customer's tax rates, stored in t_tax.
CREATE OR REPLACE PROCEDURE trade_result_f3(
    IN p_buy_value DECIMAL(20,2), IN p_cust_id BIGINT, IN p_sell_value DECIMAL(20,2),
    IN p_trade_id BIGINT, OUT p_tax DECIMAL(20,2))
MODIFIES SQL DATA
BEGIN
    SELECT ROUND((p_sell_value - p_buy_value) * COALESCE(SUM(tx.tx_rate), 0), 2) INTO p_tax
      FROM customer_taxrate cx JOIN taxrate tx ON tx.tx_id = cx.cx_tx_id
     WHERE cx.cx_c_id = p_cust_id;
    UPDATE trade SET t_tax = p_tax WHERE t_id = p_trade_id;
END
//

-- Trade-Result frame 4 (read-only): the commission rate of the customer's tier, the trade
-- type, the security's exchange and the quantity; the security's name.
CREATE OR REPLACE PROCEDURE trade_result_f4(
    IN p_cust_id BIGINT, IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin,
    IN p_trade_qty INT, IN p_type_id CHAR(3) CHARSET latin1 COLLATE latin1_bin,
    OUT p_comm_rate DECIMAL(5,2), OUT p_sec_name VARCHAR(70))
READS SQL DATA
BEGIN
    DECLARE v_ex_id VARCHAR(6) CHARSET latin1 COLLATE latin1_bin;
    DECLARE v_tier INT;
    SELECT s.s_ex_id, s.s_name INTO v_ex_id, p_sec_name FROM security s
     WHERE s.s_symb = p_symbol;
    SELECT c.c_tier INTO v_tier FROM customer c WHERE c.c_id = p_cust_id;
    SELECT MIN(cr.cr_rate) INTO p_comm_rate FROM commission_rate cr
     WHERE cr.cr_c_tier = v_tier AND cr.cr_tt_id = p_type_id AND cr.cr_ex_id = v_ex_id
       AND p_trade_qty BETWEEN cr.cr_from_qty AND cr.cr_to_qty;
    IF p_comm_rate IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'trade_result: no commission rate';
    END IF;
END
//

-- Trade-Result frame 5: the trade completed (CMPT, its price, commission and time) with its
-- history row; the broker's trade count and commission total.
CREATE OR REPLACE PROCEDURE trade_result_f5(
    IN p_broker_id BIGINT, IN p_comm_amount DECIMAL(12,2), IN p_trade_dts DATETIME,
    IN p_trade_id BIGINT, IN p_trade_price DECIMAL(12,2))
MODIFIES SQL DATA
BEGIN
    UPDATE trade SET t_comm = p_comm_amount, t_dts = p_trade_dts, t_st_id = 'CMPT',
                     t_trade_price = p_trade_price
     WHERE t_id = p_trade_id;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
    VALUES (p_trade_id, p_trade_dts, 'CMPT');
    UPDATE broker SET b_num_trades = b_num_trades + 1,
                      b_comm_total = b_comm_total + p_comm_amount
     WHERE b_id = p_broker_id;
END
//

-- Trade-Result frame 6: the settlement (due p_due_date); a cash trade also moves the
-- account's balance by the settled amount, recorded as a cash transaction named as the
-- build names them ("Market-Buy 200 shares of ABC"). p_bal: the account's balance.
CREATE OR REPLACE PROCEDURE trade_result_f6(
    IN p_acct_id BIGINT, IN p_due_date DATE,
    IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin, IN p_se_amount DECIMAL(12,2),
    IN p_trade_dts DATETIME, IN p_trade_id BIGINT, IN p_trade_is_cash BOOLEAN,
    IN p_trade_qty INT, IN p_type_name VARCHAR(12) CHARSET latin1 COLLATE latin1_bin,
    OUT p_bal DECIMAL(15,2))
MODIFIES SQL DATA
BEGIN
    INSERT INTO settlement (se_t_id, se_cash_type, se_cash_due_date, se_amt)
    VALUES (p_trade_id, IF(p_trade_is_cash, 'Cash Account', 'Margin'), p_due_date,
            p_se_amount);
    IF p_trade_is_cash THEN
        UPDATE customer_account SET ca_bal = ca_bal + p_se_amount WHERE ca_id = p_acct_id;
        INSERT INTO cash_transaction (ct_t_id, ct_dts, ct_amt, ct_name)
        VALUES (p_trade_id, p_trade_dts, p_se_amount,
                CONCAT(p_type_name, ' ', p_trade_qty, ' shares of ', p_symbol));
    END IF;
    SELECT a.ca_bal INTO p_bal FROM customer_account a WHERE a.ca_id = p_acct_id;
END
//

-- Trade-Result: frames 1 to 6 for a submitted trade completed at p_trade_price. The
-- commission is qty x price x rate / 100 rounded to the cent; the tax (frame 3) is the gain
-- (sell_value - buy_value) times the customer's two rates, for tax status 1 or 2 and a gain;
-- the settled amount is -(qty x price + charge + commission) for a purchase and
-- qty x price - (charge + commission) for a sale, less the tax for tax status 1; it is due
-- 2 days after the trade. Returns the account, its balance, and these amounts.
CREATE OR REPLACE PROCEDURE trade_result(IN p_trade_id BIGINT, IN p_trade_price DECIMAL(12,2))
MODIFIES SQL DATA
BEGIN
    DECLARE v_acct_id, v_broker_id, v_cust_id BIGINT;
    DECLARE v_charge, v_comm DECIMAL(12,2);
    DECLARE v_hs_qty, v_trade_qty, v_tax_status INT;
    DECLARE v_is_lifo, v_is_cash, v_is_market, v_is_sell BOOLEAN;
    DECLARE v_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin;
    DECLARE v_type_id CHAR(3) CHARSET latin1 COLLATE latin1_bin;
    DECLARE v_type_name VARCHAR(12) CHARSET latin1 COLLATE latin1_bin;
    DECLARE v_buy, v_sell, v_value, v_se_amount DECIMAL(20,2);
    DECLARE v_tax DECIMAL(20,2) DEFAULT 0;
    DECLARE v_dts DATETIME;
    DECLARE v_comm_rate DECIMAL(5,2);
    DECLARE v_sec_name VARCHAR(70);
    DECLARE v_bal DECIMAL(15,2);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
    START TRANSACTION;
    CALL trade_result_f1(p_trade_id, v_acct_id, v_charge, v_hs_qty, v_is_lifo, v_symbol,
                         v_is_cash, v_trade_qty, v_type_id, v_is_market, v_is_sell,
                         v_type_name);
    CALL trade_result_f2(v_acct_id, v_hs_qty, v_is_lifo, v_symbol, p_trade_id, p_trade_price,
                         v_trade_qty, v_is_sell, v_broker_id, v_cust_id, v_tax_status, v_buy,
                         v_sell, v_dts);
    IF v_tax_status IN (1, 2) AND v_sell > v_buy THEN
        CALL trade_result_f3(v_buy, v_cust_id, v_sell, p_trade_id, v_tax);
    END IF;
    CALL trade_result_f4(v_cust_id, v_symbol, v_trade_qty, v_type_id, v_comm_rate,
                         v_sec_name);
    SET v_value = v_trade_qty * p_trade_price;
    SET v_comm = ROUND(v_value * v_comm_rate / 100, 2);
    CALL trade_result_f5(v_broker_id, v_comm, v_dts, p_trade_id, p_trade_price);
    SET v_se_amount = IF(v_is_sell, v_value - (v_charge + v_comm),
                         -(v_value + v_charge + v_comm));
    IF v_tax_status = 1 THEN
        SET v_se_amount = v_se_amount - v_tax;
    END IF;
    CALL trade_result_f6(v_acct_id, DATE(v_dts) + INTERVAL 2 DAY, v_symbol, v_se_amount,
                         v_dts, p_trade_id, v_is_cash, v_trade_qty, v_type_name, v_bal);
    COMMIT;
    SELECT v_acct_id AS acct_id, v_bal AS acct_bal, v_comm AS comm_amount,
           v_tax AS tax_amount, v_se_amount AS se_amount;
END
//

-- ---------------------------------------------------------------------------------------
-- Data-Maintenance frame 1: one edit of table p_table_name (the client takes the 12 tables
-- in turn, one a minute), each changing its rows whenever it runs, as PostgreSQL's
-- data_maintenance_f1 describes them; p_rows_changed the rows changed.
CREATE OR REPLACE PROCEDURE data_maintenance_f1(
    IN p_table_name VARCHAR(30), IN p_acct_id BIGINT, IN p_c_id BIGINT, IN p_co_id BIGINT,
    IN p_day_of_month INT, IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin,
    IN p_tx_id VARCHAR(4) CHARSET latin1 COLLATE latin1_bin, IN p_vol_incr INT,
    OUT p_rows_changed INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_wl_id, v_ad_id BIGINT;
    DECLARE v_old, v_new VARCHAR(15) CHARSET latin1 COLLATE latin1_bin;
    CASE p_table_name
    WHEN 'account_permission' THEN
        UPDATE account_permission SET ap_acl = IF(ap_acl = '1111', '0011', '1111')
         WHERE ap_ca_id = p_acct_id;
    WHEN 'address' THEN
        IF p_c_id <> 0 THEN
            SELECT MIN(c.c_ad_id) INTO v_ad_id FROM customer c WHERE c.c_id = p_c_id;
        ELSE
            SELECT MIN(co.co_ad_id) INTO v_ad_id FROM company co WHERE co.co_id = p_co_id;
        END IF;
        UPDATE address SET ad_line1 = brokerage_swap_case(ad_line1) WHERE ad_id = v_ad_id;
    WHEN 'company' THEN
        UPDATE company SET co_sp_rate = IF(co_sp_rate = 'ABA', 'AAA', 'ABA')
         WHERE co_id = p_co_id;
    WHEN 'customer' THEN
        UPDATE customer
           SET c_email_2 = CONCAT(SUBSTRING_INDEX(c_email_2, '@', 1), '@',
                                  IF(SUBSTRING_INDEX(SUBSTRING_INDEX(c_email_2, '@', 2), '@',
                                                     -1) = 'example.com',
                                     'example.net', 'example.com'))
         WHERE c_id = p_c_id;
    WHEN 'customer_taxrate' THEN
        UPDATE customer_taxrate
           SET cx_tx_id = CONCAT('D', LPAD(CAST(SUBSTRING(cx_tx_id, 2) AS UNSIGNED) ^ 1,
                                           CHAR_LENGTH(cx_tx_id) - 1, '0'))
         WHERE cx_c_id = p_c_id AND cx_tx_id LIKE 'D%';
    WHEN 'daily_market' THEN
        UPDATE daily_market SET dm_vol = dm_vol + p_vol_incr
         WHERE dm_s_symb = p_symbol AND DAYOFMONTH(dm_date) = p_day_of_month;
    WHEN 'exchange' THEN
        UPDATE exchange SET ex_desc = brokerage_swap_case(ex_desc);
    WHEN 'financial' THEN
        UPDATE financial SET fi_qtr_start_date = brokerage_toggle_day(fi_qtr_start_date)
         WHERE fi_co_id = p_co_id;
    WHEN 'news_item' THEN
        UPDATE news_xref x JOIN news_item ni ON ni.ni_id = x.nx_ni_id
           SET ni.ni_dts = TIMESTAMP(brokerage_toggle_day(DATE(ni.ni_dts)), TIME(ni.ni_dts))
         WHERE x.nx_co_id = p_co_id;
    WHEN 'security' THEN
        UPDATE security SET s_exch_date = brokerage_toggle_day(s_exch_date)
         WHERE s_symb = p_symbol;
    WHEN 'taxrate' THEN
        UPDATE taxrate SET tx_name = brokerage_swap_case(tx_name) WHERE tx_id = p_tx_id;
    WHEN 'watch_item' THEN
        SELECT MIN(w.wl_id) INTO v_wl_id FROM watch_list w WHERE w.wl_c_id = p_c_id;
        SELECT MIN(i.wi_s_symb) INTO v_old FROM watch_item i WHERE i.wi_wl_id = v_wl_id;
        SELECT MIN(s.s_symb) INTO v_new FROM security s
         WHERE NOT EXISTS (SELECT 1 FROM watch_item i
                            WHERE i.wi_wl_id = v_wl_id AND i.wi_s_symb = s.s_symb);
        UPDATE watch_item SET wi_s_symb = v_new
         WHERE wi_wl_id = v_wl_id AND wi_s_symb = v_old AND v_new IS NOT NULL;
    ELSE
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'data_maintenance: no such table';
    END CASE;
    SET p_rows_changed = ROW_COUNT();
END
//

-- Data-Maintenance: frame 1's count of rows changed.
CREATE OR REPLACE PROCEDURE data_maintenance(
    IN p_table_name VARCHAR(30), IN p_acct_id BIGINT, IN p_c_id BIGINT, IN p_co_id BIGINT,
    IN p_day_of_month INT, IN p_symbol VARCHAR(15) CHARSET latin1 COLLATE latin1_bin,
    IN p_tx_id VARCHAR(4) CHARSET latin1 COLLATE latin1_bin, IN p_vol_incr INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_rows INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    CALL data_maintenance_f1(p_table_name, p_acct_id, p_c_id, p_co_id, p_day_of_month,
                             p_symbol, p_tx_id, p_vol_incr, v_rows);
    COMMIT;
    SELECT v_rows AS rows_changed;
END
//

-- ---------------------------------------------------------------------------------------
-- Trade-Cleanup frame 1, before a run: each pending limit order (trade_request) gets an SBMT
-- then a CNCL history row, its trade becomes CNCL and its request goes; each trade still
-- SBMT with an id above p_start_trade_id (those of an earlier run that never completed)
-- becomes CNCL with its history row. p_canceled: the trades canceled.
CREATE OR REPLACE PROCEDURE trade_cleanup_f1(IN p_start_trade_id BIGINT, OUT p_canceled INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_now DATETIME DEFAULT NOW();
    DECLARE v_pending INT;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
    SELECT r.tr_t_id, v_now, st.id
      FROM trade_request r
     CROSS JOIN (SELECT 'SBMT' AS id UNION ALL SELECT 'CNCL') st;
    UPDATE trade t JOIN trade_request r ON r.tr_t_id = t.t_id
       SET t.t_st_id = 'CNCL', t.t_dts = v_now;
    SET v_pending = ROW_COUNT();
    DELETE FROM trade_request;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
    SELECT t.t_id, v_now, 'CNCL' FROM trade t
     WHERE t.t_id > p_start_trade_id AND t.t_st_id = 'SBMT';
    UPDATE trade SET t_st_id = 'CNCL', t_dts = v_now
     WHERE t_id > p_start_trade_id AND t_st_id = 'SBMT';
    SET p_canceled = v_pending + ROW_COUNT();
END
//

-- Trade-Cleanup: frame 1's count.
CREATE OR REPLACE PROCEDURE trade_cleanup(IN p_start_trade_id BIGINT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_canceled INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    CALL trade_cleanup_f1(p_start_trade_id, v_canceled);
    COMMIT;
    SELECT v_canceled AS canceled;
END
//
