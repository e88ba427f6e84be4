/*
 * The market emulator's side of the loop (market.h has the emulator itself). Each worker
 * has one BrokerageMarket; its users' terminals and its actors' terminals are bound to it
 * (BrokerageTerminal.bind_market), and the loop drives them all on its one thread:
 *
 * - a user's Trade-Order that committed hands its trade to the emulator (market_submit, with
 *   the trade id, symbol and price the call returned), unless it was rolled back by design
 *   or the executor had no permission (trade id 0);
 * - an actor is a terminal on a connection of its own that draws the emulator's due work
 *   instead of a deck: a Trade-Result or a Market-Feed batch, and on the actor that runs
 *   it, Data-Maintenance once a minute (one table a call, frames.DM_TABLES in turn). With
 *   nothing due it answers KIND_WAIT and the loop looks again after t->wait_ns (at most
 *   BK_ACTOR_NAP_NS: a Trade-Order committed meanwhile may bring work due sooner);
 * - a committed Trade-Result puts its ticker entries on the tape (market_result_done); a
 *   committed Market-Feed submits each trade it triggered as a market order (TMB for a
 *   limit buy, TMS for a limit sell or stop-loss), which the feed's answer lists.
 *
 * Several actors (and several workers' emulators) deliver at once: nothing here is locked
 * or shared between workers. The emulator's clock is now_ns() - market->origin.
 */
#include "customer.h"

const char *const BK_DM_TABLE_NAMES[BK_DM_TABLES] = {
    "account_permission", "address", "company", "customer", "customer_taxrate",
    "daily_market", "exchange", "financial", "news_item", "security", "taxrate",
    "watch_item"};

/* The market's clock: nanoseconds since its origin, never negative (a terminal bound before
 * the origin was set, or a clock read across a step's start, sees 0). */
int64_t bk_market_now(const BkTerminal *t) {
    int64_t now = now_ns() - t->market->origin;
    return now < 0 ? 0 : now;
}

static void draw_maintenance(BkTerminal *t, bk_txn_t *x) {
    rng_t *r = &t->rng;
    const bk_tables_t *tb = &t->tb;
    x->dm.table = (int32_t)(t->dm_count++ % BK_DM_TABLES);
    int64_t c_id = uniform(r, 1, tb->customers);
    x->dm.c_id = c_id;
    x->dm.acct_id = (c_id - 1) * BK_MAX_ACCOUNTS + uniform(r, 1, tb->accounts[c_id - 1]);
    x->dm.co_id = uniform(r, 1, tb->companies);
    x->dm.day = (int32_t)uniform(r, 1, 31);
    x->dm.vol_incr = (int32_t)uniform(r, 1, 2) == 1 ? -1 : 1;
    bk_symbol(uniform(r, 0, tb->securities - 1), x->dm.symbol, sizeof x->dm.symbol);
    snprintf(x->dm.tx_id, sizeof x->dm.tx_id, "D%03d",
             (int)uniform(r, 0, BK_TAX_DIVISIONS - 1));
}

int bk_actor_draw(BkTerminal *t, bk_txn_t *x) {
    Market *m = &t->market->m;
    int64_t now = bk_market_now(t);
    if (t->maintenance && now >= t->next_dm) {
        t->next_dm = now + BK_DM_EVERY_NS;
        x->kind = BK_DATA_MAINTENANCE;
        draw_maintenance(t, x);
        return x->kind;
    }
    market_work_t w;
    int64_t next = INT64_MAX;
    switch (market_next(m, now, &w, &next)) {
    case MARKET_RESULT:
        x->kind = BK_TRADE_RESULT;
        x->tr = w.result;
        return x->kind;
    case MARKET_FEED:
        x->kind = BK_MARKET_FEED;
        memcpy(x->mf, w.feed, sizeof x->mf);
        return x->kind;
    default:
        break;
    }
    int64_t wait = next == INT64_MAX ? BK_ACTOR_NAP_NS : next - now;
    if (t->maintenance && t->next_dm - now < wait) wait = t->next_dm - now;
    t->wait_ns = wait < 0 ? 0 : wait > BK_ACTOR_NAP_NS ? BK_ACTOR_NAP_NS : wait;
    return KIND_WAIT;
}

/* The trade type's index (MARKET_TMB ...) of its id, -1 when none */
static int type_of(const char *id) {
    for (int i = 0; id && i < MARKET_NTYPES; i++)
        if (strncmp(id, MARKET_TYPE_IDS[i], 3) == 0) return i;
    return -1;
}

/* Trade-Order's row: trade_id, status_id, symbol, type_id, bid_price, trade_qty, is_market,
 * roll_it_back (frames.TRADE_ORDER.returns); Market-Feed's rows: trade_id, symbol, price,
 * qty, type_id (frames.MARKET_FEED.returns). */
void bk_row(bk_txn_t *x, int index, int ncols, const char *const *values) {
    BkTerminal *t = x->term;
    if (index < 0) {
        x->ordered.has = 0;
        if (t && x->kind == BK_MARKET_FEED) t->ntriggered = 0;
        return;
    }
    if (x->kind == BK_TRADE_ORDER && index == 0 && ncols >= 5 && values[0]) {
        x->ordered.trade_id = strtoll(values[0], NULL, 10);
        snprintf(x->ordered.symbol, sizeof x->ordered.symbol, "%s", values[2] ? values[2] : "");
        if (text_cents(values[4], &x->ordered.price) < 0) x->ordered.price = 0;
        x->ordered.has = 1;
        return;
    }
    if (x->kind != BK_MARKET_FEED || !t || ncols < 5 || !values[0]) return;
    int type = type_of(values[4]);
    int64_t security = values[1] ? market_security(values[1]) : -1;
    if (t->ntriggered == t->cap_triggered) {
        size_t cap = t->cap_triggered ? 2 * t->cap_triggered : 64;
        bk_trigger_t *v = cap <= BK_MAX_TRIGGERED ? realloc(t->triggered, cap * sizeof *v) : NULL;
        if (!v) {
            t->lost_triggers++;
            return;
        }
        t->triggered = v;
        t->cap_triggered = cap;
    }
    bk_trigger_t *g = &t->triggered[t->ntriggered++];
    g->trade_id = strtoll(values[0], NULL, 10);
    g->security = (int32_t)security;
    g->qty = values[3] ? (int32_t)strtol(values[3], NULL, 10) : 0;
    g->type = type == MARKET_TLB ? MARKET_TMB : MARKET_TMS;
}

void bk_market_done(bk_txn_t *x) {
    BkTerminal *t = x->term;
    if (!t || !t->market) return;
    Market *m = &t->market->m;
    int64_t now = bk_market_now(t), due;
    switch (x->kind) {
    case BK_TRADE_ORDER: {
        if (!x->ordered.has || x->ordered.trade_id <= 0 || x->to.roll_back) return;
        int64_t security = market_security(x->ordered.symbol);
        int type = type_of(x->to.type);
        if (security < 0 || type < 0 ||
            market_submit(m, x->ordered.trade_id, (int32_t)security, type, x->to.qty,
                          (int32_t)x->ordered.price, now, &due) != MARKET_OK)
            t->refused++;
        return;
    }
    case BK_TRADE_RESULT:
        if (market_result_done(m, &x->tr, now) != MARKET_OK) t->refused++;
        return;
    case BK_MARKET_FEED:
        for (size_t i = 0; i < t->ntriggered; i++) {
            const bk_trigger_t *g = &t->triggered[i];
            if (g->security < 0 ||
                market_submit(m, g->trade_id, g->security, g->type, g->qty, 0, now, &due) !=
                    MARKET_OK)
                t->refused++;
        }
        t->ntriggered = 0;
        return;
    default:
        return;
    }
}
