-- The five transactions as MariaDB stored procedures (procedures mode) [TPC-C 2.4-2.8].
-- Each runs one transaction from START TRANSACTION to its COMMIT (or ROLLBACK), so that
-- Com_commit + Com_rollback counts one per transaction (HammerDB's TPM source). The client
-- draws every input and passes it in; results come back in OUT parameters
-- (CALL NEWORD(..., @o_id); SELECT @o_id). Any error rolls the transaction back and is raised
-- again with its code: the driver retries deadlocks (1213) and lock wait timeouts (1205).
-- Isolation is InnoDB's REPEATABLE READ: rows that are changed are first read FOR UPDATE
-- (a locking read sees the latest committed version). The statements of this file are
-- separated by lines holding only '//'.

-- C_LAST for a number 0..999 [4.3.2.3].
CREATE FUNCTION TPCC_LAST_NAME(p_num INT) RETURNS VARCHAR(16)
DETERMINISTIC NO SQL
RETURN CONCAT(
    ELT(p_num DIV 100 + 1, 'BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY',
        'ATION', 'EING'),
    ELT((p_num DIV 10) MOD 10 + 1, 'BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI',
        'CALLY', 'ATION', 'EING'),
    ELT(p_num MOD 10 + 1, 'BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY',
        'ATION', 'EING'))
//

-- New-Order [2.4]: p_lines is a JSON array of the order's lines, [[i_id, supply_w_id,
-- quantity], ...]. Sets p_o_id to O_ID, or to -O_ID when the order was rolled back because an
-- item is unused (the 1% rule, clause 2.4.1.5: an id outside 1..100000). D_NEXT_O_ID is read
-- FOR UPDATE, then advanced (MariaDB has no UPDATE ... RETURNING). The lines are applied in
-- (supply warehouse, item) order, so that concurrent New-Orders lock stock rows in one order
-- and do not deadlock; an unused item drops out of the join with ITEM, and fewer lines than
-- ordered means rollback. Stock rule [2.4.2.2]: take the quantity, add 91 when fewer than 10
-- would remain. OL_AMOUNT = OL_QUANTITY * I_PRICE.
CREATE PROCEDURE NEWORD(IN p_w_id INT, IN p_d_id INT, IN p_c_id INT, IN p_lines TEXT,
                        OUT p_o_id INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_done, v_lines, v_remote INT DEFAULT 0;
    DECLARE v_o_id, v_ol_cnt, v_n, v_i_id, v_sw, v_q, v_s_qty INT;
    DECLARE v_d_tax, v_w_tax, v_c_discount DECIMAL(4,4);
    DECLARE v_price DECIMAL(5,2);
    DECLARE v_c_last VARCHAR(16);
    DECLARE v_c_credit CHAR(2);
    DECLARE v_dist CHAR(24);
    DECLARE c_lines CURSOR FOR
        SELECT l.n, l.i_id, l.sw, l.q, i.i_price
          FROM JSON_TABLE(p_lines, '$[*]' COLUMNS (n FOR ORDINALITY, i_id INT PATH '$[0]',
                                                   sw INT PATH '$[1]', q INT PATH '$[2]')) AS l
          JOIN item i ON i.i_id = l.i_id
         ORDER BY l.sw, l.i_id, l.n;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    SET v_ol_cnt = JSON_LENGTH(p_lines);
    SELECT COALESCE(SUM(l.sw <> p_w_id), 0) INTO v_remote
      FROM JSON_TABLE(p_lines, '$[*]' COLUMNS (sw INT PATH '$[1]')) AS l;
    START TRANSACTION;
    SELECT d_next_o_id, d_tax INTO v_o_id, v_d_tax
      FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
    SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit
      FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
    IF v_done THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'NEWORD: no such district or customer';
    END IF;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt,
                        o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, NOW(), NULL, v_ol_cnt, v_remote = 0);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
    OPEN c_lines;
    line_loop: LOOP
        FETCH c_lines INTO v_n, v_i_id, v_sw, v_q, v_price;
        IF v_done THEN
            LEAVE line_loop;
        END IF;
        SELECT s_quantity,
               CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                           WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                           WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                           ELSE s_dist_10 END
          INTO v_s_qty, v_dist
          FROM stock WHERE s_w_id = v_sw AND s_i_id = v_i_id FOR UPDATE;
        UPDATE stock
           SET s_quantity = IF(v_s_qty >= v_q + 10, v_s_qty - v_q, v_s_qty - v_q + 91),
               s_ytd = s_ytd + v_q,
               s_order_cnt = s_order_cnt + 1,
               s_remote_cnt = s_remote_cnt + (v_sw <> p_w_id)
         WHERE s_w_id = v_sw AND s_i_id = v_i_id;
        INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                                ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        VALUES (v_o_id, p_d_id, p_w_id, v_n, v_i_id, v_sw, NULL, v_q, v_q * v_price, v_dist);
        SET v_lines = v_lines + 1;
    END LOOP;
    CLOSE c_lines;
    IF v_lines < v_ol_cnt THEN
        ROLLBACK;
        SET p_o_id = -v_o_id;
    ELSE
        COMMIT;
        SET p_o_id = v_o_id;
    END IF;
END
//

-- Payment [2.5]: sets p_c_id_out to the paying customer's C_ID. p_c_last_num >= 0 selects the
-- customer by the last name TPCC_LAST_NAME(p_c_last_num): of the n matches sorted by C_FIRST,
-- the one at position ceil(n/2) [2.5.2.2]; otherwise by p_c_id. BC customers get the payment
-- prepended to C_DATA, which keeps at most 500 characters. H_DATA = W_NAME, 4 spaces, D_NAME.
CREATE PROCEDURE PAYMENT(IN p_w_id INT, IN p_d_id INT, IN p_c_w_id INT, IN p_c_d_id INT,
                         IN p_c_id INT, IN p_c_last_num INT, IN p_h_amount DECIMAL(6,2),
                         OUT p_c_id_out INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_done, v_count INT DEFAULT 0;
    DECLARE v_c_id, v_offset INT;
    DECLARE v_w_name, v_d_name VARCHAR(10);
    DECLARE v_street_1, v_street_2, v_city VARCHAR(20);
    DECLARE v_state CHAR(2);
    DECLARE v_zip CHAR(9);
    DECLARE v_last, v_first VARCHAR(16);
    DECLARE v_credit CHAR(2);
    DECLARE v_balance DECIMAL(12,2);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    SET v_c_id = p_c_id;
    START TRANSACTION;
    UPDATE warehouse SET w_ytd = w_ytd + p_h_amount WHERE w_id = p_w_id;
    SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
      INTO v_w_name, v_street_1, v_street_2, v_city, v_state, v_zip
      FROM warehouse WHERE w_id = p_w_id;
    UPDATE district SET d_ytd = d_ytd + p_h_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
      INTO v_d_name, v_street_1, v_street_2, v_city, v_state, v_zip
      FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    IF v_done THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'PAYMENT: no such warehouse or district';
    END IF;
    IF p_c_last_num >= 0 THEN
        SET v_last = TPCC_LAST_NAME(p_c_last_num);
        SELECT COUNT(*) INTO v_count FROM customer
         WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = v_last;
        IF v_count = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'PAYMENT: no customer of that last name';
        END IF;
        SET v_offset = (v_count + 1) DIV 2 - 1;
        SELECT c_id INTO v_c_id FROM customer
         WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = v_last
         ORDER BY c_first, c_id LIMIT v_offset, 1;
    END IF;
    SELECT c_first, c_last, c_credit, c_balance INTO v_first, v_last, v_credit, v_balance
      FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
    IF v_done THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'PAYMENT: no such customer';
    END IF;
    UPDATE customer
       SET c_balance = c_balance - p_h_amount,
           c_ytd_payment = c_ytd_payment + p_h_amount,
           c_payment_cnt = c_payment_cnt + 1,
           c_data = IF(v_credit = 'BC',
                       LEFT(CONCAT_WS(' ', v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id,
                                      p_h_amount, '|', c_data), 500),
                       c_data)
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, NOW(), p_h_amount,
            CONCAT(v_w_name, '    ', v_d_name));
    COMMIT;
    SET p_c_id_out = v_c_id;
END
//

-- Order-Status [2.6]: sets p_o_id to the O_ID of the customer's last order (0 when there is
-- none). Read-only: the customer, the latest order and its lines.
CREATE PROCEDURE OSTAT(IN p_w_id INT, IN p_d_id INT, IN p_c_id INT, IN p_c_last_num INT,
                       OUT p_o_id INT)
READS SQL DATA
BEGIN
    DECLARE v_done, v_count, v_lines INT DEFAULT 0;
    DECLARE v_c_id, v_offset, v_o_id, v_carrier INT;
    DECLARE v_last, v_first VARCHAR(16);
    DECLARE v_middle CHAR(2);
    DECLARE v_balance DECIMAL(12,2);
    DECLARE v_entry, v_delivered DATETIME;
    DECLARE v_amount DECIMAL(12,2);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    SET v_c_id = p_c_id;
    START TRANSACTION READ ONLY;
    IF p_c_last_num >= 0 THEN
        SET v_last = TPCC_LAST_NAME(p_c_last_num);
        SELECT COUNT(*) INTO v_count FROM customer
         WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = v_last;
        IF v_count = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'OSTAT: no customer of that last name';
        END IF;
        SET v_offset = (v_count + 1) DIV 2 - 1;
        SELECT c_id INTO v_c_id FROM customer
         WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = v_last
         ORDER BY c_first, c_id LIMIT v_offset, 1;
    END IF;
    SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
      FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
    IF v_done THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'OSTAT: no such customer';
    END IF;
    SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry, v_carrier
      FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
     ORDER BY o_id DESC LIMIT 1;
    IF v_o_id IS NOT NULL THEN
        -- The order's lines are read; the terminal would show them.
        SELECT COUNT(ol_i_id), SUM(ol_amount), MAX(ol_delivery_d)
          INTO v_lines, v_amount, v_delivered
          FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
    END IF;
    COMMIT;
    SET p_o_id = COALESCE(v_o_id, 0);
END
//

-- Delivery [2.7]: delivers the oldest undelivered order of each of the 10 districts in one
-- transaction; sets p_delivered to the number of districts delivered (10 minus those skipped
-- for having no NEW_ORDER row [2.7.4.2]). The oldest NEW_ORDER row is read FOR UPDATE: a
-- concurrent Delivery that took it first has deleted it when the lock is granted, and the
-- locking read then returns the next one.
CREATE PROCEDURE DELIVERY(IN p_w_id INT, IN p_o_carrier_id INT, OUT p_delivered INT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_done, v_delivered INT DEFAULT 0;
    DECLARE v_d INT DEFAULT 1;
    DECLARE v_o_id, v_c_id INT;
    DECLARE v_sum DECIMAL(12,2);
    DECLARE v_now DATETIME DEFAULT NOW();
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION;
    WHILE v_d <= 10 DO
        SET v_o_id = NULL;
        SELECT no_o_id INTO v_o_id FROM new_order
         WHERE no_w_id = p_w_id AND no_d_id = v_d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        IF v_o_id IS NOT NULL THEN
            DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o_id;
            SELECT o_c_id INTO v_c_id FROM orders
             WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id FOR UPDATE;
            UPDATE orders SET o_carrier_id = p_o_carrier_id
             WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id;
            UPDATE order_line SET ol_delivery_d = v_now
             WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
            SELECT COALESCE(SUM(ol_amount), 0) INTO v_sum FROM order_line
             WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
            UPDATE customer
               SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
             WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c_id;
            SET v_delivered = v_delivered + 1;
        END IF;
        SET v_d = v_d + 1;
    END WHILE;
    COMMIT;
    SET p_delivered = v_delivered;
END
//

-- Stock-Level [2.8]: sets p_count to the number of distinct items of the district's last 20
-- orders whose stock in the home warehouse is below the threshold.
CREATE PROCEDURE SLEV(IN p_w_id INT, IN p_d_id INT, IN p_threshold INT, OUT p_count INT)
READS SQL DATA
BEGIN
    DECLARE v_next INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION READ ONLY;
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT COUNT(DISTINCT s_i_id) INTO p_count
      FROM order_line
      JOIN stock ON s_w_id = p_w_id AND s_i_id = ol_i_id
     WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id
       AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
       AND s_quantity < p_threshold;
    COMMIT;
END
//
