-- The secondary indexes of workloads/brokerage/schema.py INDEXES, added after the load: one
-- statement a table, which InnoDB builds in one pass over the clustered index, sorting each
-- index's entries (a key inserted row by row during the load would be written in the order
-- of its values, page by page). The statements run in up to --build-users sessions at once,
-- the largest tables first. (i_dm_s_symb has the primary key's columns: kept, so that both
-- engines have the same indexes under the same names.)

ALTER TABLE trade ADD KEY i_t_ca_id (t_ca_id, t_dts), ADD KEY i_t_s_symb (t_s_symb, t_dts),
    ADD KEY i_t_st_id (t_st_id);
ALTER TABLE holding_history ADD KEY i_hh_t_id (hh_t_id);
ALTER TABLE daily_market ADD KEY i_dm_s_symb (dm_s_symb, dm_date);
ALTER TABLE holding ADD KEY i_h_ca_id (h_ca_id, h_s_symb, h_dts);
ALTER TABLE customer_account ADD KEY i_ca_c_id (ca_c_id);
ALTER TABLE customer_taxrate ADD KEY i_cx_c_id (cx_c_id);
ALTER TABLE customer ADD KEY i_c_tax_id (c_tax_id);
ALTER TABLE watch_list ADD KEY i_wl_c_id (wl_c_id);
ALTER TABLE company ADD KEY i_co_name (co_name);
ALTER TABLE security ADD KEY i_s_co_id (s_co_id, s_issue);
ALTER TABLE broker ADD KEY i_b_name (b_name);
ALTER TABLE trade_request ADD KEY i_tr_s_symb (tr_s_symb);
