-- The twelve transactions of the DVD-Store-derived shop (DS2's six, then DVD Store 3's six) as
-- MariaDB stored procedures (procedures mode), and the restock rule as a trigger on INVENTORY.
-- A user calls each in one round trip, CALL DVDS_<KIND>(inputs..., @out), with the inputs its
-- terminal drew (native/dvds/): text as quoted strings, integers bare, a cart as two JSON arrays in strings ('[3,1]', '[1,2]'); the
-- answer comes back in the last argument, an OUT bigint. Each procedure runs one transaction
-- from START TRANSACTION to its COMMIT (or ROLLBACK), so that Com_commit + Com_rollback moves
-- by one per call; any error rolls it back and is raised again with its code: the driver
-- retries deadlocks (1213) and lock wait timeouts (1205). Isolation is InnoDB's REPEATABLE
-- READ: a purchase locks the INVENTORY rows it changes, in prod_id order, with locking reads
-- (which see the latest committed version) before it compares their stock. The statements of
-- this file are separated by lines holding only '//'.

-- Login: the customer's id, 0 when no customer has this username and password. As the shop
-- shows them, read the customer's 10 most recent purchases (their titles and actors). The
-- arguments are of the columns' character set, so that the lookup uses the username's key
-- whatever the database's default.
CREATE PROCEDURE DVDS_LOGIN(IN p_username VARCHAR(50) CHARACTER SET latin1 COLLATE latin1_bin,
                            IN p_password VARCHAR(50) CHARACTER SET latin1 COLLATE latin1_bin,
                            OUT p_customerid BIGINT)
READS SQL DATA
BEGIN
    DECLARE v_id, v_seen BIGINT;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_id = NULL;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION READ ONLY;
    SELECT customerid INTO v_id FROM customers
     WHERE username = p_username AND password = p_password;
    IF v_id IS NOT NULL THEN
        SELECT COUNT(*) INTO v_seen FROM (
            SELECT h.orderid, p.title, p.actor FROM cust_hist h
              JOIN products p ON p.prod_id = h.prod_id
             WHERE h.customerid = v_id
             ORDER BY h.orderid DESC LIMIT 10) r;
    END IF;
    COMMIT;
    SET p_customerid = COALESCE(v_id, 0);
END
//

-- New customer: the new customer's id; 0, inserting nothing, when the username is taken (a
-- duplicate key, 1062). Empty address2, state and zip are stored as NULL (customers outside
-- the US have neither).
CREATE PROCEDURE DVDS_NEW_CUSTOMER(
    IN p_firstname VARCHAR(50), IN p_lastname VARCHAR(50), IN p_address1 VARCHAR(50),
    IN p_address2 VARCHAR(50), IN p_city VARCHAR(50), IN p_state VARCHAR(50),
    IN p_zip VARCHAR(10), IN p_country VARCHAR(50), IN p_region INT, IN p_email VARCHAR(50),
    IN p_phone VARCHAR(50), IN p_creditcardtype INT, IN p_creditcard VARCHAR(50),
    IN p_creditcardexpiration VARCHAR(50), IN p_username VARCHAR(50),
    IN p_password VARCHAR(50), IN p_age INT, IN p_income INT, IN p_gender VARCHAR(1),
    OUT p_customerid BIGINT)
MODIFIES SQL DATA
BEGIN
    DECLARE EXIT HANDLER FOR 1062 BEGIN ROLLBACK; SET p_customerid = 0; END;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION;
    INSERT INTO customers (firstname, lastname, address1, address2, city, state, zip, country,
                           region, email, phone, creditcardtype, creditcard,
                           creditcardexpiration, username, password, age, income, gender)
    VALUES (p_firstname, p_lastname, p_address1, NULLIF(p_address2, ''), p_city,
            NULLIF(p_state, ''), NULLIF(p_zip, ''), p_country, p_region, p_email, p_phone,
            p_creditcardtype, p_creditcard, p_creditcardexpiration, p_username, p_password,
            p_age, p_income, p_gender);
    SET p_customerid = LAST_INSERT_ID();
    COMMIT;
END
//

-- The browses read whole PRODUCTS rows (the last column is common_prod_id, or a DS3 build's
-- membership_item).

-- Browse by category: up to p_batch of the category's special products; the number found.
CREATE PROCEDURE DVDS_BROWSE_CATEGORY(IN p_category INT, IN p_batch INT, OUT p_found BIGINT)
READS SQL DATA
BEGIN
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION READ ONLY;
    SELECT COUNT(*) INTO p_found FROM (
        SELECT * FROM products
         WHERE category = p_category AND special = 1
         LIMIT p_batch) r;
    COMMIT;
END
//

-- Browse by actor or title: up to p_batch products whose actor (p_by_title false) or title
-- holds every word of p_words (full-text search in boolean mode, the FULLTEXT indexes
-- products_actor_text and products_title_text, the query '+WORD1 +WORD2 ...': anything but
-- letters and digits separates words, so no operator reaches it); the number found. One
-- query per column, so that each uses its index.
CREATE PROCEDURE DVDS_BROWSE_TEXT(IN p_words VARCHAR(200), IN p_batch INT, IN p_by_title BOOL,
                                  OUT p_found BIGINT)
READS SQL DATA
BEGIN
    DECLARE v_words VARCHAR(200) DEFAULT TRIM(REGEXP_REPLACE(p_words, '[^[:alnum:]]+', ' '));
    DECLARE v_query VARCHAR(400) DEFAULT CONCAT('+', REPLACE(v_words, ' ', ' +'));
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION READ ONLY;
    IF v_words = '' THEN
        SET p_found = 0;  -- no word: nothing to search for
    ELSEIF p_by_title THEN
        SELECT COUNT(*) INTO p_found FROM (
            SELECT * FROM products
             WHERE MATCH (title) AGAINST (v_query IN BOOLEAN MODE) LIMIT p_batch) r;
    ELSE
        SELECT COUNT(*) INTO p_found FROM (
            SELECT * FROM products
             WHERE MATCH (actor) AGAINST (v_query IN BOOLEAN MODE) LIMIT p_batch) r;
    END IF;
    COMMIT;
END
//

-- Browse by actor: DVDS_BROWSE_TEXT on the actor (a full name).
CREATE PROCEDURE DVDS_BROWSE_ACTOR(IN p_actor VARCHAR(200), IN p_batch INT, OUT p_found BIGINT)
READS SQL DATA
CALL DVDS_BROWSE_TEXT(p_actor, p_batch, FALSE, p_found)
//

-- Browse by title: DVDS_BROWSE_TEXT on the title (a word).
CREATE PROCEDURE DVDS_BROWSE_TITLE(IN p_title VARCHAR(200), IN p_batch INT, OUT p_found BIGINT)
READS SQL DATA
CALL DVDS_BROWSE_TEXT(p_title, p_batch, TRUE, p_found)
//

-- Purchase: line n of the cart is (p_prod_ids[n], p_quantities[n]), JSON arrays; a product
-- may be on several lines. Locks the cart's INVENTORY rows in prod_id order (a cursor over the
-- cart's products, each with the quantity of all its lines) and prices the cart from
-- PRODUCTS (net = sum of price x quantity, tax 8.25%); when any product has less stock than
-- the cart asks for in all, rolls back and returns -1 having written nothing (the
-- rolled-back order). Else inserts the order, takes the quantities from the stock and adds
-- them to the sales (the restock trigger may fire), inserts the order lines (numbered 1..n)
-- and the customer's history rows, and returns the new orderid.
CREATE PROCEDURE DVDS_PURCHASE(IN p_customerid INT, IN p_prod_ids TEXT, IN p_quantities TEXT,
                               OUT p_orderid BIGINT)
MODIFIES SQL DATA
BEGIN
    DECLARE v_done, v_short, v_lines, v_bad INT DEFAULT 0;
    DECLARE v_prod, v_qty, v_stock INT;
    DECLARE v_price DECIMAL(12,2);
    DECLARE v_net DECIMAL(12,2) DEFAULT 0;
    DECLARE v_tax DECIMAL(12,2);
    DECLARE v_orderid BIGINT;
    DECLARE c_cart CURSOR FOR
        SELECT p.prod_id, SUM(q.q)
          FROM JSON_TABLE(p_prod_ids, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                      prod_id INT PATH '$')) AS p
          JOIN JSON_TABLE(p_quantities, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                        q INT PATH '$')) AS q ON q.n = p.n
         GROUP BY p.prod_id ORDER BY p.prod_id;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    SET v_lines = COALESCE(JSON_LENGTH(p_prod_ids), 0);
    SELECT COUNT(*) INTO v_bad
      FROM JSON_TABLE(p_quantities, '$[*]' COLUMNS (q INT PATH '$')) AS q
     WHERE q.q IS NULL OR q.q <= 0;
    IF v_lines = 0 OR v_lines <> COALESCE(JSON_LENGTH(p_quantities), 0) OR v_bad > 0 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
            'DVDS_PURCHASE: a cart needs one positive quantity per product, and a product';
    END IF;
    START TRANSACTION;
    OPEN c_cart;
    lock_cart: LOOP
        FETCH c_cart INTO v_prod, v_qty;
        IF v_done THEN
            LEAVE lock_cart;
        END IF;
        SET v_stock = NULL, v_price = NULL;
        SELECT quan_in_stock INTO v_stock FROM inventory WHERE prod_id = v_prod FOR UPDATE;
        SELECT price INTO v_price FROM products WHERE prod_id = v_prod;
        IF v_stock IS NULL OR v_price IS NULL THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
                'DVDS_PURCHASE: a product of the cart is not in the inventory';
        END IF;
        SET v_short = v_short OR v_stock < v_qty, v_net = v_net + v_price * v_qty;
    END LOOP;
    CLOSE c_cart;
    IF v_short THEN
        ROLLBACK;
        SET p_orderid = -1;
    ELSE
        SET v_tax = ROUND(v_net * 0.0825, 2);
        INSERT INTO orders (orderdate, customerid, netamount, tax, totalamount)
        VALUES (CURDATE(), p_customerid, v_net, v_tax, v_net + v_tax);
        SET v_orderid = LAST_INSERT_ID(), v_done = 0;
        OPEN c_cart;
        take_stock: LOOP
            FETCH c_cart INTO v_prod, v_qty;
            IF v_done THEN
                LEAVE take_stock;
            END IF;
            UPDATE inventory SET quan_in_stock = quan_in_stock - v_qty, sales = sales + v_qty
             WHERE prod_id = v_prod;
        END LOOP;
        CLOSE c_cart;
        INSERT INTO orderlines (orderlineid, orderid, prod_id, quantity, orderdate)
        SELECT p.n, v_orderid, p.prod_id, q.q, CURDATE()
          FROM JSON_TABLE(p_prod_ids, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                      prod_id INT PATH '$')) AS p
          JOIN JSON_TABLE(p_quantities, '$[*]' COLUMNS (n FOR ORDINALITY,
                                                        q INT PATH '$')) AS q ON q.n = p.n;
        INSERT INTO cust_hist (customerid, orderid, prod_id)
        SELECT p_customerid, v_orderid, p.prod_id
          FROM JSON_TABLE(p_prod_ids, '$[*]' COLUMNS (prod_id INT PATH '$')) AS p;
        COMMIT;
        SET p_orderid = v_orderid;
    END IF;
END
//

-- DVD Store 3's calls (a DS3 build: ds3_tables.sql; every build has them, only a DS3 build's
-- users call them). The review searches read up to p_batch reviews with at least p_stars
-- stars, the best rated first, each with the sum of its helpfulness ratings; the number found.

-- Reviews of one product (the key reviews_product_stars).
CREATE PROCEDURE DVDS_REVIEWS_PRODUCT(IN p_prod_id INT, IN p_stars INT, IN p_batch INT,
                                      OUT p_found BIGINT)
READS SQL DATA
BEGIN
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION READ ONLY;
    SELECT COUNT(*) INTO p_found FROM (
        SELECT v.review_id, v.prod_id, v.review_date, v.stars, v.customerid, v.review_summary,
               v.review_text, (SELECT COALESCE(SUM(h.helpfulness), 0) FROM reviews_helpfulness h
                                WHERE h.review_id = v.review_id) AS helpful
          FROM reviews v
         WHERE v.prod_id = p_prod_id AND v.stars >= p_stars
         ORDER BY v.stars DESC, v.review_date DESC LIMIT p_batch) r;
    COMMIT;
END
//

-- Reviews of the products whose actor (p_by_title false) or title holds every word of
-- p_words: up to p_batch such products (full-text, as DVDS_BROWSE_TEXT), then their reviews.
CREATE PROCEDURE DVDS_REVIEWS_TEXT(IN p_words VARCHAR(200), IN p_stars INT, IN p_batch INT,
                                   IN p_by_title BOOL, OUT p_found BIGINT)
READS SQL DATA
BEGIN
    DECLARE v_words VARCHAR(200) DEFAULT TRIM(REGEXP_REPLACE(p_words, '[^[:alnum:]]+', ' '));
    DECLARE v_query VARCHAR(400) DEFAULT CONCAT('+', REPLACE(v_words, ' ', ' +'));
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION READ ONLY;
    IF v_words = '' THEN
        SET p_found = 0;
    ELSEIF p_by_title THEN
        SELECT COUNT(*) INTO p_found FROM (
            SELECT v.review_id, v.prod_id, p.title, p.actor, v.review_date, v.stars,
                   v.review_summary, v.review_text,
                   (SELECT COALESCE(SUM(h.helpfulness), 0) FROM reviews_helpfulness h
                     WHERE h.review_id = v.review_id) AS helpful
              FROM (SELECT prod_id, title, actor FROM products
                     WHERE MATCH (title) AGAINST (v_query IN BOOLEAN MODE) LIMIT p_batch) p
              JOIN reviews v ON v.prod_id = p.prod_id AND v.stars >= p_stars
             ORDER BY v.stars DESC, v.review_date DESC LIMIT p_batch) r;
    ELSE
        SELECT COUNT(*) INTO p_found FROM (
            SELECT v.review_id, v.prod_id, p.title, p.actor, v.review_date, v.stars,
                   v.review_summary, v.review_text,
                   (SELECT COALESCE(SUM(h.helpfulness), 0) FROM reviews_helpfulness h
                     WHERE h.review_id = v.review_id) AS helpful
              FROM (SELECT prod_id, title, actor FROM products
                     WHERE MATCH (actor) AGAINST (v_query IN BOOLEAN MODE) LIMIT p_batch) p
              JOIN reviews v ON v.prod_id = p.prod_id AND v.stars >= p_stars
             ORDER BY v.stars DESC, v.review_date DESC LIMIT p_batch) r;
    END IF;
    COMMIT;
END
//

CREATE PROCEDURE DVDS_REVIEWS_ACTOR(IN p_actor VARCHAR(200), IN p_stars INT, IN p_batch INT,
                                    OUT p_found BIGINT)
READS SQL DATA
CALL DVDS_REVIEWS_TEXT(p_actor, p_stars, p_batch, FALSE, p_found)
//

CREATE PROCEDURE DVDS_REVIEWS_TITLE(IN p_title VARCHAR(200), IN p_stars INT, IN p_batch INT,
                                    OUT p_found BIGINT)
READS SQL DATA
CALL DVDS_REVIEWS_TEXT(p_title, p_stars, p_batch, TRUE, p_found)
//

-- A new review by the order's customer: its review_id.
CREATE PROCEDURE DVDS_NEW_REVIEW(IN p_prod_id INT, IN p_customerid INT, IN p_stars INT,
                                 IN p_summary VARCHAR(50), IN p_text VARCHAR(1000),
                                 OUT p_review_id BIGINT)
MODIFIES SQL DATA
BEGIN
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION;
    INSERT INTO reviews (prod_id, review_date, stars, customerid, review_summary, review_text)
    VALUES (p_prod_id, CURRENT_DATE, p_stars, p_customerid, p_summary, p_text);
    SET p_review_id = LAST_INSERT_ID();
    COMMIT;
END
//

-- The order's customer rates a review's helpfulness (1..10): the rating's id.
CREATE PROCEDURE DVDS_NEW_HELPFULNESS(IN p_review_id INT, IN p_customerid INT,
                                      IN p_helpfulness INT, OUT p_id BIGINT)
MODIFIES SQL DATA
BEGIN
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION;
    INSERT INTO reviews_helpfulness (review_id, customerid, helpfulness)
    VALUES (p_review_id, p_customerid, p_helpfulness);
    SET p_id = LAST_INSERT_ID();
    COMMIT;
END
//

-- The order's customer becomes a member of tier p_type (1..3) for a year: the customer's id;
-- 0, inserting nothing, when the customer is a member already (a duplicate key, 1062).
CREATE PROCEDURE DVDS_NEW_MEMBER(IN p_customerid INT, IN p_type INT, OUT p_id BIGINT)
MODIFIES SQL DATA
BEGIN
    DECLARE EXIT HANDLER FOR 1062 BEGIN ROLLBACK; SET p_id = 0; END;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;

    START TRANSACTION;
    INSERT INTO membership (customerid, membershiptype, expiredate)
    VALUES (p_customerid, p_type, CURRENT_DATE + INTERVAL 365 DAY);
    SET p_id = p_customerid;
    COMMIT;
END
//

-- The restock rule: an update that changes a product's stock and leaves fewer than 3 writes a
-- REORDER row and sets the stock to 250 (2,500 for every 10,000th product, which sells ten
-- times as much). (PostgreSQL's trigger fires on updates of the stock column; MariaDB's fire
-- on every update, so one that leaves the stock as it was, as a change of the sales alone,
-- does not restock.)
CREATE TRIGGER inventory_restock BEFORE UPDATE ON inventory FOR EACH ROW
BEGIN
    DECLARE v_to INT;
    IF NEW.quan_in_stock < 3 AND NEW.quan_in_stock <> OLD.quan_in_stock THEN
        SET v_to = IF(NEW.prod_id % 10000 = 0, 2500, 250);
        INSERT INTO reorder (prod_id, date_low, quan_low, date_reordered, quan_reordered,
                             date_expected)
        VALUES (NEW.prod_id, CURDATE(), NEW.quan_in_stock, CURDATE(),
                v_to - NEW.quan_in_stock, CURDATE() + INTERVAL 7 DAY);
        SET NEW.quan_in_stock = v_to;
    END IF;
END
//
