/*
 * --mode sql on MariaDB for the DVD-Store-derived shop (myloop.c sends it): each call of an
 * order as the statements its stored procedure runs (engines/mariadb/dvds/sql/procedures.sql),
 * written by the client as multi-statement round trips. Values go into the text as literals:
 * the drawn inputs as procedures mode writes them into its CALL (dvds_literal_args: each
 * checked for its type's characters, never escaped), the full-text query built from the
 * letters and digits of the drawn words alone, and what an earlier round trip returned
 * (stock, prices) parsed and written again as integers and amounts. Each call runs from START
 * TRANSACTION to one COMMIT or ROLLBACK, so that Com_commit + Com_rollback moves by one per
 * call, as with the procedures.
 *
 * Round trips per call:
 *   login           1  [START (read only), the customer by username and password, their 10
 *                      latest purchases (titles and actors), COMMIT]
 *   new_customer    1  [START, INSERT ... ON DUPLICATE KEY UPDATE of nothing (a taken
 *                      username, the only duplicate key a new customer can meet, changes no
 *                      row; any other error stays one, as in the procedure), the new id or 0
 *                      when no row was inserted, COMMIT]
 *   browse_*        1  [START (read only), up to batch products (by category and special, or
 *                      MATCH ... AGAINST ('+WORD ...' IN BOOLEAN MODE)), COMMIT]
 *   reviews_*       1  [START (read only), up to batch reviews of at least stars stars, the
 *                      best first, each with its helpfulness (of a product, or of up to batch
 *                      products found as the browses find them), COMMIT]
 *   new_review      1  [START, the INSERT, its id (LAST_INSERT_ID()), COMMIT]
 *   new_helpfulness 1  [START, the INSERT, its id, COMMIT]
 *   new_member      1  [START, INSERT ... ON DUPLICATE KEY UPDATE of nothing (a member already:
 *                      no row changed, where the procedure's INSERT meets its duplicate key;
 *                      any other error stays one), the customer or 0 when no row was
 *                      inserted, COMMIT]
 *   purchase        2  [START, each product's INVENTORY row FOR UPDATE in prod_id order and
 *                      its price] [the order, its id, its lines and the customer's history
 *                      (one INSERT each), each product's stock taken and sales added (the
 *                      restock trigger may fire), COMMIT]; [ROLLBACK] instead when a product
 *                      is short: -1, the order rolled back by design
 * Every text is written into the call's buffer with its bound checked: a text that would not
 * fit stops the run with an error (problem), never writes past it.
 */
#include <ctype.h>

#include "dvds.h"
#include "mariadb.h"
#include "sqltrip.h"

enum {
    Q_START, Q_START_READ_ONLY, Q_COMMIT, Q_ROLLBACK, Q_LOGIN_CUSTOMER, Q_LOGIN_HISTORY,
    Q_NEW_CUSTOMER, Q_NEW_ID, Q_BROWSE_CATEGORY, Q_BROWSE_ACTOR, Q_BROWSE_TITLE, Q_STOCK,
    Q_PRICE, Q_ORDER, Q_LAST_ID, Q_LINES, Q_LINE, Q_HISTORY, Q_HISTORY_ROW, Q_TAKE,
    Q_REVIEWS_PRODUCT, Q_REVIEWS_ACTOR, Q_REVIEWS_TITLE, Q_NEW_REVIEW, Q_NEW_HELPFULNESS,
    Q_NEW_MEMBER, Q_MEMBER_ID, NQ
};

/* DVD Store 3's review searches: each review with the sum of its helpfulness ratings, the best
 * rated first; by full text, of up to batch products found as the browses find them. */
#define HELPFUL                                                                                \
    "(SELECT COALESCE(SUM(h.helpfulness), 0) FROM reviews_helpfulness h"                        \
    " WHERE h.review_id = v.review_id) AS helpful"
#define BEST_FIRST " ORDER BY v.stars DESC, v.review_date DESC LIMIT %s"
#define REVIEWS_OF(column)                                                                     \
    "SELECT v.review_id, v.prod_id, p.title, p.actor, v.review_date, v.stars,"                 \
    " v.review_summary, v.review_text, " HELPFUL                                               \
    " FROM (SELECT prod_id, title, actor FROM products"                                        \
    " WHERE MATCH (" column ") AGAINST ('%s' IN BOOLEAN MODE) LIMIT %s) p"                     \
    " JOIN reviews v ON v.prod_id = p.prod_id AND v.stars >= %s" BEST_FIRST

/* The statements as printf formats: %s a checked literal's text (quoted here when text) or
 * an amount as d.dd, %d and %lld integers. */
static const char *const SQL[NQ] = {
    "START TRANSACTION",
    "START TRANSACTION READ ONLY",
    "COMMIT",
    "ROLLBACK",
    "SELECT customerid FROM customers WHERE username = '%s' AND password = '%s'",
    "SELECT h.orderid, p.title, p.actor FROM customers c"
    " JOIN cust_hist h ON h.customerid = c.customerid JOIN products p ON p.prod_id = h.prod_id"
    " WHERE c.username = '%s' AND c.password = '%s' ORDER BY h.orderid DESC LIMIT 10",
    /* empty address2, state and zip are stored as NULL, as the procedure stores them */
    "INSERT INTO customers (firstname, lastname, address1, address2, city, state, zip,"
    " country, region, email, phone, creditcardtype, creditcard, creditcardexpiration,"
    " username, password, age, income, gender) VALUES ('%s', '%s', '%s', NULLIF('%s', ''),"
    " '%s', NULLIF('%s', ''), NULLIF('%s', ''), '%s', %s, '%s', '%s', %s, '%s', '%s', '%s',"
    " '%s', %s, %s, '%s') ON DUPLICATE KEY UPDATE customerid = customerid",
    "SELECT IF(ROW_COUNT() > 0, LAST_INSERT_ID(), 0)",
    "SELECT * FROM products"
    " WHERE category = %s AND special = 1 LIMIT %s",
    "SELECT * FROM products"
    " WHERE MATCH (actor) AGAINST ('%s' IN BOOLEAN MODE) LIMIT %s",
    "SELECT * FROM products"
    " WHERE MATCH (title) AGAINST ('%s' IN BOOLEAN MODE) LIMIT %s",
    "SELECT quan_in_stock FROM inventory WHERE prod_id = %d FOR UPDATE",
    "SELECT price FROM products WHERE prod_id = %d",
    "INSERT INTO orders (orderdate, customerid, netamount, tax, totalamount)"
    " VALUES (CURDATE(), %s, %s, %s, %s)",
    "SELECT LAST_INSERT_ID()", /* the order's, the review's, the rating's */
    /* the lines and history rows take the order's id from LAST_INSERT_ID(), which neither
     * INSERT changes (no AUTO_INCREMENT column); they run before the stock updates */
    "INSERT INTO orderlines (orderlineid, orderid, prod_id, quantity, orderdate) VALUES ",
    "(%d, LAST_INSERT_ID(), %d, %d, CURDATE())",
    "INSERT INTO cust_hist (customerid, orderid, prod_id) VALUES ",
    "(%s, LAST_INSERT_ID(), %d)",
    "UPDATE inventory SET quan_in_stock = quan_in_stock - %d, sales = sales + %d"
    " WHERE prod_id = %d",
    "SELECT v.review_id, v.prod_id, v.review_date, v.stars, v.customerid, v.review_summary,"
    " v.review_text, " HELPFUL " FROM reviews v WHERE v.prod_id = %s AND v.stars >= %s"
    BEST_FIRST,
    REVIEWS_OF("actor"),
    REVIEWS_OF("title"),
    "INSERT INTO reviews (prod_id, review_date, stars, customerid, review_summary, review_text)"
    " VALUES (%s, CURRENT_DATE, %s, %s, '%s', '%s')",
    "INSERT INTO reviews_helpfulness (review_id, customerid, helpfulness) VALUES (%s, %s, %s)",
    "INSERT INTO membership (customerid, membershiptype, expiredate)"
    " VALUES (%s, %s, CURRENT_DATE + INTERVAL 365 DAY)"
    " ON DUPLICATE KEY UPDATE customerid = customerid",
    "SELECT IF(ROW_COUNT() > 0, %s, 0)"};

_Static_assert(1 + 2 * DVDS_MAX_CART <= TRIP_MAX, "a purchase's round trip fits the trip");
#define QUERY_BYTES (4 * DVDS_WORD_BYTES)   /* a full-text query: +WORD ... of one name */

struct MyTxn {
    SqlTrip trip; /* first: the round trip under way, its text, the outcome */
    dvds_sql_t c; /* the call */
};

/* The call as the terminal drew it, kept for its retries; its arguments checked as
 * literals. */
static void mytxn_inputs(MyTxn *t, const void *txn) { dvds_sql_inputs(&t->c, txn, 1); }

/* ------------------------------------------------------------------------------------------ */
/* Writing a round trip's text                                                                */

/* The statement of SQL[q] with its arguments (SQL's formats: checked here). */
#define PUT(t, q, tag, ...) \
    (trip_stmt(&(t)->trip, q, tag) && trip_add(&(t)->trip, SQL[q], __VA_ARGS__))
#define PUT0(t, q) (trip_stmt(&(t)->trip, q, 0) && trip_add(&(t)->trip, "%s", SQL[q]))

/* A full-text query in boolean mode from a drawn text: each run of letters and digits as a
 * required word, +WORD1 +WORD2 (what the procedure builds); "" when it holds none. */
static int boolean_query(MyTxn *t, const char *text, char *buf, size_t size) {
    size_t at = 0;
    buf[0] = 0;
    for (const char *p = text; *p;) {
        while (*p && !isalnum((unsigned char)*p)) p++;
        const char *w = p;
        while (isalnum((unsigned char)*p)) p++;
        if (p == w) break;
        if (text_put(buf, size, &at, "%s+%.*s", at ? " " : "", (int)(p - w), w) < 0)
            return trip_fail(&t->trip, "a full-text query longer than %zu bytes", size);
    }
    return 1;
}

/* A browse or a review search: of a category's specials (category, batch) or a product's
 * reviews (product, stars, batch), or by full text (words, batch; words, stars, batch). */
static int search(MyTxn *t) {
    char query[QUERY_BYTES];
    char (*a)[ARG_TEXT] = t->c.args;
    t->trip.value = 0;
    if (!PUT0(t, Q_START_READ_ONLY)) return 0;
    switch (t->c.x.kind) {
    case DVDS_BROWSE_CATEGORY:
        if (!PUT(t, Q_BROWSE_CATEGORY, 0, a[0], a[1])) return 0;
        break;
    case DVDS_REVIEWS_PRODUCT:
        if (!PUT(t, Q_REVIEWS_PRODUCT, 0, a[0], a[1], a[2])) return 0;
        break;
    default: /* no word: nothing to search for, 0 found */
        if (!boolean_query(t, a[0], query, sizeof query)) return 0;
        if (!query[0]) break;
        switch (t->c.x.kind) {
        case DVDS_BROWSE_ACTOR:
            if (!PUT(t, Q_BROWSE_ACTOR, 0, query, a[1])) return 0;
            break;
        case DVDS_BROWSE_TITLE:
            if (!PUT(t, Q_BROWSE_TITLE, 0, query, a[1])) return 0;
            break;
        case DVDS_REVIEWS_ACTOR: /* the products' batch, the stars, the reviews' batch */
            if (!PUT(t, Q_REVIEWS_ACTOR, 0, query, a[2], a[1], a[2])) return 0;
            break;
        default:
            if (!PUT(t, Q_REVIEWS_TITLE, 0, query, a[2], a[1], a[2])) return 0;
        }
    }
    return PUT0(t, Q_COMMIT);
}

static int purchase_reads(MyTxn *t) {
    int ok = PUT0(t, Q_START);
    for (int i = 0; ok && i < t->c.cart.n; i++) {
        t->c.found[i] = 0;
        ok = PUT(t, Q_STOCK, i, (int)t->c.cart.prod[i]) && PUT(t, Q_PRICE, i, (int)t->c.cart.prod[i]);
    }
    return ok;
}

static int purchase_writes(MyTxn *t) {
    const dvds_cart_t *k = &t->c.cart;
    const dvds_txn_t *x = &t->c.x;
    int order_ok = dvds_sql_order(&t->c, t->trip.problem, sizeof t->trip.problem);
    if (order_ok < 0) return 0;
    if (!order_ok) { /* a product is short: nothing written, the rolled-back order */
        t->trip.value = -1;
        return PUT0(t, Q_ROLLBACK);
    }
    char(*amount)[DVDS_AMOUNT_BYTES] = t->c.amount;
    const char *customer = t->c.args[0];
    int ok = PUT(t, Q_ORDER, 0, customer, amount[0], amount[1], amount[2]) &&
             PUT0(t, Q_LAST_ID) && PUT0(t, Q_LINES);
    for (int l = 0; ok && l < x->cart.items; l++)
        ok = (l == 0 || trip_add(&t->trip, ", ")) &&
             trip_add(&t->trip, SQL[Q_LINE], l + 1, (int)x->cart.prod[l], (int)x->cart.quantity[l]);
    ok = ok && PUT0(t, Q_HISTORY);
    for (int l = 0; ok && l < x->cart.items; l++)
        ok = (l == 0 || trip_add(&t->trip, ", ")) && trip_add(&t->trip, SQL[Q_HISTORY_ROW], customer,
                                             (int)x->cart.prod[l]);
    for (int i = 0; ok && i < k->n; i++)
        ok = PUT(t, Q_TAKE, i, (int)k->quantity[i], (int)k->quantity[i], (int)k->prod[i]);
    return ok && PUT0(t, Q_COMMIT);
}

/* The call's next round trip into the text: 1 written, 0 a problem, 2 finished. */
static int next_trip(MyTxn *t) {
    char (*a)[ARG_TEXT] = t->c.args;
    int step = t->c.step++;
    trip_begin(&t->trip);
    if (step > 0 && (t->c.x.kind != DVDS_PURCHASE || step > 1)) return 2;
    switch (t->c.x.kind) {
    case DVDS_LOGIN: /* (username, password) */
        t->trip.value = 0;
        return PUT0(t, Q_START_READ_ONLY) && PUT(t, Q_LOGIN_CUSTOMER, 0, a[0], a[1]) &&
               PUT(t, Q_LOGIN_HISTORY, 0, a[0], a[1]) && PUT0(t, Q_COMMIT);
    case DVDS_NEW_CUSTOMER: /* the profile, as DVDS_NEW_CUSTOMER takes it */
        t->trip.value = 0;
        return PUT0(t, Q_START) &&
               PUT(t, Q_NEW_CUSTOMER, 0, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
                   a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18]) &&
               PUT0(t, Q_NEW_ID) && PUT0(t, Q_COMMIT);
    case DVDS_BROWSE_CATEGORY: /* (category, batch) */
    case DVDS_BROWSE_ACTOR:    /* (actor, batch) */
    case DVDS_BROWSE_TITLE:    /* (title word, batch) */
    case DVDS_REVIEWS_PRODUCT: /* (product, stars, batch) */
    case DVDS_REVIEWS_ACTOR:   /* (actor, stars, batch) */
    case DVDS_REVIEWS_TITLE:   /* (title word, stars, batch) */
        return search(t);
    case DVDS_PURCHASE: /* (customer, products, quantities) */
        return step == 0 ? purchase_reads(t) : purchase_writes(t);
    case DVDS_NEW_REVIEW: /* (product, customer, stars, summary, text) */
        t->trip.value = 0;
        return PUT0(t, Q_START) && PUT(t, Q_NEW_REVIEW, 0, a[0], a[2], a[1], a[3], a[4]) &&
               PUT0(t, Q_LAST_ID) && PUT0(t, Q_COMMIT);
    case DVDS_NEW_HELPFULNESS: /* (review, customer, helpfulness) */
        t->trip.value = 0;
        return PUT0(t, Q_START) && PUT(t, Q_NEW_HELPFULNESS, 0, a[0], a[1], a[2]) &&
               PUT0(t, Q_LAST_ID) && PUT0(t, Q_COMMIT);
    case DVDS_NEW_MEMBER: /* (customer, tier) */
        t->trip.value = 0;
        return PUT0(t, Q_START) && PUT(t, Q_NEW_MEMBER, 0, a[0], a[1]) &&
               PUT(t, Q_MEMBER_ID, 0, a[0]) && PUT0(t, Q_COMMIT);
    default:
        return trip_fail(&t->trip, "no such call (%d)", t->c.x.kind);
    }
}

_Static_assert(DVDS_MAX_ARGS == 19, "the new customer's INSERT writes 19 values");

/* Start the call with the inputs of mytxn_inputs (again, for a retry): 0 when its arguments
 * are not literals or its first text does not fit (trip_problem says why). */
static int mytxn_start(MyTxn *t) {
    t->c.step = 0;
    t->trip.rolling_back = 0;
    t->trip.problem[0] = 0;
    if (t->c.nargs < 0)
        return trip_fail(&t->trip, "the %s's arguments do not fit or are not literals",
                    t->c.x.kind >= 0 && t->c.x.kind < DVDS_NKINDS ? DVDS_NAMES[t->c.x.kind] : "call");
    return next_trip(t) == 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Reading                                                                                    */

/* One statement's answer: ``res`` its rows (NULL: a statement without). 0 with a problem
 * when it lacks what the call needs. */
static int mytxn_result(MyTxn *t, MYSQL_RES *res) {
    int q, tag;
    if (!trip_answer(&t->trip, &q, &tag)) return 0;
    MYSQL_ROW row = res ? my.fetch_row(res) : NULL;
    switch (q) {
    case Q_LOGIN_CUSTOMER: /* no row: no such customer, 0 */
        return row ? trip_int(&t->trip, row[0], &t->trip.value) : 1;
    case Q_NEW_ID:
    case Q_LAST_ID:
    case Q_MEMBER_ID:
        return row ? trip_int(&t->trip, row[0], &t->trip.value) : trip_fail(&t->trip, "no id");
    case Q_BROWSE_CATEGORY:
    case Q_BROWSE_ACTOR:
    case Q_BROWSE_TITLE:
    case Q_REVIEWS_PRODUCT:
    case Q_REVIEWS_ACTOR:
    case Q_REVIEWS_TITLE:
        t->trip.value = res ? (int64_t)my.num_rows(res) : 0;
        return 1;
    case Q_STOCK:
        if (!row) return 1; /* a product missing: purchase_writes says which */
        t->c.found[tag] |= 1;
        return trip_int(&t->trip, row[0], &t->c.stock[tag]);
    case Q_PRICE:
        if (!row) return 1;
        if (text_cents(row[0], &t->c.price_cents[tag]) < 0)
            return trip_fail(&t->trip, "not a price: %.40s", row[0] ? row[0] : "NULL");
        t->c.found[tag] |= 2;
        return 1;
    default:
        return 1;
    }
}

static MyTxn *mytxn_new(size_t cap) {
    return trip_new(sizeof(MyTxn), cap, Q_ROLLBACK, next_trip);
}

const MySqlOps DVDS_MY_SQL = {.create = mytxn_new, .destroy = trip_destroy, .inputs = mytxn_inputs,
                              .start = mytxn_start, .rollback = trip_rollback,
                              .result = mytxn_result, .next = trip_next, .text = trip_text,
                              .value = trip_value, .problem = trip_problem};
