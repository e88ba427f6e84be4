-- The transaction functions as they were before New-Order's lines were drawn by the client
-- and the functions were made set-based: the baseline of bench/server_functions.py, which
-- installs them in their own schema. Not used by oltplab itself.
-- Arguments are plain scalars; New-Order draws its order lines here with the server's
-- random(). Everything is correct at READ COMMITTED: rows are locked by the UPDATE or DELETE
-- that changes them (district, warehouse, customer, stock, the oldest NEW_ORDER row), and the
-- client retries serialization failures (40001) and deadlocks (40P01).

-- C_LAST for a number 0..999 [4.3.2.3].
CREATE OR REPLACE FUNCTION tpcc_last_name(p_num int) RETURNS varchar
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[p_num / 100 + 1]
        || ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[(p_num / 10) % 10 + 1]
        || ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[p_num % 10 + 1]
$$;

-- New-Order's work [2.4.2]. Raises no_data_found, with the would-be O_ID as DETAIL, when an
-- item is not found: the 1% rollback case, which neword() turns into -O_ID.
CREATE OR REPLACE FUNCTION tpcc_neword_apply(p_w_id int, p_w_max int, p_d_id int, p_c_id int,
                                             p_ol_cnt int, p_rbk int, p_c_ol_i_id int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_items int[] := '{}';
    v_supply int[] := '{}';
    v_qty int[] := '{}';
    v_all_local int := 1;
    v_item int;
    v_sw int;
    v_o_id int;
    v_d_tax numeric;
    v_w_tax numeric;
    v_c record;
    v_i record;
    v_s record;
    v_line record;
    v_total numeric := 0;
    v_now timestamp := localtimestamp;
BEGIN
    -- The order lines [2.4.1.5]: OL_I_ID = NURand(8191, 1, 100000); the supply warehouse is
    -- remote for 1% of the lines, uniform among the other warehouses; quantity 1..10. With
    -- rbk = 1 the last line gets an unused item id.
    FOR n IN 1..p_ol_cnt LOOP
        IF p_rbk = 1 AND n = p_ol_cnt THEN
            v_item := 100001;
        ELSE
            v_item := (((floor(random() * 8192)::int | (1 + floor(random() * 100000)::int))
                        + p_c_ol_i_id) % 100000) + 1;
        END IF;
        IF p_w_max > 1 AND random() < 0.01 THEN
            v_sw := 1 + floor(random() * (p_w_max - 1))::int;
            IF v_sw >= p_w_id THEN
                v_sw := v_sw + 1;
            END IF;
            v_all_local := 0;
        ELSE
            v_sw := p_w_id;
        END IF;
        v_items := v_items || v_item;
        v_supply := v_supply || v_sw;
        v_qty := v_qty || (1 + floor(random() * 10)::int);
    END LOOP;

    -- O_ID is the district's next order id; the UPDATE locks the district row.
    UPDATE district SET d_next_o_id = d_next_o_id + 1
     WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_next_o_id - 1, d_tax INTO v_o_id, v_d_tax;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'district % of warehouse % does not exist', p_d_id, p_w_id;
    END IF;
    SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
    SELECT c_discount, c_last, c_credit INTO v_c
      FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt,
                        o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, v_now, NULL, p_ol_cnt, v_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);

    -- Stock rows are locked in (warehouse, item) order, so concurrent New-Orders do not
    -- deadlock; the unused item comes last, after all valid lines [2.4.2.3].
    FOR v_line IN
        SELECT u.i_id, u.sw, u.q, u.n::int AS n
          FROM unnest(v_items, v_supply, v_qty) WITH ORDINALITY AS u(i_id, sw, q, n)
         ORDER BY u.i_id > 100000, u.sw, u.i_id, u.n
    LOOP
        SELECT i_price, i_name, i_data INTO v_i FROM item WHERE i_id = v_line.i_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'item number % is not valid', v_line.i_id
                USING ERRCODE = 'no_data_found', DETAIL = v_o_id::text;
        END IF;
        -- Stock rule [2.4.2.2]: take the quantity; add 91 when fewer than 10 would remain.
        UPDATE stock
           SET s_quantity = CASE WHEN s_quantity - v_line.q >= 10 THEN s_quantity - v_line.q
                                 ELSE s_quantity - v_line.q + 91 END,
               s_ytd = s_ytd + v_line.q,
               s_order_cnt = s_order_cnt + 1,
               s_remote_cnt = s_remote_cnt + CASE WHEN v_line.sw = p_w_id THEN 0 ELSE 1 END
         WHERE s_w_id = v_line.sw AND s_i_id = v_line.i_id
        RETURNING s_data,
                  CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                              WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                              WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                              ELSE s_dist_10 END AS dist
          INTO v_s;
        -- OL_AMOUNT = OL_QUANTITY * I_PRICE, without tax or discount [2.4.2.2].
        INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                                ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        VALUES (v_o_id, p_d_id, p_w_id, v_line.n, v_line.i_id, v_line.sw,
                NULL, v_line.q, v_line.q * v_i.i_price, v_s.dist);
        v_total := v_total + v_line.q * v_i.i_price;
    END LOOP;
    v_total := v_total * (1 - v_c.c_discount) * (1 + v_w_tax + v_d_tax);
    RETURN v_o_id;
END
$$;

-- New-Order [2.4]: returns O_ID, or -O_ID when the order was rolled back because its last item
-- is unused (rbk = 1). The rollback undoes the district increment and every insert, and the
-- call itself succeeds. Only that case pays for the exception block (a subtransaction).
CREATE OR REPLACE FUNCTION neword(p_w_id int, p_w_max int, p_d_id int, p_c_id int,
                                  p_ol_cnt int, p_rbk int, p_c_ol_i_id int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_detail text;
BEGIN
    IF p_rbk <> 1 THEN
        RETURN tpcc_neword_apply(p_w_id, p_w_max, p_d_id, p_c_id, p_ol_cnt, p_rbk, p_c_ol_i_id);
    END IF;
    BEGIN
        RETURN tpcc_neword_apply(p_w_id, p_w_max, p_d_id, p_c_id, p_ol_cnt, p_rbk, p_c_ol_i_id);
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
    v_line record;
    v_lines int := 0;
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
    FOR v_line IN
        SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
          FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o.o_id
    LOOP
        v_lines := v_lines + 1;
    END LOOP;
    RETURN v_o.o_id;
END
$$;

-- Delivery [2.7]: delivers the oldest undelivered order of each of the 10 districts, in one
-- transaction; returns the number of districts delivered (10 minus the skipped ones, which
-- had no NEW_ORDER row [2.7.4.2]). When a concurrent Delivery deleted the oldest row first,
-- the DELETE finds nothing and the district is looked at again rather than skipped.
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
