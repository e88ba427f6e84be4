-- The five transactions as PL/pgSQL functions (procedures mode) [TPC-C 2.4-2.8].
-- The client draws every input (docs/design.md), New-Order's order lines included, and passes
-- them as arguments: scalars, and New-Order's lines as three int[] of equal length. Everything
-- is correct at READ COMMITTED: rows are locked by the UPDATE or DELETE that changes them
-- (district, warehouse, customer, stock, the oldest NEW_ORDER row), and the client retries
-- serialization failures (40001) and deadlocks (40P01).

-- C_LAST for a number 0..999 [4.3.2.3].
CREATE OR REPLACE FUNCTION tpcc_last_name(p_num int) RETURNS varchar
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[p_num / 100 + 1]
        || ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[(p_num / 10) % 10 + 1]
        || ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[p_num % 10 + 1]
$$;

-- New-Order's work [2.4.2]: line n of the order is (p_items[n], p_supply[n], p_qty[n]).
-- Raises no_data_found, with the would-be O_ID as DETAIL, when an item is not found: the 1%
-- rollback case, which neword() turns into -O_ID.
CREATE OR REPLACE FUNCTION tpcc_neword_apply(p_w_id int, p_d_id int, p_c_id int,
                                             p_items int[], p_supply int[], p_qty int[])
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_ol_cnt int := cardinality(p_items);
    v_lines int;
    v_o_id int;
    v_d_tax numeric;
    v_w_tax numeric;
    v_c_discount numeric;
    v_c_last varchar;
    v_c_credit char(2);
BEGIN
    -- O_ID is the district's next order id (the UPDATE locks the district row), read with the
    -- taxes and the customer's discount, last name and credit in one statement.
    WITH d AS (
        UPDATE district SET d_next_o_id = d_next_o_id + 1
         WHERE d_w_id = p_w_id AND d_id = p_d_id
        RETURNING d_next_o_id - 1 AS o_id, d_tax)
    SELECT d.o_id, d.d_tax, w.w_tax, c.c_discount, c.c_last, c.c_credit
      INTO v_o_id, v_d_tax, v_w_tax, v_c_discount, v_c_last, v_c_credit
      FROM d, warehouse w, customer c
     WHERE w.w_id = p_w_id AND c.c_w_id = p_w_id AND c.c_d_id = p_d_id AND c.c_id = p_c_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'customer % of district % of warehouse % does not exist',
            p_c_id, p_d_id, p_w_id;
    END IF;
    WITH o AS (
        INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt,
                            o_all_local)
        VALUES (v_o_id, p_d_id, p_w_id, p_c_id, localtimestamp, NULL, v_ol_cnt,
                CASE WHEN p_w_id = ALL (p_supply) THEN 1 ELSE 0 END)
        RETURNING o_id)
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) SELECT o_id, p_d_id, p_w_id FROM o;

    -- Every valid line in one statement [2.4.2.2]: the items (an unused item drops out of the
    -- join), one UPDATE of each stock row of the supply warehouse, one ORDER_LINE row per line
    -- with OL_AMOUNT = OL_QUANTITY * I_PRICE (no tax or discount). The stock rows are updated,
    -- and so locked, in (supply warehouse, item) order along the sorted outer side of the
    -- nested loop, so that concurrent New-Orders do not deadlock. Stock rule: take the
    -- quantity, add 91 when fewer than 10 would remain. Applied line after line it keeps
    -- S_QUANTITY in 10..100, where it equals 10 + ((S_QUANTITY - 10 - quantity) mod 91); an
    -- item ordered on several lines is updated once with their total quantity.
    WITH line AS MATERIALIZED (
        SELECT u.n, u.i_id, u.sw, u.q, i.i_price, i.i_name, i.i_data
          FROM unnest(p_items, p_supply, p_qty) WITH ORDINALITY AS u(i_id, sw, q, n)
          JOIN item i ON i.i_id = u.i_id
    ), taken AS (
        UPDATE stock
           SET s_quantity = 10 + ((s_quantity - 10 - o.q) % 91 + 91) % 91,
               s_ytd = s_ytd + o.q,
               s_order_cnt = s_order_cnt + o.lines,
               s_remote_cnt = s_remote_cnt + o.remote
          FROM (SELECT sw, i_id, sum(q) AS q, count(*) AS lines,
                       count(*) FILTER (WHERE sw <> p_w_id) AS remote
                  FROM line GROUP BY sw, i_id ORDER BY sw, i_id) o
         WHERE s_w_id = o.sw AND s_i_id = o.i_id
        RETURNING s_w_id, s_i_id, s_data,
                  CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                              WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                              WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                              ELSE s_dist_10 END AS dist
    )
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
    SELECT v_o_id, p_d_id, p_w_id, l.n, l.i_id, l.sw, NULL, l.q, l.q * l.i_price, t.dist
      FROM line l JOIN taken t ON t.s_w_id = l.sw AND t.s_i_id = l.i_id;
    GET DIAGNOSTICS v_lines = ROW_COUNT;
    IF v_lines < v_ol_cnt THEN
        RAISE EXCEPTION 'an item number of order % is not valid', v_o_id
            USING ERRCODE = 'no_data_found', DETAIL = v_o_id::text;
    END IF;
    RETURN v_o_id;
END
$$;

-- New-Order [2.4]: returns O_ID, or -O_ID when the order was rolled back because its last item
-- is the unused one (the 1% rule, clause 2.4.1.5: an id outside 1..100000). The rollback
-- undoes the district increment and every insert, and the call itself succeeds. Only that
-- case pays for the exception block (a subtransaction).
CREATE OR REPLACE FUNCTION neword(p_w_id int, p_d_id int, p_c_id int,
                                  p_items int[], p_supply int[], p_qty int[])
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_detail text;
BEGIN
    IF p_items[cardinality(p_items)] BETWEEN 1 AND 100000 THEN
        RETURN tpcc_neword_apply(p_w_id, p_d_id, p_c_id, p_items, p_supply, p_qty);
    END IF;
    BEGIN
        RETURN tpcc_neword_apply(p_w_id, p_d_id, p_c_id, p_items, p_supply, p_qty);
    EXCEPTION WHEN no_data_found THEN
        GET STACKED DIAGNOSTICS v_detail = PG_EXCEPTION_DETAIL;
        RETURN -(v_detail::int);
    END;
END
$$;

-- Payment [2.5]: returns the paying customer's C_ID. p_c_last_num >= 0 selects the customer by
-- the last name tpcc_last_name(p_c_last_num): of the n matches sorted by C_FIRST, the one at
-- position ceil(n/2) [2.5.2.2]; otherwise by p_c_id.
CREATE OR REPLACE FUNCTION payment(p_w_id int, p_d_id int, p_c_w_id int, p_c_d_id int,
                                   p_c_id int, p_c_last_num int, p_h_amount numeric)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_c_id int := p_c_id;
    v_w record;
    v_d record;
    v_c record;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + p_h_amount WHERE w_id = p_w_id
    RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_w;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'warehouse % does not exist', p_w_id;
    END IF;
    UPDATE district SET d_ytd = d_ytd + p_h_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_d;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'district % of warehouse % does not exist', p_d_id, p_w_id;
    END IF;
    IF p_c_last_num >= 0 THEN
        SELECT (array_agg(c_id ORDER BY c_first, c_id))[(count(*)::int + 1) / 2] INTO v_c_id
          FROM customer
         WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = tpcc_last_name(p_c_last_num);
    END IF;
    -- The UPDATE locks the customer row. BC customers get the payment prepended to C_DATA,
    -- which keeps at most 500 characters [2.5.2.2].
    UPDATE customer
       SET c_balance = c_balance - p_h_amount,
           c_ytd_payment = c_ytd_payment + p_h_amount,
           c_payment_cnt = c_payment_cnt + 1,
           c_data = CASE WHEN c_credit = 'BC'
                         THEN left(v_c_id || ' ' || p_c_d_id || ' ' || p_c_w_id || ' ' || p_d_id
                                   || ' ' || p_w_id || ' ' || p_h_amount || ' | ' || c_data, 500)
                         ELSE c_data END
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id
    RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
              c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance INTO v_c;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'customer % of district % of warehouse % does not exist',
            COALESCE(v_c_id::text, 'named ' || tpcc_last_name(p_c_last_num)), p_c_d_id, p_c_w_id;
    END IF;
    -- H_DATA = W_NAME, 4 spaces, D_NAME.
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, localtimestamp, p_h_amount,
            v_w.w_name || '    ' || v_d.d_name);
    RETURN v_c_id;
END
$$;

-- Order-Status [2.6]: returns the O_ID of the customer's last order (0 when there is none).
-- Read-only: the customer, the latest order and its lines.
CREATE OR REPLACE FUNCTION ostat(p_w_id int, p_d_id int, p_c_id int, p_c_last_num int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_c_id int := p_c_id;
    v_c record;
    v_o record;
BEGIN
    IF p_c_last_num >= 0 THEN
        SELECT (array_agg(c_id ORDER BY c_first, c_id))[(count(*)::int + 1) / 2] INTO v_c_id
          FROM customer
         WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = tpcc_last_name(p_c_last_num);
    END IF;
    SELECT c_balance, c_first, c_middle, c_last INTO v_c
      FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'customer % of district % of warehouse % does not exist',
            COALESCE(v_c_id::text, 'named ' || tpcc_last_name(p_c_last_num)), p_d_id, p_w_id;
    END IF;
    SELECT o_id, o_entry_d, o_carrier_id INTO v_o
      FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
     ORDER BY o_id DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    -- The order's lines are read; the terminal would show them.
    PERFORM ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
       FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o.o_id;
    RETURN v_o.o_id;
END
$$;

-- Delivery [2.7]: delivers the oldest undelivered order of each of the 10 districts, in one
-- transaction; returns the number of districts delivered (10 minus the skipped ones, which
-- had no NEW_ORDER row [2.7.4.2]). When a concurrent Delivery deleted the oldest row first
-- (READ COMMITTED re-checks the row after the lock wait and skips it), the DELETE finds nothing
-- and the district is looked at again rather than skipped; every such race means the other
-- Delivery delivered that order, so the loop ends. (One statement for all ten districts
-- measured no cheaper: the work is in the rows, not in the statements.)
CREATE OR REPLACE FUNCTION delivery(p_w_id int, p_o_carrier_id int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_o_id int;
    v_c_id int;
    v_sum numeric;
    v_delivered int := 0;
    v_now timestamp := localtimestamp;
BEGIN
    FOR v_d IN 1..10 LOOP
        LOOP
            SELECT no_o_id INTO v_o_id FROM new_order
             WHERE no_w_id = p_w_id AND no_d_id = v_d ORDER BY no_o_id LIMIT 1;
            EXIT WHEN v_o_id IS NULL;
            DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o_id;
            EXIT WHEN FOUND;
        END LOOP;
        CONTINUE WHEN v_o_id IS NULL;
        UPDATE orders SET o_carrier_id = p_o_carrier_id
         WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id
        RETURNING o_c_id INTO v_c_id;
        WITH delivered AS (
            UPDATE order_line SET ol_delivery_d = v_now
             WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id
            RETURNING ol_amount)
        SELECT COALESCE(sum(ol_amount), 0) INTO v_sum FROM delivered;
        UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
         WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c_id;
        v_delivered := v_delivered + 1;
    END LOOP;
    RETURN v_delivered;
END
$$;

-- Stock-Level [2.8]: distinct items of the district's last 20 orders whose stock in the home
-- warehouse is below the threshold.
CREATE OR REPLACE FUNCTION slev(p_w_id int, p_d_id int, p_threshold int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_next int;
    v_count int;
BEGIN
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT count(DISTINCT s_i_id) INTO v_count
      FROM order_line
      JOIN stock ON s_w_id = p_w_id AND s_i_id = ol_i_id
     WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id
       AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
       AND s_quantity < p_threshold;
    RETURN v_count;
END
$$;
