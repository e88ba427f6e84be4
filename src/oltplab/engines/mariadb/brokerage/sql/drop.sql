-- Removes everything the build creates (used by 'oltplab brokerage build --force').

DROP SEQUENCE IF EXISTS seq_trade_id;
DROP TABLE IF EXISTS brokerage_meta, brokerage_balance, charge, commission_rate, exchange,
    industry, sector, status_type, taxrate, trade_type, zip_code, customer, customer_account,
    account_permission, customer_taxrate, address, broker, watch_list, watch_item, company,
    company_competitor, security, last_trade, daily_market, financial, news_item, news_xref,
    trade, trade_history, settlement, cash_transaction, holding, holding_history,
    holding_summary, trade_request;
