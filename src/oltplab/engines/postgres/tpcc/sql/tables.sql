-- The nine tables of the TPC-C-derived schema [TPC-C 1.3] and the build's record (tpcc_meta).
-- Keys and indexes come after the load (keys.sql). Autovacuum is off while loading and is
-- switched back on by the loader when the build completes.
-- Money columns are exact numerics [1.3.1]; ids are int (smallint where <= 20 values).
-- Text columns use the "C" collation: byte order, whatever the server's locale, so that sorting
-- customers by C_FIRST (the middle-customer rule, 2.5.2.2) gives the same answer everywhere.

CREATE TABLE warehouse (
    w_id        int           NOT NULL,
    w_name      varchar(10) COLLATE "C"   NOT NULL,
    w_street_1  varchar(20) COLLATE "C"   NOT NULL,
    w_street_2  varchar(20) COLLATE "C"   NOT NULL,
    w_city      varchar(20) COLLATE "C"   NOT NULL,
    w_state     char(2) COLLATE "C"       NOT NULL,
    w_zip       char(9) COLLATE "C"       NOT NULL,
    w_tax       numeric(4,4)  NOT NULL,
    w_ytd       numeric(12,2) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE district (
    d_id        smallint      NOT NULL,
    d_w_id      int           NOT NULL,
    d_name      varchar(10) COLLATE "C"   NOT NULL,
    d_street_1  varchar(20) COLLATE "C"   NOT NULL,
    d_street_2  varchar(20) COLLATE "C"   NOT NULL,
    d_city      varchar(20) COLLATE "C"   NOT NULL,
    d_state     char(2) COLLATE "C"       NOT NULL,
    d_zip       char(9) COLLATE "C"       NOT NULL,
    d_tax       numeric(4,4)  NOT NULL,
    d_ytd       numeric(12,2) NOT NULL,
    d_next_o_id int           NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE customer (
    c_id           int           NOT NULL,
    c_d_id         smallint      NOT NULL,
    c_w_id         int           NOT NULL,
    c_first        varchar(16) COLLATE "C"   NOT NULL,
    c_middle       char(2) COLLATE "C"       NOT NULL,
    c_last         varchar(16) COLLATE "C"   NOT NULL,
    c_street_1     varchar(20) COLLATE "C"   NOT NULL,
    c_street_2     varchar(20) COLLATE "C"   NOT NULL,
    c_city         varchar(20) COLLATE "C"   NOT NULL,
    c_state        char(2) COLLATE "C"       NOT NULL,
    c_zip          char(9) COLLATE "C"       NOT NULL,
    c_phone        char(16) COLLATE "C"      NOT NULL,
    c_since        timestamp     NOT NULL,
    c_credit       char(2) COLLATE "C"       NOT NULL,
    c_credit_lim   numeric(12,2) NOT NULL,
    c_discount     numeric(4,4)  NOT NULL,
    c_balance      numeric(12,2) NOT NULL,
    c_ytd_payment  numeric(12,2) NOT NULL,
    c_payment_cnt  int           NOT NULL,
    c_delivery_cnt int           NOT NULL,
    c_data         varchar(500) COLLATE "C"  NOT NULL
) WITH (autovacuum_enabled = off);

-- No key by design [1.3]: HISTORY rows are only ever inserted.
CREATE TABLE history (
    h_c_id    int           NOT NULL,
    h_c_d_id  smallint      NOT NULL,
    h_c_w_id  int           NOT NULL,
    h_d_id    smallint      NOT NULL,
    h_w_id    int           NOT NULL,
    h_date    timestamp     NOT NULL,
    h_amount  numeric(6,2)  NOT NULL,
    h_data    varchar(24) COLLATE "C"   NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE new_order (
    no_o_id  int      NOT NULL,
    no_d_id  smallint NOT NULL,
    no_w_id  int      NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE orders (
    o_id         int       NOT NULL,
    o_d_id       smallint  NOT NULL,
    o_w_id       int       NOT NULL,
    o_c_id       int       NOT NULL,
    o_entry_d    timestamp NOT NULL,
    o_carrier_id smallint,
    o_ol_cnt     smallint  NOT NULL,
    o_all_local  smallint  NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE order_line (
    ol_o_id        int          NOT NULL,
    ol_d_id        smallint     NOT NULL,
    ol_w_id        int          NOT NULL,
    ol_number      smallint     NOT NULL,
    ol_i_id        int          NOT NULL,
    ol_supply_w_id int          NOT NULL,
    ol_delivery_d  timestamp,
    ol_quantity    smallint     NOT NULL,
    ol_amount      numeric(6,2) NOT NULL,
    ol_dist_info   char(24) COLLATE "C"     NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE item (
    i_id     int          NOT NULL,
    i_im_id  int          NOT NULL,
    i_name   varchar(24) COLLATE "C"  NOT NULL,
    i_price  numeric(5,2) NOT NULL,
    i_data   varchar(50) COLLATE "C"  NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE stock (
    s_i_id       int          NOT NULL,
    s_w_id       int          NOT NULL,
    s_quantity   int          NOT NULL,
    s_dist_01    char(24) COLLATE "C"     NOT NULL,
    s_dist_02    char(24) COLLATE "C"     NOT NULL,
    s_dist_03    char(24) COLLATE "C"     NOT NULL,
    s_dist_04    char(24) COLLATE "C"     NOT NULL,
    s_dist_05    char(24) COLLATE "C"     NOT NULL,
    s_dist_06    char(24) COLLATE "C"     NOT NULL,
    s_dist_07    char(24) COLLATE "C"     NOT NULL,
    s_dist_08    char(24) COLLATE "C"     NOT NULL,
    s_dist_09    char(24) COLLATE "C"     NOT NULL,
    s_dist_10    char(24) COLLATE "C"     NOT NULL,
    s_ytd        int          NOT NULL,
    s_order_cnt  int          NOT NULL,
    s_remote_cnt int          NOT NULL,
    s_data       varchar(50) COLLATE "C"  NOT NULL
) WITH (autovacuum_enabled = off);

-- One row: what the build did and the C constants it drew [2.1.6, 2.1.6.1].
CREATE TABLE tpcc_meta (
    warehouses      int         NOT NULL,
    c_last_load     int         NOT NULL,
    c_id_load       int         NOT NULL,
    c_ol_i_id_load  int         NOT NULL,
    seed            bigint,
    build_users     int         NOT NULL,
    build_seconds   numeric(10,3) NOT NULL,
    built_at        timestamptz NOT NULL DEFAULT now(),
    oltplab_version text        NOT NULL
);
