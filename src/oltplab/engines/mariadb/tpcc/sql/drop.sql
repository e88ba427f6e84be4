-- Drop the TPC-C-derived schema on MariaDB (tpcc build --force).

DROP PROCEDURE IF EXISTS NEWORD;
DROP PROCEDURE IF EXISTS PAYMENT;
DROP PROCEDURE IF EXISTS DELIVERY;
DROP PROCEDURE IF EXISTS OSTAT;
DROP PROCEDURE IF EXISTS SLEV;
DROP FUNCTION IF EXISTS TPCC_LAST_NAME;
DROP TABLE IF EXISTS tpcc_meta, warehouse, district, customer, history, new_order, orders,
    order_line, item, stock;
