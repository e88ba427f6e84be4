-- Secondary keys, added after the load (InnoDB sorts and builds each in one pass), as HammerDB
-- declares them: customer by last name for Payment and Order-Status by name [2.5.2.2, 2.6.2.2]
-- (prefixes of 16 characters, the columns' whole width) and orders by customer for
-- Order-Status's last order [2.6.2.2].

ALTER TABLE customer ADD KEY customer_last_name (c_w_id, c_d_id, c_last(16), c_first(16));
ALTER TABLE orders ADD KEY orders_customer (o_w_id, o_d_id, o_c_id, o_id);
