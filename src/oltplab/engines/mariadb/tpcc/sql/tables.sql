-- The nine tables of the TPC-C-derived schema [TPC-C 1.3] on MariaDB, and the build's record.
-- InnoDB; the database is latin1 (as HammerDB's) and text columns compare as bytes (latin1_bin),
-- so that sorting customers by C_FIRST [2.5.2.2] orders them as on PostgreSQL's "C" collation.
-- Primary keys are declared here, as HammerDB does: InnoDB clusters each table on its key and
-- the loader writes rows in key order. The two secondary keys come after the load
-- (keys.sql). HISTORY has no key [1.3]: InnoDB gives it a hidden row id.

CREATE TABLE warehouse (
    w_id        int           NOT NULL,
    w_name      varchar(10)   NOT NULL,
    w_street_1  varchar(20)   NOT NULL,
    w_street_2  varchar(20)   NOT NULL,
    w_city      varchar(20)   NOT NULL,
    w_state     char(2)       NOT NULL,
    w_zip       char(9)       NOT NULL,
    w_tax       decimal(4,4)  NOT NULL,
    w_ytd       decimal(12,2) NOT NULL,
    PRIMARY KEY (w_id)
) ENGINE = InnoDB;

CREATE TABLE district (
    d_id        smallint      NOT NULL,
    d_w_id      int           NOT NULL,
    d_name      varchar(10)   NOT NULL,
    d_street_1  varchar(20)   NOT NULL,
    d_street_2  varchar(20)   NOT NULL,
    d_city      varchar(20)   NOT NULL,
    d_state     char(2)       NOT NULL,
    d_zip       char(9)       NOT NULL,
    d_tax       decimal(4,4)  NOT NULL,
    d_ytd       decimal(12,2) NOT NULL,
    d_next_o_id int           NOT NULL,
    PRIMARY KEY (d_w_id, d_id)
) ENGINE = InnoDB;

CREATE TABLE customer (
    c_id           int           NOT NULL,
    c_d_id         smallint      NOT NULL,
    c_w_id         int           NOT NULL,
    c_first        varchar(16)   NOT NULL,
    c_middle       char(2)       NOT NULL,
    c_last         varchar(16)   NOT NULL,
    c_street_1     varchar(20)   NOT NULL,
    c_street_2     varchar(20)   NOT NULL,
    c_city         varchar(20)   NOT NULL,
    c_state        char(2)       NOT NULL,
    c_zip          char(9)       NOT NULL,
    c_phone        char(16)      NOT NULL,
    c_since        datetime      NOT NULL,
    c_credit       char(2)       NOT NULL,
    c_credit_lim   decimal(12,2) NOT NULL,
    c_discount     decimal(4,4)  NOT NULL,
    c_balance      decimal(12,2) NOT NULL,
    c_ytd_payment  decimal(12,2) NOT NULL,
    c_payment_cnt  int           NOT NULL,
    c_delivery_cnt int           NOT NULL,
    c_data         varchar(500)  NOT NULL,
    PRIMARY KEY (c_w_id, c_d_id, c_id)
) ENGINE = InnoDB;

CREATE TABLE history (
    h_c_id    int           NOT NULL,
    h_c_d_id  smallint      NOT NULL,
    h_c_w_id  int           NOT NULL,
    h_d_id    smallint      NOT NULL,
    h_w_id    int           NOT NULL,
    h_date    datetime      NOT NULL,
    h_amount  decimal(6,2)  NOT NULL,
    h_data    varchar(24)   NOT NULL
) ENGINE = InnoDB;

CREATE TABLE new_order (
    no_o_id  int      NOT NULL,
    no_d_id  smallint NOT NULL,
    no_w_id  int      NOT NULL,
    PRIMARY KEY (no_w_id, no_d_id, no_o_id)
) ENGINE = InnoDB;

CREATE TABLE orders (
    o_id         int       NOT NULL,
    o_d_id       smallint  NOT NULL,
    o_w_id       int       NOT NULL,
    o_c_id       int       NOT NULL,
    o_entry_d    datetime  NOT NULL,
    o_carrier_id smallint,
    o_ol_cnt     smallint  NOT NULL,
    o_all_local  smallint  NOT NULL,
    PRIMARY KEY (o_w_id, o_d_id, o_id)
) ENGINE = InnoDB;

CREATE TABLE order_line (
    ol_o_id        int          NOT NULL,
    ol_d_id        smallint     NOT NULL,
    ol_w_id        int          NOT NULL,
    ol_number      smallint     NOT NULL,
    ol_i_id        int          NOT NULL,
    ol_supply_w_id int          NOT NULL,
    ol_delivery_d  datetime,
    ol_quantity    smallint     NOT NULL,
    ol_amount      decimal(6,2) NOT NULL,
    ol_dist_info   char(24)     NOT NULL,
    PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
) ENGINE = InnoDB;

CREATE TABLE item (
    i_id     int          NOT NULL,
    i_im_id  int          NOT NULL,
    i_name   varchar(24)  NOT NULL,
    i_price  decimal(5,2) NOT NULL,
    i_data   varchar(50)  NOT NULL,
    PRIMARY KEY (i_id)
) ENGINE = InnoDB;

CREATE TABLE stock (
    s_i_id       int          NOT NULL,
    s_w_id       int          NOT NULL,
    s_quantity   int          NOT NULL,
    s_dist_01    char(24)     NOT NULL,
    s_dist_02    char(24)     NOT NULL,
    s_dist_03    char(24)     NOT NULL,
    s_dist_04    char(24)     NOT NULL,
    s_dist_05    char(24)     NOT NULL,
    s_dist_06    char(24)     NOT NULL,
    s_dist_07    char(24)     NOT NULL,
    s_dist_08    char(24)     NOT NULL,
    s_dist_09    char(24)     NOT NULL,
    s_dist_10    char(24)     NOT NULL,
    s_ytd        int          NOT NULL,
    s_order_cnt  int          NOT NULL,
    s_remote_cnt int          NOT NULL,
    s_data       varchar(50)  NOT NULL,
    PRIMARY KEY (s_w_id, s_i_id)
) ENGINE = InnoDB;

-- One row: what the build did and the C constants it drew [2.1.6, 2.1.6.1].
CREATE TABLE tpcc_meta (
    warehouses      int           NOT NULL,
    c_last_load     int           NOT NULL,
    c_id_load       int           NOT NULL,
    c_ol_i_id_load  int           NOT NULL,
    seed            bigint,
    build_users     int           NOT NULL,
    build_seconds   decimal(10,3) NOT NULL,
    built_at        timestamp     NOT NULL DEFAULT CURRENT_TIMESTAMP,
    oltplab_version varchar(32)   NOT NULL
) ENGINE = InnoDB;
