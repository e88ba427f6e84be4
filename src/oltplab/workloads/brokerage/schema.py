"""What every engine's TPC-E-derived brokerage schema holds, whatever its SQL dialect.

The 33 tables under TPC-E's own table and column names, each with its columns in load order
(the COPY / LOAD DATA text of workloads/brokerage/population.py follows it, and each engine's
sql/tables.sql declares them in this order), its primary key and its other indexes; and
``brokerage_meta``, the build's record, written last (it marks a complete build). Money is
NUMERIC(12,2) (NUMERIC(15,2) for balances and totals), rates NUMERIC(6,5) for tax and
NUMERIC(5,2) percent for commissions, timestamps without a time zone.

Groups: FIXED tables hold the same rows in every build; SCALING ones grow with the customers;
GROWING ones with the customers and the days of trading, and the run adds to them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SchemaError, UsageError

#: table -> its columns, in load order.
COLUMNS: dict[str, tuple[str, ...]] = {
    # fixed
    "charge": ("ch_tt_id", "ch_c_tier", "ch_chrg"),
    "commission_rate": ("cr_c_tier", "cr_tt_id", "cr_ex_id", "cr_from_qty", "cr_to_qty",
                        "cr_rate"),
    "exchange": ("ex_id", "ex_name", "ex_num_symb", "ex_open", "ex_close", "ex_desc",
                 "ex_ad_id"),
    "industry": ("in_id", "in_name", "in_sc_id"),
    "sector": ("sc_id", "sc_name"),
    "status_type": ("st_id", "st_name"),
    "taxrate": ("tx_id", "tx_name", "tx_rate"),
    "trade_type": ("tt_id", "tt_name", "tt_is_sell", "tt_is_mrkt"),
    "zip_code": ("zc_code", "zc_town", "zc_div"),
    # scaling
    "customer": ("c_id", "c_tax_id", "c_st_id", "c_l_name", "c_f_name", "c_m_name", "c_gndr",
                 "c_tier", "c_dob", "c_ad_id", "c_ctry_1", "c_area_1", "c_local_1", "c_ext_1",
                 "c_ctry_2", "c_area_2", "c_local_2", "c_ext_2", "c_ctry_3", "c_area_3",
                 "c_local_3", "c_ext_3", "c_email_1", "c_email_2"),
    "customer_account": ("ca_id", "ca_b_id", "ca_c_id", "ca_name", "ca_tax_st", "ca_bal"),
    "account_permission": ("ap_ca_id", "ap_acl", "ap_tax_id", "ap_l_name", "ap_f_name"),
    "customer_taxrate": ("cx_tx_id", "cx_c_id"),
    "address": ("ad_id", "ad_line1", "ad_line2", "ad_zc_code", "ad_ctry"),
    "broker": ("b_id", "b_st_id", "b_name", "b_num_trades", "b_comm_total"),
    "watch_list": ("wl_id", "wl_c_id"),
    "watch_item": ("wi_wl_id", "wi_s_symb"),
    "company": ("co_id", "co_st_id", "co_name", "co_in_id", "co_sp_rate", "co_ceo",
                "co_ad_id", "co_desc", "co_open_date"),
    "company_competitor": ("cp_co_id", "cp_comp_co_id", "cp_in_id"),
    "security": ("s_symb", "s_issue", "s_st_id", "s_name", "s_ex_id", "s_co_id", "s_num_out",
                 "s_start_date", "s_exch_date", "s_pe", "s_52wk_high", "s_52wk_high_date",
                 "s_52wk_low", "s_52wk_low_date", "s_dividend", "s_yield"),
    "last_trade": ("lt_s_symb", "lt_dts", "lt_price", "lt_open_price", "lt_vol"),
    "daily_market": ("dm_date", "dm_s_symb", "dm_close", "dm_high", "dm_low", "dm_vol"),
    "financial": ("fi_co_id", "fi_year", "fi_qtr", "fi_qtr_start_date", "fi_revenue",
                  "fi_net_earn", "fi_basic_eps", "fi_dilut_eps", "fi_margin", "fi_inventory",
                  "fi_assets", "fi_liability", "fi_out_basic", "fi_out_dilut"),
    "news_item": ("ni_id", "ni_headline", "ni_summary", "ni_item", "ni_dts", "ni_author",
                  "ni_source"),
    "news_xref": ("nx_ni_id", "nx_co_id"),
    # growing
    "trade": ("t_id", "t_dts", "t_st_id", "t_tt_id", "t_is_cash", "t_s_symb", "t_qty",
              "t_bid_price", "t_ca_id", "t_exec_name", "t_trade_price", "t_chrg", "t_comm",
              "t_tax", "t_lifo"),
    "trade_history": ("th_t_id", "th_dts", "th_st_id"),
    "settlement": ("se_t_id", "se_cash_type", "se_cash_due_date", "se_amt"),
    "cash_transaction": ("ct_t_id", "ct_dts", "ct_amt", "ct_name"),
    "holding": ("h_t_id", "h_ca_id", "h_s_symb", "h_dts", "h_price", "h_qty"),
    "holding_history": ("hh_h_t_id", "hh_t_id", "hh_before_qty", "hh_after_qty"),
    "holding_summary": ("hs_ca_id", "hs_s_symb", "hs_qty"),
    "trade_request": ("tr_t_id", "tr_tt_id", "tr_s_symb", "tr_qty", "tr_bid_price", "tr_b_id"),
}

FIXED = ("charge", "commission_rate", "exchange", "industry", "sector", "status_type",
         "taxrate", "trade_type", "zip_code")
SCALING = ("customer", "customer_account", "account_permission", "customer_taxrate",
           "address", "broker", "watch_list", "watch_item", "company", "company_competitor",
           "security", "last_trade", "daily_market", "financial", "news_item", "news_xref")
GROWING = ("trade", "trade_history", "settlement", "cash_transaction", "holding",
           "holding_history", "holding_summary", "trade_request")
TABLES = FIXED + SCALING + GROWING

#: table -> its primary key's columns.
PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "charge": ("ch_tt_id", "ch_c_tier"),
    "commission_rate": ("cr_c_tier", "cr_tt_id", "cr_ex_id", "cr_from_qty"),
    "exchange": ("ex_id",), "industry": ("in_id",), "sector": ("sc_id",),
    "status_type": ("st_id",), "taxrate": ("tx_id",), "trade_type": ("tt_id",),
    "zip_code": ("zc_code",),
    "customer": ("c_id",), "customer_account": ("ca_id",),
    "account_permission": ("ap_ca_id", "ap_tax_id"),
    "customer_taxrate": ("cx_tx_id", "cx_c_id"), "address": ("ad_id",), "broker": ("b_id",),
    "watch_list": ("wl_id",), "watch_item": ("wi_wl_id", "wi_s_symb"), "company": ("co_id",),
    "company_competitor": ("cp_co_id", "cp_comp_co_id", "cp_in_id"), "security": ("s_symb",),
    "last_trade": ("lt_s_symb",), "daily_market": ("dm_s_symb", "dm_date"),
    "financial": ("fi_co_id", "fi_year", "fi_qtr"), "news_item": ("ni_id",),
    "news_xref": ("nx_ni_id", "nx_co_id"),
    "trade": ("t_id",), "trade_history": ("th_t_id", "th_st_id"), "settlement": ("se_t_id",),
    "cash_transaction": ("ct_t_id",), "holding": ("h_t_id",),
    "holding_history": ("hh_h_t_id", "hh_t_id"), "holding_summary": ("hs_ca_id", "hs_s_symb"),
    "trade_request": ("tr_t_id",),
}

#: index name -> (table, columns): the secondary indexes the frames need.
INDEXES: dict[str, tuple[str, tuple[str, ...]]] = {
    "i_c_tax_id": ("customer", ("c_tax_id",)),
    "i_ca_c_id": ("customer_account", ("ca_c_id",)),
    # Trade-Order and Trade-Result find a customer's two tax rates by the customer
    "i_cx_c_id": ("customer_taxrate", ("cx_c_id",)),
    "i_wl_c_id": ("watch_list", ("wl_c_id",)),
    "i_co_name": ("company", ("co_name",)),
    "i_s_co_id": ("security", ("s_co_id", "s_issue")),
    "i_dm_s_symb": ("daily_market", ("dm_s_symb", "dm_date")),
    "i_b_name": ("broker", ("b_name",)),
    "i_t_ca_id": ("trade", ("t_ca_id", "t_dts")),
    "i_t_s_symb": ("trade", ("t_s_symb", "t_dts")),
    "i_t_st_id": ("trade", ("t_st_id",)),
    "i_h_ca_id": ("holding", ("h_ca_id", "h_s_symb", "h_dts")),
    "i_hh_t_id": ("holding_history", ("hh_t_id",)),
    "i_tr_s_symb": ("trade_request", ("tr_s_symb",)),
}

#: oltplab's own record of each account's balance: ``opening`` before the loaded trades,
#: ``built`` after them (ca_bal at the end of the build); the checks add the cash
#: transactions since to it.
BALANCE_TABLE = "brokerage_balance"
BALANCE_COLUMNS = ("ca_id", "opening", "built")

META_TABLE = "brokerage_meta"
#: The columns of brokerage_meta's one row, written last by a complete build.
META_COLUMNS = ("customers", "days", "scale_factor", "trades", "max_t_id", "seed",
                "build_users", "start_date", "page_kib", "build_seconds", "oltplab_version")


@dataclass(frozen=True)
class BrokerageSchema:
    """What a build recorded (``brokerage_meta``): its scale, the highest loaded trade id and
    the first day of its trading (the run's inputs draw from them), its seed."""

    customers: int
    days: int
    scale_factor: int
    trades: int
    max_t_id: int
    seed: int
    start_date: str
    page_kib: int | None = None


def no_schema(dbname: str) -> SchemaError:
    return SchemaError(f"no TPC-E-derived brokerage schema in database {dbname}: run "
                       "'oltplab brokerage build' first")


def incomplete_schema(dbname: str) -> SchemaError:
    return SchemaError(f"the brokerage schema in database {dbname} is incomplete (its build "
                       "did not finish): run 'oltplab brokerage build --force'")


#: Tables only a brokerage schema has, its record among them: any of them marks a database as
#: the brokerage's, whether its build finished or not (TPC-C's has a customer table too).
OWN_TABLES = (META_TABLE, BALANCE_TABLE, "trade_type", "holding_summary", "trade_request")


def brokerage_schema_here(dbname: str, label: str, command: str) -> UsageError:
    """The refusal of another workload (``label``, its ``command``: "tpcc", "dvds") on a
    database that holds the brokerage schema: bad input, exit code 2."""
    return UsageError(f"database {dbname} holds the TPC-E-derived brokerage schema, not the "
                      f"{label} one: use another database (--dbname) for {command}")


def other_schema_here(dbname: str, label: str) -> SchemaError:
    """A database that holds another workload's schema (``label``: "TPC-C-derived",
    "DVD-Store-derived") where a brokerage one is expected, or is to be built."""
    return SchemaError(f"database {dbname} holds the {label} schema, not the brokerage one: "
                       "use another database for brokerage")
