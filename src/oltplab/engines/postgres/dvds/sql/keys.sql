-- Keys and indexes, built after the load. Each CREATE INDEX may run in its own session at the
-- same time as the others (they take SHARE locks, which do not conflict); then, in the build's
-- last transaction, the primary keys are attached to their unique indexes and the foreign keys
-- added. Full-text search on actor and title: GIN indexes on the 'simple' configuration's
-- tsvector (every word kept whole, lowercased; no stop words), which the browse functions'
-- WHERE clauses repeat word for word.

CREATE UNIQUE INDEX orderlines_order ON orderlines (orderid, orderlineid);
CREATE INDEX cust_hist_customer ON cust_hist (customerid);
CREATE UNIQUE INDEX customers_pkey ON customers (customerid);
CREATE UNIQUE INDEX customers_username ON customers (username);
CREATE UNIQUE INDEX customers_login ON customers (username, password);
CREATE UNIQUE INDEX orders_pkey ON orders (orderid);
CREATE INDEX orders_customer ON orders (customerid);
CREATE UNIQUE INDEX products_pkey ON products (prod_id);
CREATE INDEX products_category ON products (category);
CREATE INDEX products_special ON products (special);
CREATE INDEX products_category_special ON products (category, special);
CREATE INDEX products_actor_text ON products USING gin (to_tsvector('simple', actor));
CREATE INDEX products_title_text ON products USING gin (to_tsvector('simple', title));
CREATE UNIQUE INDEX inventory_pkey ON inventory (prod_id) WITH (fillfactor = 85);
CREATE UNIQUE INDEX categories_pkey ON categories (category);
CREATE INDEX reorder_product ON reorder (prod_id);

ALTER TABLE customers ADD CONSTRAINT customers_pkey PRIMARY KEY USING INDEX customers_pkey;
ALTER TABLE orders ADD CONSTRAINT orders_pkey PRIMARY KEY USING INDEX orders_pkey;
ALTER TABLE products ADD CONSTRAINT products_pkey PRIMARY KEY USING INDEX products_pkey;
ALTER TABLE inventory ADD CONSTRAINT inventory_pkey PRIMARY KEY USING INDEX inventory_pkey;
ALTER TABLE categories ADD CONSTRAINT categories_pkey PRIMARY KEY USING INDEX categories_pkey;
ALTER TABLE orders ADD CONSTRAINT orders_customer_fkey FOREIGN KEY (customerid)
    REFERENCES customers (customerid) ON DELETE SET NULL;
ALTER TABLE orderlines ADD CONSTRAINT orderlines_order_fkey FOREIGN KEY (orderid)
    REFERENCES orders (orderid) ON DELETE CASCADE;
