-- Keys and indexes, built after the load. Each CREATE INDEX may run in its own session at the
-- same time as the others (they take SHARE locks, which do not conflict); the primary keys are
-- then attached to their unique indexes. Largest first, so that parallel sessions finish together.
-- Secondary indexes: customer by last name (Payment and Order-Status by name, clause 2.5.2.2)
-- and orders by customer (Order-Status, clause 2.6.2.2).

CREATE UNIQUE INDEX order_line_pkey ON order_line (ol_w_id, ol_d_id, ol_o_id, ol_number);
CREATE UNIQUE INDEX stock_pkey ON stock (s_w_id, s_i_id);
CREATE INDEX customer_last_name ON customer (c_w_id, c_d_id, c_last, c_first, c_id);
CREATE UNIQUE INDEX customer_pkey ON customer (c_w_id, c_d_id, c_id);
CREATE UNIQUE INDEX orders_pkey ON orders (o_w_id, o_d_id, o_id);
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
CREATE UNIQUE INDEX item_pkey ON item (i_id);
CREATE UNIQUE INDEX new_order_pkey ON new_order (no_w_id, no_d_id, no_o_id);
CREATE UNIQUE INDEX district_pkey ON district (d_w_id, d_id);
CREATE UNIQUE INDEX warehouse_pkey ON warehouse (w_id);

ALTER TABLE order_line ADD CONSTRAINT order_line_pkey PRIMARY KEY USING INDEX order_line_pkey;
ALTER TABLE stock ADD CONSTRAINT stock_pkey PRIMARY KEY USING INDEX stock_pkey;
ALTER TABLE customer ADD CONSTRAINT customer_pkey PRIMARY KEY USING INDEX customer_pkey;
ALTER TABLE orders ADD CONSTRAINT orders_pkey PRIMARY KEY USING INDEX orders_pkey;
ALTER TABLE item ADD CONSTRAINT item_pkey PRIMARY KEY USING INDEX item_pkey;
ALTER TABLE new_order ADD CONSTRAINT new_order_pkey PRIMARY KEY USING INDEX new_order_pkey;
ALTER TABLE district ADD CONSTRAINT district_pkey PRIMARY KEY USING INDEX district_pkey;
ALTER TABLE warehouse ADD CONSTRAINT warehouse_pkey PRIMARY KEY USING INDEX warehouse_pkey;
