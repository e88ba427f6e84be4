/*
 * The brokerage's customer emulator in C (TPC-E-derived; written for oltplab from the public
 * specification's description of the customer emulator, no EGen code): what its parts share.
 *
 * terminal.c  BrokerageTerminal: one customer-emulator user, its random generator, its deck
 *             and the build's tables it draws from (handed over once by Python, shared by
 *             every user's terminal: workloads/brokerage/inputs.py)
 * workload.c  the workload as the loop drives it (loop/workload.h): each call's arguments in
 *             the order of workloads/brokerage/frames.py, what a completed call counts
 *
 * Trade-Result and Market-Feed never come from a user's deck: the market emulator
 * (market.h) issues them. Every name outside a file starts with bk_/Bk/BK_.
 */
#ifndef OLTPLAB_BROKERAGE_CUSTOMER_H
#define OLTPLAB_BROKERAGE_CUSTOMER_H

#include "market.h"
#include "text.h"
#include "workload.h"

/* The transactions in the loop's order of kinds (frames.py's keys): the users' (the deck's)
 * first, then the market emulator's actors' */
#define BK_NKINDS 8     /* the users' */
#define BK_ALL_KINDS 11 /* and the actors' */
enum { BK_BROKER_VOLUME, BK_CUSTOMER_POSITION, BK_MARKET_WATCH, BK_SECURITY_DETAIL,
       BK_TRADE_LOOKUP, BK_TRADE_ORDER, BK_TRADE_STATUS, BK_TRADE_UPDATE, BK_TRADE_RESULT,
       BK_MARKET_FEED, BK_DATA_MAINTENANCE };
extern const char *const BK_NAMES[BK_ALL_KINDS];
_Static_assert(BK_ALL_KINDS <= MAX_KINDS, "the loop holds the kinds");

/* The deck: cards per kind (BK_NAMES order), 890 in all */
#define BK_DECK 890
extern const int BK_CARDS[BK_NKINDS];

#define BK_LOAD_UNIT 1000          /* customers per load unit */
#define BK_TIER_W 2000             /* a customer's tier: w ~ U(0, 2000] ... */
#define BK_TIER1_W 200             /* ... tier 1 up to 200 (10%) */
#define BK_TIER2_W 1400            /* ... tier 2 up to 1,400 (60%), tier 3 above (30%) */
#define BK_MAX_ACCOUNTS 10         /* ca_id = (c_id - 1) * 10 + k, k = 1..count */
#define BK_EXTRA_EXECS 2           /* other customers permitted on an account, at most */
#define BK_MIN_BROKERS 20          /* Broker-Volume's list: 20..40 names, at most the brokers */
#define BK_MAX_BROKERS 40
#define BK_CO_WINDOW 5000          /* Market-Watch's industry: a window of company ids */
#define BK_WEEKS_MIN 5             /* Market-Watch's start day: 5..260 weeks back ... */
#define BK_WEEKS_MAX 260
#define BK_FRIDAY_PCT 60           /* ... a Friday 60%, Monday..Thursday 10% each */
#define BK_SD_ROWS_MIN 5           /* Security-Detail's daily_market rows */
#define BK_SD_ROWS_MAX 20
#define BK_LOB_PERMILLE 10         /* ... the news item's text read 1% */
#define BK_MAX_TRADES 20           /* Trade-Lookup's and Trade-Update's trades, at most */
#define BK_MAX_UPDATES 20          /* Trade-Update's changes, at most */
#define BK_TID_A 65535             /* Trade-Lookup frame 1's ids: NURand(65535, 7) */
#define BK_TID_S 7
#define BK_DTS_A 4095              /* the windows' starts: NURand(4095, 16) */
#define BK_DTS_S 16
#define BK_BACKOFF_F2 (32 * 3600)  /* s of trading before the end: frame 2's window */
#define BK_BACKOFF_F3 (200 * 60)   /* frame 3's */
#define BK_BACKOFF_F4 (500 * 60)   /* frame 4's */
#define BK_TRADING_SECONDS (8 * 3600) /* a day of trading: 09:00 to 17:00 */
#define BK_DAY_OPENS (9 * 3600)
#define BK_SKIP_MOD 101            /* loaded trade ids skip id % 101 == 51 */
#define BK_SKIP_REST 51
#define BK_PRICE_MIN 2000          /* Trade-Order's requested price U($20.00, $30.00) */
#define BK_PRICE_MAX 3000
#define BK_ROLLBACK_EVERY 101      /* Trade-Order's deliberate rollback: 1 in 101 */
#define BK_NAME_BYTES 64           /* a name or a word of the tables, its NUL included */
#define BK_SYMBOL_BYTES 16         /* a symbol, its NUL included */
#define BK_TAX_ID_BYTES 16         /* a tax id (13 characters), its NUL included */

/* The build's tables the users draw from, as Python hands them over: read-only, shared */
typedef struct {
    int64_t customers, securities, companies, brokers, max_t_id;
    int days;                       /* of initial trading */
    int32_t start_day;              /* reference.START_DATE, days since 1970-01-01 */
    int32_t dm_first, dm_days;      /* daily_market's first weekday (days since 1970-01-01,
                                     * a Monday) and how many weekdays it holds */
    const uint8_t *accounts;        /* per customer (c_id - 1): its accounts, 1..10 */
    const int32_t *basket_at;       /* per account slot (c_id - 1) * 10 + k - 1: where its
                                     * basket starts in baskets, and one more at the end */
    const int32_t *baskets;         /* securities (indexes, 0-based) */
    const int32_t *execs;           /* per account slot: BK_EXTRA_EXECS other c_ids, 0: none */
    const uint16_t *names;          /* per customer: indexes of its first and last name */
    const char **first, **last, **brokers_names, **sectors, **industries, **companies_names,
        **issues;                   /* each Python's str as UTF-8, NUL-terminated */
    int nfirst, nlast, nsectors, nindustries, nissues;
} bk_tables_t;

/* ------------------------------------------------------------------------------------------ */
/* BrokerageTerminal                                                                          */

/* A trade a Market-Feed triggered (its answer's row), submitted to the emulator as a market
 * order once the feed committed */
typedef struct {
    int64_t trade_id;
    int32_t security, qty, type;
} bk_trigger_t;


typedef struct {
    PyObject_HEAD
    rng_t rng;
    bk_tables_t tb;
    PyObject *refs;       /* what tb points into: Python's objects, held; NULL until ready */
    uint8_t deck[BK_DECK];
    int dealt;            /* cards of the deck dealt: BK_DECK, shuffle it again */
    int driven;           /* ProcLoops that hold it: Python must keep its hands off */
    _Alignas(16) unsigned char txn[TXN_BYTES]; /* Python's own draws (next_call) */
    int drawn;
    int64_t inputs[MAX_INPUTS];
    /* bind_market(): the worker's market emulator (held), which the user's Trade-Orders
     * feed; an actor draws the emulator's due work instead of the deck (actor.c) */
    BrokerageMarket *market;
    int actor, maintenance; /* maintenance: this actor runs Data-Maintenance once a minute */
    int64_t next_dm, dm_count, wait_ns;
    bk_trigger_t *triggered; /* an actor's Market-Feed's answer: the trades it triggered */
    size_t ntriggered, cap_triggered;
    int64_t refused, lost_triggers; /* trades the emulator refused, triggers beyond the room */
} BkTerminal;

#define BK_DM_TABLES 12 /* frames.DM_TABLES */
#define BK_TAX_DIVISIONS 300 /* reference.DIVISIONAL_TAX_IDS: D000..D299 */
#define BK_DM_EVERY_NS 60000000000LL /* Data-Maintenance once a minute */
#define BK_ACTOR_NAP_NS 10000000LL  /* an actor with nothing due looks again within 10 ms */
#define BK_MAX_TRIGGERED 100000     /* a Market-Feed's triggered trades an actor keeps */

/* One user's call as drawn: the loop keeps it (TXN_BYTES) for the call's retries. */
typedef struct {
    int kind;
    int done;       /* it completed (bk_completed) */
    void *term;     /* the BkTerminal that drew it */
    int tier;       /* the drawn customer's tier (0: the call drew none) */
    int frame;      /* Trade-Lookup 1..4, Trade-Update 1..3; Market-Watch 1 watch list,
                     * 2 holdings, 3 industry; Customer-Position 1 by c_id, 2 by tax id */
    union {
        struct { /* Broker-Volume */
            const char *const *names; /* the terminal's broker names (tb.brokers_names) */
            int32_t n;
            uint16_t b[BK_MAX_BROKERS]; /* broker ids - 1 */
            char sector[BK_NAME_BYTES];
        } bv;
        struct { /* Customer-Position */
            int64_t cust_id; /* 0: by tax_id */
            char tax_id[BK_TAX_ID_BYTES];
            int32_t history, acct_idx;
        } cp;
        struct { /* Market-Watch */
            int64_t acct_id, cust_id, start_co, end_co;
            int32_t day; /* days since 1970-01-01 */
            char industry[BK_NAME_BYTES];
        } mw;
        struct { /* Security-Detail */
            char symbol[BK_SYMBOL_BYTES];
            int32_t day, max_rows, lob;
        } sd;
        struct { /* Trade-Lookup, Trade-Update */
            int64_t ids[BK_MAX_TRADES];
            int32_t n, max_trades, max_updates;
            int64_t acct_id;
            int64_t start, end; /* s since 1970-01-01 (no zone) */
            char symbol[BK_SYMBOL_BYTES];
        } tl;
        struct { /* Trade-Order */
            int64_t acct_id, price; /* cents */
            char f_name[BK_NAME_BYTES / 2], l_name[BK_NAME_BYTES / 2];
            char tax_id[BK_TAX_ID_BYTES], symbol[BK_SYMBOL_BYTES];
            char co_name[BK_NAME_BYTES], issue[8], type[4];
            int32_t qty, margin, lifo, roll_back, by_other, by_company;
        } to;
        int64_t acct_id; /* Trade-Status */
        market_result_t tr; /* Trade-Result */
        market_tick_t mf[MARKET_FEED_BATCH]; /* Market-Feed */
        struct { /* Data-Maintenance */
            int32_t table, day, vol_incr;
            int64_t acct_id, c_id, co_id;
            char symbol[BK_SYMBOL_BYTES], tx_id[8];
        } dm;
    };
    struct { /* Trade-Order's answer (its row) */
        int64_t trade_id, price;
        char symbol[BK_SYMBOL_BYTES];
        int has;
    } ordered;
} bk_txn_t;
_Static_assert(sizeof(bk_txn_t) <= TXN_BYTES, "the loop holds TXN_BYTES of a transaction");

extern PyTypeObject BkTerminalType;
int bk_term_check(BkTerminal *t);
int bk_draw(BkTerminal *t, bk_txn_t *x);
int64_t bk_draw_customer(BkTerminal *t, bk_txn_t *x); /* a customer (x->tier): its c_id */

/* Pure functions the tests hold against Python's (terminal.c) */
int64_t bk_customer_of(int64_t load_unit, int tier, int64_t slot); /* customers.customer_of */
int bk_tier_of(int64_t c_id);                                       /* customers.tier_of */
void bk_tax_id(int64_t c_id, char out[BK_TAX_ID_BYTES]);            /* customers.tax_id */
int bk_symbol(int64_t index, char *out, size_t size);               /* reference.symbol */
int64_t bk_nurand(rng_t *r, int64_t a, int s, int64_t lo, int64_t hi);
void bk_date(int64_t days, int *y, int *m, int *d); /* days since 1970-01-01 */

/* workload.c */
enum { BK_IN_TIER1, BK_IN_TIER2, BK_IN_TIER3, BK_IN_TL_F1, BK_IN_TL_F2, BK_IN_TL_F3,
       BK_IN_TL_F4, BK_IN_TU_F1, BK_IN_TU_F2, BK_IN_TU_F3, BK_IN_MW_WATCH, BK_IN_MW_HOLDINGS,
       BK_IN_MW_INDUSTRY, BK_IN_CP_TAX_ID, BK_IN_CP_HISTORY, BK_IN_SD_LOB, BK_IN_TO_LIMIT,
       BK_IN_TO_SELL, BK_IN_TO_STOP_LOSS, BK_IN_TO_MARGIN, BK_IN_TO_LIFO, BK_IN_TO_BY_OTHER,
       BK_IN_TO_BY_COMPANY, BK_IN_TO_ROLLED_BACK, BK_NINPUTS };
extern const char *const BK_INPUT_KEYS[BK_NINPUTS];
_Static_assert(BK_NINPUTS <= MAX_INPUTS, "the loop holds MAX_INPUTS input counts");
/* A call's arguments as text, in frames.py's order, each at most width bytes (its NUL
 * included) of text (max of them, width apart): how many, or -1 when one does not fit. */
int bk_args_text(const bk_txn_t *x, char *text, size_t width, int max);
#define BK_MAX_ARGS 13 /* trade_order's */
/* The widest argument: Broker-Volume's list of 40 quoted names */
#define BK_ARG_WIDEST (2 + BK_MAX_BROKERS * (BK_NAME_BYTES + 3))
/* MariaDB: "CALL <kind>(args...)" into buf (size bytes), as procedures.sql takes them (the
 * procedure returns its row as a result set, no OUT parameter): its length, or -1. */
int bk_call_text(const bk_txn_t *x, char *buf, size_t size);
int bk_completed(bk_txn_t *x, int has, long long value, int64_t *inputs);

/* actor.c: the market emulator's side of the loop */
extern const char *const BK_DM_TABLE_NAMES[BK_DM_TABLES];
int bk_actor_draw(BkTerminal *t, bk_txn_t *x); /* a kind, or KIND_WAIT (t->wait_ns) */
void bk_row(bk_txn_t *x, int index, int ncols, const char *const *values);
void bk_market_done(bk_txn_t *x); /* a completed call's effect on the emulator */
int64_t bk_market_now(const BkTerminal *t);

extern const Workload BROKERAGE_WORKLOAD;

#endif
