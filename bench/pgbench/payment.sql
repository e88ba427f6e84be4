-- Payment (clause 2.5.1): 15% remote customer, 60% by last name with C_RUN.
\set w_id (:client_id % :W) + 1
\set d_id random(1, 10)
\set remote case when :W > 1 and random(1, 100) > 85 then 1 else 0 end
\set c_w_id case when :remote = 1 then ((:w_id - 1 + random(1, greatest(:W - 1, 1))) % :W) + 1 else :w_id end
\set c_d_id case when :remote = 1 then random(1, 10) else :d_id end
\set c_id (((random(0, 1023) | random(1, 3000)) + :c_id_c) % 3000) + 1
\set c_last_num case when random(1, 100) <= 60 then (((random(0, 255) | random(0, 999)) + :c_last_run) % 1000) else -1 end
\set cents random(100, 500000)
SELECT payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :c_last_num, :cents::numeric / 100);
