/*
 * The brokerage build's initial trading in C: the loop of workloads/brokerage/trades.py's
 * python_trade_rows (with lots.py's trade_lots, tax_cents and commission_cents), writing the
 * same COPY text byte for byte from the same draws of Python's random.Random: MT19937 with
 * Python's getrandbits(30) and random(), on the state rng.getstate() hands over.
 *
 * trades.c       the loop on C records: the generator, the accounts and their lots, the text
 * trades_type.c  BrokerageTrades, the Python type: takes the accounts, the tables and the
 *                generator's state from Python, hands back each batch's pieces, and writes
 *                the balances, the tally and the positions back as Python's loop leaves them
 *
 * Every name outside a file starts with bkt_/Bkt/BKT_.
 */
#ifndef OLTPLAB_BROKERAGE_TRADES_H
#define OLTPLAB_BROKERAGE_TRADES_H

#include "native.h"

/* ------------------------------------------------------------------------------------------ */
/* trades.py's constants (BrokerageTrades refuses a trades.py whose differ) */

#define BKT_TYPES 5             /* reference.TRADE_TYPES: TMB TMS TSL TLS TLB */
#define BKT_TIERS 3             /* reference.TIERS */
#define BKT_QUANTITIES 4        /* QUANTITIES: 100 200 400 800 */
#define BKT_RATES_PER_TIER 80   /* _RATES: types x exchanges (4) x quantities */
#define BKT_RATES (BKT_TIERS * BKT_RATES_PER_TIER)
#define BKT_BID_LO 2000         /* BID_CENTS */
#define BKT_BID_HI 3000
#define BKT_MARKET_SPREAD 25    /* MARKET_SPREAD */
#define BKT_LIMIT_SPREAD 50     /* LIMIT_SPREAD */
#define BKT_MARGIN_PERCENT 16   /* MARGIN_PERCENT */
#define BKT_LIFO_PERCENT 35     /* LIFO_PERCENT */
#define BKT_OWNER_EXECUTES 0.9  /* OWNER_EXECUTES */
#define BKT_SUBMIT_DELAY 5      /* SUBMIT_DELAY */
#define BKT_PENDING_DELAY 900   /* PENDING_DELAY */
#define BKT_SKIP_MOD 101        /* SKIP_MOD, SKIP_REST */
#define BKT_SKIP_REST 51
#define BKT_TRADES_PER_PIECE 8000 /* TRADES_PER_PIECE */
#define BKT_PIECE_ROWS 20000    /* PIECE_ROWS */
#define BKT_TRADING_SECONDS 28800 /* scale.TRADING_SECONDS */
#define BKT_EARLY (BKT_SUBMIT_DELAY + BKT_PENDING_DELAY) /* _EARLY */
#define BKT_MONEY_TABLE 40000   /* len(_MONEY_TEXT) */
#define BKT_TENTHS 10
extern const int BKT_TYPE_TENTHS[BKT_TENTHS]; /* TYPE_TENTHS */
extern const int64_t BKT_QTY[BKT_QUANTITIES]; /* QUANTITIES */

/* ------------------------------------------------------------------------------------------ */
/* Python's random.Random: MT19937 and the two draws the loop makes                           */

#define BKT_MT_N 624
typedef struct {
    uint32_t mt[BKT_MT_N];
    int index; /* 0..BKT_MT_N, as getstate()'s last item */
} BktMT;

void bkt_mt_refill(BktMT *g);

static inline uint32_t bkt_mt_next(BktMT *g) {
    if (g->index >= BKT_MT_N) bkt_mt_refill(g);
    uint32_t y = g->mt[g->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

/* getrandbits(30) */
static inline uint64_t bkt_bits30(BktMT *g) { return bkt_mt_next(g) >> 2; }

/* random(): 53 bits in [0, 1) */
static inline double bkt_random(BktMT *g) {
    uint32_t a = bkt_mt_next(g) >> 5, b = bkt_mt_next(g) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------------------------------ */
/* Text: growing buffers; a write that cannot get its room marks the buffer failed            */

typedef struct {
    const char *s;
    size_t n;
} BktStr;

typedef struct {
    char *p;
    size_t len, cap;
    int failed; /* an allocation failed: the text is incomplete and must not be used */
} BktBuf;

int bkt_grow(BktBuf *b, size_t more);

static inline void bkt_put(BktBuf *b, const char *s, size_t n) {
    if (b->len + n > b->cap && bkt_grow(b, n) < 0) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Strings that live as long as a BrokerageTrades: copied into blocks freed together */
typedef struct BktBlock BktBlock;
typedef struct {
    BktBlock *head;
    size_t left;
    char *at;
} BktArena;

/* A copy of s[0..n-1] (NUL-terminated) in the arena, or NULL when memory ran out */
const char *bkt_arena_copy(BktArena *a, const char *s, size_t n);
void bkt_arena_free(BktArena *a);

/* ------------------------------------------------------------------------------------------ */
/* The records the loop works on                                                              */

#define BKT_DTS 24 /* "YYYY-MM-DD HH:MM:SS" and its NUL, with room to spare */

typedef struct {
    int64_t t_id, qty, price; /* price in cents */
    char dts[BKT_DTS];
    size_t dts_n;
} BktLot;

/* A position: trades.new_position's [hs_qty, lots, symbol, exchange index x 4]; the open lots
 * are lots[head .. head + n - 1], oldest first */
typedef struct {
    int64_t held;
    BktLot *lots;
    size_t head, n, cap;
    int rate_off;
    BktStr symb;
} BktPos;

typedef struct {
    BktStr *execs; /* "ca_id<TAB>name<TAB>" of each executor, the owner's first */
    int nexec;
    int rate_base; /* (tier - 1) x BKT_RATES_PER_TIER */
    const int64_t *charges; /* the tier's charge by type */
    int64_t tax_st, tax_rate;
    Py_ssize_t broker;
    BktPos *pos;
    int npos;
    int64_t balance;
    int64_t trades, comm; /* completed trades and commission not yet added to the tally */
} BktAccount;

typedef struct {
    int days;
    const BktStr *prefix;    /* per day "YYYY-MM-DD " */
    const BktStr (*due)[2];  /* per day (a margin trade's, a cash trade's) "kind<TAB>date<TAB>" */
    const BktStr *clock;     /* "HH:MM:SS" from BKT_EARLY s before the opening on */
    BktStr type_id[BKT_TYPES], type_name[BKT_TYPES];
    int64_t charges[BKT_TIERS][BKT_TYPES];
    int64_t rates[BKT_RATES];
} BktTables;

/* One batch's text: the tables of trades.py's _trade_pieces */
enum { BKT_TRADE, BKT_HISTORY, BKT_SETTLEMENT, BKT_CASH, BKT_HOLDING_HISTORY, BKT_NTEXTS };
extern const char *const BKT_TABLE_NAMES[BKT_NTEXTS];

typedef struct {
    BktMT g;
    BktTables t;
    BktAccount *acc;
    size_t nacc;
    int64_t next, lo, stop, span; /* the ids next..stop-1 are left; lo: the range's first */
    BktBuf text[BKT_NTEXTS];
    int64_t rows[BKT_NTEXTS];
    char error[200];
} BktLoop;

/* The loaded trades of the ids from L->next on, up to BKT_TRADES_PER_PIECE of them, into
 * L->text and L->rows (emptied first): 0, or -1 with L->error set (memory ran out, or a
 * figure beyond what the tables or 64 bits hold). No Python call: runs without the GIL. */
int bkt_run(BktLoop *L);

/* A lot appended to a position: 0, or -1 when memory ran out */
int bkt_push_lot(BktPos *p, int64_t t_id, int64_t qty, int64_t price, const char *dts,
                 size_t dts_n);

extern PyTypeObject BkTradesType;
int brokerage_trades_add(PyObject *m);

#endif
