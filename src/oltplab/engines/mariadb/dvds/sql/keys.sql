-- Secondary keys, full-text indexes and foreign keys, added after the load (InnoDB sorts and
-- builds each index in one pass). The statements of one table run in order in one session,
-- the tables' at once in several; the foreign keys come last, in one session with
-- foreign_key_checks off, which adds them in place without reading the rows (the load made
-- them hold: every order's customer and every line's order exist).
-- Full-text search on actor and title: InnoDB FULLTEXT indexes, built in a session with
-- stopwords off (every word of the catalogue is indexed, as PostgreSQL's 'simple'
-- configuration keeps every word). The first one rebuilds the table to add InnoDB's hidden
-- FTS_DOC_ID column, so the full-text indexes come before the table's other indexes.

ALTER TABLE products ADD FULLTEXT KEY products_actor_text (actor);
ALTER TABLE products ADD FULLTEXT KEY products_title_text (title);
ALTER TABLE products ADD KEY products_category (category), ADD KEY products_special (special),
    ADD KEY products_category_special (category, special);
ALTER TABLE customers ADD UNIQUE KEY customers_username (username),
    ADD UNIQUE KEY customers_login (username, password);
ALTER TABLE orders ADD KEY orders_customer (customerid);
ALTER TABLE cust_hist ADD KEY cust_hist_customer (customerid);
ALTER TABLE reorder ADD KEY reorder_product (prod_id);

ALTER TABLE orders ADD CONSTRAINT orders_customer_fkey FOREIGN KEY (customerid)
    REFERENCES customers (customerid) ON DELETE SET NULL;
ALTER TABLE orderlines ADD CONSTRAINT orderlines_order_fkey FOREIGN KEY (orderid)
    REFERENCES orders (orderid) ON DELETE CASCADE;
