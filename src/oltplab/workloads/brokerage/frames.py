"""The brokerage's transactions as the driver calls them, whatever the engine: for each, the
function it calls, its arguments in order, what the call returns, the isolation level the
client sets, and the frame functions it runs.

Design. Each frame of the digest's section 2 is a function of its own (``trade_result_f1`` ..
``trade_result_f6``), and each transaction is one more function (``trade_result(trade_id,
trade_price)``) that runs its frames in order inside the caller's transaction and returns
the figures the client needs. So the driver makes one call per transaction, one round trip,
in its own BEGIN ... COMMIT, while each frame stays a function. PostgreSQL's are PL/pgSQL, in
engines/postgres/brokerage/sql/functions.sql; MariaDB's are stored procedures of the same
names and arguments, in engines/mariadb/brokerage/sql/procedures.sql, each called as
``CALL trade_result(1001, 25.00)``: there an array argument is a JSON array in a string
(``'["Broker One","Broker Two"]'``, ``'[3,1]'``; prices as numbers or strings,
``'[21.5,"26.00"]'``), and what the call returns comes back as the CALL's result set, one
row of ``returns`` in their order (a row per triggered trade for Market-Feed;
Security-Detail's lists as JSON arrays), and no OUT parameter.

Isolation is ``Transaction.isolation`` (Trade-Result SERIALIZABLE; Trade-Order, Trade-Update
and Market-Feed REPEATABLE READ; the others READ COMMITTED); serialization failures and
deadlocks are retried. On PostgreSQL it is the client's: a function cannot set it, so the C
loop sends a transaction above READ COMMITTED as one simple query, ``SET TRANSACTION
ISOLATION LEVEL SERIALIZABLE; EXECUTE <prepared call>('1001', '25.00')``, which runs as one
implicit transaction (committed at its end, rolled back whole by an error), and the others as
the prepared call alone. On MariaDB it is the
procedure's: each transaction procedure sets its level, starts its transaction (READ ONLY for
the read-only ones) and commits it, as the other workloads' procedures do, so that a
transaction is one round trip on autocommit sessions and Com_commit + Com_rollback moves by
one per call; an error rolls it back and is raised again.

Trade-Order's deliberate rollback (1 in 101 orders): the driver passes ``roll_it_back``
true; the transaction writes the trade as for any order, undoes it and returns it with
``roll_it_back`` true: PostgreSQL's function runs frames 3 and 4 in a block that ends in an
exception it catches (its writes undone, the sequence's value used), MariaDB's procedure
issues ROLLBACK before it returns the row. Nothing but the sequence's value remains. It counts
as a success. An executor without a permission on the
account gets ``trade_id`` 0 and nothing written. After COMMIT the driver hands the trade to the
market emulator: a market order (``is_market``) for a Trade-Result at the current price, a
limit order (status PNDG, a trade_request row) to wait until a Market-Feed entry's price
triggers it.

Market-Feed takes its batch (20 ticker entries) as three arrays and runs it as one
transaction, the entries in symbol order (so that two batches lock their last_trade rows in
the same order); it returns each trade it triggered (now SBMT, its request deleted) for the
emulator to complete with a Trade-Result. Data-Maintenance edits one of ``DM_TABLES`` a call
(the driver takes them in turn, once a minute); Trade-Cleanup runs once before a run, with
the build's highest trade id.
"""

from __future__ import annotations

from dataclasses import dataclass

SERIALIZABLE = "serializable"
REPEATABLE_READ = "repeatable read"
READ_COMMITTED = "read committed"


@dataclass(frozen=True)
class Transaction:
    """``key``: the transaction's name in results (``trade_result``); ``function``: what the
    driver calls, with ``params`` in this order (their types as PostgreSQL names them; the
    C driver sends text, which the server reads as these types); ``returns``: the
    columns of the one row it returns (each row, for ``rows``: Market-Feed's triggered
    trades); ``frames``: the frame functions it runs, in order; ``read_only``."""

    key: str
    function: str
    params: tuple[tuple[str, str], ...]
    returns: tuple[str, ...]
    isolation: str
    frames: tuple[str, ...]
    read_only: bool = False
    rows: bool = False

    @property
    def arity(self) -> int:
        return len(self.params)


def _frames(name: str, count: int) -> tuple[str, ...]:
    return tuple(f"{name}_f{n}" for n in range(1, count + 1))


BROKER_VOLUME = Transaction(
    "broker_volume", "broker_volume",
    (("broker_list", "text[]"), ("sector_name", "text")),
    ("list_len", "volume_total"), READ_COMMITTED, _frames("broker_volume", 1), read_only=True)

#: ``cust_id`` 0: the customer by ``tax_id``; ``acct_idx`` (any int >= 0) picks frame 2's
#: account among frame 1's, modulo their number.
CUSTOMER_POSITION = Transaction(
    "customer_position", "customer_position",
    (("cust_id", "bigint"), ("tax_id", "text"), ("get_history", "boolean"),
     ("acct_idx", "int")),
    ("cust_id", "acct_len", "hist_len"), READ_COMMITTED, _frames("customer_position", 2),
    read_only=True)

MARKET_FEED = Transaction(
    "market_feed", "market_feed",
    (("symbols", "text[]"), ("prices", "numeric[]"), ("qtys", "int[]")),
    ("trade_id", "symbol", "price", "qty", "type_id"), REPEATABLE_READ,
    _frames("market_feed", 1), rows=True)

#: The watch list of ``cust_id`` (not 0), else the industry's companies in
#: ``starting_co_id``..``ending_co_id`` (``industry_name`` not empty), else ``acct_id``'s
#: holdings; prices compared with the close of ``start_day``.
MARKET_WATCH = Transaction(
    "market_watch", "market_watch",
    (("acct_id", "bigint"), ("cust_id", "bigint"), ("ending_co_id", "bigint"),
     ("industry_name", "text"), ("starting_co_id", "bigint"), ("start_day", "date")),
    ("symbols", "pct_change"), READ_COMMITTED, _frames("market_watch", 1), read_only=True)

SECURITY_DETAIL = Transaction(
    "security_detail", "security_detail",
    (("symbol", "text"), ("start_day", "date"), ("max_rows", "int"),
     ("access_lob", "boolean")),
    ("sec_name", "company_name", "ceo", "co_town", "exchange_name", "ex_town", "competitors",
     "fin_len", "day_len", "last_price", "news_headlines", "news_chars"),
    READ_COMMITTED, _frames("security_detail", 1), read_only=True)

#: ``frame`` 1 (``trade_ids``), 2 (``acct_id`` and the window), 3 (``symbol`` and the
#: window), each up to ``max_trades``; 4 (``acct_id`` and ``start_dts``). The other inputs
#: are ignored (pass NULL or anything).
TRADE_LOOKUP = Transaction(
    "trade_lookup", "trade_lookup",
    (("frame", "int"), ("trade_ids", "bigint[]"), ("acct_id", "bigint"), ("symbol", "text"),
     ("start_dts", "timestamp"), ("end_dts", "timestamp"), ("max_trades", "int")),
    ("frame", "num_found"), READ_COMMITTED, _frames("trade_lookup", 4), read_only=True)

#: ``symbol`` empty: the security by ``co_name`` and ``issue``. ``requested_price`` is a
#: limit order's (a market order takes the last price). Returns ``trade_id`` 0 when the
#: executor has no permission on the account.
TRADE_ORDER = Transaction(
    "trade_order", "trade_order",
    (("acct_id", "bigint"), ("exec_f_name", "text"), ("exec_l_name", "text"),
     ("exec_tax_id", "text"), ("symbol", "text"), ("co_name", "text"), ("issue", "text"),
     ("trade_type_id", "text"), ("trade_qty", "int"), ("requested_price", "numeric"),
     ("type_is_margin", "boolean"), ("is_lifo", "boolean"), ("roll_it_back", "boolean")),
    ("trade_id", "status_id", "symbol", "type_id", "bid_price", "trade_qty", "is_market",
     "roll_it_back"), REPEATABLE_READ, _frames("trade_order", 4))

TRADE_RESULT = Transaction(
    "trade_result", "trade_result", (("trade_id", "bigint"), ("trade_price", "numeric")),
    ("acct_id", "acct_bal", "comm_amount", "tax_amount", "se_amount"), SERIALIZABLE,
    _frames("trade_result", 6))

TRADE_STATUS = Transaction(
    "trade_status", "trade_status", (("acct_id", "bigint"),), ("num_found",),
    READ_COMMITTED, _frames("trade_status", 1), read_only=True)

#: Trade-Lookup's frames 1-3 with ``max_updates`` of the trades found changed.
TRADE_UPDATE = Transaction(
    "trade_update", "trade_update",
    (("frame", "int"), ("trade_ids", "bigint[]"), ("acct_id", "bigint"), ("symbol", "text"),
     ("start_dts", "timestamp"), ("end_dts", "timestamp"), ("max_trades", "int"),
     ("max_updates", "int")),
    ("frame", "num_found", "num_updated"), REPEATABLE_READ, _frames("trade_update", 3))

#: ``table_name`` one of DM_TABLES; the other inputs as that table's edit needs them:
#: ``acct_id`` (account_permission), ``c_id`` (address, customer, customer_taxrate,
#: watch_item), ``co_id`` (address when ``c_id`` is 0, company, financial, news_item),
#: ``symbol`` (daily_market with ``day_of_month`` and ``vol_incr``, security), ``tx_id``
#: (taxrate); exchange takes none.
DATA_MAINTENANCE = Transaction(
    "data_maintenance", "data_maintenance",
    (("table_name", "text"), ("acct_id", "bigint"), ("c_id", "bigint"), ("co_id", "bigint"),
     ("day_of_month", "int"), ("symbol", "text"), ("tx_id", "text"), ("vol_incr", "int")),
    ("rows_changed",), READ_COMMITTED, _frames("data_maintenance", 1))

#: ``start_trade_id``: the build's highest trade id (submitted trades above it are canceled).
TRADE_CLEANUP = Transaction(
    "trade_cleanup", "trade_cleanup", (("start_trade_id", "bigint"),), ("canceled",),
    READ_COMMITTED, _frames("trade_cleanup", 1))

#: Every transaction, by key.
TRANSACTIONS: dict[str, Transaction] = {t.key: t for t in (
    BROKER_VOLUME, CUSTOMER_POSITION, MARKET_FEED, MARKET_WATCH, SECURITY_DETAIL, TRADE_LOOKUP,
    TRADE_ORDER, TRADE_RESULT, TRADE_STATUS, TRADE_UPDATE, DATA_MAINTENANCE, TRADE_CLEANUP)}

#: The tables Data-Maintenance edits, in the order the driver takes them.
DM_TABLES = ("account_permission", "address", "company", "customer", "customer_taxrate",
             "daily_market", "exchange", "financial", "news_item", "security", "taxrate",
             "watch_item")

#: Market-Feed's batch: ticker entries a call.
FEED_BATCH = 20


def dm_table(n: int) -> str:
    """The table of the driver's ``n``-th Data-Maintenance (from 0)."""
    return DM_TABLES[n % len(DM_TABLES)]


def call_sql(transaction: Transaction) -> str:
    """The statement that calls ``transaction`` with positional parameters, cast to their
    types: ``SELECT * FROM trade_result($1::bigint, $2::numeric)``."""
    args = ", ".join(f"${n}::{sql_type}"
                     for n, (_, sql_type) in enumerate(transaction.params, 1))
    return f"SELECT * FROM {transaction.function}({args})"
