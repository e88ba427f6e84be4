/*
 * The brokerage's market emulator (TPC-E-derived; written for oltplab from the public
 * specification's description of the market exchange emulator, no EGen code): a data
 * structure, no database and no I/O. It receives the trades Trade-Order committed and says
 * when each Trade-Result and each Market-Feed is due and with what inputs:
 *
 * - the price: a triangle wave between $20.00 and $30.00 with a 15-minute period, in cents;
 *   security i's phase is (i * MARKET_PHASE_STRIDE mod 900) s, so neighbours differ. It
 *   moves one cent every MARKET_CENT_NS (0.45 s): up for 450 s from $20.00, then down;
 * - a market order (TMB, TMS) gets its Trade-Result after NegExp(mean 1 s) capped at 5 s, at
 *   the price of the moment it is due; so does a trade a Market-Feed triggered, submitted
 *   back as a market order (TMB for a buy, TMS for a sell);
 * - a limit order (TLB and TSL trigger when the price falls to their price, TLS when it
 *   rises to it) gets a trigger time: when the curve next reaches its price (within 900 s),
 *   at once when the price is there already; a limit the curve never reaches (below $20.00
 *   for a fall, above $30.00 for a rise) stays pending and is counted;
 * - a trigger whose time came becomes a ticker entry (symbol, price, qty) in the trigger
 *   queue; each Trade-Result that completes (market_result_done) puts its own entry and one
 *   padding entry (the oldest queued trigger, else a random symbol at its price) on the
 *   tape, so a Market-Feed of MARKET_FEED_BATCH (20) entries is due per 10 Trade-Results.
 *
 * Time is the caller's: nanoseconds since the run's start on a monotonic clock. The due
 * work waits in a min-heap (time, then submission order); the heap, the trigger queue and
 * the tape start at a small capacity, grow by doubling (realloc) and stop at a hard cap: a
 * submission or a result that would pass it is refused whole (MARKET_FULL) and nothing is
 * lost or overwritten.
 *
 * Threads: none of this is locked. Each worker process has an emulator of its own, used
 * only from its loop's one thread (the actors beside its users, on connections of their
 * own), so no lock or shared socket caps the rate at which results are delivered.
 *
 * How a loop drives it: after a Trade-Order commits, market_submit (security: the index of
 * its symbol, market_security); at each wake-up, market_next until MARKET_NONE, handing each
 * Trade-Result (trade_result(trade_id, price)) and each Market-Feed (market_feed(symbols,
 * prices, qtys), the symbols by market_symbol) to a free actor connection; when a
 * Trade-Result commits, market_result_done; when a Market-Feed commits, market_submit of each
 * trade it returns as TMB or TMS; then sleep until the earliest of *next and the users'
 * times. Work that finds no free actor stays with the loop (the emulator has handed it out).
 */
#ifndef OLTPLAB_BROKERAGE_MARKET_H
#define OLTPLAB_BROKERAGE_MARKET_H

#include "native.h"

#define MARKET_LOW_CENTS 2000          /* the curve's floor, $20.00 */
#define MARKET_HIGH_CENTS 3000         /* ... and top, $30.00 */
#define MARKET_CENT_NS 450000000LL     /* ns the curve takes to move one cent */
#define MARKET_HALF_NS (MARKET_CENT_NS * (MARKET_HIGH_CENTS - MARKET_LOW_CENTS)) /* 450 s */
#define MARKET_PERIOD_NS (2 * MARKET_HALF_NS)                                   /* 900 s */
#define MARKET_PHASE_STRIDE 367        /* s; prime to 900: 900 securities, 900 phases */
#define MARKET_MEAN_DELAY_NS 1000000000LL /* a market order's NegExp delay: mean 1 s */
#define MARKET_MAX_DELAY_NS 5000000000LL  /* ... capped at 5 s */
#define MARKET_FEED_BATCH 20           /* ticker entries per Market-Feed */
#define MARKET_MAX_SECURITIES 100000000 /* securities an emulator prices, at most */
#define MARKET_MIN_CAPACITY 16         /* entries each store starts with, at least */
#define MARKET_MAX_ENTRIES (1LL << 32)  /* a store's cap at most: its bytes fit a size_t */
#define MARKET_MAX_CLOCK_NS (1LL << 62) /* the clock at most (146 years): no overflow */

/* Trade types, in reference.TRADE_TYPES's order */
enum { MARKET_TMB, MARKET_TMS, MARKET_TSL, MARKET_TLS, MARKET_TLB, MARKET_NTYPES };
extern const char *const MARKET_TYPE_IDS[MARKET_NTYPES];

/* What market_submit, market_result_done and market_next answer */
enum { MARKET_OK = 0, MARKET_FULL = -1, MARKET_BAD = -2 };
enum { MARKET_NONE = 0, MARKET_RESULT = 1, MARKET_FEED = 2 };

typedef struct {
    int32_t security, price, qty; /* price in cents */
    int32_t trigger;              /* 1: a limit order's trigger, else a trade's or padding */
} market_tick_t;

typedef struct {
    int64_t due;      /* ns since the run's start */
    uint64_t seq;     /* submission order: ties leave in it */
    int64_t trade_id; /* 0 for a trigger */
    int32_t security, qty;
    int32_t price;    /* a trigger's ticker price (the curve's at its time) */
    int32_t trigger;  /* 1: a limit order's trigger, 0: a market order's Trade-Result */
} market_event_t;

typedef struct { /* a FIFO of ticker entries */
    market_tick_t *v;
    size_t cap, head, n;
} market_ring_t;

typedef struct {
    int64_t trade_id;
    int32_t security, price, qty; /* trade_result(trade_id, price); security, qty: its tick */
    int64_t due;
} market_result_t;

typedef struct {
    int kind; /* MARKET_NONE, MARKET_RESULT, MARKET_FEED */
    market_result_t result;
    market_tick_t feed[MARKET_FEED_BATCH]; /* market_feed(symbols, prices, qtys) */
} market_work_t;

typedef struct {
    int64_t market, limit, triggered, results, results_done, feeds, padded_triggers,
        padded_random, never;
} market_counts_t;

typedef struct {
    rng_t rng;
    int32_t securities;
    size_t max_entries;        /* each store's hard cap */
    market_event_t *heap;
    size_t heap_n, heap_cap;
    size_t heap_triggers;      /* of heap_n: limit orders waiting for their time */
    uint64_t seq;
    market_ring_t triggers;    /* triggered limit orders waiting to pad a feed */
    market_ring_t tape;        /* entries of the next feeds */
    size_t tape_triggers;      /* of tape.n: limit orders' triggers */
    market_counts_t counts;
    char error[160];           /* why the last MARKET_FULL or MARKET_BAD */
} Market;

/* The curve's price of security (0-based) at t (ns since the run's start, >= 0), in cents. */
int32_t market_price(int32_t security, int64_t t);
/* When a limit order of type (MARKET_TSL, MARKET_TLS, MARKET_TLB) at limit cents submitted
 * at now triggers: now when the price is there already, else when the curve next reaches
 * it (less than MARKET_PERIOD_NS later); -1 when it never does. */
int64_t market_trigger_at(int type, int32_t limit, int32_t security, int64_t now);

/* Security's symbol (s_symb), as reference.symbol writes it, into buf (size bytes): its
 * length, or -1 when it does not fit (or security < 0). */
int market_symbol(int32_t security, char *buf, size_t size);
/* The security (0-based) whose symbol is s, the inverse of market_symbol: -1 when none is. */
int64_t market_security(const char *s);

/* 0, or -1 (errno ENOMEM, or EINVAL: securities 1..MARKET_MAX_SECURITIES, capacity >= 1,
 * capacity <= max_entries <= MARKET_MAX_ENTRIES) with nothing to free. */
int market_init(Market *m, uint64_t seed, int32_t securities, size_t capacity,
                size_t max_entries);
void market_free(Market *m);
/* A trade Trade-Order committed (or a Market-Feed triggered, as TMB/TMS): MARKET_OK with
 * *due its Trade-Result's time (a market order) or its trigger's (a limit order; -1: never),
 * MARKET_FULL (a store at its cap) or MARKET_BAD (an input out of range), m->error saying
 * which; then nothing changed. */
int market_submit(Market *m, int64_t trade_id, int32_t security, int type, int32_t qty,
                  int32_t limit, int64_t now, int64_t *due);
/* The Trade-Result of r (as market_next gave it) completed at now: its entry and a padding
 * entry go on the tape. MARKET_OK, MARKET_FULL or MARKET_BAD as for market_submit. */
int market_result_done(Market *m, const market_result_t *r, int64_t now);
/* The earliest due work at now into *out (a full feed batch first, then Trade-Results in
 * time order): its kind, MARKET_NONE when nothing is due; *next is when the next work may
 * be due (now when more is, INT64_MAX when nothing waits), for the loop's sleep. Triggers
 * whose time came move to the trigger queue on the way. */
int market_next(Market *m, int64_t now, market_work_t *out, int64_t *next);
/* Limit orders not yet sent in a Market-Feed: waiting for their time, triggered and
 * queued, on the tape, or never reached. */
int64_t market_pending_limits(const Market *m);

/* The Python type BrokerageMarket (market_type.c), added to the module by
 * brokerage_market_add. A loop's terminals that hold it (bind_market) drive it without the
 * GIL while driven > 0: Python's methods then refuse. Its loop clock is now_ns() - origin. */
typedef struct {
    PyObject_HEAD
    Market m;
    int ready;      /* __init__ succeeded */
    int driven;     /* loops that drive it through their terminals */
    int64_t origin; /* the loop's clock starts here: now_ns() at __init__ */
} BrokerageMarket;
extern PyTypeObject BrokerageMarketType;
int brokerage_market_add(PyObject *m);

#endif
