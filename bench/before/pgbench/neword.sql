-- New-Order (clause 2.4.1): the same inputs oltplab's virtual users draw, for pgbench.
-- Variables given with -D: W (warehouses), c_id_c (C for C_ID), c_ol_i_id (C for OL_I_ID),
-- c_last_run (C for C_LAST), and per client (0..15) its home warehouse hN and Stock-Level
-- district sN, as oltplab assigned them for the same seed.
\set w_id case when :client_id = 0 then :h0 when :client_id = 1 then :h1 when :client_id = 2 then :h2 when :client_id = 3 then :h3 when :client_id = 4 then :h4 when :client_id = 5 then :h5 when :client_id = 6 then :h6 when :client_id = 7 then :h7 when :client_id = 8 then :h8 when :client_id = 9 then :h9 when :client_id = 10 then :h10 when :client_id = 11 then :h11 when :client_id = 12 then :h12 when :client_id = 13 then :h13 when :client_id = 14 then :h14 when :client_id = 15 then :h15 else (:client_id % :W) + 1 end
\set d_id random(1, 10)
\set c_id (((random(0, 1023) | random(1, 3000)) + :c_id_c) % 3000) + 1
\set ol_cnt random(5, 15)
\set rbk (101 - random(1, 100)) / 100
SELECT neword(:w_id, :W, :d_id, :c_id, :ol_cnt, :rbk, :c_ol_i_id);
