-- The twelve transactions of the DVD-Store-derived shop (DS2's six, then DVD Store 3's six) as
-- PL/pgSQL functions (procedures mode; the browses and review searches by text are SQL calls
-- of a PL/pgSQL helper), each one round trip returning one bigint, and the restock rule as a
-- trigger on INVENTORY.
-- The users draw every input (native/dvds/) and send text parameters, which the server reads
-- as these functions' argument types. Everything is correct at READ COMMITTED: a purchase
-- locks the INVENTORY rows it changes, in prod_id order, before it reads their stock.

-- Login: the customer's id, 0 when no customer has this username and password. As the shop
-- shows them, read the customer's 10 most recent purchases (their titles and actors).
CREATE OR REPLACE FUNCTION dvds_login(p_username text, p_password text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
    v_seen bigint;
BEGIN
    SELECT customerid INTO v_id FROM customers
     WHERE username = p_username AND password = p_password;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    SELECT count(r.*) INTO v_seen FROM (
        SELECT h.orderid, p.title, p.actor FROM cust_hist h
          JOIN products p ON p.prod_id = h.prod_id
         WHERE h.customerid = v_id
         ORDER BY h.orderid DESC LIMIT 10) r;
    RETURN v_id;
END
$$;

-- New customer: the new customer's id; 0, inserting nothing, when the username is taken.
-- Empty address2, state and zip are stored as NULL (customers outside the US have neither).
CREATE OR REPLACE FUNCTION dvds_new_customer(
    p_firstname text, p_lastname text, p_address1 text, p_address2 text, p_city text,
    p_state text, p_zip text, p_country text, p_region int, p_email text, p_phone text,
    p_creditcardtype int, p_creditcard text, p_creditcardexpiration text, p_username text,
    p_password text, p_age int, p_income int, p_gender text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO customers (firstname, lastname, address1, address2, city, state, zip, country,
                           region, email, phone, creditcardtype, creditcard,
                           creditcardexpiration, username, password, age, income, gender)
    VALUES (p_firstname, p_lastname, p_address1, NULLIF(p_address2, ''), p_city,
            NULLIF(p_state, ''), NULLIF(p_zip, ''), p_country, p_region, p_email, p_phone,
            p_creditcardtype, p_creditcard, p_creditcardexpiration, p_username, p_password,
            p_age, p_income, p_gender)
    ON CONFLICT DO NOTHING
    RETURNING customerid INTO v_id;
    RETURN coalesce(v_id, 0);
END
$$;

-- The browses read whole PRODUCTS rows (the last column is common_prod_id, or a DS3 build's
-- membership_item).

-- Browse by category: up to p_batch of the category's special products; the number found.
CREATE OR REPLACE FUNCTION dvds_browse_category(p_category int, p_batch int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_found bigint;
BEGIN
    SELECT count(r.*) INTO v_found FROM (
        SELECT * FROM products
         WHERE category = p_category AND special = 1
         LIMIT p_batch) r;
    RETURN v_found;
END
$$;

-- Browse by actor or title: up to p_batch products whose actor (p_by_title false) or title
-- holds every word of p_words (full-text search, the GIN indexes products_actor_text and
-- products_title_text); the number found. One query per column, so that each uses its index.
CREATE OR REPLACE FUNCTION dvds_browse_text(p_words text, p_batch int, p_by_title boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_query tsquery := plainto_tsquery('simple', p_words);
    v_found bigint;
BEGIN
    IF numnode(v_query) = 0 THEN
        RETURN 0;
    END IF;
    IF p_by_title THEN
        SELECT count(r.*) INTO v_found FROM (
            SELECT * FROM products
             WHERE to_tsvector('simple', title) @@ v_query LIMIT p_batch) r;
    ELSE
        SELECT count(r.*) INTO v_found FROM (
            SELECT * FROM products
             WHERE to_tsvector('simple', actor) @@ v_query LIMIT p_batch) r;
    END IF;
    RETURN v_found;
END
$$;

-- Browse by actor: dvds_browse_text on the actor (a full name).
CREATE OR REPLACE FUNCTION dvds_browse_actor(p_actor text, p_batch int) RETURNS bigint
LANGUAGE sql AS $$ SELECT dvds_browse_text(p_actor, p_batch, false) $$;

-- Browse by title: dvds_browse_text on the title (a word).
CREATE OR REPLACE FUNCTION dvds_browse_title(p_title text, p_batch int) RETURNS bigint
LANGUAGE sql AS $$ SELECT dvds_browse_text(p_title, p_batch, true) $$;

-- Purchase: line n of the cart is (p_prod_ids[n], p_quantities[n]); a product may be on
-- several lines. Prices the cart (net = sum of price x quantity, tax 8.25%), locks the
-- cart's INVENTORY rows in prod_id order, and when any product has less stock than the cart
-- asks for in all, returns -1 having written nothing (the rolled-back order). Else inserts
-- the order, takes the quantities from the stock and adds them to the sales (the restock
-- trigger may fire), inserts the order lines (numbered 1..n) and the customer's history rows,
-- and returns the new orderid.
CREATE OR REPLACE FUNCTION dvds_purchase(p_customerid int, p_prod_ids int[],
                                         p_quantities int[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_ids int[];
    v_qty int[];
    v_found int;
    v_short int;
    v_net numeric(12,2);
    v_tax numeric(12,2);
    v_orderid bigint;
BEGIN
    IF coalesce(cardinality(p_prod_ids), 0) = 0
            OR cardinality(p_prod_ids) <> coalesce(cardinality(p_quantities), 0)
            OR 0 >= ANY (p_quantities) THEN
        RAISE EXCEPTION 'a cart needs one positive quantity per product, and a product';
    END IF;
    SELECT array_agg(c.prod_id ORDER BY c.prod_id), array_agg(c.q ORDER BY c.prod_id)
      INTO v_ids, v_qty
      FROM (SELECT u.prod_id, sum(u.q)::int AS q
              FROM unnest(p_prod_ids, p_quantities) AS u(prod_id, q)
             GROUP BY u.prod_id) c;
    -- The sort runs below the row locks: the rows are locked in prod_id order.
    PERFORM 1 FROM inventory WHERE prod_id = ANY (v_ids) ORDER BY prod_id FOR UPDATE;
    SELECT count(*), count(*) FILTER (WHERE i.quan_in_stock < c.q) INTO v_found, v_short
      FROM unnest(v_ids, v_qty) AS c(prod_id, q)
      JOIN inventory i ON i.prod_id = c.prod_id;
    IF v_found < cardinality(v_ids) THEN
        RAISE EXCEPTION 'a product of the cart % is not in the inventory', p_prod_ids;
    END IF;
    IF v_short > 0 THEN
        RETURN -1;
    END IF;
    SELECT sum(p.price * u.q) INTO v_net
      FROM unnest(p_prod_ids, p_quantities) AS u(prod_id, q)
      JOIN products p ON p.prod_id = u.prod_id;
    v_tax := round(v_net * 0.0825, 2);
    INSERT INTO orders (orderdate, customerid, netamount, tax, totalamount)
    VALUES (current_date, p_customerid, v_net, v_tax, v_net + v_tax)
    RETURNING orderid INTO v_orderid;
    UPDATE inventory i SET quan_in_stock = i.quan_in_stock - c.q, sales = i.sales + c.q
      FROM unnest(v_ids, v_qty) AS c(prod_id, q)
     WHERE i.prod_id = c.prod_id;
    INSERT INTO orderlines (orderlineid, orderid, prod_id, quantity, orderdate)
    SELECT u.n, v_orderid, u.prod_id, u.q, current_date
      FROM unnest(p_prod_ids, p_quantities) WITH ORDINALITY AS u(prod_id, q, n);
    INSERT INTO cust_hist (customerid, orderid, prod_id)
    SELECT p_customerid, v_orderid, u.prod_id FROM unnest(p_prod_ids) AS u(prod_id);
    RETURN v_orderid;
END
$$;

-- DVD Store 3's calls (a DS3 build: ds3_tables.sql; every build has them, only a DS3 build's
-- users call them). The review searches read up to p_batch reviews with at least p_stars
-- stars, the best rated first, each with the sum of its helpfulness ratings; the number found.

-- Reviews of one product (the index reviews_product_stars).
CREATE OR REPLACE FUNCTION dvds_reviews_product(p_prod_id int, p_stars int, p_batch int)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_found bigint;
BEGIN
    SELECT count(r.*) INTO v_found FROM (
        SELECT v.review_id, v.prod_id, v.review_date, v.stars, v.customerid, v.review_summary,
               v.review_text, (SELECT coalesce(sum(h.helpfulness), 0) FROM reviews_helpfulness h
                                WHERE h.review_id = v.review_id) AS helpful
          FROM reviews v
         WHERE v.prod_id = p_prod_id AND v.stars >= p_stars
         ORDER BY v.stars DESC, v.review_date DESC LIMIT p_batch) r;
    RETURN v_found;
END
$$;

-- Reviews of the products whose actor (p_by_title false) or title holds every word of
-- p_words: up to p_batch such products (full-text, as dvds_browse_text), then their reviews.
CREATE OR REPLACE FUNCTION dvds_reviews_text(p_words text, p_stars int, p_batch int,
                                             p_by_title boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_query tsquery := plainto_tsquery('simple', p_words);
    v_ids int[];
    v_found bigint;
BEGIN
    IF numnode(v_query) = 0 THEN
        RETURN 0;
    END IF;
    IF p_by_title THEN
        SELECT array_agg(prod_id) INTO v_ids FROM (
            SELECT prod_id FROM products WHERE to_tsvector('simple', title) @@ v_query
             LIMIT p_batch) p;
    ELSE
        SELECT array_agg(prod_id) INTO v_ids FROM (
            SELECT prod_id FROM products WHERE to_tsvector('simple', actor) @@ v_query
             LIMIT p_batch) p;
    END IF;
    SELECT count(r.*) INTO v_found FROM (
        SELECT v.review_id, v.prod_id, p.title, p.actor, v.review_date, v.stars,
               v.review_summary, v.review_text,
               (SELECT coalesce(sum(h.helpfulness), 0) FROM reviews_helpfulness h
                 WHERE h.review_id = v.review_id) AS helpful
          FROM reviews v JOIN products p ON p.prod_id = v.prod_id
         WHERE v.prod_id = ANY (v_ids) AND v.stars >= p_stars
         ORDER BY v.stars DESC, v.review_date DESC LIMIT p_batch) r;
    RETURN v_found;
END
$$;

CREATE OR REPLACE FUNCTION dvds_reviews_actor(p_actor text, p_stars int, p_batch int)
RETURNS bigint
LANGUAGE sql AS $$ SELECT dvds_reviews_text(p_actor, p_stars, p_batch, false) $$;

CREATE OR REPLACE FUNCTION dvds_reviews_title(p_title text, p_stars int, p_batch int)
RETURNS bigint
LANGUAGE sql AS $$ SELECT dvds_reviews_text(p_title, p_stars, p_batch, true) $$;

-- A new review by the order's customer: its review_id.
CREATE OR REPLACE FUNCTION dvds_new_review(p_prod_id int, p_customerid int, p_stars int,
                                           p_summary text, p_text text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO reviews (prod_id, review_date, stars, customerid, review_summary, review_text)
    VALUES (p_prod_id, current_date, p_stars, p_customerid, p_summary, p_text)
    RETURNING review_id INTO v_id;
    RETURN v_id;
END
$$;

-- The order's customer rates a review's helpfulness (1..10): the rating's id.
CREATE OR REPLACE FUNCTION dvds_new_helpfulness(p_review_id int, p_customerid int,
                                                p_helpfulness int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO reviews_helpfulness (review_id, customerid, helpfulness)
    VALUES (p_review_id, p_customerid, p_helpfulness)
    RETURNING review_helpfulness_id INTO v_id;
    RETURN v_id;
END
$$;

-- The order's customer becomes a member of tier p_type (1..3) for a year: the customer's id;
-- 0, inserting nothing, when the customer is a member already.
CREATE OR REPLACE FUNCTION dvds_new_member(p_customerid int, p_type int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO membership (customerid, membershiptype, expiredate)
    VALUES (p_customerid, p_type, current_date + 365)
    ON CONFLICT DO NOTHING
    RETURNING customerid INTO v_id;
    RETURN coalesce(v_id, 0);
END
$$;

-- The restock rule: an update that would leave fewer than 3 in stock writes a REORDER row and
-- sets the stock to 250 (2,500 for every 10,000th product, which sells ten times as much).
CREATE OR REPLACE FUNCTION dvds_restock() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_to int := CASE WHEN NEW.prod_id % 10000 = 0 THEN 2500 ELSE 250 END;
BEGIN
    INSERT INTO reorder (prod_id, date_low, quan_low, date_reordered, quan_reordered,
                         date_expected)
    VALUES (NEW.prod_id, current_date, NEW.quan_in_stock, current_date,
            v_to - NEW.quan_in_stock, current_date + 7);
    NEW.quan_in_stock := v_to;
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS inventory_restock ON inventory;
CREATE TRIGGER inventory_restock BEFORE UPDATE OF quan_in_stock ON inventory
    FOR EACH ROW WHEN (NEW.quan_in_stock < 3) EXECUTE FUNCTION dvds_restock();
