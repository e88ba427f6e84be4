-- The 33 tables of the TPC-E-derived brokerage on MariaDB, under TPC-E's table and column
-- names, each with its columns in the order of workloads/brokerage/schema.py COLUMNS (the
-- LOAD DATA text's order) and the types of the PostgreSQL schema in MariaDB's words; then
-- brokerage_balance and brokerage_meta, oltplab's own records. InnoDB, latin1 with byte order
-- (latin1_bin), so that names compare as bytes, as on PostgreSQL. Primary keys are declared
-- here: InnoDB clusters each table on its key, and adding one after the load would copy the
-- table again (the loader's docstring gives the measured times); the secondary indexes come
-- after the load (keys.sql). Ids are bigint, money decimal(12,2) (balances and totals
-- decimal(15,2)), commission rates decimal(5,2) percent, tax rates decimal(6,5), booleans
-- boolean (tinyint(1): the text's 1/0), timestamps datetime (no time zone; MariaDB's
-- timestamp type converts between zones and ends in 2038), news text mediumtext (text
-- holds 64 KiB; an item is about 100 KB).

-- Fixed: the same rows in every build.
CREATE TABLE charge (
    ch_tt_id   char(3)       NOT NULL,
    ch_c_tier  smallint      NOT NULL,
    ch_chrg    decimal(12,2) NOT NULL,
    PRIMARY KEY (ch_tt_id, ch_c_tier)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE commission_rate (
    cr_c_tier    smallint     NOT NULL,
    cr_tt_id     char(3)      NOT NULL,
    cr_ex_id     varchar(6)   NOT NULL,
    cr_from_qty  integer      NOT NULL,
    cr_to_qty    integer      NOT NULL,
    cr_rate      decimal(5,2) NOT NULL,
    PRIMARY KEY (cr_c_tier, cr_tt_id, cr_ex_id, cr_from_qty)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE exchange (
    ex_id        varchar(6)   NOT NULL,
    ex_name      varchar(100) NOT NULL,
    ex_num_symb  integer      NOT NULL,
    ex_open      smallint     NOT NULL,  -- hhmm
    ex_close     smallint     NOT NULL,
    ex_desc      varchar(150),
    ex_ad_id     bigint       NOT NULL,
    PRIMARY KEY (ex_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE industry (
    in_id     char(2)     NOT NULL,
    in_name   varchar(50) NOT NULL,
    in_sc_id  char(2)     NOT NULL,
    PRIMARY KEY (in_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE sector (
    sc_id    char(2)     NOT NULL,
    sc_name  varchar(30) NOT NULL,
    PRIMARY KEY (sc_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE status_type (
    st_id    char(4)  NOT NULL,
    st_name  char(10) NOT NULL,
    PRIMARY KEY (st_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE taxrate (
    tx_id    varchar(4)   NOT NULL,
    tx_name  varchar(50)  NOT NULL,
    tx_rate  decimal(6,5) NOT NULL,
    PRIMARY KEY (tx_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE trade_type (
    tt_id       char(3)     NOT NULL,
    tt_name     varchar(12) NOT NULL,
    tt_is_sell  boolean     NOT NULL,
    tt_is_mrkt  boolean     NOT NULL,
    PRIMARY KEY (tt_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE zip_code (
    zc_code  varchar(12) NOT NULL,
    zc_town  varchar(80) NOT NULL,
    zc_div   varchar(80) NOT NULL,
    PRIMARY KEY (zc_code)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- Scaling: grow with the customers.
CREATE TABLE customer (
    c_id       bigint      NOT NULL,
    c_tax_id   varchar(20) NOT NULL,
    c_st_id    char(4)     NOT NULL,
    c_l_name   varchar(25) NOT NULL,
    c_f_name   varchar(20) NOT NULL,
    c_m_name   char(1),
    c_gndr     char(1),
    c_tier     smallint    NOT NULL,
    c_dob      date        NOT NULL,
    c_ad_id    bigint      NOT NULL,
    c_ctry_1   varchar(3),
    c_area_1   varchar(3),
    c_local_1  varchar(10),
    c_ext_1    varchar(5),
    c_ctry_2   varchar(3),
    c_area_2   varchar(3),
    c_local_2  varchar(10),
    c_ext_2    varchar(5),
    c_ctry_3   varchar(3),
    c_area_3   varchar(3),
    c_local_3  varchar(10),
    c_ext_3    varchar(5),
    c_email_1  varchar(50),
    c_email_2  varchar(50),
    PRIMARY KEY (c_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE customer_account (
    ca_id      bigint        NOT NULL,
    ca_b_id    bigint        NOT NULL,
    ca_c_id    bigint        NOT NULL,
    ca_name    varchar(50),
    ca_tax_st  smallint      NOT NULL,
    ca_bal     decimal(15,2) NOT NULL,
    PRIMARY KEY (ca_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE account_permission (
    ap_ca_id   bigint      NOT NULL,
    ap_acl     char(4)     NOT NULL,
    ap_tax_id  varchar(20) NOT NULL,
    ap_l_name  varchar(25) NOT NULL,
    ap_f_name  varchar(20) NOT NULL,
    PRIMARY KEY (ap_ca_id, ap_tax_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE customer_taxrate (
    cx_tx_id  varchar(4) NOT NULL,
    cx_c_id   bigint     NOT NULL,
    PRIMARY KEY (cx_tx_id, cx_c_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE address (
    ad_id       bigint      NOT NULL,
    ad_line1    varchar(80),
    ad_line2    varchar(80),
    ad_zc_code  varchar(12) NOT NULL,
    ad_ctry     varchar(80),
    PRIMARY KEY (ad_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- Every Trade-Result updates its broker's row (b_id: InnoDB locks rows, not pages, so the
-- brokers' rows may share a page).
CREATE TABLE broker (
    b_id          bigint        NOT NULL,
    b_st_id       char(4)       NOT NULL,
    b_name        varchar(49)   NOT NULL,
    b_num_trades  integer       NOT NULL,
    b_comm_total  decimal(15,2) NOT NULL,
    PRIMARY KEY (b_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE watch_list (
    wl_id    bigint NOT NULL,
    wl_c_id  bigint NOT NULL,
    PRIMARY KEY (wl_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE watch_item (
    wi_wl_id   bigint      NOT NULL,
    wi_s_symb  varchar(15) NOT NULL,
    PRIMARY KEY (wi_wl_id, wi_s_symb)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE company (
    co_id         bigint       NOT NULL,
    co_st_id      char(4)      NOT NULL,
    co_name       varchar(60)  NOT NULL,
    co_in_id      char(2)      NOT NULL,
    co_sp_rate    char(4)      NOT NULL,
    co_ceo        varchar(46)  NOT NULL,
    co_ad_id      bigint       NOT NULL,
    co_desc       varchar(150) NOT NULL,
    co_open_date  date         NOT NULL,
    PRIMARY KEY (co_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE company_competitor (
    cp_co_id       bigint  NOT NULL,
    cp_comp_co_id  bigint  NOT NULL,
    cp_in_id       char(2) NOT NULL,
    PRIMARY KEY (cp_co_id, cp_comp_co_id, cp_in_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE security (
    s_symb            varchar(15)   NOT NULL,
    s_issue           char(6)       NOT NULL,
    s_st_id           char(4)       NOT NULL,
    s_name            varchar(70)   NOT NULL,
    s_ex_id           varchar(6)    NOT NULL,
    s_co_id           bigint        NOT NULL,
    s_num_out         bigint        NOT NULL,
    s_start_date      date          NOT NULL,
    s_exch_date       date          NOT NULL,
    s_pe              decimal(10,2) NOT NULL,
    s_52wk_high       decimal(12,2) NOT NULL,
    s_52wk_high_date  date          NOT NULL,
    s_52wk_low        decimal(12,2) NOT NULL,
    s_52wk_low_date   date          NOT NULL,
    s_dividend        decimal(12,2) NOT NULL,
    s_yield           decimal(5,2)  NOT NULL,
    PRIMARY KEY (s_symb)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- Updated by every Market-Feed entry.
CREATE TABLE last_trade (
    lt_s_symb      varchar(15)   NOT NULL,
    lt_dts         datetime      NOT NULL,
    lt_price       decimal(12,2) NOT NULL,
    lt_open_price  decimal(12,2) NOT NULL,
    lt_vol         bigint        NOT NULL,
    PRIMARY KEY (lt_s_symb)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE daily_market (
    dm_date    date          NOT NULL,
    dm_s_symb  varchar(15)   NOT NULL,
    dm_close   decimal(12,2) NOT NULL,
    dm_high    decimal(12,2) NOT NULL,
    dm_low     decimal(12,2) NOT NULL,
    dm_vol     bigint        NOT NULL,
    PRIMARY KEY (dm_s_symb, dm_date)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE financial (
    fi_co_id           bigint        NOT NULL,
    fi_year            smallint      NOT NULL,
    fi_qtr             smallint      NOT NULL,
    fi_qtr_start_date  date          NOT NULL,
    fi_revenue         decimal(15,2) NOT NULL,
    fi_net_earn        decimal(15,2) NOT NULL,
    fi_basic_eps       decimal(10,2) NOT NULL,
    fi_dilut_eps       decimal(10,2) NOT NULL,
    fi_margin          decimal(10,2) NOT NULL,
    fi_inventory       decimal(15,2) NOT NULL,
    fi_assets          decimal(15,2) NOT NULL,
    fi_liability       decimal(15,2) NOT NULL,
    fi_out_basic       bigint        NOT NULL,
    fi_out_dilut       bigint        NOT NULL,
    PRIMARY KEY (fi_co_id, fi_year, fi_qtr)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE news_item (
    ni_id        bigint       NOT NULL,
    ni_headline  varchar(80)  NOT NULL,
    ni_summary   varchar(255) NOT NULL,
    ni_item      mediumtext   NOT NULL,
    ni_dts       datetime     NOT NULL,
    ni_author    varchar(30),
    ni_source    varchar(30)  NOT NULL,
    PRIMARY KEY (ni_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE news_xref (
    nx_ni_id  bigint NOT NULL,
    nx_co_id  bigint NOT NULL,
    PRIMARY KEY (nx_ni_id, nx_co_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- Growing: grow with the customers and the days of trading, and with every run.
CREATE TABLE trade (
    t_id           bigint        NOT NULL,
    t_dts          datetime      NOT NULL,
    t_st_id        char(4)       NOT NULL,
    t_tt_id        char(3)       NOT NULL,
    t_is_cash      boolean       NOT NULL,
    t_s_symb       varchar(15)   NOT NULL,
    t_qty          integer       NOT NULL,
    t_bid_price    decimal(12,2) NOT NULL,
    t_ca_id        bigint        NOT NULL,
    t_exec_name    varchar(49)   NOT NULL,
    t_trade_price  decimal(12,2),  -- null until the trade completes
    t_chrg         decimal(12,2) NOT NULL,
    t_comm         decimal(12,2) NOT NULL,
    t_tax          decimal(12,2) NOT NULL,
    t_lifo         boolean       NOT NULL,
    PRIMARY KEY (t_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE trade_history (
    th_t_id   bigint    NOT NULL,
    th_dts    datetime  NOT NULL,
    th_st_id  char(4)   NOT NULL,
    PRIMARY KEY (th_t_id, th_st_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE settlement (
    se_t_id           bigint        NOT NULL,
    se_cash_type      varchar(40)   NOT NULL,
    se_cash_due_date  date          NOT NULL,
    se_amt            decimal(12,2) NOT NULL,
    PRIMARY KEY (se_t_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE cash_transaction (
    ct_t_id  bigint        NOT NULL,
    ct_dts   datetime      NOT NULL,
    ct_amt   decimal(12,2) NOT NULL,
    ct_name  varchar(100)  NOT NULL,
    PRIMARY KEY (ct_t_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE holding (
    h_t_id    bigint        NOT NULL,
    h_ca_id   bigint        NOT NULL,
    h_s_symb  varchar(15)   NOT NULL,
    h_dts     datetime      NOT NULL,
    h_price   decimal(12,2) NOT NULL,
    h_qty     integer       NOT NULL,  -- negative: a short position
    PRIMARY KEY (h_t_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE holding_history (
    hh_h_t_id      bigint  NOT NULL,
    hh_t_id        bigint  NOT NULL,
    hh_before_qty  integer NOT NULL,
    hh_after_qty   integer NOT NULL,
    PRIMARY KEY (hh_h_t_id, hh_t_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

CREATE TABLE holding_summary (
    hs_ca_id   bigint      NOT NULL,
    hs_s_symb  varchar(15) NOT NULL,
    hs_qty     integer     NOT NULL,
    PRIMARY KEY (hs_ca_id, hs_s_symb)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- Pending limit orders (empty after the build): Trade-Order inserts, Market-Feed and
-- Trade-Cleanup delete.
CREATE TABLE trade_request (
    tr_t_id       bigint        NOT NULL,
    tr_tt_id      char(3)       NOT NULL,
    tr_s_symb     varchar(15)   NOT NULL,
    tr_qty        integer       NOT NULL,
    tr_bid_price  decimal(12,2) NOT NULL,
    tr_b_id       bigint        NOT NULL,
    PRIMARY KEY (tr_t_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- oltplab's record of each account's balance: opening, before the loaded trades, and built,
-- ca_bal when the build ended; the checks add the cash transactions since to built.
CREATE TABLE brokerage_balance (
    ca_id    bigint        NOT NULL,
    opening  decimal(15,2) NOT NULL,
    built    decimal(15,2) NOT NULL,
    PRIMARY KEY (ca_id)
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- One row, written last: what the build made (its scale, the highest loaded trade id, the
-- first day of its trading, its seed, the server's innodb_page_size in KiB); a database without
-- it holds an unfinished build.
CREATE TABLE brokerage_meta (
    customers        bigint        NOT NULL,
    days             integer       NOT NULL,
    scale_factor     integer       NOT NULL,
    trades           bigint        NOT NULL,
    max_t_id         bigint        NOT NULL,
    seed             bigint        NOT NULL,
    build_users      integer       NOT NULL,
    start_date       date          NOT NULL,
    page_kib         integer,
    build_seconds    decimal(10,3) NOT NULL,
    built_at         timestamp     NOT NULL DEFAULT CURRENT_TIMESTAMP,
    oltplab_version  varchar(32)   NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = latin1 COLLATE = latin1_bin;

-- The trade ids of a run's Trade-Orders: a sequence (MariaDB 10.3 and later), which hands out
-- ids outside the transaction, as PostgreSQL's does, so that concurrent Trade-Orders do not
-- wait for each other (a one-row counter table would hold each one's row lock until its
-- commit). The loader restarts it past the highest loaded trade id; ids it had cached are
-- skipped at a server's restart, which leaves gaps, as a rollback does.
CREATE SEQUENCE seq_trade_id START WITH 1 INCREMENT BY 1 ENGINE = InnoDB;
