-- Stock-Level (clause 2.8.1): the terminal's fixed district, threshold 10..20.
\set w_id (:client_id % :W) + 1
\set d_id ((:client_id / :W) % 10) + 1
\set threshold random(10, 20)
SELECT slev(:w_id, :d_id, :threshold);
