/*
 * The brokerage build's trade loop on C records (trades.h): trades.py's python_trade_rows,
 * statement for statement, without the GIL.
 */
#include "trades.h"

const int BKT_TYPE_TENTHS[BKT_TENTHS] = {0, 0, 0, 1, 1, 1, 4, 4, 3, 2};
const int64_t BKT_QTY[BKT_QUANTITIES] = {100, 200, 400, 800};
const char *const BKT_TABLE_NAMES[BKT_NTEXTS] = {"trade", "trade_history", "settlement",
                                                 "cash_transaction", "holding_history"};

/* ------------------------------------------------------------------------------------------ */
/* MT19937 as CPython's _randommodule.c runs it                                               */

#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfU
#define MT_UPPER 0x80000000U
#define MT_LOWER 0x7fffffffU

void bkt_mt_refill(BktMT *g) {
    static const uint32_t mag01[2] = {0x0U, MT_MATRIX_A};
    uint32_t *mt = g->mt, y;
    int kk;
    for (kk = 0; kk < BKT_MT_N - MT_M; kk++) {
        y = (mt[kk] & MT_UPPER) | (mt[kk + 1] & MT_LOWER);
        mt[kk] = mt[kk + MT_M] ^ (y >> 1) ^ mag01[y & 0x1U];
    }
    for (; kk < BKT_MT_N - 1; kk++) {
        y = (mt[kk] & MT_UPPER) | (mt[kk + 1] & MT_LOWER);
        mt[kk] = mt[kk + (MT_M - BKT_MT_N)] ^ (y >> 1) ^ mag01[y & 0x1U];
    }
    y = (mt[BKT_MT_N - 1] & MT_UPPER) | (mt[0] & MT_LOWER);
    mt[BKT_MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 0x1U];
    g->index = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Buffers and the arena                                                                      */

int bkt_grow(BktBuf *b, size_t more) {
    if (b->failed) return -1;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2) goto failed;
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) goto failed;
    b->p = p;
    b->cap = cap;
    return 0;
failed:
    b->failed = 1;
    return -1;
}

#define BLOCK_BYTES 65536

struct BktBlock {
    BktBlock *next;
    char data[];
};

const char *bkt_arena_copy(BktArena *a, const char *s, size_t n) {
    if (n >= BLOCK_BYTES / 4 || a->left < n + 1) { /* a long string gets a block of its own */
        size_t size = n >= BLOCK_BYTES / 4 ? n + 1 : BLOCK_BYTES;
        BktBlock *b = malloc(sizeof(BktBlock) + size);
        if (!b) return NULL;
        b->next = a->head;
        a->head = b;
        if (size != BLOCK_BYTES) {
            memcpy(b->data, s, n);
            b->data[n] = '\0';
            a->left = 0;
            return b->data;
        }
        a->at = b->data;
        a->left = size;
    }
    char *out = a->at;
    memcpy(out, s, n);
    out[n] = '\0';
    a->at += n + 1;
    a->left -= n + 1;
    return out;
}

void bkt_arena_free(BktArena *a) {
    while (a->head) {
        BktBlock *next = a->head->next;
        free(a->head);
        a->head = next;
    }
    a->left = 0;
    a->at = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Writing fields                                                                             */

#define PUT_LIT(b, lit) bkt_put((b), (lit), sizeof(lit) - 1)

static inline void put_str(BktBuf *b, BktStr s) { bkt_put(b, s.s, s.n); }

static inline void put_char(BktBuf *b, char c) { bkt_put(b, &c, 1); }

/* An integer as Python's str() writes it */
static inline void put_int(BktBuf *b, int64_t v) {
    char tmp[24], *end = tmp + sizeof tmp, *s = end;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do {
        *--s = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--s = '-';
    bkt_put(b, s, (size_t)(end - s));
}

/* whole + "." + part as two digits (part 0..99) */
static inline void put_cents(BktBuf *b, int64_t whole, int64_t part) {
    put_int(b, whole);
    char t[3] = {'.', (char)('0' + part / 10), (char)('0' + part % 10)};
    bkt_put(b, t, 3);
}

/* Python's floor division and modulo */
static inline int64_t floor_div(int64_t a, int64_t d) {
    int64_t q = a / d;
    return (a % d != 0 && ((a < 0) != (d < 0))) ? q - 1 : q;
}

static inline int64_t floor_mod(int64_t a, int64_t d) { return a - floor_div(a, d) * d; }

/* _MONEY_TEXT[c]: 0, or -1 with L->error when Python's table has no entry c */
static int put_money(BktLoop *L, BktBuf *b, int64_t c, const char *what) {
    if (c < 0 || c >= BKT_MONEY_TABLE) {
        snprintf(L->error, sizeof L->error, "a %s of %lld cents: beyond the money table", what,
                 (long long)c);
        return -1;
    }
    put_cents(b, c / 100, c % 100);
    return 0;
}

/* The tax: _MONEY_TEXT[tax] below BKT_MONEY_TABLE, else money(tax) (f"{tax / 100:.2f}") */
static int put_tax(BktLoop *L, BktBuf *b, int64_t tax) {
    if (tax < BKT_MONEY_TABLE) return put_money(L, b, tax, "tax");
    char t[64];
    int n = snprintf(t, sizeof t, "%.2f", (double)tax / 100.0);
    if (n < 0 || (size_t)n >= sizeof t) {
        snprintf(L->error, sizeof L->error, "a tax of %lld cents does not fit its text",
                 (long long)tax);
        return -1;
    }
    bkt_put(b, t, (size_t)n);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Lots: lots.py's trade_lots                                                                 */

int bkt_push_lot(BktPos *p, int64_t t_id, int64_t qty, int64_t price, const char *dts,
                 size_t dts_n) {
    if (dts_n >= BKT_DTS) return -1;
    if (p->head + p->n == p->cap) {
        if (p->head && p->head >= p->n) { /* the front's room is free: move the lots down */
            memmove(p->lots, p->lots + p->head, p->n * sizeof *p->lots);
            p->head = 0;
        } else {
            size_t cap = p->cap ? 2 * p->cap : 4;
            BktLot *lots = realloc(p->lots, cap * sizeof *lots);
            if (!lots) return -1;
            p->lots = lots;
            p->cap = cap;
        }
    }
    BktLot *lot = &p->lots[p->head + p->n++];
    lot->t_id = t_id;
    lot->qty = qty;
    lot->price = price;
    memcpy(lot->dts, dts, dts_n);
    lot->dts[dts_n] = '\0';
    lot->dts_n = dts_n;
    return 0;
}

/* One holding_history row: "h_t_id<TAB>t_id<TAB>before<TAB>after\n" */
static inline void hh_row(BktBuf *b, int64_t h_t_id, int64_t t_id, int64_t before,
                          int64_t after) {
    put_int(b, h_t_id);
    put_char(b, '\t');
    put_int(b, t_id);
    put_char(b, '\t');
    put_int(b, before);
    put_char(b, '\t');
    put_int(b, after);
    put_char(b, '\n');
}

/* The lot a walk takes next, and its removal */
static inline BktLot *walked(BktPos *p, int lifo) {
    return &p->lots[lifo ? p->head + p->n - 1 : p->head];
}

static inline void drop(BktPos *p, int lifo) {
    if (!lifo) p->head++;
    p->n--;
    if (!p->n) p->head = 0;
}

/* trade_lots: the new summary quantity into p->held, the values into *buy and *sell, one
 * holding_history row per lot touched or opened; 0, or -1 when memory ran out */
static int trade_lots(BktLoop *L, BktPos *p, int64_t qty, int is_sell, int lifo, int64_t tid,
                      int64_t price, const char *dts, size_t dts_n, int64_t *buy,
                      int64_t *sell) {
    BktBuf *hh = &L->text[BKT_HOLDING_HISTORY];
    int64_t needed = qty, held = p->held;
    *buy = *sell = 0;
    if (is_sell) {
        if (held > 0) {
            while (needed && p->n) {
                BktLot *lot = walked(p, lifo);
                int64_t have = lot->qty;
                L->rows[BKT_HOLDING_HISTORY]++;
                if (have > needed) {
                    hh_row(hh, lot->t_id, tid, have, have - needed);
                    lot->qty = have - needed;
                    *buy += needed * lot->price;
                    needed = 0;
                } else {
                    hh_row(hh, lot->t_id, tid, have, 0);
                    *buy += have * lot->price;
                    drop(p, lifo);
                    needed -= have;
                }
            }
            *sell = (qty - needed) * price;
        }
        p->held = held - qty;
        if (!needed) return 0;
        needed = -needed;
    } else {
        if (held < 0) {
            while (needed && p->n) {
                BktLot *lot = walked(p, lifo);
                int64_t short_ = -lot->qty;
                L->rows[BKT_HOLDING_HISTORY]++;
                if (short_ > needed) {
                    hh_row(hh, lot->t_id, tid, -short_, needed - short_);
                    lot->qty = needed - short_;
                    *sell += needed * lot->price;
                    needed = 0;
                } else {
                    hh_row(hh, lot->t_id, tid, -short_, 0);
                    *sell += short_ * lot->price;
                    drop(p, lifo);
                    needed -= short_;
                }
            }
            *buy = (qty - needed) * price;
        }
        p->held = held + qty;
        if (!needed) return 0;
    }
    hh_row(hh, tid, tid, 0, needed); /* what is left opens a lot of the trade's own */
    L->rows[BKT_HOLDING_HISTORY]++;
    return bkt_push_lot(p, tid, needed, price, dts, dts_n);
}

/* ------------------------------------------------------------------------------------------ */
/* The loop                                                                                   */

/* The row's head "t_id<TAB>" then "date time" */
static inline void put_head(BktBuf *b, const char *head, size_t head_n) {
    bkt_put(b, head, head_n);
}

static inline void put_time(BktBuf *b, BktStr prefix, BktStr clock) {
    put_str(b, prefix);
    put_str(b, clock);
}

static int no_memory(BktLoop *L) {
    snprintf(L->error, sizeof L->error, "out of memory");
    return -1;
}

int bkt_run(BktLoop *L) {
    for (int k = 0; k < BKT_NTEXTS; k++) {
        L->text[k].len = 0;
        L->rows[k] = 0;
    }
    const BktTables *t = &L->t;
    const uint64_t n_acc = L->nacc, n_ids = (uint64_t)(L->stop - L->lo);
    const uint64_t steps = BKT_LIMIT_SPREAD + 1;
    const uint64_t bid_draws = (BKT_BID_HI - BKT_BID_LO + 1) * steps;
    const uint64_t delay_draws = BKT_SUBMIT_DELAY * BKT_PENDING_DELAY;
    BktBuf *trade = &L->text[BKT_TRADE], *history = &L->text[BKT_HISTORY],
           *settle = &L->text[BKT_SETTLEMENT], *cash = &L->text[BKT_CASH];
    while (L->next < L->stop) {
        int64_t tid = L->next++;
        if (floor_mod(tid, BKT_SKIP_MOD) == BKT_SKIP_REST) continue;
        /* the caller checked that n_ids x span fits 63 bits */
        int64_t at = (int64_t)((uint64_t)(tid - L->lo) * (uint64_t)L->span / n_ids);
        int day = (int)(at / BKT_TRADING_SECONDS);
        int sec = (int)(at % BKT_TRADING_SECONDS) + BKT_EARLY;
        BktStr prefix = t->prefix[day];
        char dts[BKT_DTS];
        size_t dts_n = prefix.n + t->clock[sec].n;
        if (dts_n >= BKT_DTS) {
            snprintf(L->error, sizeof L->error, "a timestamp of %zu bytes", dts_n);
            return -1;
        }
        memcpy(dts, prefix.s, prefix.n);
        memcpy(dts + prefix.n, t->clock[sec].s, t->clock[sec].n);
        char head[24];
        size_t head_n = (size_t)snprintf(head, sizeof head, "%lld\t", (long long)tid);
        if (head_n >= sizeof head) return no_memory(L); /* never: 20 digits at most */

        BktAccount *a = &L->acc[bkt_bits30(&L->g) * n_acc >> 30];
        BktPos *pos = &a->pos[bkt_bits30(&L->g) * (uint64_t)a->npos >> 30];
        int draw = (int)(bkt_bits30(&L->g) * 40 >> 30);
        int tt = BKT_TYPE_TENTHS[draw >> 2], qi = draw & 3;
        int64_t qty = BKT_QTY[qi];
        int64_t v = (int64_t)(bkt_bits30(&L->g) * bid_draws >> 30);
        int64_t bid = v / (int64_t)steps + BKT_BID_LO, step = v % (int64_t)steps;
        int64_t flags = (int64_t)(bkt_bits30(&L->g) * 10000 >> 30);
        int lifo = flags % 100 < BKT_LIFO_PERCENT;
        v = (int64_t)(bkt_bits30(&L->g) * delay_draws >> 30);
        int64_t gap = v / BKT_PENDING_DELAY + 1, wait = v % BKT_PENDING_DELAY;
        int64_t price;
        if (tt < 2) { /* market */
            price = bid + step - BKT_MARKET_SPREAD;
            put_head(history, head, head_n);
            put_time(history, prefix, t->clock[sec - gap]);
            PUT_LIT(history, "\tSBMT\n");
            L->rows[BKT_HISTORY] += 2;
        } else {
            price = tt == 3 ? bid + step : bid - step;
            wait += gap + 1;
            put_head(history, head, head_n);
            put_time(history, prefix, t->clock[sec - wait]);
            PUT_LIT(history, "\tPNDG\n");
            put_head(history, head, head_n);
            put_time(history, prefix, t->clock[sec - gap]);
            PUT_LIT(history, "\tSBMT\n");
            L->rows[BKT_HISTORY] += 3;
        }
        put_head(history, head, head_n);
        bkt_put(history, dts, dts_n);
        PUT_LIT(history, "\tCMPT\n");
        int is_sell = 0 < tt && tt < 4;
        int is_cash = is_sell || flags / 100 >= BKT_MARGIN_PERCENT;
        int e = 0;
        if (a->nexec > 1 && !(bkt_random(&L->g) < BKT_OWNER_EXECUTES))
            e = 1 + (int)(bkt_random(&L->g) * (double)(a->nexec - 1));
        int64_t held = pos->held, tax = 0;
        if (is_sell ? held > 0 : held < 0) { /* the trade closes lots: Trade-Result's walk */
            int64_t buy, sell;
            if (trade_lots(L, pos, qty, is_sell, lifo, tid, price, dts, dts_n, &buy, &sell) < 0)
                return no_memory(L);
            if (a->tax_st && sell - buy > 0) /* lots.tax_cents: half up, nothing on no gain */
                tax = floor_div((sell - buy) * a->tax_rate + 50000, 100000);
        } else { /* it opens a lot, as trade_lots does when there is nothing to close */
            int64_t lot_qty = is_sell ? -qty : qty;
            pos->held = held + lot_qty;
            if (bkt_push_lot(pos, tid, lot_qty, price, dts, dts_n) < 0) return no_memory(L);
            hh_row(&L->text[BKT_HOLDING_HISTORY], tid, tid, 0, lot_qty);
            L->rows[BKT_HOLDING_HISTORY]++;
        }
        int64_t value = qty * price;
        int64_t rate = t->rates[a->rate_base + tt * 16 + pos->rate_off + qi];
        int64_t comm = floor_div(qty * price * rate + 5000, 10000); /* commission_cents */
        int64_t charge = a->charges[tt], taxed = a->tax_st == 1 ? tax : 0;
        int64_t amount, whole, part;
        if (is_sell) {
            amount = value - charge - comm - taxed;
            whole = floor_div(amount, 100);
            part = floor_mod(amount, 100);
        } else {
            amount = -(value + charge + comm + taxed);
            whole = floor_div(-amount, 100);
            part = floor_mod(-amount, 100);
        }
        /* trade */
        put_head(trade, head, head_n);
        bkt_put(trade, dts, dts_n);
        PUT_LIT(trade, "\tCMPT\t");
        put_str(trade, t->type_id[tt]);
        put_char(trade, '\t');
        put_char(trade, is_cash ? '1' : '0');
        put_char(trade, '\t');
        put_str(trade, pos->symb);
        put_char(trade, '\t');
        put_int(trade, qty);
        put_char(trade, '\t');
        if (put_money(L, trade, bid, "bid") < 0) return -1;
        put_char(trade, '\t');
        put_str(trade, a->execs[e]);
        if (put_money(L, trade, price, "price") < 0) return -1;
        put_char(trade, '\t');
        if (put_money(L, trade, charge, "charge") < 0) return -1;
        put_char(trade, '\t');
        if (put_money(L, trade, comm, "commission") < 0) return -1;
        put_char(trade, '\t');
        if (put_tax(L, trade, tax) < 0) return -1;
        PUT_LIT(trade, "\t");
        put_char(trade, lifo ? '1' : '0');
        put_char(trade, '\n');
        L->rows[BKT_TRADE]++;
        /* settlement, and a cash trade's cash_transaction */
        put_head(settle, head, head_n);
        put_str(settle, t->due[day][is_cash]);
        if (!is_sell) put_char(settle, '-');
        put_cents(settle, whole, part);
        put_char(settle, '\n');
        L->rows[BKT_SETTLEMENT]++;
        if (is_cash) {
            put_head(cash, head, head_n);
            bkt_put(cash, dts, dts_n);
            put_char(cash, '\t');
            if (!is_sell) put_char(cash, '-');
            put_cents(cash, whole, part);
            put_char(cash, '\t');
            put_str(cash, t->type_name[tt]);
            put_char(cash, ' ');
            put_int(cash, qty);
            PUT_LIT(cash, " shares of ");
            put_str(cash, pos->symb);
            put_char(cash, '\n');
            L->rows[BKT_CASH]++;
            if (__builtin_add_overflow(a->balance, amount, &a->balance)) {
                snprintf(L->error, sizeof L->error, "a balance beyond 64 bits");
                return -1;
            }
        }
        a->trades++;
        a->comm += comm;
        if (L->rows[BKT_TRADE] >= BKT_TRADES_PER_PIECE) break;
    }
    for (int k = 0; k < BKT_NTEXTS; k++)
        if (L->text[k].failed) return no_memory(L);
    return 0;
}
