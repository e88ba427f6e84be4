/*
 * The DVD-Store-derived workload as the loop drives it (loop/workload.h): the DvdsTerminal
 * draws each call of an order (terminal.c), the calls go as text arguments of the prepared
 * dvds_<kind>(...) functions (libpq) or as a MariaDB CALL DVDS_<KIND>(..., @out) (in --mode
 * sql as their statements instead: sqlpq.c, sqlmy.c), and a completed call counts its inputs and, for the purchase, the order: the loop's unit row
 * (index DVDS_NKINDS, "order") with the order's response time, the sum of its calls'. The
 * headline unit is an order whose purchase committed (returned its order id > 0); a purchase
 * that returned -1 found a product short and rolled back by design.
 */
#include <stdarg.h>

#include "dvds.h"

/* The input counts of the measured window: the keys of ProcLoop.counts()["inputs"]. Logins
 * count every login that returned, unknown_logins those that found no one (0: the order ends
 * there); new_customers the customers made, taken_usernames the new_customer calls whose name
 * was taken (0: drawn again); searches the browses of all three kinds; purchases those that
 * returned, committed or rolled back, cart_items their items, rolled_back_purchases those
 * that did not commit. */
const char *const DVDS_INPUT_KEYS[DVDS_NINPUTS] = {
    "logins", "new_customers", "searches", "browse_category", "browse_actor", "browse_title",
    "purchases", "cart_items", "rolled_back_purchases", "unknown_logins", "taken_usernames",
    /* DS3: review_orders the orders whose review searches all returned (counted at the last
     * one), review_searches those of all three kinds, new_members the memberships made,
     * taken_memberships the new_member calls whose customer was a member already */
    "review_orders", "review_searches", "reviews_product", "reviews_actor", "reviews_title",
    "new_reviews", "new_helpfulness", "new_members", "taken_memberships"};

/* MariaDB's procedures, by kind */
static const char *const PROCEDURES[DVDS_NKINDS] = {
    "DVDS_LOGIN", "DVDS_NEW_CUSTOMER", "DVDS_BROWSE_CATEGORY", "DVDS_BROWSE_ACTOR",
    "DVDS_BROWSE_TITLE", "DVDS_PURCHASE", "DVDS_REVIEWS_PRODUCT", "DVDS_REVIEWS_ACTOR",
    "DVDS_REVIEWS_TITLE", "DVDS_NEW_REVIEW", "DVDS_NEW_HELPFULNESS", "DVDS_NEW_MEMBER"};

/* Each kind's arguments: i an integer, t text, a an array of integers ({..} for libpq, a JSON
 * array in a string for MariaDB). */
static const char *const SIGNATURES[DVDS_NKINDS] = {
    "tt",                  /* login(username, password) */
    "ttttttttittittttiit", /* new_customer(firstname .. gender), as the contract orders them */
    "ii",                  /* browse_category(category, batch) */
    "ti",                  /* browse_actor(actor, batch) */
    "ti",                  /* browse_title(title, batch) */
    "iaa",                 /* purchase(customerid, prod_ids, quantities) */
    "iii",                 /* reviews_product(prod_id, stars, batch) */
    "tii",                 /* reviews_actor(actor, stars, batch) */
    "tii",                 /* reviews_title(title, stars, batch) */
    "iiitt",               /* new_review(prod_id, customerid, stars, summary, text) */
    "iii",                 /* new_helpfulness(review_id, customerid, helpfulness) */
    "ii"};                 /* new_member(customerid, tier) */

/* A word of the lists: the characters a MariaDB string literal holds as they are. */
int dvds_word_ok(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == ' ' || c == '.' || c == '@' || c == '-'))
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* The arguments as text                                                                      */

/* Append one argument to text[*n] (at most max of them): -1 when it does not fit. */
static int arg(char (*text)[ARG_TEXT], int *n, int max, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int arg(char (*text)[ARG_TEXT], int *n, int max, const char *fmt, ...) {
    if (*n >= max) return -1;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(text[*n], ARG_TEXT, fmt, ap);
    va_end(ap);
    if (w < 0 || w >= ARG_TEXT) return -1;
    (*n)++;
    return 0;
}

static int profile_text(const dvds_profile_t *p, char (*text)[ARG_TEXT], int *n, int max) {
    char zip[16] = ""; /* outside the US, no state and no zip: empty (the build's NULL) */
    if (p->zip >= 0) snprintf(zip, sizeof zip, "%05d", (int)p->zip);
    if (arg(text, n, max, "%s", p->first) < 0 || arg(text, n, max, "%s", p->last) < 0 ||
        arg(text, n, max, "%04d %s ST", (int)p->house, p->street) < 0 ||
        arg(text, n, max, "%s", "") < 0 ||  /* address2 */
        arg(text, n, max, "%s", p->city) < 0 || arg(text, n, max, "%s", p->state) < 0 ||
        arg(text, n, max, "%s", zip) < 0 || arg(text, n, max, "%s", p->country) < 0 ||
        arg(text, n, max, "%d", (int)p->region) < 0 ||
        arg(text, n, max, "%s@example.com", p->last) < 0 ||
        arg(text, n, max, "%lld", (long long)p->phone) < 0 ||
        arg(text, n, max, "%d", (int)p->card_type) < 0 ||
        arg(text, n, max, "%lld", (long long)p->card) < 0 ||
        arg(text, n, max, "%04d/%02d", (int)p->exp_year, (int)p->exp_month) < 0 ||
        arg(text, n, max, "newuser%lld", (long long)p->user) < 0 ||
        arg(text, n, max, "%s", DVDS_PASSWORD) < 0 || arg(text, n, max, "%d", (int)p->age) < 0 ||
        arg(text, n, max, "%d", (int)p->income) < 0 || arg(text, n, max, "%c", p->gender) < 0)
        return -1;
    return 0;
}

/* The call's arguments as text (at most max of ARG_TEXT bytes): how many, or -1 when one does
 * not fit. */
int dvds_args_text(const dvds_txn_t *x, char (*text)[ARG_TEXT], int max) {
    int n = 0, ok;
    if (x->kind < 0 || x->kind >= DVDS_NKINDS) return -1;
    switch (x->kind) {
    case DVDS_LOGIN:
        ok = arg(text, &n, max, "user%lld", (long long)x->user) == 0 &&
             arg(text, &n, max, "%s", DVDS_PASSWORD) == 0;
        break;
    case DVDS_NEW_CUSTOMER:
        ok = profile_text(&x->profile, text, &n, max) == 0;
        break;
    case DVDS_BROWSE_CATEGORY:
        ok = arg(text, &n, max, "%d", (int)x->browse.category) == 0 &&
             arg(text, &n, max, "%d", (int)x->browse.batch) == 0;
        break;
    case DVDS_BROWSE_ACTOR:
    case DVDS_BROWSE_TITLE:
        ok = arg(text, &n, max, "%s", x->browse.text) == 0 &&
             arg(text, &n, max, "%d", (int)x->browse.batch) == 0;
        break;
    case DVDS_PURCHASE: {
        int items = x->cart.items;
        ok = items >= 1 && items <= DVDS_MAX_CART && max >= 3 &&
             arg(text, &n, max, "%lld", (long long)x->customer) == 0 &&
             text_int_array(text[n++], ARG_TEXT, x->cart.prod, items) == 0 &&
             text_int_array(text[n++], ARG_TEXT, x->cart.quantity, items) == 0;
        break;
    }
    case DVDS_REVIEWS_PRODUCT:
        ok = arg(text, &n, max, "%d", (int)x->search.prod) == 0 &&
             arg(text, &n, max, "%d", (int)x->search.stars) == 0 &&
             arg(text, &n, max, "%d", (int)x->search.batch) == 0;
        break;
    case DVDS_REVIEWS_ACTOR:
    case DVDS_REVIEWS_TITLE:
        ok = arg(text, &n, max, "%s", x->search.text) == 0 &&
             arg(text, &n, max, "%d", (int)x->search.stars) == 0 &&
             arg(text, &n, max, "%d", (int)x->search.batch) == 0;
        break;
    case DVDS_NEW_REVIEW:
        ok = arg(text, &n, max, "%d", (int)x->review.prod) == 0 &&
             arg(text, &n, max, "%lld", (long long)x->customer) == 0 &&
             arg(text, &n, max, "%d", (int)x->review.stars) == 0 &&
             arg(text, &n, max, "%s", x->review.summary) == 0 &&
             arg(text, &n, max, "%s", x->review.text) == 0;
        break;
    case DVDS_NEW_HELPFULNESS:
        ok = arg(text, &n, max, "%d", (int)x->rating.review) == 0 &&
             arg(text, &n, max, "%lld", (long long)x->customer) == 0 &&
             arg(text, &n, max, "%d", (int)x->rating.helpfulness) == 0;
        break;
    case DVDS_NEW_MEMBER:
        ok = arg(text, &n, max, "%lld", (long long)x->customer) == 0 &&
             arg(text, &n, max, "%d", (int)x->tier) == 0;
        break;
    default:
        ok = 0;
    }
    if (!ok || n != (int)strlen(SIGNATURES[x->kind])) return -1;
    return n;
}

/* What a MariaDB literal may hold of the call's text: an integer's characters, or the words'
 * and the card's expiry date's. Anything else is refused, never escaped. */
static int literal_ok(const char *s, char type) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int ok = type == 't'   ? dvds_word_ok(s, 1) || c == '/'
                 : type == 'i' ? (c >= '0' && c <= '9') || c == '-'
                               : (c >= '0' && c <= '9') || c == '-' || c == ',' || c == '{' ||
                                     c == '}';
        if (!ok) return 0;
    }
    return 1;
}

/* The call's arguments as text (at most max), each checked for a MariaDB literal: how many,
 * or -1 when one does not fit or holds a character outside its type's (i an integer, t text,
 * a an array as {..}). */
int dvds_literal_args(const dvds_txn_t *x, char (*text)[ARG_TEXT], int max) {
    if (x->kind < 0 || x->kind >= DVDS_NKINDS) return -1;
    int n = dvds_args_text(x, text, max);
    for (int i = 0; i < n; i++)
        if (!literal_ok(text[i], SIGNATURES[x->kind][i])) return -1;
    return n;
}

/* "CALL DVDS_<KIND>(args..., out_var)" into buf (size bytes): its length, or -1 when it does
 * not fit or an argument holds a character outside its type's. Text as a quoted string, the
 * cart's arrays as JSON arrays in strings ('[1,2]'). */
int dvds_call_text(const dvds_txn_t *x, const char *out_var, char *buf, size_t size) {
    char text[MAX_CALL_ARGS][ARG_TEXT];
    int n = dvds_literal_args(x, text, MAX_CALL_ARGS);
    if (n < 0) return -1;
    const char *sig = SIGNATURES[x->kind];
    size_t at = 0;
    if (text_put(buf, size, &at, "CALL %s(", PROCEDURES[x->kind]) < 0) return -1;
    for (int i = 0; i < n; i++) {
        char type = sig[i];
        char *s = text[i];
        const char *sep = i ? "," : "";
        if (type == 'i') {
            if (text_put(buf, size, &at, "%s%s", sep, s) < 0) return -1;
        } else if (type == 't') {
            if (text_put(buf, size, &at, "%s'%s'", sep, s) < 0) return -1;
        } else { /* {..} -> '[..]' */
            size_t len = strlen(s);
            if (len < 2) return -1;
            s[len - 1] = 0;
            if (text_put(buf, size, &at, "%s'[%s]'", sep, s + 1) < 0) return -1;
        }
    }
    if (text_put(buf, size, &at, "%s%s)", n ? "," : "", out_var) < 0) return -1;
    return (int)at;
}

/* ------------------------------------------------------------------------------------------ */
/* What a completed call counts                                                               */

/* The call returned (has: a value): its inputs (unless NULL: outside the window), the order's
 * response time so far, and for the purchase the order: DONE_UNIT with *unit_us, committed
 * (DONE_HEADLINE: it returned the order id) or rolled back. */
int dvds_completed(dvds_txn_t *x, int has, long long value, int64_t us, int64_t *in,
                   int64_t *unit_us) {
    int ok = has && value > 0;
    x->done = 1;
    x->has = has;
    x->value = value;
    x->order_us += us;
    if (in) {
        switch (x->kind) {
        case DVDS_LOGIN:
            in[DVDS_IN_LOGINS]++;
            in[DVDS_IN_UNKNOWN_LOGINS] += !ok;
            break;
        case DVDS_NEW_CUSTOMER:
            in[ok ? DVDS_IN_NEW_CUSTOMERS : DVDS_IN_TAKEN_USERNAMES]++;
            break;
        case DVDS_BROWSE_CATEGORY:
        case DVDS_BROWSE_ACTOR:
        case DVDS_BROWSE_TITLE:
            in[DVDS_IN_SEARCHES]++;
            in[DVDS_IN_BROWSE_CATEGORY + (x->kind - DVDS_BROWSE_CATEGORY)]++;
            break;
        case DVDS_PURCHASE:
            in[DVDS_IN_PURCHASES]++;
            in[DVDS_IN_CART_ITEMS] += x->cart.items;
            in[DVDS_IN_ROLLED_BACK_PURCHASES] += !ok;
            break;
        case DVDS_REVIEWS_PRODUCT:
        case DVDS_REVIEWS_ACTOR:
        case DVDS_REVIEWS_TITLE:
            in[DVDS_IN_REVIEW_SEARCHES]++;
            in[DVDS_IN_REVIEWS_PRODUCT + (x->kind - DVDS_REVIEWS_PRODUCT)]++;
            in[DVDS_IN_REVIEW_ORDERS] += x->reviews_left == 0;
            break;
        case DVDS_NEW_REVIEW:
            in[DVDS_IN_NEW_REVIEWS]++;
            break;
        case DVDS_NEW_HELPFULNESS:
            in[DVDS_IN_NEW_HELPFULNESS]++;
            break;
        case DVDS_NEW_MEMBER:
            in[ok ? DVDS_IN_NEW_MEMBERS : DVDS_IN_TAKEN_MEMBERSHIPS]++;
            break;
        default:
            break;
        }
    }
    if (x->kind != DVDS_PURCHASE) return 0;
    if (unit_us) *unit_us = x->order_us;
    return DONE_UNIT | (ok ? DONE_HEADLINE : DONE_ROLLED_BACK);
}

/* ------------------------------------------------------------------------------------------ */
/* --mode sql: the cart and the money, as both transports' statements take them               */

int dvds_cart_products(const dvds_txn_t *x, dvds_cart_t *c) {
    int items = x->cart.items;
    c->n = 0;
    if (x->kind != DVDS_PURCHASE || items < 1 || items > DVDS_MAX_CART) return -1;
    for (int i = 0; i < items; i++) {
        int32_t p = x->cart.prod[i], q = x->cart.quantity[i];
        if (p < 1 || q < 1 || q > DVDS_MAX_QUANTITY) return -1;
        int k = 0;
        while (k < c->n && c->prod[k] < p) k++;
        if (k < c->n && c->prod[k] == p) {
            c->quantity[k] += q;
            continue;
        }
        for (int j = c->n; j > k; j--) { /* insertion keeps prod_id order */
            c->prod[j] = c->prod[j - 1];
            c->quantity[j] = c->quantity[j - 1];
        }
        c->prod[k] = p;
        c->quantity[k] = q;
        c->n++;
    }
    return 0;
}

#define DVDS_MAX_CENTS 100000000000LL /* 10^9 in money: a tenth of what numeric(12,2) holds */

int dvds_order_cents(const dvds_txn_t *x, const int64_t *price_cents, int64_t out[3]) {
    int64_t net = 0;
    if (x->cart.items < 1 || x->cart.items > DVDS_MAX_CART) return -1;
    for (int i = 0; i < x->cart.items; i++) {
        if (price_cents[i] < 0 || price_cents[i] >= DVDS_MAX_CENTS) return -1;
        net += price_cents[i] * x->cart.quantity[i];
    }
    if (net >= DVDS_MAX_CENTS) return -1;
    out[0] = net;
    out[1] = (net * 825 + 5000) / 10000; /* round(net x 0.0825, 2): half up, net >= 0 */
    out[2] = net + out[1];
    return out[2] < DVDS_MAX_CENTS ? 0 : -1;
}

int dvds_fmt_cents(char *buf, size_t size, int64_t cents) {
    if (cents < 0) return -1;
    int w = snprintf(buf, size, "%lld.%02lld", (long long)(cents / 100), (long long)(cents % 100));
    return w < 0 || (size_t)w >= size ? -1 : 0;
}

void dvds_sql_inputs(dvds_sql_t *c, const void *txn, int literals) {
    memcpy(&c->x, txn, sizeof c->x);
    c->nargs = literals ? dvds_literal_args(&c->x, c->args, MAX_CALL_ARGS)
                        : dvds_args_text(&c->x, c->args, MAX_CALL_ARGS);
    if (c->x.kind == DVDS_PURCHASE && dvds_cart_products(&c->x, &c->cart) < 0) c->nargs = -1;
}

int dvds_sql_order(dvds_sql_t *c, char *problem, size_t size) {
    const dvds_cart_t *k = &c->cart;
    int short_of = 0;
    int64_t line_cents[DVDS_MAX_CART], money[3];
    for (int i = 0; i < k->n; i++) {
        if (c->found[i] != 3) {
            snprintf(problem, size, "product %d is not in the %s", (int)k->prod[i],
                     c->found[i] & 1 ? "products" : "inventory");
            return -1;
        }
        if (c->stock[i] < k->quantity[i]) short_of = 1;
    }
    if (short_of) return 0;
    for (int l = 0; l < c->x.cart.items; l++) /* each line at its product's price */
        for (int i = 0; i < k->n; i++)
            if (k->prod[i] == c->x.cart.prod[l]) line_cents[l] = c->price_cents[i];
    int ok = dvds_order_cents(&c->x, line_cents, money) == 0;
    for (int i = 0; ok && i < 3; i++)
        ok = dvds_fmt_cents(c->amount[i], DVDS_AMOUNT_BYTES, money[i]) == 0;
    if (!ok) snprintf(problem, size, "the order's amount is out of range");
    return ok ? 1 : -1;
}

/* ------------------------------------------------------------------------------------------ */
/* The loop's view                                                                            */

static int accept(PyObject *term) {
    if (!PyObject_TypeCheck(term, &DvdsTerminalType)) {
        PyErr_SetString(PyExc_TypeError, "the dvds workload's terminals must be DvdsTerminal "
                                         "objects");
        return -1;
    }
    return dvds_term_check((DvdsTerminal *)term);
}

static void hold(PyObject *term, int by) { ((DvdsTerminal *)term)->driven += by; }

static int draw(PyObject *term, void *txn) { return dvds_draw((DvdsTerminal *)term, txn); }

static double keying(PyObject *term, int kind) { return 0; }

static double think(PyObject *term, int kind) { return dvds_think((DvdsTerminal *)term, kind); }

static int pq_args(const void *txn, char (*text)[ARG_TEXT], int max) {
    return dvds_args_text(txn, text, max);
}

static int my_call(const void *txn, const char *out_var, char *buf, size_t size) {
    return dvds_call_text(txn, out_var, buf, size);
}

static int completed(void *txn, int has, long long value, int64_t us, int64_t *in,
                     int64_t *unit_us) {
    return dvds_completed(txn, has, value, us, in, unit_us);
}

/* ------------------------------------------------------------------------------------------ */
/* What Python reads: the DvdsTerminal type and the constants                                 */

static int pq_statements(void) {
    int n = 0;
    while (DVDS_PQ_STATEMENTS[n]) n++;
    return n;
}

static int add_to_module(PyObject *m) {
    if (PyType_Ready(&DvdsTerminalType) < 0) return -1;
    Py_INCREF(&DvdsTerminalType);
    if (module_add(m, "DvdsTerminal", (PyObject *)&DvdsTerminalType) < 0 ||
        module_add(m, "DVDS_NAMES", text_tuple(DVDS_NAMES, DVDS_NKINDS)) < 0 ||
        module_add(m, "DVDS_UNIT_NAME", PyUnicode_FromString(DVDS_UNIT_NAME)) < 0 ||
        module_add(m, "DVDS_INPUT_KEYS", text_tuple(DVDS_INPUT_KEYS, DVDS_NINPUTS)) < 0 ||
        module_add(m, "DVDS_PROCEDURES", text_tuple(PROCEDURES, DVDS_NKINDS)) < 0 ||
        module_add(m, "DVDS_SQL_STATEMENTS", text_tuple(DVDS_PQ_STATEMENTS, pq_statements())) < 0 ||
        PyModule_AddIntConstant(m, "DVDS_CATEGORIES", DVDS_CATEGORIES) < 0 ||
        PyModule_AddIntConstant(m, "DVDS_MAX_CART", DVDS_MAX_CART) < 0 ||
        PyModule_AddIntConstant(m, "DVDS_MAX_WORD", DVDS_WORD_BYTES - 1) < 0)
        return -1;
    return 0;
}

const Workload DVDS_WORKLOAD = {
    .name = "dvds", .nkinds = DVDS_NKINDS, .kinds = DVDS_NAMES, .unit = 1,
    .unit_name = DVDS_UNIT_NAME, .ninputs = DVDS_NINPUTS, .input_keys = DVDS_INPUT_KEYS,
    .accept = accept, .hold = hold, .draw = draw, .keying = keying, .think = think,
    .pq_args = pq_args, .my_call = my_call, .completed = completed, .pq_sql = &DVDS_PQ_SQL,
    .my_sql = &DVDS_MY_SQL, .add_to_module = add_to_module};
