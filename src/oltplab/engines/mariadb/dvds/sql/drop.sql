-- Removes everything the build creates (used by 'oltplab dvds build --force'). Foreign keys
-- do not hold the drop up: the tables go together, children first.

DROP TRIGGER IF EXISTS inventory_restock;
DROP PROCEDURE IF EXISTS DVDS_LOGIN;
DROP PROCEDURE IF EXISTS DVDS_NEW_CUSTOMER;
DROP PROCEDURE IF EXISTS DVDS_BROWSE_CATEGORY;
DROP PROCEDURE IF EXISTS DVDS_BROWSE_ACTOR;
DROP PROCEDURE IF EXISTS DVDS_BROWSE_TITLE;
DROP PROCEDURE IF EXISTS DVDS_PURCHASE;
DROP PROCEDURE IF EXISTS DVDS_BROWSE_TEXT;
DROP TABLE IF EXISTS dvds_meta, orderlines, cust_hist, orders, customers, products, inventory,
    categories, reorder;
