-- Order-Status (clause 2.6.1): 60% by last name.
\set w_id (:client_id % :W) + 1
\set d_id random(1, 10)
\set c_id (((random(0, 1023) | random(1, 3000)) + :c_id_c) % 3000) + 1
\set c_last_num case when random(1, 100) <= 60 then (((random(0, 255) | random(0, 999)) + :c_last_run) % 1000) else -1 end
SELECT ostat(:w_id, :d_id, :c_id, :c_last_num);
