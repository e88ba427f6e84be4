/*
 * --mode sql on libpq for the DVD-Store-derived shop: each call of an order as the statements
 * its PL/pgSQL function runs (engines/postgres/dvds/sql/functions.sql), sent from the client
 * in libpq's pipeline mode. The statements are prepared by Python under the names of
 * DVDS_PQ_STATEMENTS below (their SQL: engines/postgres/dvds/transactions.py); every value
 * travels as a parameter, the drawn inputs as the text arguments of procedures mode
 * (dvds_args_text), what an earlier round trip returned as integers and amounts written
 * again from what was parsed.
 *
 * Each call is one transaction, BEGIN and COMMIT travelling with its statements, in these
 * round trips:
 *   login           1  [BEGIN READ ONLY, the customer by username and password, their 10
 *                      latest purchases (titles and actors), COMMIT]
 *   new_customer    1  [BEGIN, INSERT ... ON CONFLICT DO NOTHING RETURNING customerid,
 *                      COMMIT]: no row is a taken username (0), drawn again by the terminal
 *   browse_*        1  [BEGIN READ ONLY, up to batch products (by category and special, or
 *                      full-text on the actor or the title), COMMIT]
 *   reviews_*       1  [BEGIN READ ONLY, up to batch reviews of at least stars stars, the best
 *                      first, each with its helpfulness (of a product, or of up to batch
 *                      products by full-text on the actor or the title), COMMIT]
 *   new_review      1  [BEGIN, INSERT ... RETURNING review_id, COMMIT]
 *   new_helpfulness 1  [BEGIN, INSERT ... RETURNING review_helpfulness_id, COMMIT]
 *   new_member      1  [BEGIN, INSERT ... ON CONFLICT DO NOTHING RETURNING customerid,
 *                      COMMIT]: no row is a member already (0), nothing written
 *   purchase        2  [BEGIN, each product's INVENTORY row FOR UPDATE in prod_id order, each
 *                      product's price] [the order, its lines, the customer's history, each
 *                      product's stock taken and sales added (the restock trigger may fire),
 *                      COMMIT]; when a product is short, [ROLLBACK] instead: -1, the order
 *                      rolled back by design
 * After an error the ROLLBACK is one more round trip, and the call is retried (deadlocks,
 * serialization failures) or counted by the loop as in procedures mode.
 */
#include "dvds.h"
#include "sqlpipe.h"

/* The prepared statements, by the names Python prepares them under. */
enum {
    BEGIN, BEGIN_READ_ONLY, COMMIT, ROLLBACK, LOGIN_CUSTOMER, LOGIN_HISTORY, NEW_CUSTOMER,
    BROWSE_CATEGORY, BROWSE_ACTOR, BROWSE_TITLE, STOCK, PRICE, ORDER, LINES, HISTORY, TAKE,
    REVIEWS_PRODUCT, REVIEWS_ACTOR, REVIEWS_TITLE, NEW_REVIEW, NEW_HELPFULNESS, NEW_MEMBER,
    NSTATEMENTS
};
const char *const DVDS_PQ_STATEMENTS[NSTATEMENTS + 1] = {
    "begin", "begin_read_only", "commit", "rollback", "login.customer", "login.history",
    "new_customer.insert", "browse_category.products", "browse_actor.products",
    "browse_title.products", "purchase.stock", "purchase.price", "purchase.order",
    "purchase.lines", "purchase.history", "purchase.take", "reviews_product.reviews",
    "reviews_actor.reviews", "reviews_title.reviews", "new_review.insert",
    "new_helpfulness.insert", "new_member.insert", NULL};

/* The calls of one statement, BEGIN (READ ONLY for a read) before it and COMMIT after: the
 * statement, which takes all the call's arguments, and its BEGIN. */
static const struct {
    int stmt, begin;
} ONE_STATEMENT[DVDS_NKINDS] = {
    [DVDS_NEW_CUSTOMER] = {NEW_CUSTOMER, BEGIN},
    [DVDS_BROWSE_CATEGORY] = {BROWSE_CATEGORY, BEGIN_READ_ONLY},
    [DVDS_BROWSE_ACTOR] = {BROWSE_ACTOR, BEGIN_READ_ONLY},
    [DVDS_BROWSE_TITLE] = {BROWSE_TITLE, BEGIN_READ_ONLY},
    [DVDS_REVIEWS_PRODUCT] = {REVIEWS_PRODUCT, BEGIN_READ_ONLY},
    [DVDS_REVIEWS_ACTOR] = {REVIEWS_ACTOR, BEGIN_READ_ONLY},
    [DVDS_REVIEWS_TITLE] = {REVIEWS_TITLE, BEGIN_READ_ONLY},
    [DVDS_NEW_REVIEW] = {NEW_REVIEW, BEGIN},
    [DVDS_NEW_HELPFULNESS] = {NEW_HELPFULNESS, BEGIN},
    [DVDS_NEW_MEMBER] = {NEW_MEMBER, BEGIN}};

_Static_assert(2 + 2 * DVDS_MAX_CART <= PIPE_MAX, "a purchase's round trip fits the pipe");
#define MAX_PARAMS 2                      /* purchase.take's, the most integers of a statement */
#define PARAM_BYTES 32                    /* an integer's text */

struct SqlTxn {
    SqlPipe p;    /* first: the statements under way, the answers so far, the outcome */
    dvds_sql_t c; /* the call */
};

/* The call as the terminal drew it, kept for its retries; its arguments as text. */
static void sql_inputs(SqlTxn *s, const void *txn) { dvds_sql_inputs(&s->c, txn, 0); }

/* ------------------------------------------------------------------------------------------ */
/* Sending                                                                                    */

static int put(SqlTxn *s, PGconn *c, int stmt, int tag, int n, const char *const *v) {
    return pipe_put(&s->p, c, stmt, tag, n, v);
}

static int put0(SqlTxn *s, PGconn *c, int stmt) { return put(s, c, stmt, 0, 0, NULL); }

/* n of the call's own arguments from the first (the login's 2 twice; all of them for the
 * other calls of one statement). */
static int put_args(SqlTxn *s, PGconn *c, int stmt, int first, int n) {
    const char *v[MAX_CALL_ARGS];
    if (first + n > s->c.nargs) {
        pipe_fail(&s->p, "%s takes %d arguments of %d",
                 DVDS_PQ_STATEMENTS[stmt], n, s->c.nargs);
        return 0;
    }
    for (int i = 0; i < n; i++) v[i] = s->c.args[first + i];
    return put(s, c, stmt, 0, n, v);
}

/* A statement of integer parameters (a product, a quantity); tag: the cart's product. */
static int put_ints(SqlTxn *s, PGconn *c, int stmt, int tag, int n, const int64_t *x) {
    char text[MAX_PARAMS][PARAM_BYTES];
    const char *v[MAX_PARAMS];
    for (int i = 0; i < n && i < MAX_PARAMS; i++) {
        snprintf(text[i], PARAM_BYTES, "%lld", (long long)x[i]); /* 20 characters at most */
        v[i] = text[i];
    }
    return n <= MAX_PARAMS && put(s, c, stmt, tag, n, v);
}

/* The purchase's second round trip: the order and its rows, or the ROLLBACK of an order a
 * product is short for. */
static int purchase_writes(SqlTxn *s, PGconn *c) {
    const dvds_cart_t *k = &s->c.cart;
    int order_ok = dvds_sql_order(&s->c, s->p.problem, sizeof s->p.problem);
    if (order_ok < 0) return 0;
    if (!order_ok) { /* a product is short: nothing written, the rolled-back order */
        s->p.value = -1;
        return put0(s, c, ROLLBACK);
    }
    char(*amount)[DVDS_AMOUNT_BYTES] = s->c.amount;
    /* args: customer, {products}, {quantities} */
    const char *order[4] = {s->c.args[0], amount[0], amount[1], amount[2]};
    const char *lines[2] = {s->c.args[1], s->c.args[2]};
    const char *hist[2] = {s->c.args[0], s->c.args[1]};
    int ok = put(s, c, ORDER, 0, 4, order) && put(s, c, LINES, 0, 2, lines) &&
             put(s, c, HISTORY, 0, 2, hist);
    for (int i = 0; ok && i < k->n; i++) {
        int64_t take[2] = {k->prod[i], k->quantity[i]};
        ok = put_ints(s, c, TAKE, i, 2, take);
    }
    return ok && put0(s, c, COMMIT);
}

/* The call's next round trip: 1 sent, 0 lost (or broken: problem set), 2 finished. */
static int next_trip(SqlTxn *s, PGconn *c) {
    int ok = 1, step = s->c.step++, kind = s->c.x.kind;
    pipe_trip(&s->p);
    if (step > 0 && (kind != DVDS_PURCHASE || step > 1)) return 2;
    switch (kind) {
    case DVDS_LOGIN: /* (username, password) */
        s->p.value = 0;
        ok = put0(s, c, BEGIN_READ_ONLY) && put_args(s, c, LOGIN_CUSTOMER, 0, 2) &&
             put_args(s, c, LOGIN_HISTORY, 0, 2) && put0(s, c, COMMIT);
        break;
    case DVDS_NEW_CUSTOMER:    /* the profile, as dvds_new_customer takes it */
    case DVDS_BROWSE_CATEGORY: /* (category, batch) */
    case DVDS_BROWSE_ACTOR:    /* (actor, batch) */
    case DVDS_BROWSE_TITLE:    /* (title word, batch) */
    case DVDS_REVIEWS_PRODUCT: /* (product, stars, batch) */
    case DVDS_REVIEWS_ACTOR:   /* (actor, stars, batch) */
    case DVDS_REVIEWS_TITLE:   /* (title word, stars, batch) */
    case DVDS_NEW_REVIEW:      /* (product, customer, stars, summary, text) */
    case DVDS_NEW_HELPFULNESS: /* (review, customer, helpfulness) */
    case DVDS_NEW_MEMBER:      /* (customer, tier) */
        s->p.value = 0;
        ok = put0(s, c, ONE_STATEMENT[kind].begin) &&
             put_args(s, c, ONE_STATEMENT[kind].stmt, 0, s->c.nargs) && put0(s, c, COMMIT);
        break;
    case DVDS_PURCHASE: /* (customer, {products}, {quantities}) */
        if (step == 0) {
            ok = put0(s, c, BEGIN);
            for (int i = 0; ok && i < s->c.cart.n; i++) {
                int64_t prod = s->c.cart.prod[i];
                s->c.found[i] = 0;
                ok = put_ints(s, c, STOCK, i, 1, &prod);
            }
            for (int i = 0; ok && i < s->c.cart.n; i++) {
                int64_t prod = s->c.cart.prod[i];
                ok = put_ints(s, c, PRICE, i, 1, &prod);
            }
        } else {
            ok = purchase_writes(s, c);
        }
        break;
    default:
        pipe_fail(&s->p, "no such call (%d)", kind);
        return 0;
    }
    return ok && pipe_sync(c);
}

/* Start the call with the inputs of sql_inputs (again, for a retry); 0 when lost, or when
 * its arguments did not fit (problem set). */
static int sql_start(SqlTxn *s, PGconn *c) {
    s->c.step = 0;
    if (s->c.nargs < 0) {
        s->p.problem[0] = 0;
        pipe_fail(&s->p, "the %s's arguments do not fit",
                  s->c.x.kind >= 0 && s->c.x.kind < DVDS_NKINDS ? DVDS_NAMES[s->c.x.kind] : "call");
        return 0;
    }
    return pipe_start(&s->p, c) && next_trip(s, c) == 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Reading                                                                                    */

/* An integer column's text; 0 (problem set) when it is not one. */
static int int_at(SqlTxn *s, const PGresult *r, int row, int col, int64_t *out) {
    const char *v = pq.getvalue(r, row, col);
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end != v && !*end && !errno) {
        *out = x;
        return 1;
    }
    pipe_fail(&s->p, "not an integer: %.40s", v);
    return 0;
}

/* One statement's answer; 0 when it lacks what the call needs (problem set). */
static int take(SqlTxn *s, int stmt, int tag, const PGresult *r) {
    int rows = pq.ntuples(r);
    int64_t v = 0;
    switch (stmt) {
    case LOGIN_CUSTOMER: /* no row: no such customer, 0 */
    case NEW_CUSTOMER:   /* no row: the username is taken, 0 */
    case NEW_MEMBER:     /* no row: the customer is a member already, 0 */
        if (rows && !int_at(s, r, 0, 0, &v)) return 0;
        s->p.value = rows ? v : 0;
        return 1;
    case BROWSE_CATEGORY:
    case BROWSE_ACTOR:
    case BROWSE_TITLE:
    case REVIEWS_PRODUCT:
    case REVIEWS_ACTOR:
    case REVIEWS_TITLE:
        s->p.value = rows;
        return 1;
    case STOCK:
        if (!rows) return 1; /* a product missing: purchase_writes says which */
        s->c.found[tag] |= 1;
        return int_at(s, r, 0, 0, &s->c.stock[tag]);
    case PRICE:
        if (!rows) return 1;
        if (text_cents(pq.getvalue(r, 0, 0), &s->c.price_cents[tag]) < 0) {
            pipe_fail(&s->p, "not a price: %.40s", pq.getvalue(r, 0, 0));
            return 0;
        }
        s->c.found[tag] |= 2;
        return 1;
    case ORDER:
    case NEW_REVIEW:
    case NEW_HELPFULNESS:
        if (!rows) break;
        if (!int_at(s, r, 0, 0, &v)) return 0;
        s->p.value = v;
        return 1;
    default:
        return 1;
    }
    pipe_fail(&s->p, "%s found no row", DVDS_PQ_STATEMENTS[stmt]);
    return 0;
}

static SqlTxn *sql_new(void) {
    return pipe_new(sizeof(SqlTxn), DVDS_PQ_STATEMENTS, COMMIT, ROLLBACK, take, next_trip);
}

const PqSqlOps DVDS_PQ_SQL = {.create = sql_new, .destroy = pipe_destroy, .inputs = sql_inputs,
                              .start = sql_start, .read = pipe_read, .rollback = pipe_rollback,
                              .take = pipe_outcome, .failure = pipe_failure, .value = pipe_value,
                              .problem = pipe_problem};
