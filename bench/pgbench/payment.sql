-- Payment (clause 2.5.1): 15% remote customer, 60% by last name with C_RUN; H_AMOUNT in cents
-- times 0.01, so that its text (in C_DATA) has two decimals as the Terminal's.
\set w_id case when :client_id = 0 then :h0 when :client_id = 1 then :h1 when :client_id = 2 then :h2 when :client_id = 3 then :h3 when :client_id = 4 then :h4 when :client_id = 5 then :h5 when :client_id = 6 then :h6 when :client_id = 7 then :h7 when :client_id = 8 then :h8 when :client_id = 9 then :h9 when :client_id = 10 then :h10 when :client_id = 11 then :h11 when :client_id = 12 then :h12 when :client_id = 13 then :h13 when :client_id = 14 then :h14 when :client_id = 15 then :h15 else (:client_id % :W) + 1 end
\set d_id random(1, 10)
\set remote case when :W > 1 and random(1, 100) > 85 then 1 else 0 end
\set c_w_id case when :remote = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set c_d_id case when :remote = 1 then random(1, 10) else :d_id end
\set c_id (((random(0, 1023) | random(1, 3000)) + :c_id_c) % 3000) + 1
\set c_last_num case when random(1, 100) <= 60 then (((random(0, 255) | random(0, 999)) + :c_last_run) % 1000) else -1 end
\set cents random(100, 500000)
SELECT payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :c_last_num, :cents * 0.01);
