-- Delivery (clause 2.7.1): a random carrier, all 10 districts.
\set w_id (:client_id % :W) + 1
\set carrier random(1, 10)
SELECT delivery(:w_id, :carrier);
