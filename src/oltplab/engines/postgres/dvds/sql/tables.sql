-- The eight tables of the DVD-Store-derived shop and the build's record (dvds_meta).
-- Keys and indexes come after the load (keys.sql). Autovacuum is off while loading and is
-- switched back on by the loader when the build completes. Money is numeric(12,2); dates are
-- days. CUSTOMERS.customerid and ORDERS.orderid are serial: the load gives the ids, then the
-- loader moves the sequences past them for the rows the users insert.

CREATE TABLE customers (
    customerid           serial       NOT NULL,
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
    gender               varchar(1)
) WITH (autovacuum_enabled = off);

CREATE TABLE orders (
    orderid      serial        NOT NULL,
    orderdate    date          NOT NULL,
    customerid   int,
    netamount    numeric(12,2) NOT NULL,
    tax          numeric(12,2) NOT NULL,
    totalamount  numeric(12,2) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE orderlines (
    orderlineid  smallint NOT NULL,
    orderid      int      NOT NULL,
    prod_id      int      NOT NULL,
    quantity     smallint NOT NULL,
    orderdate    date     NOT NULL
) WITH (autovacuum_enabled = off);

-- Each customer's purchases, one row per order line (read by login).
CREATE TABLE cust_hist (
    customerid  int NOT NULL,
    orderid     int NOT NULL,
    prod_id     int NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE products (
    prod_id         int           NOT NULL,
    category        smallint      NOT NULL,
    title           varchar(50)   NOT NULL,
    actor           varchar(50)   NOT NULL,
    price           numeric(12,2) NOT NULL,
    special         smallint      NOT NULL,
    common_prod_id  int           NOT NULL
) WITH (autovacuum_enabled = off);

-- Updated by every purchase: room on each page (fillfactor 85) keeps the updates HOT.
CREATE TABLE inventory (
    prod_id        int NOT NULL,
    quan_in_stock  int NOT NULL,
    sales          int NOT NULL
) WITH (fillfactor = 85, autovacuum_enabled = off);

CREATE TABLE categories (
    category      smallint     NOT NULL,
    categoryname  varchar(50)  NOT NULL
) WITH (autovacuum_enabled = off);

-- Written by the restock trigger (functions.sql); empty after the build.
CREATE TABLE reorder (
    prod_id         int  NOT NULL,
    date_low        date NOT NULL,
    quan_low        int  NOT NULL,
    date_reordered  date,
    quan_reordered  int,
    date_expected   date
) WITH (autovacuum_enabled = off);

-- One row, written last: what the build made. max_orderid and build_sales are the loaded
-- orders' highest id and the loaded INVENTORY.sales total, from which the checks tell the
-- orders placed since the build. ds3: a DS3 build (ds3_tables.sql), whose users rate the
-- loaded reviews 1..reviews.
CREATE TABLE dvds_meta (
    size             text          NOT NULL,
    customers        bigint        NOT NULL,
    orders_per_month bigint        NOT NULL,
    orders           bigint        NOT NULL,
    products         bigint        NOT NULL,
    max_orderid      bigint        NOT NULL,
    build_sales      bigint        NOT NULL,
    seed             bigint        NOT NULL,
    build_users      int           NOT NULL,
    ds3              boolean       NOT NULL DEFAULT false,
    reviews          bigint        NOT NULL DEFAULT 0,
    build_seconds    numeric(10,3) NOT NULL,
    built_at         timestamptz   NOT NULL DEFAULT now(),
    oltplab_version  text          NOT NULL
);
