-- The 33 tables of the TPC-E-derived brokerage, under TPC-E's table and column names, each
-- with its columns in the order of workloads/brokerage/schema.py COLUMNS (the COPY text's
-- order); then brokerage_balance and brokerage_meta, oltplab's own records. Keys and indexes
-- come after the load (keys.sql). Autovacuum is off while loading; the loader switches it back
-- on when the build completes. Ids are bigint, money numeric(12,2) (balances and totals
-- numeric(15,2)), commission rates numeric(5,2) percent, tax rates numeric(6,5), booleans
-- boolean (the COPY text's 1/0), timestamps without a time zone.

-- Fixed: the same rows in every build.
CREATE TABLE charge (
    ch_tt_id   char(3)       NOT NULL,
    ch_c_tier  smallint      NOT NULL,
    ch_chrg    numeric(12,2) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE commission_rate (
    cr_c_tier    smallint     NOT NULL,
    cr_tt_id     char(3)      NOT NULL,
    cr_ex_id     varchar(6)   NOT NULL,
    cr_from_qty  integer      NOT NULL,
    cr_to_qty    integer      NOT NULL,
    cr_rate      numeric(5,2) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE exchange (
    ex_id        varchar(6)   NOT NULL,
    ex_name      varchar(100) NOT NULL,
    ex_num_symb  integer      NOT NULL,
    ex_open      smallint     NOT NULL,  -- hhmm
    ex_close     smallint     NOT NULL,
    ex_desc      varchar(150),
    ex_ad_id     bigint       NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE industry (
    in_id     char(2)     NOT NULL,
    in_name   varchar(50) NOT NULL,
    in_sc_id  char(2)     NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE sector (
    sc_id    char(2)     NOT NULL,
    sc_name  varchar(30) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE status_type (
    st_id    char(4)  NOT NULL,
    st_name  char(10) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE taxrate (
    tx_id    varchar(4)   NOT NULL,
    tx_name  varchar(50)  NOT NULL,
    tx_rate  numeric(6,5) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE trade_type (
    tt_id       char(3)     NOT NULL,
    tt_name     varchar(12) NOT NULL,
    tt_is_sell  boolean     NOT NULL,
    tt_is_mrkt  boolean     NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE zip_code (
    zc_code  varchar(12) NOT NULL,
    zc_town  varchar(80) NOT NULL,
    zc_div   varchar(80) NOT NULL
) WITH (autovacuum_enabled = off);

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
    c_email_2  varchar(50)
) WITH (autovacuum_enabled = off);

CREATE TABLE customer_account (
    ca_id      bigint        NOT NULL,
    ca_b_id    bigint        NOT NULL,
    ca_c_id    bigint        NOT NULL,
    ca_name    varchar(50),
    ca_tax_st  smallint      NOT NULL,
    ca_bal     numeric(15,2) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE account_permission (
    ap_ca_id   bigint      NOT NULL,
    ap_acl     char(4)     NOT NULL,
    ap_tax_id  varchar(20) NOT NULL,
    ap_l_name  varchar(25) NOT NULL,
    ap_f_name  varchar(20) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE customer_taxrate (
    cx_tx_id  varchar(4) NOT NULL,
    cx_c_id   bigint     NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE address (
    ad_id       bigint      NOT NULL,
    ad_line1    varchar(80),
    ad_line2    varchar(80),
    ad_zc_code  varchar(12) NOT NULL,
    ad_ctry     varchar(80)
) WITH (autovacuum_enabled = off);

-- Every Trade-Result updates its broker's row: with ten brokers per 1,000 customers the rows
-- of a larger build share a page, and a sequential scan's page-level predicate lock under
-- SERIALIZABLE makes every two Trade-Results conflict. Fillfactor 10 keeps about one row a
-- page (and room for HOT updates).
CREATE TABLE broker (
    b_id          bigint        NOT NULL,
    b_st_id       char(4)       NOT NULL,
    b_name        varchar(49)   NOT NULL,
    b_num_trades  integer       NOT NULL,
    b_comm_total  numeric(15,2) NOT NULL
) WITH (fillfactor = 10, autovacuum_enabled = off);

CREATE TABLE watch_list (
    wl_id    bigint NOT NULL,
    wl_c_id  bigint NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE watch_item (
    wi_wl_id   bigint      NOT NULL,
    wi_s_symb  varchar(15) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE company (
    co_id         bigint       NOT NULL,
    co_st_id      char(4)      NOT NULL,
    co_name       varchar(60)  NOT NULL,
    co_in_id      char(2)      NOT NULL,
    co_sp_rate    char(4)      NOT NULL,
    co_ceo        varchar(46)  NOT NULL,
    co_ad_id      bigint       NOT NULL,
    co_desc       varchar(150) NOT NULL,
    co_open_date  date         NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE company_competitor (
    cp_co_id       bigint  NOT NULL,
    cp_comp_co_id  bigint  NOT NULL,
    cp_in_id       char(2) NOT NULL
) WITH (autovacuum_enabled = off);

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
    s_pe              numeric(10,2) NOT NULL,
    s_52wk_high       numeric(12,2) NOT NULL,
    s_52wk_high_date  date          NOT NULL,
    s_52wk_low        numeric(12,2) NOT NULL,
    s_52wk_low_date   date          NOT NULL,
    s_dividend        numeric(12,2) NOT NULL,
    s_yield           numeric(5,2)  NOT NULL
) WITH (autovacuum_enabled = off);

-- Updated by every Market-Feed entry.
CREATE TABLE last_trade (
    lt_s_symb      varchar(15)   NOT NULL,
    lt_dts         timestamp     NOT NULL,
    lt_price       numeric(12,2) NOT NULL,
    lt_open_price  numeric(12,2) NOT NULL,
    lt_vol         bigint        NOT NULL
) WITH (fillfactor = 80, autovacuum_enabled = off);

CREATE TABLE daily_market (
    dm_date    date          NOT NULL,
    dm_s_symb  varchar(15)   NOT NULL,
    dm_close   numeric(12,2) NOT NULL,
    dm_high    numeric(12,2) NOT NULL,
    dm_low     numeric(12,2) NOT NULL,
    dm_vol     bigint        NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE financial (
    fi_co_id           bigint        NOT NULL,
    fi_year            smallint      NOT NULL,
    fi_qtr             smallint      NOT NULL,
    fi_qtr_start_date  date          NOT NULL,
    fi_revenue         numeric(15,2) NOT NULL,
    fi_net_earn        numeric(15,2) NOT NULL,
    fi_basic_eps       numeric(10,2) NOT NULL,
    fi_dilut_eps       numeric(10,2) NOT NULL,
    fi_margin          numeric(10,2) NOT NULL,
    fi_inventory       numeric(15,2) NOT NULL,
    fi_assets          numeric(15,2) NOT NULL,
    fi_liability       numeric(15,2) NOT NULL,
    fi_out_basic       bigint        NOT NULL,
    fi_out_dilut       bigint        NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE news_item (
    ni_id        bigint       NOT NULL,
    ni_headline  varchar(80)  NOT NULL,
    ni_summary   varchar(255) NOT NULL,
    ni_item      text         NOT NULL,
    ni_dts       timestamp    NOT NULL,
    ni_author    varchar(30),
    ni_source    varchar(30)  NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE news_xref (
    nx_ni_id  bigint NOT NULL,
    nx_co_id  bigint NOT NULL
) WITH (autovacuum_enabled = off);

-- Growing: grow with the customers and the days of trading, and with every run.
CREATE TABLE trade (
    t_id           bigint        NOT NULL,
    t_dts          timestamp     NOT NULL,
    t_st_id        char(4)       NOT NULL,
    t_tt_id        char(3)       NOT NULL,
    t_is_cash      boolean       NOT NULL,
    t_s_symb       varchar(15)   NOT NULL,
    t_qty          integer       NOT NULL,
    t_bid_price    numeric(12,2) NOT NULL,
    t_ca_id        bigint        NOT NULL,
    t_exec_name    varchar(49)   NOT NULL,
    t_trade_price  numeric(12,2),              -- null until the trade completes
    t_chrg         numeric(12,2) NOT NULL,
    t_comm         numeric(12,2) NOT NULL,
    t_tax          numeric(12,2) NOT NULL,
    t_lifo         boolean       NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE trade_history (
    th_t_id   bigint    NOT NULL,
    th_dts    timestamp NOT NULL,
    th_st_id  char(4)   NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE settlement (
    se_t_id           bigint        NOT NULL,
    se_cash_type      varchar(40)   NOT NULL,
    se_cash_due_date  date          NOT NULL,
    se_amt            numeric(12,2) NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE cash_transaction (
    ct_t_id  bigint        NOT NULL,
    ct_dts   timestamp     NOT NULL,
    ct_amt   numeric(12,2) NOT NULL,
    ct_name  varchar(100)  NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE holding (
    h_t_id    bigint        NOT NULL,
    h_ca_id   bigint        NOT NULL,
    h_s_symb  varchar(15)   NOT NULL,
    h_dts     timestamp     NOT NULL,
    h_price   numeric(12,2) NOT NULL,
    h_qty     integer       NOT NULL   -- negative: a short position
) WITH (autovacuum_enabled = off);

CREATE TABLE holding_history (
    hh_h_t_id      bigint  NOT NULL,
    hh_t_id        bigint  NOT NULL,
    hh_before_qty  integer NOT NULL,
    hh_after_qty   integer NOT NULL
) WITH (autovacuum_enabled = off);

CREATE TABLE holding_summary (
    hs_ca_id   bigint      NOT NULL,
    hs_s_symb  varchar(15) NOT NULL,
    hs_qty     integer     NOT NULL
) WITH (autovacuum_enabled = off);

-- Pending limit orders (empty after the build): Trade-Order inserts, Market-Feed and
-- Trade-Cleanup delete.
CREATE TABLE trade_request (
    tr_t_id       bigint        NOT NULL,
    tr_tt_id      char(3)       NOT NULL,
    tr_s_symb     varchar(15)   NOT NULL,
    tr_qty        integer       NOT NULL,
    tr_bid_price  numeric(12,2) NOT NULL,
    tr_b_id       bigint        NOT NULL
) WITH (autovacuum_enabled = off);

-- oltplab's record of each account's balance: opening, before the loaded trades, and built,
-- ca_bal when the build ended; the checks add the cash transactions since to built.
CREATE TABLE brokerage_balance (
    ca_id    bigint        NOT NULL,
    opening  numeric(15,2) NOT NULL,
    built    numeric(15,2) NOT NULL
) WITH (autovacuum_enabled = off);

-- One row, written last: what the build made (its scale, the highest loaded trade id, the
-- first day of its trading, its seed); a database without it holds an unfinished build.
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
    build_seconds    numeric(10,3) NOT NULL,
    built_at         timestamptz   NOT NULL DEFAULT now(),
    oltplab_version  text          NOT NULL
);
