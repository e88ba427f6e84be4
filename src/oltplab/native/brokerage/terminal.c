/*
 * BrokerageTerminal: one customer-emulator user of the TPC-E-derived brokerage. Each draw
 *   deals the next card of the user's own deck and draws that transaction's inputs:
 *
 *   - the deck: 890 cards (Trade-Status 190, Market-Watch 180, Security-Detail 140,
 *     Customer-Position 130, Trade-Order 101, Trade-Lookup 80, Broker-Volume 49, Trade-Update
 *     20), shuffled (Fisher-Yates) before the first card and whenever all were dealt;
 *   - a customer: a load unit uniform; w ~ U(0, 2000]: tier 1 up to 200, tier 2 up to 1,400,
 *     tier 3 above; a slot in the tier's 200/600/200 of the load unit, floor(n sqrt(u)) (the
 *     higher slots likelier, density 2x/n), mapped to its c_id by customers.customer_of's
 *     fixed scramble; an account uniform among the customer's;
 *   - Broker-Volume: min(U(20, 40), brokers) distinct brokers' names, a sector uniform;
 *   - Customer-Position: by c_id or by tax id 50/50, frame 2 (history) 50%, the account's
 *     index uniform among the customer's;
 *   - Market-Watch: the customer's watch list 60%, an account's holdings 35%, an industry
 *     with a window of min(5,000, companies) company ids 5% (its start uniform); the start
 *     day 5..260 weeks before daily_market's last week, skewed to recent weeks (5 + floor(256
 *     u^2)), a Friday 60%, Monday..Thursday 10% each;
 *   - Security-Detail: a symbol uniform, 5..20 daily_market rows from a start day uniform
 *     among those that have them, the news item's text 1%;
 *   - Trade-Lookup: frame 1 30% (20 trade ids NURand(65535, 7) over the loaded ids, a
 *     skipped id taken as the one before it), 2 30% (an account, a window), 3 30% (a symbol
 *     uniform, a window), 4 10% (an account, a start); Trade-Update frames 1..3 33/33/34 with
 *     at most 20 updates. A window starts NURand(4095, 16) seconds of trading into the loaded
 *     period less the frame's back-off (frame 2: 32 h, 3: 200 min, 4: 500 min) and lasts the
 *     back-off; seconds of trading are weekdays from START_DATE, 09:00 to 17:00;
 *   - Trade-Order: a customer and account as above, a security of the account's basket (by
 *     symbol 60%, else by its company's name and issue), qty 100/200/400/800, a price
 *     U($20.00, $30.00), market 60% / limit 40%, buy 50% (limit sells: stop-loss 50%), margin
 *     on 16% of buys (8% of orders), LIFO 35%, executed by the owner 90% (else by a customer
 *     the account permits, when it permits one), rolled back 1 in 101.
 *
 *   NURand(A, s) over lo..hi: ((U(lo, hi) | (U(0, A) << s)) mod (hi - lo + 1)) + lo.
 */
#include <math.h>

#include "customer.h"

const char *const BK_NAMES[BK_ALL_KINDS] = {
    "broker_volume", "customer_position", "market_watch", "security_detail", "trade_lookup",
    "trade_order", "trade_status", "trade_update", "trade_result", "market_feed",
    "data_maintenance"};
const int BK_CARDS[BK_NKINDS] = {49, 130, 180, 140, 80, 101, 190, 20};

/* ------------------------------------------------------------------------------------------ */
/* Pure functions: the build's layout (customers.py, reference.py)                            */

static const int TIER_CUSTOMERS[3] = {200, 600, 200}, TIER_START[3] = {0, 200, 800};
#define SCRAMBLE_MUL 367 /* customers.py: q = (p * 367 + 503) mod 1000 */
#define SCRAMBLE_ADD 503
#define SCRAMBLE_INV 703 /* 367 * 703 = 258,001 = 1 mod 1,000 */

int bk_tier_of(int64_t c_id) {
    int64_t q = ((c_id - 1) % BK_LOAD_UNIT * SCRAMBLE_MUL + SCRAMBLE_ADD) % BK_LOAD_UNIT;
    return q < TIER_START[1] ? 1 : q < TIER_START[2] ? 2 : 3;
}

int64_t bk_customer_of(int64_t load_unit, int tier, int64_t slot) {
    int64_t q = TIER_START[tier - 1] + slot;
    int64_t p = ((q - SCRAMBLE_ADD) % BK_LOAD_UNIT + BK_LOAD_UNIT) * SCRAMBLE_INV % BK_LOAD_UNIT;
    return load_unit * BK_LOAD_UNIT + p + 1;
}

/* customers.tax_id: c_id x MUL mod (10^7 x 26^4) as 3 digits, 2 letters, 4 digits, 2 letters */
#define TAX_LETTERS (26LL * 26 * 26 * 26)
#define TAX_MOD (10000000LL * TAX_LETTERS)
#define TAX_MUL 2824267000201LL

void bk_tax_id(int64_t c_id, char out[BK_TAX_ID_BYTES]) {
    int64_t v = (int64_t)((unsigned __int128)c_id * TAX_MUL % TAX_MOD);
    int64_t digits = v / TAX_LETTERS, letters = v % TAX_LETTERS;
    int l[4];
    for (int k = 0; k < 4; k++, letters /= 26) l[k] = (int)(letters % 26);
    snprintf(out, BK_TAX_ID_BYTES, "%03lld%c%c%04lld%c%c", (long long)(digits / 10000),
             'A' + l[0], 'A' + l[1], (long long)(digits % 10000), 'A' + l[2], 'A' + l[3]);
}

/* reference.symbol: 3 letters for the first 26^3 indexes, then 4, ..., scrambled by 7,919 */
int bk_symbol(int64_t index, char *out, size_t size) {
    int width = 3;
    int64_t base = 0, span = 26 * 26 * 26;
    while (index - base >= span) {
        base += span;
        span *= 26;
        width++;
    }
    if ((size_t)width + 1 > size) return -1;
    int64_t n = (int64_t)(((unsigned __int128)(index - base) * 7919 + 1234) % span);
    for (int i = width - 1; i >= 0; i--, n /= 26) out[i] = (char)('A' + n % 26);
    out[width] = 0;
    return width;
}

int64_t bk_nurand(rng_t *r, int64_t a, int s, int64_t lo, int64_t hi) {
    uint64_t v = (uint64_t)uniform(r, lo, hi) | ((uint64_t)uniform(r, 0, a) << s);
    return (int64_t)(v % (uint64_t)(hi - lo + 1)) + lo;
}

/* The civil date of a day count since 1970-01-01 (the proleptic Gregorian calendar, in
 * eras of 400 years = 146,097 days from 0000-03-01). */
void bk_date(int64_t days, int *y, int *m, int *d) {
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;                                  /* 0..146096 */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);             /* 0..365, from Mar 1 */
    int64_t mp = (5 * doy + 2) / 153;                                  /* 0..11, March first */
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

/* ------------------------------------------------------------------------------------------ */
/* The draws                                                                                  */

static int percent(rng_t *r, int pct) { return uniform(r, 1, 100) <= pct; }

static int deal(BkTerminal *t) {
    if (t->dealt >= BK_DECK) { /* shuffle the whole deck again */
        for (int i = BK_DECK - 1; i > 0; i--) {
            int j = (int)uniform(&t->rng, 0, i);
            uint8_t c = t->deck[i];
            t->deck[i] = t->deck[j];
            t->deck[j] = c;
        }
        t->dealt = 0;
    }
    return t->deck[t->dealt++];
}

/* A customer (its tier into x->tier): its c_id. */
static int64_t customer(BkTerminal *t, bk_txn_t *x) {
    rng_t *r = &t->rng;
    int64_t lu = uniform(r, 0, t->tb.customers / BK_LOAD_UNIT - 1);
    int64_t w = uniform(r, 1, BK_TIER_W);
    int tier = w <= BK_TIER1_W ? 1 : w <= BK_TIER2_W ? 2 : 3;
    int n = TIER_CUSTOMERS[tier - 1];
    int64_t slot = (int64_t)(n * sqrt(rng_unit(r)));
    x->tier = tier;
    return bk_customer_of(lu, tier, slot < n ? slot : n - 1);
}

/* An account of the customer: its slot (c_id - 1) * 10 + k - 1 */
static int64_t account_slot(BkTerminal *t, int64_t c_id) {
    int n = t->tb.accounts[c_id - 1];
    return (c_id - 1) * BK_MAX_ACCOUNTS + uniform(&t->rng, 0, n - 1);
}

int64_t bk_draw_customer(BkTerminal *t, bk_txn_t *x) { return customer(t, x); }

static int64_t account(BkTerminal *t, bk_txn_t *x) { return account_slot(t, customer(t, x)) + 1; }

static void copy_text(char *dst, size_t size, const char *src) { snprintf(dst, size, "%s", src); }

static void symbol_of(int64_t index, char out[BK_SYMBOL_BYTES]) {
    bk_symbol(index, out, BK_SYMBOL_BYTES); /* fits: securities are below 26^12 */
}

/* Trading seconds into the loaded period as seconds since 1970-01-01; end: the period's
 * second s closes day (s - 1) / 28,800 (17:00) rather than opening the next. */
static int64_t trading_time(const bk_tables_t *tb, int64_t s, int end) {
    int64_t day = (end && s > 0 ? s - 1 : s) / BK_TRADING_SECONDS;
    int64_t date = tb->start_day + 7 * (day / 5) + day % 5;
    return date * 86400 + BK_DAY_OPENS + (s - day * BK_TRADING_SECONDS);
}

static void window(BkTerminal *t, bk_txn_t *x, int64_t backoff) {
    int64_t period = (int64_t)t->tb.days * BK_TRADING_SECONDS;
    int64_t last = period > backoff ? period - backoff : 0;
    int64_t s = bk_nurand(&t->rng, BK_DTS_A, BK_DTS_S, 0, last);
    int64_t e = s + backoff < period ? s + backoff : period;
    x->tl.start = trading_time(&t->tb, s, 0);
    x->tl.end = trading_time(&t->tb, e, 1);
}

static int64_t loaded_trade(BkTerminal *t) {
    int64_t id = bk_nurand(&t->rng, BK_TID_A, BK_TID_S, 1, t->tb.max_t_id);
    return id % BK_SKIP_MOD == BK_SKIP_REST ? id - 1 : id;
}

/* Trade-Lookup's (frames 1..4) or Trade-Update's (1..3) inputs */
static void draw_lookup(BkTerminal *t, bk_txn_t *x, int update) {
    rng_t *r = &t->rng;
    int64_t u = uniform(r, 1, 100);
    if (update) x->frame = u <= 33 ? 1 : u <= 66 ? 2 : 3;
    else x->frame = u <= 30 ? 1 : u <= 60 ? 2 : u <= 90 ? 3 : 4;
    x->tl.n = 0;
    x->tl.acct_id = 0;
    x->tl.symbol[0] = 0;
    x->tl.max_trades = BK_MAX_TRADES;
    x->tl.max_updates = update ? BK_MAX_UPDATES : 0;
    x->tl.start = x->tl.end = trading_time(&t->tb, 0, 0);
    switch (x->frame) {
    case 1:
        x->tl.n = BK_MAX_TRADES;
        for (int i = 0; i < BK_MAX_TRADES; i++) x->tl.ids[i] = loaded_trade(t);
        break;
    case 2:
        x->tl.acct_id = account(t, x);
        window(t, x, BK_BACKOFF_F2);
        break;
    case 3:
        symbol_of(uniform(r, 0, t->tb.securities - 1), x->tl.symbol);
        window(t, x, BK_BACKOFF_F3);
        break;
    default:
        x->tl.acct_id = account(t, x);
        window(t, x, BK_BACKOFF_F4);
        break;
    }
}

static void draw_broker_volume(BkTerminal *t, bk_txn_t *x) {
    rng_t *r = &t->rng;
    int64_t n = uniform(r, BK_MIN_BROKERS, BK_MAX_BROKERS);
    x->bv.n = (int32_t)(n < t->tb.brokers ? n : t->tb.brokers);
    x->bv.names = t->tb.brokers_names;
    for (int i = 0; i < x->bv.n; i++) {
        int again;
        do { /* distinct: at most 40 of them */
            x->bv.b[i] = (uint16_t)uniform(r, 0, t->tb.brokers - 1);
            again = 0;
            for (int j = 0; j < i; j++) again |= x->bv.b[j] == x->bv.b[i];
        } while (again);
    }
    copy_text(x->bv.sector, sizeof x->bv.sector,
              t->tb.sectors[uniform(r, 0, t->tb.nsectors - 1)]);
}

static void draw_customer_position(BkTerminal *t, bk_txn_t *x) {
    rng_t *r = &t->rng;
    int64_t c_id = customer(t, x);
    x->frame = percent(r, 50) ? 2 : 1;
    x->cp.cust_id = x->frame == 1 ? c_id : 0;
    if (x->frame == 2) bk_tax_id(c_id, x->cp.tax_id);
    else x->cp.tax_id[0] = 0;
    x->cp.history = percent(r, 50);
    x->cp.acct_idx = (int32_t)uniform(r, 0, t->tb.accounts[c_id - 1] - 1);
}

static void draw_market_watch(BkTerminal *t, bk_txn_t *x) {
    rng_t *r = &t->rng;
    int64_t u = uniform(r, 1, 100);
    x->mw.acct_id = x->mw.cust_id = x->mw.start_co = x->mw.end_co = 0;
    x->mw.industry[0] = 0;
    if (u <= 60) {
        x->frame = 1;
        x->mw.cust_id = customer(t, x);
    } else if (u <= 95) {
        x->frame = 2;
        x->mw.acct_id = account(t, x);
    } else {
        x->frame = 3;
        copy_text(x->mw.industry, sizeof x->mw.industry,
                  t->tb.industries[uniform(r, 0, t->tb.nindustries - 1)]);
        int64_t width = t->tb.companies < BK_CO_WINDOW ? t->tb.companies : BK_CO_WINDOW;
        x->mw.start_co = uniform(r, 1, t->tb.companies - width + 1);
        x->mw.end_co = x->mw.start_co + width - 1;
    }
    double v = rng_unit(r);
    int64_t weeks = BK_WEEKS_MIN + (int64_t)((BK_WEEKS_MAX - BK_WEEKS_MIN + 1) * v * v);
    int64_t last_week = t->tb.dm_days / 5 - 1;
    if (weeks > last_week) weeks = last_week;
    int dow = percent(r, BK_FRIDAY_PCT) ? 4 : (int)uniform(r, 0, 3);
    x->mw.day = (int32_t)(t->tb.dm_first + 7 * (last_week - weeks) + dow);
}

static void draw_security_detail(BkTerminal *t, bk_txn_t *x) {
    rng_t *r = &t->rng;
    symbol_of(uniform(r, 0, t->tb.securities - 1), x->sd.symbol);
    x->sd.max_rows = (int32_t)uniform(r, BK_SD_ROWS_MIN, BK_SD_ROWS_MAX);
    int64_t i = uniform(r, 0, t->tb.dm_days - x->sd.max_rows);
    x->sd.day = (int32_t)(t->tb.dm_first + 7 * (i / 5) + i % 5);
    x->sd.lob = uniform(r, 1, 1000) <= BK_LOB_PERMILLE;
}

static const int QUANTITIES[4] = {100, 200, 400, 800};

static void draw_trade_order(BkTerminal *t, bk_txn_t *x) {
    rng_t *r = &t->rng;
    const bk_tables_t *tb = &t->tb;
    int64_t owner = customer(t, x), slot = account_slot(t, owner);
    x->to.acct_id = slot + 1;
    int32_t from = tb->basket_at[slot], n = tb->basket_at[slot + 1] - from;
    int64_t sec = tb->baskets[from + uniform(r, 0, n - 1)];
    x->to.by_company = !percent(r, 60);
    x->to.symbol[0] = x->to.co_name[0] = x->to.issue[0] = 0;
    if (x->to.by_company) {
        copy_text(x->to.co_name, sizeof x->to.co_name, tb->companies_names[sec % tb->companies]);
        copy_text(x->to.issue, sizeof x->to.issue, tb->issues[sec / tb->companies]);
    } else {
        symbol_of(sec, x->to.symbol);
    }
    x->to.qty = QUANTITIES[uniform(r, 0, 3)];
    x->to.price = uniform(r, BK_PRICE_MIN, BK_PRICE_MAX);
    int market = percent(r, 60), buy = percent(r, 50);
    const char *type = market ? (buy ? "TMB" : "TMS")
                       : buy  ? "TLB"
                       : percent(r, 50) ? "TSL" : "TLS";
    copy_text(x->to.type, sizeof x->to.type, type);
    x->to.margin = buy && percent(r, 16);
    x->to.lifo = percent(r, 35);
    int64_t exec = owner;
    x->to.by_other = 0;
    if (!percent(r, 90)) { /* a permitted other, when the account has one */
        const int32_t *others = tb->execs + slot * BK_EXTRA_EXECS;
        int k = others[1] ? 2 : others[0] ? 1 : 0;
        if (k) {
            exec = others[uniform(r, 0, k - 1)];
            x->to.by_other = 1;
        }
    }
    const uint16_t *nm = tb->names + 2 * (exec - 1);
    copy_text(x->to.f_name, sizeof x->to.f_name, tb->first[nm[0]]);
    copy_text(x->to.l_name, sizeof x->to.l_name, tb->last[nm[1]]);
    bk_tax_id(exec, x->to.tax_id);
    x->to.roll_back = uniform(r, 1, BK_ROLLBACK_EVERY) == 1;
}

/* The next transaction of the user's deck into x: its kind. */
int bk_draw(BkTerminal *t, bk_txn_t *x) {
    int kind = deal(t);
    memset(x, 0, sizeof *x);
    x->kind = kind;
    switch (kind) {
    case BK_BROKER_VOLUME: draw_broker_volume(t, x); break;
    case BK_CUSTOMER_POSITION: draw_customer_position(t, x); break;
    case BK_MARKET_WATCH: draw_market_watch(t, x); break;
    case BK_SECURITY_DETAIL: draw_security_detail(t, x); break;
    case BK_TRADE_LOOKUP: draw_lookup(t, x, 0); break;
    case BK_TRADE_UPDATE: draw_lookup(t, x, 1); break;
    case BK_TRADE_ORDER: draw_trade_order(t, x); break;
    default: x->acct_id = account(t, x); break;
    }
    return kind;
}
