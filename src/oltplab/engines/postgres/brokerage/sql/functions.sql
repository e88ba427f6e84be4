-- The TPC-E-derived brokerage's transactions as PL/pgSQL functions: one function per frame
-- (<transaction>_f1, _f2 ...), and one function per transaction (broker_volume,
-- customer_position, market_feed, market_watch, security_detail, trade_lookup, trade_order,
-- trade_result, trade_status, trade_update, data_maintenance, trade_cleanup) that runs its
-- frames in order inside the caller's transaction and returns what the client needs: the
-- driver makes one call per transaction (one round trip), and each frame stays a function of
-- its own. workloads/brokerage/frames.py lists the transaction functions, their arguments in
-- order, what each returns, and the isolation level the client sets before the call
-- (Trade-Result SERIALIZABLE; Trade-Order, Trade-Update and Market-Feed REPEATABLE READ; the
-- rest READ COMMITTED): a function cannot set it.
-- Trade-Order's deliberate rollback: trade_order undoes its own writes (a block ending in an
-- exception it catches) and returns the new trade's id with the flag roll_it_back true, so
-- that the client sends every transaction as one call, begun at its isolation level.
-- New trade ids come from the sequence seq_trade_id (the loader creates it past the loaded
-- ids). Money is rounded to the cent where it is stored (round(), half away from zero).
-- Statuses: CMPT completed, SBMT submitted, PNDG pending (a limit order waiting for its
-- price), CNCL canceled. Every output column is cast to a plain type (bigint, int, text,
-- numeric, date, timestamp) so that the results do not depend on the columns' widths.
-- Helpers shared by several frames are named brokerage_*; Trade-Lookup's and Trade-Update's
-- trades come back as the composite type brokerage_trade_row.

-- Swaps the case of the first letter of p (unchanged without a letter): the toggling edits
-- of Trade-Update and Data-Maintenance, which change a row each time whatever its text.
CREATE OR REPLACE FUNCTION brokerage_swap_case(p text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN c IS NULL THEN p
                ELSE overlay(p PLACING CASE WHEN c = upper(c) THEN lower(c) ELSE upper(c) END
                             FROM length(substring(p FROM '^[^A-Za-z]*')) + 1 FOR 1) END
      FROM (SELECT substring(p FROM '[A-Za-z]') AS c) s
$$;

-- One day later when the day of the month is even, one day earlier when odd: a date that
-- changes at each call of Data-Maintenance and stays near where it was.
CREATE OR REPLACE FUNCTION brokerage_toggle_day(p date) RETURNS date
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN extract(day FROM p)::int % 2 = 0 THEN p + 1 ELSE p - 1 END
$$;

-- ---------------------------------------------------------------------------------------
-- Broker-Volume (read-only): the value of the pending limit orders (trade_request) of each
-- named broker in securities of one sector, largest first.
CREATE OR REPLACE FUNCTION broker_volume_f1(p_broker_list text[], p_sector_name text)
RETURNS TABLE (broker_name text, volume numeric)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
    SELECT b.b_name::text, sum(r.tr_qty * r.tr_bid_price)::numeric
      FROM trade_request r
      JOIN broker b ON b.b_id = r.tr_b_id
      JOIN security s ON s.s_symb = r.tr_s_symb
      JOIN company co ON co.co_id = s.s_co_id
      JOIN industry i ON i.in_id = co.co_in_id
      JOIN sector sc ON sc.sc_id = i.in_sc_id
     WHERE b.b_name = ANY (p_broker_list) AND sc.sc_name = p_sector_name
     GROUP BY b.b_name
     ORDER BY 2 DESC;
END
$$;

-- Broker-Volume: how many of the brokers have pending orders, and their total value.
CREATE OR REPLACE FUNCTION broker_volume(p_broker_list text[], p_sector_name text,
                                         OUT list_len int, OUT volume_total numeric)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT count(*)::int, coalesce(sum(f.volume), 0) INTO list_len, volume_total
      FROM broker_volume_f1(p_broker_list, p_sector_name) f;
END
$$;

-- ---------------------------------------------------------------------------------------
-- Customer-Position frame 1 (read-only): the customer (by p_cust_id, or by p_tax_id when
-- p_cust_id is 0) and up to 10 of its accounts with their cash balance and the market value
-- of their holdings, the smallest total first.
CREATE OR REPLACE FUNCTION customer_position_f1(p_cust_id bigint, p_tax_id text)
RETURNS TABLE (cust_id bigint, acct_id bigint, cash_bal numeric, assets_total numeric)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_c customer%ROWTYPE;
BEGIN
    IF p_cust_id = 0 THEN
        SELECT * INTO v_c FROM customer WHERE c_tax_id = p_tax_id;
    ELSE
        SELECT * INTO v_c FROM customer WHERE c_id = p_cust_id;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'customer % (tax id %) does not exist', p_cust_id, p_tax_id;
    END IF;
    RETURN QUERY
    SELECT v_c.c_id, a.ca_id, a.ca_bal::numeric,
           coalesce(sum(h.hs_qty * l.lt_price), 0)::numeric
      FROM customer_account a
      LEFT JOIN holding_summary h ON h.hs_ca_id = a.ca_id
      LEFT JOIN last_trade l ON l.lt_s_symb = h.hs_s_symb
     WHERE a.ca_c_id = v_c.c_id
     GROUP BY a.ca_id, a.ca_bal
     ORDER BY 4, 2
     LIMIT 10;
END
$$;

-- Customer-Position frame 2 (read-only): the account's 10 latest trades with their history,
-- the latest event first, 30 rows at most.
CREATE OR REPLACE FUNCTION customer_position_f2(p_acct_id bigint)
RETURNS TABLE (trade_id bigint, symbol text, qty int, trade_status text, hist_dts timestamp)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
    SELECT t.t_id, t.t_s_symb::text, t.t_qty, st.st_name::text, h.th_dts
      FROM (SELECT t_id FROM trade WHERE t_ca_id = p_acct_id
             ORDER BY t_dts DESC LIMIT 10) last10
      JOIN trade t ON t.t_id = last10.t_id
      JOIN trade_history h ON h.th_t_id = t.t_id
      JOIN status_type st ON st.st_id = h.th_st_id
     ORDER BY h.th_dts DESC, t.t_id DESC
     LIMIT 30;
END
$$;

-- Customer-Position: frame 1, then with p_get_history frame 2 on the account at position
-- p_acct_idx (modulo the accounts found, from 0) of frame 1's list.
CREATE OR REPLACE FUNCTION customer_position(p_cust_id bigint, p_tax_id text,
                                             p_get_history boolean, p_acct_idx int,
                                             OUT cust_id bigint, OUT acct_len int,
                                             OUT hist_len int)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_accts bigint[];
BEGIN
    SELECT min(f.cust_id), array_agg(f.acct_id) INTO cust_id, v_accts
      FROM customer_position_f1(p_cust_id, p_tax_id) f;
    acct_len := coalesce(cardinality(v_accts), 0);
    hist_len := 0;
    IF p_get_history AND acct_len > 0 THEN
        SELECT count(*)::int INTO hist_len
          FROM customer_position_f2(v_accts[p_acct_idx % acct_len + 1]);
    END IF;
END
$$;

-- ---------------------------------------------------------------------------------------
-- Market-Feed frame 1: a batch of ticker entries (symbol, price, quantity traded). Each
-- entry updates its last_trade row and fires the limit orders its price triggers (stop-loss
-- when the order's price is at or above the ticker's, limit-sell at or below, limit-buy at
-- or above): the trade becomes SBMT with a history row and its trade_request row goes.
-- Returns the fired trades (with the price of the entry that fired them), for the market
-- emulator to complete. The entries are taken in symbol order, so that two batches lock
-- their last_trade rows in the same order. One transaction for the batch.
CREATE OR REPLACE FUNCTION market_feed_f1(p_symbols text[], p_prices numeric[], p_qtys int[])
RETURNS TABLE (trade_id bigint, symbol text, price numeric, qty int, type_id text)
LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamp := localtimestamp;
    v_e record;
BEGIN
    IF cardinality(p_symbols) <> cardinality(p_prices)
       OR cardinality(p_symbols) <> cardinality(p_qtys) THEN
        RAISE EXCEPTION 'market feed: % symbols, % prices and % quantities',
            cardinality(p_symbols), cardinality(p_prices), cardinality(p_qtys);
    END IF;
    FOR v_e IN SELECT u.s, u.p, u.q, u.n
                 FROM unnest(p_symbols, p_prices, p_qtys) WITH ORDINALITY AS u(s, p, q, n)
                ORDER BY u.s, u.n LOOP
        UPDATE last_trade SET lt_price = v_e.p, lt_vol = lt_vol + v_e.q, lt_dts = v_now
         WHERE lt_s_symb = v_e.s;
        RETURN QUERY
        WITH fired AS (
            DELETE FROM trade_request r
             WHERE r.tr_s_symb = v_e.s
               AND ((r.tr_tt_id = 'TSL' AND r.tr_bid_price >= v_e.p)
                    OR (r.tr_tt_id = 'TLS' AND r.tr_bid_price <= v_e.p)
                    OR (r.tr_tt_id = 'TLB' AND r.tr_bid_price >= v_e.p))
            RETURNING r.tr_t_id, r.tr_s_symb, r.tr_qty, r.tr_tt_id
        ), sent AS (
            UPDATE trade SET t_dts = v_now, t_st_id = 'SBMT'
              FROM fired WHERE t_id = fired.tr_t_id
            RETURNING t_id
        ), logged AS (
            INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
            SELECT sent.t_id, v_now, 'SBMT' FROM sent
        )
        SELECT f.tr_t_id, f.tr_s_symb::text, v_e.p::numeric, f.tr_qty, f.tr_tt_id::text
          FROM fired f ORDER BY f.tr_t_id;
    END LOOP;
END
$$;

-- Market-Feed: frame 1's rows.
CREATE OR REPLACE FUNCTION market_feed(p_symbols text[], p_prices numeric[], p_qtys int[])
RETURNS TABLE (trade_id bigint, symbol text, price numeric, qty int, type_id text)
LANGUAGE sql AS $$
    SELECT * FROM market_feed_f1(p_symbols, p_prices, p_qtys)
$$;

-- ---------------------------------------------------------------------------------------
-- Market-Watch frame 1 (read-only): the securities of the customer's watch list (p_cust_id
-- not 0), else of an industry's companies with ids in p_starting_co_id..p_ending_co_id
-- (p_industry_name not empty), else of the account's holdings (p_acct_id); each with its
-- last price, its shares outstanding and its close on p_start_day (null without a row).
CREATE OR REPLACE FUNCTION market_watch_f1(p_acct_id bigint, p_cust_id bigint,
                                           p_ending_co_id bigint, p_industry_name text,
                                           p_starting_co_id bigint, p_start_day date)
RETURNS TABLE (symbol text, new_price numeric, old_price numeric, num_out bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_symbols text[];
BEGIN
    IF p_cust_id <> 0 THEN
        SELECT array_agg(i.wi_s_symb ORDER BY i.wi_s_symb) INTO v_symbols
          FROM watch_list w JOIN watch_item i ON i.wi_wl_id = w.wl_id
         WHERE w.wl_c_id = p_cust_id;
    ELSIF coalesce(p_industry_name, '') <> '' THEN
        SELECT array_agg(s.s_symb ORDER BY s.s_symb) INTO v_symbols
          FROM industry i
          JOIN company co ON co.co_in_id = i.in_id
          JOIN security s ON s.s_co_id = co.co_id
         WHERE i.in_name = p_industry_name
           AND co.co_id BETWEEN p_starting_co_id AND p_ending_co_id;
    ELSE
        SELECT array_agg(h.hs_s_symb ORDER BY h.hs_s_symb) INTO v_symbols
          FROM holding_summary h WHERE h.hs_ca_id = p_acct_id;
    END IF;
    RETURN QUERY
    SELECT u.s, l.lt_price::numeric, d.dm_close::numeric, s.s_num_out
      FROM unnest(v_symbols) AS u(s)
      JOIN last_trade l ON l.lt_s_symb = u.s
      JOIN security s ON s.s_symb = u.s
      LEFT JOIN daily_market d ON d.dm_s_symb = u.s AND d.dm_date = p_start_day
     ORDER BY u.s;
END
$$;

-- Market-Watch: the securities' count and the percent change of their market value since
-- the start day (over the securities with a close that day; 0 without any).
CREATE OR REPLACE FUNCTION market_watch(p_acct_id bigint, p_cust_id bigint,
                                        p_ending_co_id bigint, p_industry_name text,
                                        p_starting_co_id bigint, p_start_day date,
                                        OUT symbols int, OUT pct_change numeric)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_old numeric;
    v_new numeric;
BEGIN
    SELECT count(*)::int, sum(f.old_price * f.num_out),
           sum(f.new_price * f.num_out) FILTER (WHERE f.old_price IS NOT NULL)
      INTO symbols, v_old, v_new
      FROM market_watch_f1(p_acct_id, p_cust_id, p_ending_co_id, p_industry_name,
                           p_starting_co_id, p_start_day) f;
    pct_change := CASE WHEN coalesce(v_old, 0) = 0 THEN 0
                       ELSE round(100 * (v_new / v_old - 1), 2) END;
END
$$;

-- ---------------------------------------------------------------------------------------
-- Security-Detail frame 1 (read-only): the security, its company and exchange with their
-- addresses and towns, 3 competitors, the company's 20 latest financial quarters, up to
-- p_max_rows days of daily_market from p_start_day, the last trade, and 2 news items (their
-- text read only with p_access_lob; else their summaries). Lists come as arrays, and the
-- financial and daily rows as their counts.
CREATE OR REPLACE FUNCTION security_detail_f1(p_symbol text, p_start_day date, p_max_rows int,
                                              p_access_lob boolean,
                                              OUT sec_name text, OUT company_name text,
                                              OUT ceo text, OUT co_town text,
                                              OUT exchange_name text, OUT ex_town text,
                                              OUT competitors text[], OUT fin_len int,
                                              OUT day_len int, OUT last_price numeric,
                                              OUT news_headlines text[], OUT news_chars int)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_co_id bigint;
BEGIN
    SELECT s.s_name, co.co_id, co.co_name, co.co_ceo, zc.zc_town, ex.ex_name, ezc.zc_town
      INTO sec_name, v_co_id, company_name, ceo, co_town, exchange_name, ex_town
      FROM security s
      JOIN company co ON co.co_id = s.s_co_id
      JOIN address ca ON ca.ad_id = co.co_ad_id
      JOIN zip_code zc ON zc.zc_code = ca.ad_zc_code
      JOIN exchange ex ON ex.ex_id = s.s_ex_id
      JOIN address ea ON ea.ad_id = ex.ex_ad_id
      JOIN zip_code ezc ON ezc.zc_code = ea.ad_zc_code
     WHERE s.s_symb = p_symbol;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'security % does not exist', p_symbol;
    END IF;
    SELECT array_agg(c.co_name::text ORDER BY c.co_id) INTO competitors
      FROM (SELECT co.co_id, co.co_name FROM company_competitor cp
              JOIN company co ON co.co_id = cp.cp_comp_co_id
             WHERE cp.cp_co_id = v_co_id ORDER BY co.co_id LIMIT 3) c;
    SELECT count(*)::int INTO fin_len
      FROM (SELECT fi.* FROM financial fi WHERE fi.fi_co_id = v_co_id
             ORDER BY fi.fi_year DESC, fi.fi_qtr DESC LIMIT 20) f;
    SELECT count(*)::int INTO day_len
      FROM (SELECT dm.* FROM daily_market dm
             WHERE dm.dm_s_symb = p_symbol AND dm.dm_date >= p_start_day
             ORDER BY dm.dm_date LIMIT p_max_rows) d;
    SELECT l.lt_price INTO last_price FROM last_trade l WHERE l.lt_s_symb = p_symbol;
    SELECT array_agg(n.ni_headline::text ORDER BY n.ni_id),
           coalesce(sum(CASE WHEN p_access_lob THEN length(n.ni_item)
                             ELSE length(n.ni_summary) END), 0)::int
      INTO news_headlines, news_chars
      FROM (SELECT ni.* FROM news_xref x JOIN news_item ni ON ni.ni_id = x.nx_ni_id
             WHERE x.nx_co_id = v_co_id ORDER BY ni.ni_id LIMIT 2) n;
END
$$;

-- Security-Detail: frame 1's row.
CREATE OR REPLACE FUNCTION security_detail(p_symbol text, p_start_day date, p_max_rows int,
                                           p_access_lob boolean)
RETURNS TABLE (sec_name text, company_name text, ceo text, co_town text, exchange_name text,
               ex_town text, competitors text[], fin_len int, day_len int,
               last_price numeric, news_headlines text[], news_chars int)
LANGUAGE sql STABLE AS $$
    SELECT * FROM security_detail_f1(p_symbol, p_start_day, p_max_rows, p_access_lob)
$$;

-- ---------------------------------------------------------------------------------------
-- A trade as Trade-Lookup and Trade-Update frames 1-3 return it: with its settlement, its
-- cash transaction (null for a margin trade) and its first 3 history events (oldest first)
-- as arrays. (Dropped first, with the functions returning it, which follow.)
DROP TYPE IF EXISTS brokerage_trade_row CASCADE;
CREATE TYPE brokerage_trade_row AS (
    trade_id bigint, acct_id bigint, symbol text, qty int, type_id text, trade_dts timestamp,
    bid_price numeric, exec_name text, is_cash boolean, is_market boolean,
    trade_price numeric, settlement_amount numeric, settlement_due_date date,
    settlement_cash_type text, cash_amount numeric, cash_dts timestamp, cash_name text,
    hist_dts timestamp[], hist_status text[]);

-- The trades p_trade_ids, in that order (ids without a trade left out).
CREATE OR REPLACE FUNCTION brokerage_trade_rows(p_trade_ids bigint[])
RETURNS SETOF brokerage_trade_row
LANGUAGE sql STABLE AS $$
    SELECT t.t_id, t.t_ca_id, t.t_s_symb::text, t.t_qty, t.t_tt_id::text, t.t_dts,
           t.t_bid_price::numeric, t.t_exec_name::text, t.t_is_cash, tt.tt_is_mrkt,
           t.t_trade_price::numeric, se.se_amt::numeric, se.se_cash_due_date,
           se.se_cash_type::text, ct.ct_amt::numeric, ct.ct_dts, ct.ct_name::text,
           h.dts, h.st
      FROM unnest(p_trade_ids) WITH ORDINALITY AS u(id, n)
      JOIN trade t ON t.t_id = u.id
      JOIN trade_type tt ON tt.tt_id = t.t_tt_id
      LEFT JOIN settlement se ON se.se_t_id = t.t_id
      LEFT JOIN cash_transaction ct ON ct.ct_t_id = t.t_id
      CROSS JOIN LATERAL (
          SELECT array_agg(x.th_dts ORDER BY x.th_dts, x.th_st_id) AS dts,
                 array_agg(x.th_st_id::text ORDER BY x.th_dts, x.th_st_id) AS st
            FROM (SELECT th.th_dts, th.th_st_id FROM trade_history th
                   WHERE th.th_t_id = t.t_id ORDER BY th.th_dts, th.th_st_id LIMIT 3) x) h
     ORDER BY u.n
$$;

-- The ids of up to p_max_trades trades of account p_acct_id (p_symbol null) or of security
-- p_symbol, made in p_start_dts..p_end_dts, the oldest first.
CREATE OR REPLACE FUNCTION brokerage_trades_in(p_acct_id bigint, p_symbol text,
                                               p_start_dts timestamp, p_end_dts timestamp,
                                               p_max_trades int)
RETURNS bigint[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_ids bigint[];
BEGIN
    IF p_symbol IS NULL THEN
        SELECT array_agg(x.t_id ORDER BY x.t_dts, x.t_id) INTO v_ids
          FROM (SELECT t.t_id, t.t_dts FROM trade t
                 WHERE t.t_ca_id = p_acct_id AND t.t_dts BETWEEN p_start_dts AND p_end_dts
                 ORDER BY t.t_dts, t.t_id LIMIT p_max_trades) x;
    ELSE
        SELECT array_agg(x.t_id ORDER BY x.t_dts, x.t_id) INTO v_ids
          FROM (SELECT t.t_id, t.t_dts FROM trade t
                 WHERE t.t_s_symb = p_symbol AND t.t_dts BETWEEN p_start_dts AND p_end_dts
                 ORDER BY t.t_dts, t.t_id LIMIT p_max_trades) x;
    END IF;
    RETURN coalesce(v_ids, '{}');
END
$$;

-- Trade-Lookup frame 1 (read-only): the given trades.
CREATE OR REPLACE FUNCTION trade_lookup_f1(p_trade_ids bigint[])
RETURNS SETOF brokerage_trade_row
LANGUAGE sql STABLE AS $$
    SELECT * FROM brokerage_trade_rows(p_trade_ids)
$$;

-- Trade-Lookup frame 2 (read-only): up to p_max_trades of the account's trades in the
-- window, the oldest first.
CREATE OR REPLACE FUNCTION trade_lookup_f2(p_acct_id bigint, p_start_dts timestamp,
                                           p_end_dts timestamp, p_max_trades int)
RETURNS SETOF brokerage_trade_row
LANGUAGE sql STABLE AS $$
    SELECT * FROM brokerage_trade_rows(
        brokerage_trades_in(p_acct_id, NULL, p_start_dts, p_end_dts, p_max_trades))
$$;

-- Trade-Lookup frame 3 (read-only): up to p_max_trades trades of the security in the
-- window, the oldest first.
CREATE OR REPLACE FUNCTION trade_lookup_f3(p_symbol text, p_start_dts timestamp,
                                           p_end_dts timestamp, p_max_trades int)
RETURNS SETOF brokerage_trade_row
LANGUAGE sql STABLE AS $$
    SELECT * FROM brokerage_trade_rows(
        brokerage_trades_in(0, p_symbol, p_start_dts, p_end_dts, p_max_trades))
$$;

-- Trade-Lookup frame 4 (read-only): the account's first trade at or after p_start_dts and
-- up to 20 holding_history rows of the lots that trade changed.
CREATE OR REPLACE FUNCTION trade_lookup_f4(p_acct_id bigint, p_start_dts timestamp)
RETURNS TABLE (trade_id bigint, holding_id bigint, hist_trade_id bigint, before_qty int,
               after_qty int)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_t_id bigint;
BEGIN
    SELECT t.t_id INTO v_t_id FROM trade t
     WHERE t.t_ca_id = p_acct_id AND t.t_dts >= p_start_dts
     ORDER BY t.t_dts, t.t_id LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT v_t_id, hh.hh_h_t_id, hh.hh_t_id, hh.hh_before_qty, hh.hh_after_qty
      FROM holding_history hh
     WHERE hh.hh_h_t_id IN (SELECT x.hh_h_t_id FROM holding_history x
                             WHERE x.hh_t_id = v_t_id)
     ORDER BY hh.hh_h_t_id, hh.hh_t_id
     LIMIT 20;
END
$$;

-- Trade-Lookup: frame p_frame (1-4) with its inputs (the others ignored); how many trades
-- (frames 1-3) or holding_history rows (frame 4) it found.
CREATE OR REPLACE FUNCTION trade_lookup(p_frame int, p_trade_ids bigint[], p_acct_id bigint,
                                        p_symbol text, p_start_dts timestamp,
                                        p_end_dts timestamp, p_max_trades int,
                                        OUT frame int, OUT num_found int)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    frame := p_frame;
    CASE p_frame
    WHEN 1 THEN
        SELECT count(*)::int INTO num_found FROM trade_lookup_f1(p_trade_ids);
    WHEN 2 THEN
        SELECT count(*)::int INTO num_found
          FROM trade_lookup_f2(p_acct_id, p_start_dts, p_end_dts, p_max_trades);
    WHEN 3 THEN
        SELECT count(*)::int INTO num_found
          FROM trade_lookup_f3(p_symbol, p_start_dts, p_end_dts, p_max_trades);
    WHEN 4 THEN
        SELECT count(*)::int INTO num_found FROM trade_lookup_f4(p_acct_id, p_start_dts);
    ELSE
        RAISE EXCEPTION 'trade lookup has frames 1 to 4, not %', p_frame;
    END CASE;
END
$$;

-- ---------------------------------------------------------------------------------------
-- Trade-Status frame 1 (read-only): the account's 50 latest trades with their status,
-- type, security and exchange names, and the account's customer and broker.
CREATE OR REPLACE FUNCTION trade_status_f1(p_acct_id bigint)
RETURNS TABLE (trade_id bigint, trade_dts timestamp, status_name text, type_name text,
               symbol text, qty int, exec_name text, charge numeric, security_name text,
               exchange_name text, cust_l_name text, cust_f_name text, broker_name text)
LANGUAGE sql STABLE AS $$
    SELECT t.t_id, t.t_dts, st.st_name::text, tt.tt_name::text, t.t_s_symb::text, t.t_qty,
           t.t_exec_name::text, t.t_chrg::numeric, s.s_name::text, ex.ex_name::text,
           c.c_l_name::text, c.c_f_name::text, b.b_name::text
      FROM (SELECT x.* FROM trade x WHERE x.t_ca_id = p_acct_id
             ORDER BY x.t_dts DESC, x.t_id DESC LIMIT 50) t
      JOIN status_type st ON st.st_id = t.t_st_id
      JOIN trade_type tt ON tt.tt_id = t.t_tt_id
      JOIN security s ON s.s_symb = t.t_s_symb
      JOIN exchange ex ON ex.ex_id = s.s_ex_id
      JOIN customer_account ca ON ca.ca_id = t.t_ca_id
      JOIN customer c ON c.c_id = ca.ca_c_id
      JOIN broker b ON b.b_id = ca.ca_b_id
     ORDER BY t.t_dts DESC, t.t_id DESC
$$;

-- Trade-Status: how many trades frame 1 found.
CREATE OR REPLACE FUNCTION trade_status(p_acct_id bigint, OUT num_found int)
LANGUAGE sql STABLE AS $$
    SELECT count(*)::int FROM trade_status_f1(p_acct_id)
$$;

-- ---------------------------------------------------------------------------------------
-- Trade-Update frame 1: Trade-Lookup's frame 1, after toggling the executor's name
-- (brokerage_swap_case) of the first p_max_updates of the trades.
CREATE OR REPLACE FUNCTION trade_update_f1(p_trade_ids bigint[], p_max_updates int)
RETURNS SETOF brokerage_trade_row
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE trade SET t_exec_name = brokerage_swap_case(t_exec_name)
     WHERE t_id = ANY (p_trade_ids[1:p_max_updates]);
    RETURN QUERY SELECT * FROM brokerage_trade_rows(p_trade_ids);
END
$$;

-- Trade-Update frame 2: Trade-Lookup's frame 2, after toggling the settlement's cash type
-- (Cash Account / Cash, Margin / Margin Account) of the first p_max_updates trades.
CREATE OR REPLACE FUNCTION trade_update_f2(p_acct_id bigint, p_start_dts timestamp,
                                           p_end_dts timestamp, p_max_trades int,
                                           p_max_updates int)
RETURNS SETOF brokerage_trade_row
LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[] := brokerage_trades_in(p_acct_id, NULL, p_start_dts, p_end_dts,
                                          p_max_trades);
BEGIN
    UPDATE settlement SET se_cash_type = CASE se_cash_type
               WHEN 'Cash Account' THEN 'Cash' WHEN 'Cash' THEN 'Cash Account'
               WHEN 'Margin' THEN 'Margin Account' WHEN 'Margin Account' THEN 'Margin'
               ELSE brokerage_swap_case(se_cash_type) END
     WHERE se_t_id = ANY (v_ids[1:p_max_updates]);
    RETURN QUERY SELECT * FROM brokerage_trade_rows(v_ids);
END
$$;

-- Trade-Update frame 3: Trade-Lookup's frame 3, after toggling the cash transaction's name
-- (brokerage_swap_case) of the first p_max_updates trades (cash trades have one).
CREATE OR REPLACE FUNCTION trade_update_f3(p_symbol text, p_start_dts timestamp,
                                           p_end_dts timestamp, p_max_trades int,
                                           p_max_updates int)
RETURNS SETOF brokerage_trade_row
LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[] := brokerage_trades_in(0, p_symbol, p_start_dts, p_end_dts, p_max_trades);
BEGIN
    UPDATE cash_transaction SET ct_name = brokerage_swap_case(ct_name)
     WHERE ct_t_id = ANY (v_ids[1:p_max_updates]);
    RETURN QUERY SELECT * FROM brokerage_trade_rows(v_ids);
END
$$;

-- Trade-Update: frame p_frame (1-3) with its inputs; how many trades it found and how many
-- rows it changed.
CREATE OR REPLACE FUNCTION trade_update(p_frame int, p_trade_ids bigint[], p_acct_id bigint,
                                        p_symbol text, p_start_dts timestamp,
                                        p_end_dts timestamp, p_max_trades int,
                                        p_max_updates int,
                                        OUT frame int, OUT num_found int, OUT num_updated int)
LANGUAGE plpgsql AS $$
BEGIN
    frame := p_frame;
    CASE p_frame
    WHEN 1 THEN
        SELECT count(*)::int, least(count(*), p_max_updates)::int INTO num_found, num_updated
          FROM trade_update_f1(p_trade_ids, p_max_updates);
    WHEN 2 THEN
        SELECT count(*)::int, count(*) FILTER (WHERE r.settlement_amount IS NOT NULL
                                                 AND r.ordinality <= p_max_updates)::int
          INTO num_found, num_updated
          FROM trade_update_f2(p_acct_id, p_start_dts, p_end_dts, p_max_trades,
                               p_max_updates) WITH ORDINALITY AS r;
    WHEN 3 THEN
        SELECT count(*)::int, count(*) FILTER (WHERE r.cash_amount IS NOT NULL
                                                 AND r.ordinality <= p_max_updates)::int
          INTO num_found, num_updated
          FROM trade_update_f3(p_symbol, p_start_dts, p_end_dts, p_max_trades,
                               p_max_updates) WITH ORDINALITY AS r;
    ELSE
        RAISE EXCEPTION 'trade update has frames 1 to 3, not %', p_frame;
    END CASE;
END
$$;

-- ---------------------------------------------------------------------------------------
-- Trade-Order frame 1 (read-only): the account, its customer and its broker.
CREATE OR REPLACE FUNCTION trade_order_f1(p_acct_id bigint,
                                          OUT acct_name text, OUT broker_id bigint,
                                          OUT broker_name text, OUT cust_id bigint,
                                          OUT cust_f_name text, OUT cust_l_name text,
                                          OUT cust_tier int, OUT tax_id text,
                                          OUT tax_status int)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT a.ca_name, a.ca_b_id, b.b_name, c.c_id, c.c_f_name, c.c_l_name, c.c_tier,
           c.c_tax_id, a.ca_tax_st
      INTO acct_name, broker_id, broker_name, cust_id, cust_f_name, cust_l_name, cust_tier,
           tax_id, tax_status
      FROM customer_account a
      JOIN customer c ON c.c_id = a.ca_c_id
      JOIN broker b ON b.b_id = a.ca_b_id
     WHERE a.ca_id = p_acct_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'customer account % does not exist', p_acct_id;
    END IF;
END
$$;

-- Trade-Order frame 2 (read-only): the executor's permission on the account (its ap_acl),
-- null when the executor has none.
CREATE OR REPLACE FUNCTION trade_order_f2(p_acct_id bigint, p_exec_f_name text,
                                          p_exec_l_name text, p_exec_tax_id text)
RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT ap.ap_acl::text FROM account_permission ap
     WHERE ap.ap_ca_id = p_acct_id AND ap.ap_tax_id = p_exec_tax_id
       AND ap.ap_f_name = p_exec_f_name AND ap.ap_l_name = p_exec_l_name
$$;

-- Trade-Order frame 3 (read-only): the security (by p_symbol, or by the company's name and
-- the issue when p_symbol is empty), its last price, the trade type; what the order would
-- buy and sell against the account's lots of the security (walked newest first with
-- p_is_lifo, else oldest first) and the tax on a gain; the commission rate, the charge,
-- the account's assets for a margin order, and the new trade's status (SBMT for a market
-- order, which takes the last price; PNDG for a limit order, at p_requested_price).
CREATE OR REPLACE FUNCTION trade_order_f3(p_acct_id bigint, p_cust_id bigint,
                                          p_cust_tier int, p_is_lifo boolean, p_issue text,
                                          p_tax_status int, p_trade_qty int,
                                          p_trade_type_id text, p_type_is_margin boolean,
                                          p_co_name text, p_requested_price numeric,
                                          p_symbol text,
                                          OUT company_name text, OUT requested_price numeric,
                                          OUT symbol text, OUT sec_name text,
                                          OUT buy_value numeric, OUT sell_value numeric,
                                          OUT charge_amount numeric, OUT comm_rate numeric,
                                          OUT acct_assets numeric, OUT market_price numeric,
                                          OUT status_id text, OUT tax_amount numeric,
                                          OUT type_is_market boolean, OUT type_is_sell boolean)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_ex_id text;
    v_hs_qty int;
    v_needed int := p_trade_qty;
    v_take int;
    v_lots numeric := 0;
    v_here numeric := 0;
    v_h record;
    v_rates numeric;
BEGIN
    IF coalesce(p_symbol, '') = '' THEN
        SELECT s.s_symb, s.s_name, s.s_ex_id, co.co_name
          INTO symbol, sec_name, v_ex_id, company_name
          FROM company co JOIN security s ON s.s_co_id = co.co_id
         WHERE co.co_name = p_co_name AND s.s_issue = p_issue;
    ELSE
        SELECT s.s_symb, s.s_name, s.s_ex_id, co.co_name
          INTO symbol, sec_name, v_ex_id, company_name
          FROM security s JOIN company co ON co.co_id = s.s_co_id
         WHERE s.s_symb = p_symbol;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no security % (company %, issue %)', p_symbol, p_co_name, p_issue;
    END IF;
    SELECT l.lt_price INTO market_price FROM last_trade l WHERE l.lt_s_symb = symbol;
    SELECT tt.tt_is_mrkt, tt.tt_is_sell INTO type_is_market, type_is_sell
      FROM trade_type tt WHERE tt.tt_id = p_trade_type_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no trade type %', p_trade_type_id;
    END IF;
    requested_price := CASE WHEN type_is_market THEN market_price ELSE p_requested_price END;
    SELECT h.hs_qty INTO v_hs_qty FROM holding_summary h
     WHERE h.hs_ca_id = p_acct_id AND h.hs_s_symb = symbol;
    v_hs_qty := coalesce(v_hs_qty, 0);
    -- a sale takes from long lots, a purchase covers short ones
    IF (type_is_sell AND v_hs_qty > 0) OR (NOT type_is_sell AND v_hs_qty < 0) THEN
        FOR v_h IN SELECT h.h_qty, h.h_price FROM holding h
                    WHERE h.h_ca_id = p_acct_id AND h.h_s_symb = symbol
                    ORDER BY CASE WHEN p_is_lifo THEN h.h_dts END DESC,
                             CASE WHEN p_is_lifo THEN h.h_t_id END DESC,
                             h.h_dts, h.h_t_id LOOP
            EXIT WHEN v_needed = 0;
            v_take := least(abs(v_h.h_qty), v_needed);
            v_lots := v_lots + v_take * v_h.h_price;
            v_here := v_here + v_take * requested_price;
            v_needed := v_needed - v_take;
        END LOOP;
    END IF;
    buy_value := CASE WHEN type_is_sell THEN v_lots ELSE v_here END;
    sell_value := CASE WHEN type_is_sell THEN v_here ELSE v_lots END;
    tax_amount := 0;
    IF sell_value > buy_value AND p_tax_status IN (1, 2) THEN
        SELECT sum(tx.tx_rate) INTO v_rates
          FROM customer_taxrate cx JOIN taxrate tx ON tx.tx_id = cx.cx_tx_id
         WHERE cx.cx_c_id = p_cust_id;
        tax_amount := round((sell_value - buy_value) * coalesce(v_rates, 0), 2);
    END IF;
    SELECT cr.cr_rate INTO comm_rate FROM commission_rate cr
     WHERE cr.cr_c_tier = p_cust_tier AND cr.cr_tt_id = p_trade_type_id
       AND cr.cr_ex_id = v_ex_id AND p_trade_qty BETWEEN cr.cr_from_qty AND cr.cr_to_qty;
    SELECT ch.ch_chrg INTO charge_amount FROM charge ch
     WHERE ch.ch_c_tier = p_cust_tier AND ch.ch_tt_id = p_trade_type_id;
    IF p_type_is_margin THEN
        SELECT a.ca_bal + coalesce((SELECT sum(h.hs_qty * l.lt_price)
                                      FROM holding_summary h
                                      JOIN last_trade l ON l.lt_s_symb = h.hs_s_symb
                                     WHERE h.hs_ca_id = p_acct_id), 0)
          INTO acct_assets FROM customer_account a WHERE a.ca_id = p_acct_id;
    END IF;
    status_id := CASE WHEN type_is_market THEN 'SBMT' ELSE 'PNDG' END;
END
$$;

-- Trade-Order frame 4: the new trade (its id from seq_trade_id) in status p_status_id with
-- its history row, and a limit order's trade_request row; returns the trade's id.
CREATE OR REPLACE FUNCTION trade_order_f4(p_acct_id bigint, p_broker_id bigint,
                                          p_charge_amount numeric, p_comm_amount numeric,
                                          p_exec_name text, p_is_cash boolean,
                                          p_is_lifo boolean, p_requested_price numeric,
                                          p_status_id text, p_symbol text, p_trade_qty int,
                                          p_trade_type_id text, p_type_is_market boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint := nextval('seq_trade_id');
    v_now timestamp := localtimestamp;
BEGIN
    INSERT INTO trade (t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty,
                       t_bid_price, t_ca_id, t_exec_name, t_trade_price, t_chrg, t_comm,
                       t_tax, t_lifo)
    VALUES (v_id, v_now, p_status_id, p_trade_type_id, p_is_cash, p_symbol, p_trade_qty,
            p_requested_price, p_acct_id, p_exec_name, NULL, p_charge_amount, p_comm_amount,
            0, p_is_lifo);
    IF NOT p_type_is_market THEN
        INSERT INTO trade_request (tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price,
                                   tr_b_id)
        VALUES (v_id, p_trade_type_id, p_symbol, p_trade_qty, p_requested_price,
                p_broker_id);
    END IF;
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (v_id, v_now, p_status_id);
    RETURN v_id;
END
$$;

-- Trade-Order: frames 1 to 4. The executor is the account's customer, or must hold a
-- permission on the account (frame 2): without one, trade_id is 0 and nothing is written.
-- The order is a cash one unless p_type_is_margin (a margin purchase). Returns what the
-- market emulator needs: the new trade's id and status, its security, type, price (the last
-- price for a market order) and quantity. Frames 5 and 6: with p_roll_it_back the function
-- undoes its own writes (a block that ends in an exception: the client's COMMIT then commits
-- nothing but the sequence's value) and passes roll_it_back back; either way the client then
-- commits, and sends a trade that was not rolled back to the emulator.
CREATE OR REPLACE FUNCTION trade_order(p_acct_id bigint, p_exec_f_name text,
                                       p_exec_l_name text, p_exec_tax_id text,
                                       p_symbol text, p_co_name text, p_issue text,
                                       p_trade_type_id text, p_trade_qty int,
                                       p_requested_price numeric, p_type_is_margin boolean,
                                       p_is_lifo boolean, p_roll_it_back boolean,
                                       OUT trade_id bigint, OUT status_id text,
                                       OUT symbol text, OUT type_id text,
                                       OUT bid_price numeric, OUT trade_qty int,
                                       OUT is_market boolean, OUT roll_it_back boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_a record;
    v_s record;
BEGIN
    SELECT * INTO v_a FROM trade_order_f1(p_acct_id);
    roll_it_back := p_roll_it_back;
    type_id := p_trade_type_id;
    trade_qty := p_trade_qty;
    IF (p_exec_f_name, p_exec_l_name, p_exec_tax_id)
       IS DISTINCT FROM (v_a.cust_f_name, v_a.cust_l_name, v_a.tax_id)
       AND trade_order_f2(p_acct_id, p_exec_f_name, p_exec_l_name, p_exec_tax_id) IS NULL THEN
        trade_id := 0;
        RETURN;
    END IF;
    IF p_roll_it_back THEN
        -- the deliberate rollback: frames 3 and 4 run in a block whose exception undoes
        -- every write they made (the sequence's value stays used); the variables keep what
        -- the frames returned
        BEGIN
            SELECT * INTO v_s FROM trade_order_f3(p_acct_id, v_a.cust_id, v_a.cust_tier,
                                                  p_is_lifo, p_issue, v_a.tax_status,
                                                  p_trade_qty, p_trade_type_id,
                                                  p_type_is_margin, p_co_name,
                                                  p_requested_price, p_symbol);
            trade_id := trade_order_f4(p_acct_id, v_a.broker_id, v_s.charge_amount,
                                       round(v_s.comm_rate / 100 * p_trade_qty
                                             * v_s.requested_price, 2),
                                       p_exec_f_name || ' ' || p_exec_l_name,
                                       NOT p_type_is_margin, p_is_lifo, v_s.requested_price,
                                       v_s.status_id, v_s.symbol, p_trade_qty,
                                       p_trade_type_id, v_s.type_is_market);
            RAISE EXCEPTION USING ERRCODE = 'OLRBK', MESSAGE = 'roll_it_back';
        EXCEPTION WHEN SQLSTATE 'OLRBK' THEN
            NULL;
        END;
    ELSE
        SELECT * INTO v_s FROM trade_order_f3(p_acct_id, v_a.cust_id, v_a.cust_tier,
                                              p_is_lifo, p_issue, v_a.tax_status, p_trade_qty,
                                              p_trade_type_id, p_type_is_margin, p_co_name,
                                              p_requested_price, p_symbol);
        trade_id := trade_order_f4(p_acct_id, v_a.broker_id, v_s.charge_amount,
                                   round(v_s.comm_rate / 100 * p_trade_qty
                                         * v_s.requested_price, 2),
                                   p_exec_f_name || ' ' || p_exec_l_name, NOT p_type_is_margin,
                                   p_is_lifo, v_s.requested_price, v_s.status_id, v_s.symbol,
                                   p_trade_qty, p_trade_type_id, v_s.type_is_market);
    END IF;
    status_id := v_s.status_id;
    symbol := v_s.symbol;
    bid_price := v_s.requested_price;
    is_market := v_s.type_is_market;
END
$$;

-- ---------------------------------------------------------------------------------------
-- Trade-Result frame 1: the submitted trade, its type, and the account's holding of the
-- security (hs_qty, 0 without a holding_summary row).
CREATE OR REPLACE FUNCTION trade_result_f1(p_trade_id bigint,
                                           OUT acct_id bigint, OUT charge numeric,
                                           OUT hs_qty int, OUT is_lifo boolean,
                                           OUT symbol text, OUT trade_is_cash boolean,
                                           OUT trade_qty int, OUT type_id text,
                                           OUT type_is_market boolean,
                                           OUT type_is_sell boolean, OUT type_name text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_status text;
BEGIN
    SELECT t.t_ca_id, t.t_chrg, t.t_lifo, t.t_s_symb, t.t_is_cash, t.t_qty, t.t_tt_id,
           tt.tt_is_mrkt, tt.tt_is_sell, tt.tt_name, t.t_st_id
      INTO acct_id, charge, is_lifo, symbol, trade_is_cash, trade_qty, type_id,
           type_is_market, type_is_sell, type_name, v_status
      FROM trade t JOIN trade_type tt ON tt.tt_id = t.t_tt_id
     WHERE t.t_id = p_trade_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'trade % does not exist', p_trade_id;
    END IF;
    IF v_status <> 'SBMT' THEN
        RAISE EXCEPTION 'trade % is %, not submitted', p_trade_id, v_status;
    END IF;
    SELECT h.hs_qty INTO hs_qty FROM holding_summary h
     WHERE h.hs_ca_id = acct_id AND h.hs_s_symb = symbol;
    hs_qty := coalesce(hs_qty, 0);
END
$$;

-- Trade-Result frame 2: the account's holdings of the security after the trade. The
-- summary is inserted, updated, or deleted when it comes to 0. A sale takes from the long
-- lots and a purchase covers the short ones, newest first (p_is_lifo) or oldest first: a
-- lot taken whole is deleted, the last one taken in part is updated, each logged in
-- holding_history (before and after quantities); what is left of the trade opens a lot of
-- its own (h_t_id = the trade; short, negative, for a sale beyond the holding). buy_value
-- and sell_value: what the lots taken cost and what they fetch (a purchase covering a short
-- position buys at the trade's price what was sold at the lots' prices).
CREATE OR REPLACE FUNCTION trade_result_f2(p_acct_id bigint, p_hs_qty int,
                                           p_is_lifo boolean, p_symbol text,
                                           p_trade_id bigint, p_trade_price numeric,
                                           p_trade_qty int, p_type_is_sell boolean,
                                           OUT broker_id bigint, OUT cust_id bigint,
                                           OUT tax_status int, OUT buy_value numeric,
                                           OUT sell_value numeric, OUT trade_dts timestamp)
LANGUAGE plpgsql AS $$
DECLARE
    v_dir int := CASE WHEN p_type_is_sell THEN -1 ELSE 1 END;
    v_new_qty int := p_hs_qty + v_dir * p_trade_qty;
    v_needed int := p_trade_qty;
    v_take int;
    v_lots numeric := 0;
    v_here numeric := 0;
    v_h record;
BEGIN
    trade_dts := localtimestamp;
    SELECT a.ca_b_id, a.ca_c_id, a.ca_tax_st INTO broker_id, cust_id, tax_status
      FROM customer_account a WHERE a.ca_id = p_acct_id;
    IF p_hs_qty = 0 THEN
        INSERT INTO holding_summary (hs_ca_id, hs_s_symb, hs_qty)
        VALUES (p_acct_id, p_symbol, v_new_qty);
    ELSIF v_new_qty = 0 THEN
        DELETE FROM holding_summary WHERE hs_ca_id = p_acct_id AND hs_s_symb = p_symbol;
    ELSE
        UPDATE holding_summary SET hs_qty = v_new_qty
         WHERE hs_ca_id = p_acct_id AND hs_s_symb = p_symbol;
    END IF;
    IF p_hs_qty * v_dir < 0 THEN
        FOR v_h IN SELECT h.h_t_id, h.h_qty, h.h_price FROM holding h
                    WHERE h.h_ca_id = p_acct_id AND h.h_s_symb = p_symbol
                    ORDER BY CASE WHEN p_is_lifo THEN h.h_dts END DESC,
                             CASE WHEN p_is_lifo THEN h.h_t_id END DESC,
                             h.h_dts, h.h_t_id
                    FOR UPDATE LOOP
            EXIT WHEN v_needed = 0;
            v_take := least(abs(v_h.h_qty), v_needed);
            INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
            VALUES (v_h.h_t_id, p_trade_id, v_h.h_qty, v_h.h_qty + v_dir * v_take);
            IF v_take = abs(v_h.h_qty) THEN
                DELETE FROM holding WHERE h_t_id = v_h.h_t_id;
            ELSE
                UPDATE holding SET h_qty = h_qty + v_dir * v_take WHERE h_t_id = v_h.h_t_id;
            END IF;
            v_lots := v_lots + v_take * v_h.h_price;
            v_here := v_here + v_take * p_trade_price;
            v_needed := v_needed - v_take;
        END LOOP;
    END IF;
    IF v_needed > 0 THEN
        INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty)
        VALUES (p_trade_id, p_trade_id, 0, v_dir * v_needed);
        INSERT INTO holding (h_t_id, h_ca_id, h_s_symb, h_dts, h_price, h_qty)
        VALUES (p_trade_id, p_acct_id, p_symbol, trade_dts, p_trade_price, v_dir * v_needed);
    END IF;
    buy_value := CASE WHEN p_type_is_sell THEN v_lots ELSE v_here END;
    sell_value := CASE WHEN p_type_is_sell THEN v_here ELSE v_lots END;
END
$$;

-- Trade-Result frame 3 (a gain, tax status 1 or 2): the tax on the gain at the sum of the
-- customer's tax rates, stored in t_tax; returns it.
CREATE OR REPLACE FUNCTION trade_result_f3(p_buy_value numeric, p_cust_id bigint,
                                           p_sell_value numeric, p_trade_id bigint)
RETURNS numeric
LANGUAGE plpgsql AS $$
DECLARE
    v_tax numeric;
BEGIN
    SELECT round((p_sell_value - p_buy_value) * coalesce(sum(tx.tx_rate), 0), 2) INTO v_tax
      FROM customer_taxrate cx JOIN taxrate tx ON tx.tx_id = cx.cx_tx_id
     WHERE cx.cx_c_id = p_cust_id;
    UPDATE trade SET t_tax = v_tax WHERE t_id = p_trade_id;
    RETURN v_tax;
END
$$;

-- Trade-Result frame 4 (read-only): the commission rate of the customer's tier, the trade
-- type, the security's exchange and the quantity; the security's name.
CREATE OR REPLACE FUNCTION trade_result_f4(p_cust_id bigint, p_symbol text,
                                           p_trade_qty int, p_type_id text,
                                           OUT comm_rate numeric, OUT sec_name text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_ex_id text;
    v_tier int;
BEGIN
    SELECT s.s_ex_id, s.s_name INTO v_ex_id, sec_name FROM security s
     WHERE s.s_symb = p_symbol;
    SELECT c.c_tier INTO v_tier FROM customer c WHERE c.c_id = p_cust_id;
    SELECT cr.cr_rate INTO comm_rate FROM commission_rate cr
     WHERE cr.cr_c_tier = v_tier AND cr.cr_tt_id = p_type_id AND cr.cr_ex_id = v_ex_id
       AND p_trade_qty BETWEEN cr.cr_from_qty AND cr.cr_to_qty;
    IF comm_rate IS NULL THEN
        RAISE EXCEPTION 'no commission rate for tier %, type %, exchange %, quantity %',
            v_tier, p_type_id, v_ex_id, p_trade_qty;
    END IF;
END
$$;

-- Trade-Result frame 5: the trade completed (CMPT, its price, commission and time) with its
-- history row; the broker's trade count and commission total. The broker table is small (10
-- rows a load unit), so the planner would update it by a sequential scan, and a sequential
-- scan at SERIALIZABLE takes a predicate lock on the whole relation: every pair of
-- concurrent Trade-Results would then conflict through it and one of them fail (about 40% of
-- them with two actors, measured). Without sequential scans the update reads the broker's
-- row through its key and locks that row alone.
CREATE OR REPLACE FUNCTION trade_result_f5(p_broker_id bigint, p_comm_amount numeric,
                                           p_trade_dts timestamp, p_trade_id bigint,
                                           p_trade_price numeric)
RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
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
$$;

-- Trade-Result frame 6: the settlement (due p_due_date); a cash trade also moves the
-- account's balance by the settled amount, recorded as a cash transaction named as the
-- build names them ("Market-Buy 200 shares of ABC"). Returns the account's balance.
CREATE OR REPLACE FUNCTION trade_result_f6(p_acct_id bigint, p_due_date date,
                                           p_symbol text, p_se_amount numeric,
                                           p_trade_dts timestamp, p_trade_id bigint,
                                           p_trade_is_cash boolean, p_trade_qty int,
                                           p_type_name text)
RETURNS numeric
LANGUAGE plpgsql AS $$
DECLARE
    v_bal numeric;
BEGIN
    INSERT INTO settlement (se_t_id, se_cash_type, se_cash_due_date, se_amt)
    VALUES (p_trade_id, CASE WHEN p_trade_is_cash THEN 'Cash Account' ELSE 'Margin' END,
            p_due_date, p_se_amount);
    IF p_trade_is_cash THEN
        UPDATE customer_account SET ca_bal = ca_bal + p_se_amount WHERE ca_id = p_acct_id
        RETURNING ca_bal INTO v_bal;
        INSERT INTO cash_transaction (ct_t_id, ct_dts, ct_amt, ct_name)
        VALUES (p_trade_id, p_trade_dts, p_se_amount,
                p_type_name || ' ' || p_trade_qty || ' shares of ' || p_symbol);
    ELSE
        SELECT a.ca_bal INTO v_bal FROM customer_account a WHERE a.ca_id = p_acct_id;
    END IF;
    RETURN v_bal;
END
$$;

-- Trade-Result: frames 1 to 6 for a submitted trade completed at p_trade_price. The
-- commission is qty x price x rate / 100 rounded to the cent; the tax (frame 3) is the gain
-- (sell_value - buy_value) times the customer's two rates, for tax status 1 or 2 and a gain;
-- the settled amount is -(qty x price + charge + commission) for a purchase and
-- qty x price - (charge + commission) for a sale, less the tax for tax status 1; it is due
-- 2 days after the trade. Returns the account, its balance, and these amounts.
CREATE OR REPLACE FUNCTION trade_result(p_trade_id bigint, p_trade_price numeric,
                                        OUT acct_id bigint, OUT acct_bal numeric,
                                        OUT comm_amount numeric, OUT tax_amount numeric,
                                        OUT se_amount numeric)
LANGUAGE plpgsql AS $$
DECLARE
    v_t record;
    v_h record;
    v_c record;
    v_value numeric;
BEGIN
    SELECT * INTO v_t FROM trade_result_f1(p_trade_id);
    acct_id := v_t.acct_id;
    SELECT * INTO v_h FROM trade_result_f2(v_t.acct_id, v_t.hs_qty, v_t.is_lifo, v_t.symbol,
                                           p_trade_id, p_trade_price, v_t.trade_qty,
                                           v_t.type_is_sell);
    tax_amount := 0;
    IF v_h.tax_status IN (1, 2) AND v_h.sell_value > v_h.buy_value THEN
        tax_amount := trade_result_f3(v_h.buy_value, v_h.cust_id, v_h.sell_value, p_trade_id);
    END IF;
    SELECT * INTO v_c FROM trade_result_f4(v_h.cust_id, v_t.symbol, v_t.trade_qty,
                                           v_t.type_id);
    v_value := v_t.trade_qty * p_trade_price;
    comm_amount := round(v_value * v_c.comm_rate / 100, 2);
    PERFORM trade_result_f5(v_h.broker_id, comm_amount, v_h.trade_dts, p_trade_id,
                            p_trade_price);
    se_amount := CASE WHEN v_t.type_is_sell THEN v_value - (v_t.charge + comm_amount)
                      ELSE -(v_value + v_t.charge + comm_amount) END;
    IF v_h.tax_status = 1 THEN
        se_amount := se_amount - tax_amount;
    END IF;
    acct_bal := trade_result_f6(v_t.acct_id, v_h.trade_dts::date + 2, v_t.symbol, se_amount,
                                v_h.trade_dts, p_trade_id, v_t.trade_is_cash, v_t.trade_qty,
                                v_t.type_name);
END
$$;

-- ---------------------------------------------------------------------------------------
-- Data-Maintenance frame 1: one edit of table p_table_name (the client takes the 12 tables
-- in turn, one a minute), each changing its rows whenever it runs: account_permission (the
-- account's permissions' acl, 1111 <-> 0011), address (the customer's, or the company's
-- when p_c_id is 0: line 1's first letter's case), company (its S&P rating, ABA <-> AAA),
-- customer (the second email's domain, example.com <-> example.net), customer_taxrate (the
-- customer's divisional rate, Dk <-> D(k xor 1)), daily_market (the security's volume on
-- the days p_day_of_month of every month, + p_vol_incr), exchange (every exchange's
-- description's first letter's case), financial (the company's quarters' start dates, a day
-- on or back), news_item (the company's news' times, a day on or back), security (its
-- exchange date, a day on or back), taxrate (the rate's name's first letter's case),
-- watch_item (the customer's watch list's first symbol swapped for the first one it lacks).
-- Returns the rows changed.
CREATE OR REPLACE FUNCTION data_maintenance_f1(p_table_name text, p_acct_id bigint,
                                               p_c_id bigint, p_co_id bigint,
                                               p_day_of_month int, p_symbol text,
                                               p_tx_id text, p_vol_incr int)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_rows int;
    v_wl_id bigint;
    v_old text;
    v_new text;
BEGIN
    CASE p_table_name
    WHEN 'account_permission' THEN
        UPDATE account_permission
           SET ap_acl = CASE WHEN ap_acl = '1111' THEN '0011' ELSE '1111' END
         WHERE ap_ca_id = p_acct_id;
    WHEN 'address' THEN
        UPDATE address SET ad_line1 = brokerage_swap_case(ad_line1)
         WHERE ad_id = CASE WHEN p_c_id <> 0
                            THEN (SELECT c.c_ad_id FROM customer c WHERE c.c_id = p_c_id)
                            ELSE (SELECT co.co_ad_id FROM company co
                                   WHERE co.co_id = p_co_id) END;
    WHEN 'company' THEN
        UPDATE company SET co_sp_rate = CASE WHEN co_sp_rate = 'ABA' THEN 'AAA' ELSE 'ABA' END
         WHERE co_id = p_co_id;
    WHEN 'customer' THEN
        UPDATE customer
           SET c_email_2 = split_part(c_email_2, '@', 1) || '@'
                           || CASE WHEN split_part(c_email_2, '@', 2) = 'example.com'
                                   THEN 'example.net' ELSE 'example.com' END
         WHERE c_id = p_c_id;
    WHEN 'customer_taxrate' THEN
        UPDATE customer_taxrate
           SET cx_tx_id = 'D' || lpad((substr(cx_tx_id, 2)::int # 1)::text,
                                      length(cx_tx_id) - 1, '0')
         WHERE cx_c_id = p_c_id AND cx_tx_id LIKE 'D%';
    WHEN 'daily_market' THEN
        UPDATE daily_market SET dm_vol = dm_vol + p_vol_incr
         WHERE dm_s_symb = p_symbol AND extract(day FROM dm_date) = p_day_of_month;
    WHEN 'exchange' THEN
        UPDATE exchange SET ex_desc = brokerage_swap_case(ex_desc);
    WHEN 'financial' THEN
        UPDATE financial SET fi_qtr_start_date = brokerage_toggle_day(fi_qtr_start_date)
         WHERE fi_co_id = p_co_id;
    WHEN 'news_item' THEN
        UPDATE news_item
           SET ni_dts = brokerage_toggle_day(ni_dts::date) + ni_dts::time
         WHERE ni_id IN (SELECT x.nx_ni_id FROM news_xref x WHERE x.nx_co_id = p_co_id);
    WHEN 'security' THEN
        UPDATE security SET s_exch_date = brokerage_toggle_day(s_exch_date)
         WHERE s_symb = p_symbol;
    WHEN 'taxrate' THEN
        UPDATE taxrate SET tx_name = brokerage_swap_case(tx_name) WHERE tx_id = p_tx_id;
    WHEN 'watch_item' THEN
        SELECT w.wl_id INTO v_wl_id FROM watch_list w WHERE w.wl_c_id = p_c_id
         ORDER BY w.wl_id LIMIT 1;
        SELECT min(i.wi_s_symb) INTO v_old FROM watch_item i WHERE i.wi_wl_id = v_wl_id;
        SELECT min(s.s_symb) INTO v_new FROM security s
         WHERE NOT EXISTS (SELECT 1 FROM watch_item i
                            WHERE i.wi_wl_id = v_wl_id AND i.wi_s_symb = s.s_symb);
        UPDATE watch_item SET wi_s_symb = v_new
         WHERE wi_wl_id = v_wl_id AND wi_s_symb = v_old AND v_new IS NOT NULL;
    ELSE
        RAISE EXCEPTION 'data maintenance has no table %', p_table_name;
    END CASE;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    RETURN v_rows;
END
$$;

-- Data-Maintenance: frame 1's count of rows changed.
CREATE OR REPLACE FUNCTION data_maintenance(p_table_name text, p_acct_id bigint,
                                            p_c_id bigint, p_co_id bigint,
                                            p_day_of_month int, p_symbol text,
                                            p_tx_id text, p_vol_incr int)
RETURNS int
LANGUAGE sql AS $$
    SELECT data_maintenance_f1(p_table_name, p_acct_id, p_c_id, p_co_id, p_day_of_month,
                               p_symbol, p_tx_id, p_vol_incr)
$$;

-- ---------------------------------------------------------------------------------------
-- Trade-Cleanup frame 1, before a run: each pending limit order (trade_request) gets an SBMT
-- then a CNCL history row, its trade becomes CNCL and its request goes; each trade still
-- SBMT with an id above p_start_trade_id (those of an earlier run that never completed)
-- becomes CNCL with its history row. Returns the trades canceled.
CREATE OR REPLACE FUNCTION trade_cleanup_f1(p_start_trade_id bigint)
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamp := localtimestamp;
    v_pending int;
    v_submitted int;
BEGIN
    WITH gone AS (
        DELETE FROM trade_request RETURNING tr_t_id
    ), logged AS (
        INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
        SELECT g.tr_t_id, v_now, st.id FROM gone g, (VALUES ('SBMT'), ('CNCL')) st(id)
    )
    UPDATE trade SET t_st_id = 'CNCL', t_dts = v_now FROM gone WHERE t_id = gone.tr_t_id;
    GET DIAGNOSTICS v_pending = ROW_COUNT;
    WITH canceled AS (
        UPDATE trade SET t_st_id = 'CNCL', t_dts = v_now
         WHERE t_id > p_start_trade_id AND t_st_id = 'SBMT'
        RETURNING t_id
    )
    INSERT INTO trade_history (th_t_id, th_dts, th_st_id)
    SELECT c.t_id, v_now, 'CNCL' FROM canceled c;
    GET DIAGNOSTICS v_submitted = ROW_COUNT;
    RETURN v_pending + v_submitted;
END
$$;

-- Trade-Cleanup: frame 1's count.
CREATE OR REPLACE FUNCTION trade_cleanup(p_start_trade_id bigint)
RETURNS int
LANGUAGE sql AS $$
    SELECT trade_cleanup_f1(p_start_trade_id)
$$;
