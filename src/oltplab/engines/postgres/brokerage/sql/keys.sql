-- Keys and indexes, built after the load (workloads/brokerage/schema.py PRIMARY_KEYS and
-- INDEXES). Each CREATE INDEX may run in its own session at the same time as the others; then,
-- in the build's last transaction, the primary keys are attached to their unique indexes. The
-- broker's indexes keep one entry in ten of a page's room (fillfactor 10, as its table): every
-- Trade-Result updates its broker's row, and entries of different brokers on one leaf page
-- would put their sessions' page-level predicate locks (SERIALIZABLE) on the same page.
-- No foreign keys: each would add a lookup of its parent to every insert of the run's
-- Trade-Orders and Trade-Results, which the engines' runs are to compare as they are.

CREATE UNIQUE INDEX charge_pkey ON charge (ch_tt_id, ch_c_tier);
CREATE UNIQUE INDEX commission_rate_pkey ON commission_rate
    (cr_c_tier, cr_tt_id, cr_ex_id, cr_from_qty);
CREATE UNIQUE INDEX exchange_pkey ON exchange (ex_id);
CREATE UNIQUE INDEX industry_pkey ON industry (in_id);
CREATE UNIQUE INDEX sector_pkey ON sector (sc_id);
CREATE UNIQUE INDEX status_type_pkey ON status_type (st_id);
CREATE UNIQUE INDEX taxrate_pkey ON taxrate (tx_id);
CREATE UNIQUE INDEX trade_type_pkey ON trade_type (tt_id);
CREATE UNIQUE INDEX zip_code_pkey ON zip_code (zc_code);
CREATE UNIQUE INDEX customer_pkey ON customer (c_id);
CREATE UNIQUE INDEX customer_account_pkey ON customer_account (ca_id);
CREATE UNIQUE INDEX account_permission_pkey ON account_permission (ap_ca_id, ap_tax_id);
CREATE UNIQUE INDEX customer_taxrate_pkey ON customer_taxrate (cx_tx_id, cx_c_id);
CREATE UNIQUE INDEX address_pkey ON address (ad_id);
CREATE UNIQUE INDEX broker_pkey ON broker (b_id) WITH (fillfactor = 10);
CREATE UNIQUE INDEX watch_list_pkey ON watch_list (wl_id);
CREATE UNIQUE INDEX watch_item_pkey ON watch_item (wi_wl_id, wi_s_symb);
CREATE UNIQUE INDEX company_pkey ON company (co_id);
CREATE UNIQUE INDEX company_competitor_pkey ON company_competitor
    (cp_co_id, cp_comp_co_id, cp_in_id);
CREATE UNIQUE INDEX security_pkey ON security (s_symb);
CREATE UNIQUE INDEX last_trade_pkey ON last_trade (lt_s_symb);
CREATE UNIQUE INDEX daily_market_pkey ON daily_market (dm_s_symb, dm_date);
CREATE UNIQUE INDEX financial_pkey ON financial (fi_co_id, fi_year, fi_qtr);
CREATE UNIQUE INDEX news_item_pkey ON news_item (ni_id);
CREATE UNIQUE INDEX news_xref_pkey ON news_xref (nx_ni_id, nx_co_id);
CREATE UNIQUE INDEX trade_pkey ON trade (t_id);
CREATE UNIQUE INDEX trade_history_pkey ON trade_history (th_t_id, th_st_id);
CREATE UNIQUE INDEX settlement_pkey ON settlement (se_t_id);
CREATE UNIQUE INDEX cash_transaction_pkey ON cash_transaction (ct_t_id);
CREATE UNIQUE INDEX holding_pkey ON holding (h_t_id);
CREATE UNIQUE INDEX holding_history_pkey ON holding_history (hh_h_t_id, hh_t_id);
CREATE UNIQUE INDEX holding_summary_pkey ON holding_summary (hs_ca_id, hs_s_symb);
CREATE UNIQUE INDEX trade_request_pkey ON trade_request (tr_t_id);
CREATE UNIQUE INDEX brokerage_balance_pkey ON brokerage_balance (ca_id);
CREATE INDEX i_c_tax_id ON customer (c_tax_id);
CREATE INDEX i_ca_c_id ON customer_account (ca_c_id);
CREATE INDEX i_cx_c_id ON customer_taxrate (cx_c_id);
CREATE INDEX i_wl_c_id ON watch_list (wl_c_id);
CREATE INDEX i_co_name ON company (co_name);
CREATE INDEX i_s_co_id ON security (s_co_id, s_issue);
CREATE INDEX i_dm_s_symb ON daily_market (dm_s_symb, dm_date);
CREATE INDEX i_b_name ON broker (b_name) WITH (fillfactor = 10);
CREATE INDEX i_t_ca_id ON trade (t_ca_id, t_dts);
CREATE INDEX i_t_s_symb ON trade (t_s_symb, t_dts);
CREATE INDEX i_t_st_id ON trade (t_st_id);
CREATE INDEX i_h_ca_id ON holding (h_ca_id, h_s_symb, h_dts);
CREATE INDEX i_hh_t_id ON holding_history (hh_t_id);
CREATE INDEX i_tr_s_symb ON trade_request (tr_s_symb);

ALTER TABLE charge ADD CONSTRAINT charge_pkey PRIMARY KEY USING INDEX charge_pkey;
ALTER TABLE commission_rate
    ADD CONSTRAINT commission_rate_pkey PRIMARY KEY USING INDEX commission_rate_pkey;
ALTER TABLE exchange ADD CONSTRAINT exchange_pkey PRIMARY KEY USING INDEX exchange_pkey;
ALTER TABLE industry ADD CONSTRAINT industry_pkey PRIMARY KEY USING INDEX industry_pkey;
ALTER TABLE sector ADD CONSTRAINT sector_pkey PRIMARY KEY USING INDEX sector_pkey;
ALTER TABLE status_type ADD CONSTRAINT status_type_pkey PRIMARY KEY USING INDEX status_type_pkey;
ALTER TABLE taxrate ADD CONSTRAINT taxrate_pkey PRIMARY KEY USING INDEX taxrate_pkey;
ALTER TABLE trade_type ADD CONSTRAINT trade_type_pkey PRIMARY KEY USING INDEX trade_type_pkey;
ALTER TABLE zip_code ADD CONSTRAINT zip_code_pkey PRIMARY KEY USING INDEX zip_code_pkey;
ALTER TABLE customer ADD CONSTRAINT customer_pkey PRIMARY KEY USING INDEX customer_pkey;
ALTER TABLE customer_account
    ADD CONSTRAINT customer_account_pkey PRIMARY KEY USING INDEX customer_account_pkey;
ALTER TABLE account_permission
    ADD CONSTRAINT account_permission_pkey PRIMARY KEY USING INDEX account_permission_pkey;
ALTER TABLE customer_taxrate
    ADD CONSTRAINT customer_taxrate_pkey PRIMARY KEY USING INDEX customer_taxrate_pkey;
ALTER TABLE address ADD CONSTRAINT address_pkey PRIMARY KEY USING INDEX address_pkey;
ALTER TABLE broker ADD CONSTRAINT broker_pkey PRIMARY KEY USING INDEX broker_pkey;
ALTER TABLE watch_list ADD CONSTRAINT watch_list_pkey PRIMARY KEY USING INDEX watch_list_pkey;
ALTER TABLE watch_item ADD CONSTRAINT watch_item_pkey PRIMARY KEY USING INDEX watch_item_pkey;
ALTER TABLE company ADD CONSTRAINT company_pkey PRIMARY KEY USING INDEX company_pkey;
ALTER TABLE company_competitor
    ADD CONSTRAINT company_competitor_pkey PRIMARY KEY USING INDEX company_competitor_pkey;
ALTER TABLE security ADD CONSTRAINT security_pkey PRIMARY KEY USING INDEX security_pkey;
ALTER TABLE last_trade ADD CONSTRAINT last_trade_pkey PRIMARY KEY USING INDEX last_trade_pkey;
ALTER TABLE daily_market
    ADD CONSTRAINT daily_market_pkey PRIMARY KEY USING INDEX daily_market_pkey;
ALTER TABLE financial ADD CONSTRAINT financial_pkey PRIMARY KEY USING INDEX financial_pkey;
ALTER TABLE news_item ADD CONSTRAINT news_item_pkey PRIMARY KEY USING INDEX news_item_pkey;
ALTER TABLE news_xref ADD CONSTRAINT news_xref_pkey PRIMARY KEY USING INDEX news_xref_pkey;
ALTER TABLE trade ADD CONSTRAINT trade_pkey PRIMARY KEY USING INDEX trade_pkey;
ALTER TABLE trade_history
    ADD CONSTRAINT trade_history_pkey PRIMARY KEY USING INDEX trade_history_pkey;
ALTER TABLE settlement ADD CONSTRAINT settlement_pkey PRIMARY KEY USING INDEX settlement_pkey;
ALTER TABLE cash_transaction
    ADD CONSTRAINT cash_transaction_pkey PRIMARY KEY USING INDEX cash_transaction_pkey;
ALTER TABLE holding ADD CONSTRAINT holding_pkey PRIMARY KEY USING INDEX holding_pkey;
ALTER TABLE holding_history
    ADD CONSTRAINT holding_history_pkey PRIMARY KEY USING INDEX holding_history_pkey;
ALTER TABLE holding_summary
    ADD CONSTRAINT holding_summary_pkey PRIMARY KEY USING INDEX holding_summary_pkey;
ALTER TABLE trade_request
    ADD CONSTRAINT trade_request_pkey PRIMARY KEY USING INDEX trade_request_pkey;
ALTER TABLE brokerage_balance
    ADD CONSTRAINT brokerage_balance_pkey PRIMARY KEY USING INDEX brokerage_balance_pkey;
