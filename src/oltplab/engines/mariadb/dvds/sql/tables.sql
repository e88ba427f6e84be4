-- The eight tables of the DVD-Store-derived shop on MariaDB and the build's record (dvds_meta).
-- InnoDB, latin1 with byte order (latin1_bin, as the TPC-C-derived schema's database), so that
-- usernames and passwords compare as bytes, as on PostgreSQL; TITLE and ACTOR alone compare
-- without case (latin1_general_ci), so that their full-text searches match any case, as
-- PostgreSQL's 'simple' configuration, which lowercases. The columns are in PostgreSQL's order
-- (the loader sends the same rows). Primary keys are declared here: InnoDB clusters each table
-- on its key and the loader writes rows in key order. The secondary keys, the full-text
-- indexes and the foreign keys come after the load (keys.sql). Money is decimal(12,2); dates
-- are days. CUSTOMERS.customerid and ORDERS.orderid are AUTO_INCREMENT: the load gives the
-- ids, and InnoDB moves each counter past the highest loaded for the rows the users insert.

CREATE TABLE customers (
    customerid           int          NOT NULL AUTO_INCREMENT,
    firstname            varchar(50)  NOT NULL,
    lastname             varchar(50)  NOT NULL,
    address1             varchar(50)  NOT NULL,
    address2             varchar(50),
    city                 varchar(50)  NOT NULL,
    state                varchar(50),
    zip                  varchar(10),
    country              varchar(50)  NOT NULL,
    region               smallint     NOT NULL,  -- 1 = US, 2 = elsewhere
    email                varchar(50),
    phone                varchar(50),
    creditcardtype       int          NOT NULL,
    creditcard           varchar(50)  NOT NULL,
    creditcardexpiration varchar(50)  NOT NULL,
    username             varchar(50)  NOT NULL,
    password             varchar(50)  NOT NULL,
    age                  smallint,
    income               int,
    gender               varchar(1),
    PRIMARY KEY (customerid)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE orders (
    orderid      int           NOT NULL AUTO_INCREMENT,
    orderdate    date          NOT NULL,
    customerid   int,
    netamount    decimal(12,2) NOT NULL,
    tax          decimal(12,2) NOT NULL,
    totalamount  decimal(12,2) NOT NULL,
    PRIMARY KEY (orderid)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- The digest's unique (orderid, orderlineid) is the primary key: the lines of an order
-- together.
CREATE TABLE orderlines (
    orderlineid  smallint NOT NULL,
    orderid      int      NOT NULL,
    prod_id      int      NOT NULL,
    quantity     smallint NOT NULL,
    orderdate    date     NOT NULL,
    PRIMARY KEY (orderid, orderlineid)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- Each customer's purchases, one row per order line (read by login); no key of its own
-- (InnoDB gives it a hidden row id), an index on the customer.
CREATE TABLE cust_hist (
    customerid  int NOT NULL,
    orderid     int NOT NULL,
    prod_id     int NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE products (
    prod_id         int           NOT NULL,
    category        smallint      NOT NULL,
    title           varchar(50)   COLLATE latin1_general_ci NOT NULL,
    actor           varchar(50)   COLLATE latin1_general_ci NOT NULL,
    price           decimal(12,2) NOT NULL,
    special         smallint      NOT NULL,
    common_prod_id  int           NOT NULL,
    PRIMARY KEY (prod_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- Updated by every purchase, restocked by the trigger of procedures.sql.
CREATE TABLE inventory (
    prod_id        int NOT NULL,
    quan_in_stock  int NOT NULL,
    sales          int NOT NULL,
    PRIMARY KEY (prod_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE categories (
    category      smallint     NOT NULL,
    categoryname  varchar(50)  NOT NULL,
    PRIMARY KEY (category)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- Written by the restock trigger (procedures.sql); empty after the build.
CREATE TABLE reorder (
    prod_id         int  NOT NULL,
    date_low        date NOT NULL,
    quan_low        int  NOT NULL,
    date_reordered  date,
    quan_reordered  int,
    date_expected   date
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- One row, written last: what the build made. max_orderid and build_sales are the loaded
-- orders' highest id and the loaded INVENTORY.sales total, from which the checks tell the
-- orders placed since the build. ds3: a DS3 build (ds3_tables.sql), whose users rate the
-- loaded reviews 1..reviews.
CREATE TABLE dvds_meta (
    size             varchar(16)   NOT NULL,
    customers        bigint        NOT NULL,
    orders_per_month bigint        NOT NULL,
    orders           bigint        NOT NULL,
    products         bigint        NOT NULL,
    max_orderid      bigint        NOT NULL,
    build_sales      bigint        NOT NULL,
    seed             bigint        NOT NULL,
    build_users      int           NOT NULL,
    ds3              boolean       NOT NULL DEFAULT FALSE,
    reviews          bigint        NOT NULL DEFAULT 0,
    build_seconds    decimal(10,3) NOT NULL,
    built_at         timestamp     NOT NULL DEFAULT CURRENT_TIMESTAMP,
    oltplab_version  varchar(32)   NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;
