-- Delivery (clause 2.7.1): a random carrier, all 10 districts.
\set w_id case when :client_id = 0 then :h0 when :client_id = 1 then :h1 when :client_id = 2 then :h2 when :client_id = 3 then :h3 when :client_id = 4 then :h4 when :client_id = 5 then :h5 when :client_id = 6 then :h6 when :client_id = 7 then :h7 when :client_id = 8 then :h8 when :client_id = 9 then :h9 when :client_id = 10 then :h10 when :client_id = 11 then :h11 when :client_id = 12 then :h12 when :client_id = 13 then :h13 when :client_id = 14 then :h14 when :client_id = 15 then :h15 else (:client_id % :W) + 1 end
\set carrier random(1, 10)
SELECT delivery(:w_id, :carrier);
