-- New-Order (clause 2.4.1): the same inputs oltplab's virtual users draw, for pgbench.
-- Variables given with -D: W (warehouses), c_id_c (C for C_ID), c_ol_i_id (C for OL_I_ID),
-- c_last_run (C for C_LAST), and per client (0..15) its home warehouse hN and Stock-Level
-- district sN, as oltplab assigned them for the same seed. The order lines are drawn as the
-- Terminal draws them [2.4.1.5]: 15 candidate lines (item iN, supply warehouse wN, quantity
-- qN), of which the first ol_cnt are passed; with rbk = 1 the last of them is the unused item.
\set w_id case when :client_id = 0 then :h0 when :client_id = 1 then :h1 when :client_id = 2 then :h2 when :client_id = 3 then :h3 when :client_id = 4 then :h4 when :client_id = 5 then :h5 when :client_id = 6 then :h6 when :client_id = 7 then :h7 when :client_id = 8 then :h8 when :client_id = 9 then :h9 when :client_id = 10 then :h10 when :client_id = 11 then :h11 when :client_id = 12 then :h12 when :client_id = 13 then :h13 when :client_id = 14 then :h14 when :client_id = 15 then :h15 else (:client_id % :W) + 1 end
\set d_id random(1, 10)
\set c_id (((random(0, 1023) | random(1, 3000)) + :c_id_c) % 3000) + 1
\set ol_cnt random(5, 15)
\set rbk (101 - random(1, 100)) / 100
\set i1 (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1
\set w1 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q1 random(1, 10)
\set i2 (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1
\set w2 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q2 random(1, 10)
\set i3 (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1
\set w3 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q3 random(1, 10)
\set i4 (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1
\set w4 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q4 random(1, 10)
\set i5 case when :rbk = 1 and :ol_cnt = 5 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w5 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q5 random(1, 10)
\set i6 case when :rbk = 1 and :ol_cnt = 6 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w6 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q6 random(1, 10)
\set i7 case when :rbk = 1 and :ol_cnt = 7 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w7 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q7 random(1, 10)
\set i8 case when :rbk = 1 and :ol_cnt = 8 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w8 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q8 random(1, 10)
\set i9 case when :rbk = 1 and :ol_cnt = 9 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w9 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q9 random(1, 10)
\set i10 case when :rbk = 1 and :ol_cnt = 10 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w10 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q10 random(1, 10)
\set i11 case when :rbk = 1 and :ol_cnt = 11 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w11 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q11 random(1, 10)
\set i12 case when :rbk = 1 and :ol_cnt = 12 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w12 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q12 random(1, 10)
\set i13 case when :rbk = 1 and :ol_cnt = 13 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w13 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q13 random(1, 10)
\set i14 case when :rbk = 1 and :ol_cnt = 14 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w14 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q14 random(1, 10)
\set i15 case when :rbk = 1 and :ol_cnt = 15 then 100001 else (((random(0, 8191) | random(1, 100000)) + :c_ol_i_id) % 100000) + 1 end
\set w15 case when :W > 1 and random(1, 100) = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set q15 random(1, 10)
SELECT neword(:w_id, :d_id, :c_id,
              (ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10, :i11, :i12, :i13, :i14, :i15]::int[])[1 : :ol_cnt],
              (ARRAY[:w1, :w2, :w3, :w4, :w5, :w6, :w7, :w8, :w9, :w10, :w11, :w12, :w13, :w14, :w15]::int[])[1 : :ol_cnt],
              (ARRAY[:q1, :q2, :q3, :q4, :q5, :q6, :q7, :q8, :q9, :q10, :q11, :q12, :q13, :q14, :q15]::int[])[1 : :ol_cnt]);
