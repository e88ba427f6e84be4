/*
 * The brokerage's market emulator (market.h says what it does and why it takes no lock):
 * the price curve, trigger times, the min-heap of due work, the trigger queue and the
 * tape, and the Python type BrokerageMarket that drives it with a clock of the caller's.
 */
#include "market.h"

const char *const MARKET_TYPE_IDS[MARKET_NTYPES] = {"TMB", "TMS", "TSL", "TLS", "TLB"};

/* ------------------------------------------------------------------------------------------ */
/* The curve                                                                                  */

/* Where security's wave is at t: 0 .. MARKET_PERIOD_NS - 1, $20.00 at 0, $30.00 at half. */
static int64_t wave_at(int32_t security, int64_t t) {
    int64_t phase = (int64_t)security % 900 * MARKET_PHASE_STRIDE % 900 * 1000000000LL;
    return (t % MARKET_PERIOD_NS + phase) % MARKET_PERIOD_NS;
}

int32_t market_price(int32_t security, int64_t t) {
    int64_t x = wave_at(security, t);
    if (x < MARKET_HALF_NS) return (int32_t)(MARKET_LOW_CENTS + x / MARKET_CENT_NS);
    return (int32_t)(MARKET_HIGH_CENTS - (x - MARKET_HALF_NS) / MARKET_CENT_NS);
}

/* The price is at most limit on [0, a) and [b, PERIOD) of the wave (the price falls to it);
 * at least limit on [c, d) (it rises to it). Each bound is where the price first equals the
 * limit, so the trigger's tick carries the limit. */
int64_t market_trigger_at(int type, int32_t limit, int32_t security, int64_t now) {
    int64_t x = wave_at(security, now), L = limit;
    if (type == MARKET_TLS) {
        if (L <= MARKET_LOW_CENTS) return now;
        if (L > MARKET_HIGH_CENTS) return -1;
        int64_t c = (L - MARKET_LOW_CENTS) * MARKET_CENT_NS;
        int64_t d = MARKET_HALF_NS + (MARKET_HIGH_CENTS + 1 - L) * MARKET_CENT_NS;
        if (x >= c && x < d) return now;
        return now + (x < c ? c - x : MARKET_PERIOD_NS - x + c);
    }
    if (L >= MARKET_HIGH_CENTS) return now;
    if (L < MARKET_LOW_CENTS) return -1;
    int64_t a = (L - MARKET_LOW_CENTS + 1) * MARKET_CENT_NS;
    int64_t b = MARKET_HALF_NS + (MARKET_HIGH_CENTS - L) * MARKET_CENT_NS;
    if (x < a || x >= b) return now;
    return now + (b - x);
}

/* NegExp(mean 1 s), capped at 5 s: the market order's wait for its Trade-Result. */
static int64_t fill_delay(rng_t *r) {
    double d = -(double)MARKET_MEAN_DELAY_NS * log1p(-rng_unit(r));
    return d >= (double)MARKET_MAX_DELAY_NS ? MARKET_MAX_DELAY_NS : (int64_t)d;
}

/* ------------------------------------------------------------------------------------------ */
/* Symbols: reference.symbol's numbering, both ways                                          */

#define SYMBOL_STEP 7919 /* prime to 26: scrambles the numbering within a width */
#define SYMBOL_SHIFT 1234
#define SYMBOL_MAX_WIDTH 6 /* 26^3 + .. + 26^6 symbols: more than MARKET_MAX_SECURITIES */

/* The first index of symbols width letters long, and 26^width. */
static int64_t symbol_base(int width, int64_t *span) {
    int64_t base = 0, n = 26 * 26 * 26;
    for (int w = 3; w < width; w++) {
        base += n;
        n *= 26;
    }
    *span = n;
    return base;
}

int market_symbol(int32_t security, char *buf, size_t size) {
    if (security < 0) return -1;
    int width = 3;
    int64_t span, base = symbol_base(width, &span);
    while (security - base >= span) base = symbol_base(++width, &span);
    if ((size_t)width + 1 > size) return -1;
    int64_t n = ((security - base) * SYMBOL_STEP + SYMBOL_SHIFT) % span;
    for (int i = width - 1; i >= 0; i--, n /= 26) buf[i] = (char)('A' + n % 26);
    buf[width] = 0;
    return width;
}

/* x with x * a = 1 (mod m), a prime to m */
static int64_t inverse_mod(int64_t a, int64_t m) {
    int64_t r0 = m, r1 = a % m, t0 = 0, t1 = 1;
    while (r1) {
        int64_t q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
        r0 = r1, r1 = r, t0 = t1, t1 = t;
    }
    return t0 < 0 ? t0 + m : t0;
}

int64_t market_security(const char *s) {
    size_t width = strlen(s);
    if (width < 3 || width > SYMBOL_MAX_WIDTH) return -1;
    int64_t n = 0, span, base = symbol_base((int)width, &span);
    for (size_t i = 0; i < width; i++) {
        if (s[i] < 'A' || s[i] > 'Z') return -1;
        n = n * 26 + (s[i] - 'A');
    }
    int64_t k = (n - SYMBOL_SHIFT % span + span) % span;
    return base + (int64_t)((unsigned __int128)k * inverse_mod(SYMBOL_STEP, span) % span);
}

/* ------------------------------------------------------------------------------------------ */
/* The stores: each grows by doubling up to max_entries                                       */

/* Room for more entries in a store of *cap holding n: 0, or MARKET_FULL (m->error says
 * which) with the store as it was. */
static int make_room(Market *m, void **v, size_t *cap, size_t n, size_t more, size_t size,
                     const char *what) {
    if (n + more <= *cap) return MARKET_OK;
    if (n + more > m->max_entries) {
        snprintf(m->error, sizeof m->error,
                 "the market emulator's %s holds %zu entries, its cap", what, m->max_entries);
        return MARKET_FULL;
    }
    size_t grown = *cap * 2 > m->max_entries ? m->max_entries : *cap * 2;
    if (grown < n + more) grown = n + more;
    void *p = realloc(*v, grown * size);
    if (!p) {
        snprintf(m->error, sizeof m->error, "no memory for the market emulator's %s (%zu)",
                 what, grown);
        return MARKET_FULL;
    }
    *v = p;
    *cap = grown;
    return MARKET_OK;
}

static int ring_room(Market *m, market_ring_t *q, size_t more, const char *what) {
    if (q->n + more <= q->cap) return MARKET_OK;
    size_t old = q->cap;
    void *v = q->v;
    int rc = make_room(m, &v, &q->cap, q->n, more, sizeof *q->v, what);
    if (rc < 0) return rc;
    q->v = v;
    /* the entries that wrapped past the old end move to the new space after it */
    size_t wrapped = q->head + q->n > old ? q->head + q->n - old : 0;
    for (size_t i = 0; i < wrapped; i++) q->v[(old + i) % q->cap] = q->v[i];
    return MARKET_OK;
}

static void ring_push(market_ring_t *q, market_tick_t t) { /* after ring_room */
    q->v[(q->head + q->n) % q->cap] = t;
    q->n++;
}

static market_tick_t ring_pop(market_ring_t *q) { /* q->n > 0 */
    market_tick_t t = q->v[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    return t;
}

static int before(const market_event_t *a, const market_event_t *b) {
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_push(Market *m, market_event_t e) { /* after make_room */
    size_t i = m->heap_n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!before(&e, &m->heap[up])) break;
        m->heap[i] = m->heap[up];
        i = up;
    }
    m->heap[i] = e;
    if (e.trigger) m->heap_triggers++;
}

static market_event_t heap_pop(Market *m) { /* m->heap_n > 0 */
    market_event_t top = m->heap[0], last = m->heap[--m->heap_n];
    size_t i = 0, n = m->heap_n;
    for (;;) {
        size_t kid = 2 * i + 1;
        if (kid >= n) break;
        if (kid + 1 < n && before(&m->heap[kid + 1], &m->heap[kid])) kid++;
        if (!before(&m->heap[kid], &last)) break;
        m->heap[i] = m->heap[kid];
        i = kid;
    }
    if (n) m->heap[i] = last;
    if (top.trigger) m->heap_triggers--;
    return top;
}

/* ------------------------------------------------------------------------------------------ */
/* The emulator                                                                               */

int market_init(Market *m, uint64_t seed, int32_t securities, size_t capacity,
                size_t max_entries) {
    memset(m, 0, sizeof *m);
    if (securities < 1 || securities > MARKET_MAX_SECURITIES || capacity < 1 ||
        capacity > max_entries || max_entries > (size_t)MARKET_MAX_ENTRIES) {
        errno = EINVAL;
        return -1;
    }
    if (capacity < MARKET_MIN_CAPACITY)
        capacity = max_entries < MARKET_MIN_CAPACITY ? max_entries : MARKET_MIN_CAPACITY;
    m->heap = malloc(capacity * sizeof *m->heap);
    m->triggers.v = malloc(capacity * sizeof *m->triggers.v);
    m->tape.v = malloc(capacity * sizeof *m->tape.v);
    if (!m->heap || !m->triggers.v || !m->tape.v) {
        market_free(m);
        errno = ENOMEM;
        return -1;
    }
    m->heap_cap = m->triggers.cap = m->tape.cap = capacity;
    m->max_entries = max_entries;
    m->securities = securities;
    rng_seed(&m->rng, seed);
    return 0;
}

void market_free(Market *m) {
    free(m->heap);
    free(m->triggers.v);
    free(m->tape.v);
    m->heap = NULL;
    m->triggers.v = m->tape.v = NULL;
    m->heap_n = m->heap_cap = m->triggers.n = m->triggers.cap = m->tape.n = m->tape.cap = 0;
}

static int bad(Market *m, const char *what, long long v) {
    snprintf(m->error, sizeof m->error, "the market emulator's %s %lld is out of range",
             what, v);
    return MARKET_BAD;
}

static int check_tick(Market *m, int32_t security, int32_t qty, int64_t now) {
    if (security < 0 || security >= m->securities) return bad(m, "security", security);
    if (qty < 1) return bad(m, "quantity", qty);
    if (now < 0 || now > MARKET_MAX_CLOCK_NS) return bad(m, "clock", now);
    return MARKET_OK;
}

int market_submit(Market *m, int64_t trade_id, int32_t security, int type, int32_t qty,
                  int32_t limit, int64_t now, int64_t *due) {
    int rc = check_tick(m, security, qty, now);
    if (rc < 0) return rc;
    if (type < 0 || type >= MARKET_NTYPES) return bad(m, "trade type", type);
    if (trade_id < 1) return bad(m, "trade id", trade_id);
    market_event_t e = {.seq = m->seq, .trade_id = trade_id, .security = security, .qty = qty};
    if (type == MARKET_TMB || type == MARKET_TMS) {
        void *v = m->heap;
        if ((rc = make_room(m, &v, &m->heap_cap, m->heap_n, 1, sizeof e, "heap")) < 0)
            return rc;
        m->heap = v;
        e.due = now + fill_delay(&m->rng);
        heap_push(m, e);
        m->seq++;
        m->counts.market++;
        *due = e.due;
        return MARKET_OK;
    }
    if (limit < 1) return bad(m, "limit price", limit);
    int64_t at = market_trigger_at(type, limit, security, now);
    if (at < 0) { /* the curve never gets there: it stays pending */
        m->counts.limit++;
        m->counts.never++;
        *due = -1;
        return MARKET_OK;
    }
    market_tick_t tick = {security, market_price(security, at), qty, 1};
    /* the trigger queue keeps room for every trigger still waiting in the heap, so that
     * one whose time came never stays in the heap in front of due Trade-Results */
    if ((rc = ring_room(m, &m->triggers, m->heap_triggers + 1, "trigger queue")) < 0)
        return rc;
    if (at == now) { /* in the money: queued at once */
        ring_push(&m->triggers, tick);
        m->counts.triggered++;
    } else {
        void *v = m->heap;
        if ((rc = make_room(m, &v, &m->heap_cap, m->heap_n, 1, sizeof e, "heap")) < 0)
            return rc;
        m->heap = v;
        e.due = at;
        e.trigger = 1;
        e.trade_id = 0;
        e.price = tick.price;
        heap_push(m, e);
        m->seq++;
    }
    m->counts.limit++;
    *due = at;
    return MARKET_OK;
}

int market_result_done(Market *m, const market_result_t *r, int64_t now) {
    int rc = check_tick(m, r->security, r->qty, now);
    if (rc < 0) return rc;
    if (r->price < 1) return bad(m, "trade price", r->price);
    if ((rc = ring_room(m, &m->tape, 2, "tape")) < 0) return rc;
    ring_push(&m->tape, (market_tick_t){r->security, r->price, r->qty, 0});
    if (m->triggers.n) {
        ring_push(&m->tape, ring_pop(&m->triggers));
        m->tape_triggers++;
        m->counts.padded_triggers++;
    } else {
        int32_t s = (int32_t)uniform(&m->rng, 0, m->securities - 1);
        int32_t qty = 100 << uniform(&m->rng, 0, 3); /* as Trade-Order's: 100 .. 800 */
        ring_push(&m->tape, (market_tick_t){s, market_price(s, now), qty, 0});
        m->counts.padded_random++;
    }
    m->counts.results_done++;
    return MARKET_OK;
}

/* Triggers whose time came join the trigger queue (room kept for them by market_submit). */
static void trigger_due(Market *m, int64_t now) {
    while (m->heap_n && m->heap[0].trigger && m->heap[0].due <= now) {
        market_event_t e = heap_pop(m);
        ring_push(&m->triggers, (market_tick_t){e.security, e.price, e.qty, 1});
        m->counts.triggered++;
    }
}

int market_next(Market *m, int64_t now, market_work_t *out, int64_t *next) {
    trigger_due(m, now);
    out->kind = MARKET_NONE;
    if (m->tape.n >= MARKET_FEED_BATCH) {
        for (int i = 0; i < MARKET_FEED_BATCH; i++) {
            out->feed[i] = ring_pop(&m->tape);
            if (out->feed[i].trigger) m->tape_triggers--;
        }
        out->kind = MARKET_FEED;
        m->counts.feeds++;
    } else if (m->heap_n && !m->heap[0].trigger && m->heap[0].due <= now) {
        market_event_t e = heap_pop(m);
        out->result = (market_result_t){e.trade_id, e.security, market_price(e.security, e.due),
                                        e.qty, e.due};
        out->kind = MARKET_RESULT;
        m->counts.results++;
        trigger_due(m, now);
    }
    int64_t after = m->heap_n ? m->heap[0].due : INT64_MAX; /* a trigger's time, maybe */
    *next = m->tape.n >= MARKET_FEED_BATCH ? now : after < now ? now : after;
    return out->kind;
}

int64_t market_pending_limits(const Market *m) {
    return (int64_t)(m->heap_triggers + m->triggers.n + m->tape_triggers) + m->counts.never;
}

