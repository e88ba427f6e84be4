-- New-Order (clause 2.4.1): the same inputs oltplab's virtual users draw, for pgbench.
-- Variables given with -D: W (warehouses), c_id_c (C for C_ID), c_ol_i_id (C for OL_I_ID).
\set w_id (:client_id % :W) + 1
\set d_id random(1, 10)
\set c_id (((random(0, 1023) | random(1, 3000)) + :c_id_c) % 3000) + 1
\set ol_cnt random(5, 15)
\set rbk (101 - random(1, 100)) / 100
SELECT neword(:w_id, :W, :d_id, :c_id, :ol_cnt, :rbk, :c_ol_i_id);
