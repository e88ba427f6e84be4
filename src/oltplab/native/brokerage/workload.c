/*
 * The brokerage's customer emulator as the loop drives it (loop/workload.h): the
 * BrokerageTerminal deals each user's next transaction (terminal.c), the transaction goes as
 * the text arguments of its one function (workloads/brokerage/frames.py: the names, the
 * arguments in order), and a completed one counts its inputs. Trade-Order's deliberate
 * rollback (roll_it_back, 1 in 101) completes as DONE_ROLLED_BACK. No transaction of a user
 * is the headline: that is Trade-Result's, which the market emulator issues.
 *
 * Trade-Result, Market-Feed and Data-Maintenance come from the market emulator's actors
 * (actor.c): terminals bound to the worker's BrokerageMarket that draw its due work. Each
 * Trade-Result is the headline (DONE_HEADLINE). On PostgreSQL each call begins at its
 * transaction's isolation (pq_begin: frames.Transaction.isolation); MariaDB's procedures set
 * theirs. Trade-Order's deliberate rollback is the function's or procedure's own.
 */
#include <stdarg.h>

#include "customer.h"
#include "trades.h" /* the build's trade loop, added to the module here */

/* The input counts of the measured window: the keys of ProcLoop.counts()["inputs"]. tier1..3
 * count the customers drawn (every transaction that draws one); tl_/tu_frame<n> the frames
 * of Trade-Lookup and Trade-Update; mw_ Market-Watch's three kinds; cp_tax_id the
 * Customer-Positions by tax id, cp_history those with frame 2; sd_lob the Security-Details
 * that read the news item's text; to_ the Trade-Orders that were limit orders, sells,
 * stop-losses, on margin, LIFO, executed by a customer other than the owner, by company
 * name, and rolled back by design. */
const char *const BK_INPUT_KEYS[BK_NINPUTS] = {
    "tier1", "tier2", "tier3", "tl_frame1", "tl_frame2", "tl_frame3", "tl_frame4",
    "tu_frame1", "tu_frame2", "tu_frame3", "mw_watch_list", "mw_holdings", "mw_industry",
    "cp_tax_id", "cp_history", "sd_lob", "to_limit", "to_sell", "to_stop_loss", "to_margin",
    "to_lifo", "to_by_other", "to_by_company", "to_rolled_back"};

/* ------------------------------------------------------------------------------------------ */
/* The arguments as text                                                                      */

typedef struct {
    char *text;
    size_t width;
    int n, max;
} args_t;

static int arg(args_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int arg(args_t *a, const char *fmt, ...) {
    if (a->n >= a->max) return -1;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(a->text + (size_t)a->n * a->width, a->width, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= a->width) return -1;
    a->n++;
    return 0;
}

static const char *boolean(int v) { return v ? "true" : "false"; }

static int date_arg(args_t *a, int64_t days) {
    int y, m, d;
    bk_date(days, &y, &m, &d);
    return arg(a, "%04d-%02d-%02d", y, m, d);
}

static int timestamp_arg(args_t *a, int64_t secs) {
    int y, m, d;
    int64_t days = secs / 86400, s = secs % 86400;
    bk_date(days, &y, &m, &d);
    return arg(a, "%04d-%02d-%02d %02d:%02d:%02d", y, m, d, (int)(s / 3600),
               (int)(s / 60 % 60), (int)(s % 60));
}

/* PostgreSQL's text of an array of n items, {a,b,...}, each written by item(x, i, ...) */
typedef int (*item_fn)(const bk_txn_t *x, int i, char *buf, size_t size, size_t *at);

static int list_arg(args_t *a, const bk_txn_t *x, int n, item_fn item) {
    if (a->n >= a->max) return -1;
    char *buf = a->text + (size_t)a->n * a->width;
    size_t at = 0;
    if (text_put(buf, a->width, &at, "{") < 0) return -1;
    for (int i = 0; i < n; i++)
        if ((i && text_put(buf, a->width, &at, ",") < 0) || item(x, i, buf, a->width, &at) < 0)
            return -1;
    if (text_put(buf, a->width, &at, "}") < 0) return -1;
    a->n++;
    return 0;
}

static int broker_item(const bk_txn_t *x, int i, char *buf, size_t size, size_t *at) {
    return text_put(buf, size, at, "\"%s\"", x->bv.names[x->bv.b[i]]); /* no " or \ */
}

static int id_item(const bk_txn_t *x, int i, char *buf, size_t size, size_t *at) {
    return text_put(buf, size, at, "%lld", (long long)x->tl.ids[i]);
}

/* Trade-Lookup's and Trade-Update's (frame, trade_ids, acct_id, symbol, start_dts, end_dts,
 * max_trades[, max_updates]) */
static int lookup_args(args_t *a, const bk_txn_t *x, int update) {
    if (arg(a, "%d", x->frame) < 0 || list_arg(a, x, x->tl.n, id_item) < 0 ||
        arg(a, "%lld", (long long)x->tl.acct_id) < 0 || arg(a, "%s", x->tl.symbol) < 0 ||
        timestamp_arg(a, x->tl.start) < 0 || timestamp_arg(a, x->tl.end) < 0 ||
        arg(a, "%d", x->tl.max_trades) < 0)
        return -1;
    return update ? arg(a, "%d", x->tl.max_updates) : 0;
}

static int order_args(args_t *a, const bk_txn_t *x) {
    const __typeof__(x->to) *o = &x->to;
    if (arg(a, "%lld", (long long)o->acct_id) < 0 || arg(a, "%s", o->f_name) < 0 ||
        arg(a, "%s", o->l_name) < 0 || arg(a, "%s", o->tax_id) < 0 ||
        arg(a, "%s", o->symbol) < 0 || arg(a, "%s", o->co_name) < 0 ||
        arg(a, "%s", o->issue) < 0 || arg(a, "%s", o->type) < 0 || arg(a, "%d", o->qty) < 0 ||
        arg(a, "%lld.%02lld", (long long)(o->price / 100), (long long)(o->price % 100)) < 0 ||
        arg(a, "%s", boolean(o->margin)) < 0 || arg(a, "%s", boolean(o->lifo)) < 0 ||
        arg(a, "%s", boolean(o->roll_back)) < 0)
        return -1;
    return 0;
}

static int cents_text(char *buf, size_t size, size_t *at, int64_t cents) {
    return text_put(buf, size, at, "%lld.%02lld", (long long)(cents / 100),
                    (long long)(cents % 100));
}

static int feed_symbol(const bk_txn_t *x, int i, char *buf, size_t size, size_t *at) {
    char sym[BK_SYMBOL_BYTES];
    if (market_symbol(x->mf[i].security, sym, sizeof sym) < 0) return -1;
    return text_put(buf, size, at, "\"%s\"", sym);
}

static int feed_price(const bk_txn_t *x, int i, char *buf, size_t size, size_t *at) {
    return cents_text(buf, size, at, x->mf[i].price);
}

static int feed_qty(const bk_txn_t *x, int i, char *buf, size_t size, size_t *at) {
    return text_put(buf, size, at, "%d", (int)x->mf[i].qty);
}

/* Data-Maintenance's (table_name, acct_id, c_id, co_id, day_of_month, symbol, tx_id,
 * vol_incr) */
static int maintenance_args(args_t *a, const bk_txn_t *x) {
    const __typeof__(x->dm) *d = &x->dm;
    if (d->table < 0 || d->table >= BK_DM_TABLES) return -1;
    return arg(a, "%s", BK_DM_TABLE_NAMES[d->table]) < 0 ||
                   arg(a, "%lld", (long long)d->acct_id) < 0 ||
                   arg(a, "%lld", (long long)d->c_id) < 0 ||
                   arg(a, "%lld", (long long)d->co_id) < 0 || arg(a, "%d", d->day) < 0 ||
                   arg(a, "%s", d->symbol) < 0 || arg(a, "%s", d->tx_id) < 0
               ? -1
               : arg(a, "%d", d->vol_incr);
}

static int kind_args(args_t *a, const bk_txn_t *x) {
    switch (x->kind) {
    case BK_TRADE_RESULT:
        return arg(a, "%lld", (long long)x->tr.trade_id) < 0
                   ? -1
                   : arg(a, "%lld.%02lld", (long long)(x->tr.price / 100),
                         (long long)(x->tr.price % 100));
    case BK_MARKET_FEED:
        return list_arg(a, x, MARKET_FEED_BATCH, feed_symbol) < 0 ||
                       list_arg(a, x, MARKET_FEED_BATCH, feed_price) < 0
                   ? -1
                   : list_arg(a, x, MARKET_FEED_BATCH, feed_qty);
    case BK_DATA_MAINTENANCE:
        return maintenance_args(a, x);
    case BK_BROKER_VOLUME:
        return list_arg(a, x, x->bv.n, broker_item) < 0 ? -1 : arg(a, "%s", x->bv.sector);
    case BK_CUSTOMER_POSITION:
        return arg(a, "%lld", (long long)x->cp.cust_id) < 0 || arg(a, "%s", x->cp.tax_id) < 0 ||
                       arg(a, "%s", boolean(x->cp.history)) < 0
                   ? -1
                   : arg(a, "%d", x->cp.acct_idx);
    case BK_MARKET_WATCH:
        return arg(a, "%lld", (long long)x->mw.acct_id) < 0 ||
                       arg(a, "%lld", (long long)x->mw.cust_id) < 0 ||
                       arg(a, "%lld", (long long)x->mw.end_co) < 0 ||
                       arg(a, "%s", x->mw.industry) < 0 ||
                       arg(a, "%lld", (long long)x->mw.start_co) < 0
                   ? -1
                   : date_arg(a, x->mw.day);
    case BK_SECURITY_DETAIL:
        return arg(a, "%s", x->sd.symbol) < 0 || date_arg(a, x->sd.day) < 0 ||
                       arg(a, "%d", x->sd.max_rows) < 0
                   ? -1
                   : arg(a, "%s", boolean(x->sd.lob));
    case BK_TRADE_LOOKUP:
    case BK_TRADE_UPDATE:
        return lookup_args(a, x, x->kind == BK_TRADE_UPDATE);
    case BK_TRADE_ORDER:
        return order_args(a, x);
    case BK_TRADE_STATUS:
        return arg(a, "%lld", (long long)x->acct_id);
    default:
        return -1;
    }
}

int bk_args_text(const bk_txn_t *x, char *text, size_t width, int max) {
    args_t a = {text, width, 0, max};
    return kind_args(&a, x) < 0 ? -1 : a.n;
}

/* ------------------------------------------------------------------------------------------ */
/* MariaDB's CALL (engines/mariadb/brokerage/sql/procedures.sql)                              */

/* Each kind's arguments as a CALL takes them: r as they are (integers, booleans, a decimal),
 * q a quoted string (text, a date, a timestamp), a an array as a JSON array in a string
 * ('["Broker One","Broker Two"]', '[3,1]': PostgreSQL's text with brackets for braces). */
static const char *const SIGNATURES[BK_ALL_KINDS] = {
    "aq",            /* broker_volume(broker_list, sector_name) */
    "rqrr",          /* customer_position(cust_id, tax_id, get_history, acct_idx) */
    "rrrqrq",        /* market_watch(acct_id, cust_id, ending_co_id, industry_name, ...) */
    "qqrr",          /* security_detail(symbol, start_day, max_rows, access_lob) */
    "rarqqqr",       /* trade_lookup(frame, trade_ids, acct_id, symbol, start, end, max) */
    "rqqqqqqqrrrrr", /* trade_order(acct_id, exec names and tax id, symbol .. roll_it_back) */
    "r",             /* trade_status(acct_id) */
    "rarqqqrr",      /* trade_update(trade_lookup's, max_updates) */
    "rr",            /* trade_result(trade_id, trade_price) */
    "aaa",           /* market_feed(symbols, prices, qtys) */
    "qrrrrqqr"};     /* data_maintenance(table_name, acct_id, c_id, co_id, day_of_month,
                      * symbol, tx_id, vol_incr) */

/* A quoted string literal of s: a quote doubled (the tables' words hold no backslash) */
static int quoted(char *buf, size_t size, size_t *at, const char *s, int brackets) {
    if (text_put(buf, size, at, "'") < 0) return -1;
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (brackets && (i == 0 || i == len - 1)) c = c == '{' ? '[' : c == '}' ? ']' : c;
        if ((c == '\'' ? text_put(buf, size, at, "''") : text_put(buf, size, at, "%c", c)) < 0)
            return -1;
    }
    return text_put(buf, size, at, "'");
}

int bk_call_text(const bk_txn_t *x, char *buf, size_t size) {
    static _Thread_local char text[BK_MAX_ARGS][BK_ARG_WIDEST];
    int n = bk_args_text(x, &text[0][0], BK_ARG_WIDEST, BK_MAX_ARGS);
    const char *sig = SIGNATURES[x->kind];
    if (n < 0 || (size_t)n != strlen(sig)) return -1;
    size_t at = 0;
    if (size < 1 || text_put(buf, size, &at, "CALL %s(", BK_NAMES[x->kind]) < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (i && text_put(buf, size, &at, ", ") < 0) return -1;
        int r = sig[i] == 'r' ? text_put(buf, size, &at, "%s", text[i])
                              : quoted(buf, size, &at, text[i], sig[i] == 'a');
        if (r < 0) return -1;
    }
    return text_put(buf, size, &at, ")") < 0 ? -1 : (int)at;
}

/* ------------------------------------------------------------------------------------------ */
/* What a completed call counts                                                               */

int bk_completed(bk_txn_t *x, int has, long long value, int64_t *in) {
    x->done = 1;
    bk_market_done(x);
    if (x->kind == BK_TRADE_RESULT) return DONE_HEADLINE;
    if (!in) return x->kind == BK_TRADE_ORDER && x->to.roll_back ? DONE_ROLLED_BACK : 0;
    if (x->tier) in[BK_IN_TIER1 + x->tier - 1]++;
    switch (x->kind) {
    case BK_CUSTOMER_POSITION:
        in[BK_IN_CP_TAX_ID] += x->frame == 2;
        in[BK_IN_CP_HISTORY] += x->cp.history;
        break;
    case BK_MARKET_WATCH:
        in[BK_IN_MW_WATCH + x->frame - 1]++;
        break;
    case BK_SECURITY_DETAIL:
        in[BK_IN_SD_LOB] += x->sd.lob;
        break;
    case BK_TRADE_LOOKUP:
        in[BK_IN_TL_F1 + x->frame - 1]++;
        break;
    case BK_TRADE_UPDATE:
        in[BK_IN_TU_F1 + x->frame - 1]++;
        break;
    case BK_TRADE_ORDER: {
        const char *ty = x->to.type;
        in[BK_IN_TO_LIMIT] += ty[1] == 'L' || ty[1] == 'S'; /* TLB, TLS, TSL */
        in[BK_IN_TO_SELL] += !strcmp(ty, "TMS") || !strcmp(ty, "TLS") || !strcmp(ty, "TSL");
        in[BK_IN_TO_STOP_LOSS] += !strcmp(ty, "TSL");
        in[BK_IN_TO_MARGIN] += x->to.margin;
        in[BK_IN_TO_LIFO] += x->to.lifo;
        in[BK_IN_TO_BY_OTHER] += x->to.by_other;
        in[BK_IN_TO_BY_COMPANY] += x->to.by_company;
        in[BK_IN_TO_ROLLED_BACK] += x->to.roll_back;
        break;
    }
    default:
        break;
    }
    (void)has;
    (void)value;
    return x->kind == BK_TRADE_ORDER && x->to.roll_back ? DONE_ROLLED_BACK : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The loop's view                                                                            */

static int accept(PyObject *term) {
    if (!PyObject_TypeCheck(term, &BkTerminalType)) {
        PyErr_SetString(PyExc_TypeError, "the brokerage workload's terminals must be "
                                         "BrokerageTerminal objects");
        return -1;
    }
    return bk_term_check((BkTerminal *)term);
}

static void hold(PyObject *term, int by) {
    BkTerminal *t = (BkTerminal *)term;
    t->driven += by;
    if (t->market) t->market->driven += by;
}

static int draw(PyObject *term, void *txn) {
    BkTerminal *t = (BkTerminal *)term;
    bk_txn_t *x = txn;
    int kind;
    if (t->actor) {
        memset(x, 0, sizeof *x);
        kind = bk_actor_draw(t, x);
    } else {
        kind = bk_draw(t, x);
    }
    x->term = t;
    return kind;
}

static double idle(PyObject *term) { return (double)((BkTerminal *)term)->wait_ns / 1e9; }

static double no_wait(PyObject *term, int kind) { return 0; } /* no keying or think time */

/* The isolation of each transaction (frames.Transaction.isolation); READ COMMITTED is the
 * session's default and needs no statement. */
static const char *pq_begin(const void *txn) {
    switch (((const bk_txn_t *)txn)->kind) {
    case BK_TRADE_RESULT:
        return "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE";
    case BK_TRADE_ORDER:
    case BK_TRADE_UPDATE:
    case BK_MARKET_FEED:
        return "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ";
    default:
        return NULL;
    }
}

static void row(void *txn, int index, int ncols, const char *const *values) {
    bk_row(txn, index, ncols, values);
}

/* Trade-Order's row (the trade for the market emulator) and Market-Feed's (the limit orders
 * it triggered) are acted on; the other answers are read for their value alone. */
static int rows_wanted(const void *txn) {
    int kind = ((const bk_txn_t *)txn)->kind;
    return kind == BK_TRADE_ORDER || kind == BK_MARKET_FEED;
}

static int pq_args(const void *txn, char (*text)[ARG_TEXT], int max) {
    return bk_args_text(txn, &text[0][0], ARG_TEXT, max);
}

static int my_call(const void *txn, const char *out_var, char *buf, size_t size) {
    return bk_call_text(txn, buf, size);
}

static int completed(void *txn, int has, long long value, int64_t us, int64_t *in,
                     int64_t *unit_us) {
    return bk_completed(txn, has, value, in);
}

static int add_to_module(PyObject *m) {
    if (PyType_Ready(&BkTerminalType) < 0 || brokerage_trades_add(m) < 0) return -1;
    Py_INCREF(&BkTerminalType);
    if (module_add(m, "BrokerageTerminal", (PyObject *)&BkTerminalType) < 0 ||
        module_add(m, "BROKERAGE_NAMES", text_tuple(BK_NAMES, BK_NKINDS)) < 0 ||
        module_add(m, "BROKERAGE_KINDS", text_tuple(BK_NAMES, BK_ALL_KINDS)) < 0 ||
        module_add(m, "BROKERAGE_INPUT_KEYS", text_tuple(BK_INPUT_KEYS, BK_NINPUTS)) < 0 ||
        PyModule_AddIntConstant(m, "BROKERAGE_DECK", BK_DECK) < 0 ||
        PyModule_AddIntConstant(m, "BROKERAGE_ARG_WIDEST", BK_ARG_WIDEST) < 0)
        return -1;
    PyObject *cards = PyDict_New();
    for (int k = 0; cards && k < BK_NKINDS; k++) {
        PyObject *v = PyLong_FromLong(BK_CARDS[k]);
        if (!v || PyDict_SetItemString(cards, BK_NAMES[k], v) < 0) Py_CLEAR(cards);
        Py_XDECREF(v);
    }
    return module_add(m, "BROKERAGE_CARDS", cards);
}

const Workload BROKERAGE_WORKLOAD = {
    .name = "brokerage", .nkinds = BK_ALL_KINDS, .kinds = BK_NAMES, .unit = 0,
    .ninputs = BK_NINPUTS, .input_keys = BK_INPUT_KEYS, .accept = accept, .hold = hold,
    .draw = draw, .idle = idle, .keying = no_wait, .think = no_wait, .pq_args = pq_args,
    .my_call = my_call, .pq_begin = pq_begin, .row = row, .rows_wanted = rows_wanted,
    .my_result_rows = 1,
    .completed = completed, .pq_sql = NULL, .my_sql = NULL, .add_to_module = add_to_module};
