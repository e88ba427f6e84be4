/*
 * --mode sql on MariaDB (myloop.c sends it): each transaction type's statements, those the
 * procedures of engines/mariadb/tpcc/sql/procedures.sql run, as a few multi-statement round
 * trips. A round trip's text holds every statement that no longer waits for an answer; the
 * values earlier round trips returned are written into the next one's text, and only
 * integers, decimals (parsed, then written again) and the generated last names ever are.
 * The statements are the printf formats of MY_SQL below (Python's reference,
 * engines/mariadb/tpcc/transactions.py, formats the same ones: _native.MARIADB_SQL). Each
 * transaction runs from START TRANSACTION to one COMMIT or ROLLBACK, so that Com_commit +
 * Com_rollback moves by one per transaction, as with the procedures.
 *
 * Round trips per transaction:
 *   New-Order      2  [START, W_TAX, district FOR UPDATE and its D_NEXT_O_ID + 1, customer,
 *                     the items (one IN list), each stock row FOR UPDATE in (supply
 *                     warehouse, item) order] [order, NEW_ORDER, the stock updates, the order
 *                     lines (one INSERT), COMMIT; ROLLBACK instead when an item was not found:
 *                     the 1%, clause 2.4.2.3]
 *   Payment        2  [START, warehouse and district updates and reads, customer FOR UPDATE]
 *                     [customer update, history, COMMIT]; 3 by last name (the name's
 *                     customers first, then the middle one FOR UPDATE)
 *   Order-Status   2  [START (consistent snapshot, read only), customer, last order] [its
 *                     lines, COMMIT]; 3 by last name
 *   Delivery       3  [START, each district's oldest NEW_ORDER row claimed by its DELETE ...
 *                     RETURNING] [the orders, their carrier and lines, the lines' amounts]
 *                     [the customers, COMMIT]; 2 when every district is skipped
 *   Stock-Level    2  [START (read only), D_NEXT_O_ID] [the count, COMMIT]
 * Every text is written into the transaction's buffer with its bound checked: a text that
 * would not fit stops the run with an error (trip_problem), never writes past it.
 */
#include "mariadb.h"
#include "sqltrip.h"
#include "tpcc.h"

#include <stdarg.h>

/* The statements, by clause. %ld: an integer; %s: a decimal as d.dd, a last name, or a list
 * of integers (New-Order's items); %02ld: the district as S_DIST_xx's suffix. */
enum {
    Q_START, Q_START_READ_ONLY, Q_START_SNAPSHOT, Q_COMMIT, Q_ROLLBACK,
    /* New-Order [2.4.2.2] */
    Q_NO_W_TAX, Q_NO_DISTRICT, Q_NO_NEXT_O_ID, Q_NO_CUSTOMER, Q_NO_ITEMS, Q_NO_STOCK,
    Q_NO_ORDER, Q_NO_NEW_ORDER, Q_NO_STOCK_UPDATE, Q_NO_ORDER_LINES, Q_NO_ORDER_LINE_ROW,
    /* Payment [2.5.2.2] */
    Q_PY_WAREHOUSE, Q_PY_WAREHOUSE_READ, Q_PY_DISTRICT, Q_PY_DISTRICT_READ, Q_BY_NAME,
    Q_PY_CUSTOMER, Q_PY_CUSTOMER_UPDATE, Q_PY_HISTORY,
    /* Order-Status [2.6.2.2] */
    Q_OS_CUSTOMER, Q_OS_LAST_ORDER, Q_OS_LINES,
    /* Delivery [2.7.4.2] */
    Q_DL_CLAIM, Q_DL_ORDER, Q_DL_CARRIER, Q_DL_LINES, Q_DL_AMOUNT, Q_DL_CUSTOMER,
    /* Stock-Level [2.8.2.2] */
    Q_SL_NEXT_O_ID, Q_SL_LOW_STOCK,
    NQ
};

const MySql MY_SQL[NQ + 1] = {
    {"start", "START TRANSACTION"},
    {"start_read_only", "START TRANSACTION READ ONLY"},
    {"start_snapshot", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"},
    {"commit", "COMMIT"},
    {"rollback", "ROLLBACK"},
    {"new_order.w_tax", "SELECT w_tax FROM warehouse WHERE w_id = %ld"},
    /* D_NEXT_O_ID read FOR UPDATE, then advanced: MariaDB has no UPDATE ... RETURNING */
    {"new_order.district", "SELECT d_next_o_id, d_tax FROM district"
                           " WHERE d_w_id = %ld AND d_id = %ld FOR UPDATE"},
    {"new_order.next_o_id", "UPDATE district SET d_next_o_id = d_next_o_id + 1"
                            " WHERE d_w_id = %ld AND d_id = %ld"},
    {"new_order.customer", "SELECT c_discount, c_last, c_credit FROM customer"
                           " WHERE c_w_id = %ld AND c_d_id = %ld AND c_id = %ld"},
    /* an id missing from the answer is the unused item of the 1% rule [2.4.2.3] */
    {"new_order.items", "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (%s)"},
    {"new_order.stock", "SELECT s_quantity, s_data, s_dist_%02ld FROM stock"
                        " WHERE s_w_id = %ld AND s_i_id = %ld FOR UPDATE"},
    {"new_order.order", "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d,"
                        " o_carrier_id, o_ol_cnt, o_all_local)"
                        " VALUES (%ld, %ld, %ld, %ld, NOW(), NULL, %ld, %ld)"},
    {"new_order.new_order", "INSERT INTO new_order (no_o_id, no_d_id, no_w_id)"
                            " VALUES (%ld, %ld, %ld)"},
    /* S_QUANTITY as the stock rule computed it from the quantity read */
    {"new_order.stock_update", "UPDATE stock SET s_quantity = %ld, s_ytd = s_ytd + %ld,"
                               " s_order_cnt = s_order_cnt + 1,"
                               " s_remote_cnt = s_remote_cnt + %ld"
                               " WHERE s_w_id = %ld AND s_i_id = %ld"},
    {"new_order.order_lines", "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number,"
                              " ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity,"
                              " ol_amount, ol_dist_info) VALUES "},
    /* one line, OL_AMOUNT = OL_QUANTITY * I_PRICE; OL_DIST_INFO from the locked stock row */
    {"new_order.order_line_row", "(%ld, %ld, %ld, %ld, %ld, %ld, NULL, %ld, %s,"
                                 " (SELECT s_dist_%02ld FROM stock"
                                 " WHERE s_w_id = %ld AND s_i_id = %ld))"},
    {"payment.warehouse", "UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %ld"},
    {"payment.warehouse_read", "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip"
                               " FROM warehouse WHERE w_id = %ld"},
    {"payment.district", "UPDATE district SET d_ytd = d_ytd + %s"
                         " WHERE d_w_id = %ld AND d_id = %ld"},
    {"payment.district_read", "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip"
                              " FROM district WHERE d_w_id = %ld AND d_id = %ld"},
    /* the middle one by C_FIRST is taken: position ceil(n / 2) [2.5.2.2, 2.6.2.2] */
    {"by_name", "SELECT c_id FROM customer WHERE c_w_id = %ld AND c_d_id = %ld"
                " AND c_last = '%s' ORDER BY c_first, c_id"},
    {"payment.customer", "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city,"
                         " c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim,"
                         " c_discount, c_balance FROM customer"
                         " WHERE c_w_id = %ld AND c_d_id = %ld AND c_id = %ld FOR UPDATE"},
    /* a BC customer gets C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT | before C_DATA, 500 kept */
    {"payment.customer_update", "UPDATE customer SET c_balance = c_balance - %s,"
                                " c_ytd_payment = c_ytd_payment + %s,"
                                " c_payment_cnt = c_payment_cnt + 1,"
                                " c_data = IF(c_credit = 'BC', LEFT(CONCAT_WS(' ', c_id,"
                                " c_d_id, c_w_id, %ld, %ld, %s, '|', c_data), 500), c_data)"
                                " WHERE c_w_id = %ld AND c_d_id = %ld AND c_id = %ld"},
    /* H_DATA = W_NAME, four spaces, D_NAME: text, so read by the server, not sent back */
    {"payment.history", "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id,"
                        " h_date, h_amount, h_data)"
                        " SELECT %ld, %ld, %ld, %ld, %ld, NOW(), %s,"
                        " CONCAT(w_name, '    ', d_name) FROM warehouse, district"
                        " WHERE w_id = %ld AND d_w_id = %ld AND d_id = %ld"},
    {"order_status.customer", "SELECT c_balance, c_first, c_middle, c_last FROM customer"
                              " WHERE c_w_id = %ld AND c_d_id = %ld AND c_id = %ld"},
    {"order_status.last_order", "SELECT o_id, o_entry_d, o_carrier_id FROM orders"
                                " WHERE o_w_id = %ld AND o_d_id = %ld AND o_c_id = %ld"
                                " ORDER BY o_id DESC LIMIT 1"},
    {"order_status.lines", "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount,"
                           " ol_delivery_d FROM order_line"
                           " WHERE ol_w_id = %ld AND ol_d_id = %ld AND ol_o_id = %ld"},
    /* the district's oldest NEW_ORDER row, locked and deleted; none: the district is
     * skipped. A row a concurrent Delivery deleted first is passed over once its lock is
     * granted (a locking read sees the latest committed rows). */
    {"delivery.claim", "DELETE FROM new_order WHERE no_w_id = %ld AND no_d_id = %ld"
                       " ORDER BY no_o_id LIMIT 1 RETURNING no_o_id"},
    {"delivery.order", "SELECT o_c_id FROM orders"
                       " WHERE o_w_id = %ld AND o_d_id = %ld AND o_id = %ld FOR UPDATE"},
    {"delivery.carrier", "UPDATE orders SET o_carrier_id = %ld"
                         " WHERE o_w_id = %ld AND o_d_id = %ld AND o_id = %ld"},
    {"delivery.lines", "UPDATE order_line SET ol_delivery_d = NOW()"
                       " WHERE ol_w_id = %ld AND ol_d_id = %ld AND ol_o_id = %ld"},
    {"delivery.amount", "SELECT COALESCE(SUM(ol_amount), 0) FROM order_line"
                        " WHERE ol_w_id = %ld AND ol_d_id = %ld AND ol_o_id = %ld"},
    {"delivery.customer", "UPDATE customer SET c_balance = c_balance + %s,"
                          " c_delivery_cnt = c_delivery_cnt + 1"
                          " WHERE c_w_id = %ld AND c_d_id = %ld AND c_id = %ld"},
    {"stock_level.next_o_id", "SELECT d_next_o_id FROM district"
                              " WHERE d_w_id = %ld AND d_id = %ld"},
    {"stock_level.low_stock", "SELECT COUNT(DISTINCT s_i_id) FROM order_line"
                              " JOIN stock ON s_w_id = %ld AND s_i_id = ol_i_id"
                              " WHERE ol_w_id = %ld AND ol_d_id = %ld"
                              " AND ol_o_id >= %ld AND ol_o_id < %ld AND s_quantity < %ld"},
    {NULL, NULL}};

/* New-Order's first round trip, 6 + 15 statements, is the longest */
_Static_assert(6 + MAX_LINES <= TRIP_MAX, "a round trip holds TRIP_MAX statements");
#define MONEY 32 /* a decimal's text */

struct MyTxn {
    SqlTrip trip; /* first: the round trip under way, its text, the outcome */
    int kind, step, nargs;
    int64_t a[MAX_ARGS];
    int ol_cnt;
    int64_t lines[MAX_LINES][3]; /* (i_id, supply_w_id, qty) as drawn */
    int order[MAX_LINES];        /* the lines in processing order */
    /* what earlier round trips returned */
    int64_t o_id, c_id, next_o_id, value;
    int has_order, all_local;
    int item[MAX_LINES], stock[MAX_LINES]; /* the line's item, its stock row, were found */
    int64_t price_cents[MAX_LINES], s_quantity[MAX_LINES];
    int64_t d_o_id[DISTRICTS], d_c_id[DISTRICTS], d_cents[DISTRICTS];
    int delivered[DISTRICTS];
};

static void mytxn_inputs(MyTxn *t, const void *txn) {
    const txn_t *x = txn;
    t->kind = x->kind;
    t->nargs = txn_copy(x, t->a, t->lines, &t->ol_cnt);
}

/* ------------------------------------------------------------------------------------------ */
/* Writing a round trip's text                                                                */

/* The statements of one format and arguments; the format is MY_SQL's, so checked here. */
#define PUT(t, q, tag, ...) \
    (trip_stmt(&(t)->trip, q, tag) && trip_add(&(t)->trip, MY_SQL[q].text, __VA_ARGS__))
#define PUT0(t, q) (trip_stmt(&(t)->trip, q, 0) && trip_add(&(t)->trip, "%s", MY_SQL[q].text))

static int new_order_first(MyTxn *t) {
    const int64_t *a = t->a;
    char ids[MAX_LINES * 21 + 1];
    size_t at = 0;
    lines_in_lock_order((const int64_t (*)[3])t->lines, t->ol_cnt, t->order);
    t->all_local = 1;
    for (int k = 0; k < t->ol_cnt; k++) {
        int i = t->order[k];
        t->item[i] = t->stock[i] = 0;
        if (t->lines[i][1] != a[0]) t->all_local = 0;
        int w = snprintf(ids + at, sizeof ids - at, k ? ",%ld" : "%ld", (long)t->lines[i][0]);
        if (w < 0 || (size_t)w >= sizeof ids - at) return trip_fail(&t->trip, "too many items");
        at += (size_t)w;
    }
    int ok = PUT0(t, Q_START) && PUT(t, Q_NO_W_TAX, 0, (long)a[0]) &&
             PUT(t, Q_NO_DISTRICT, 0, (long)a[0], (long)a[1]) &&
             PUT(t, Q_NO_NEXT_O_ID, 0, (long)a[0], (long)a[1]) &&
             PUT(t, Q_NO_CUSTOMER, 0, (long)a[0], (long)a[1], (long)a[2]) &&
             PUT(t, Q_NO_ITEMS, 0, ids);
    for (int k = 0; ok && k < t->ol_cnt; k++) {
        const int64_t *l = t->lines[t->order[k]];
        ok = PUT(t, Q_NO_STOCK, t->order[k], (long)a[1], (long)l[1], (long)l[0]);
    }
    return ok;
}

static int new_order_second(MyTxn *t) {
    const int64_t *a = t->a;
    int unused = 0;
    for (int i = 0; i < t->ol_cnt; i++) {
        if (!t->item[i]) unused = 1;
        else if (!t->stock[i])
            return trip_fail(&t->trip, "no stock row for item %ld of warehouse %ld", (long)t->lines[i][0],
                        (long)t->lines[i][1]);
    }
    int ok = PUT(t, Q_NO_ORDER, 0, (long)t->o_id, (long)a[1], (long)a[0], (long)a[2],
                 (long)t->ol_cnt, (long)t->all_local) &&
             PUT(t, Q_NO_NEW_ORDER, 0, (long)t->o_id, (long)a[1], (long)a[0]);
    stock_rule((const int64_t (*)[3])t->lines, t->order, t->ol_cnt, t->item, t->s_quantity);
    for (int k = 0; ok && k < t->ol_cnt; k++) {
        int i = t->order[k];
        const int64_t *l = t->lines[i];
        if (!t->item[i]) continue; /* the unused item: no stock row either */
        ok = PUT(t, Q_NO_STOCK_UPDATE, i, (long)t->s_quantity[i], (long)l[2],
                 (long)(l[1] != a[0]), (long)l[1], (long)l[0]);
    }
    /* the order lines of the items found, in one INSERT; all are when none is unused */
    int first = 1;
    for (int k = 0; ok && k < t->ol_cnt; k++) {
        int i = t->order[k];
        const int64_t *l = t->lines[i];
        if (!t->item[i]) continue;
        char amount[MONEY];
        fmt_cents(amount, sizeof amount, l[2] * t->price_cents[i]); /* [2.4.2.2] */
        ok = (!first || PUT0(t, Q_NO_ORDER_LINES)) && (first || trip_add(&t->trip, ", ")) &&
             trip_add(&t->trip, MY_SQL[Q_NO_ORDER_LINE_ROW].text, (long)t->o_id, (long)a[1], (long)a[0],
                 (long)(i + 1), (long)l[0], (long)l[1], (long)l[2], amount, (long)a[1],
                 (long)l[1], (long)l[0]);
        first = 0;
    }
    if (unused) { /* [2.4.2.3]: a completed New-Order, rolled back */
        t->trip.value = -t->o_id;
        return ok && PUT0(t, Q_ROLLBACK);
    }
    t->trip.value = t->o_id;
    return ok && PUT0(t, Q_COMMIT);
}

/* The transaction's next round trip into the text: 1 written, 0 a problem, 2 finished. */
static int next_trip(MyTxn *t) {
    const int64_t *a = t->a;
    char name[32], amount[MONEY];
    int step = t->step++;
    trip_begin(&t->trip);
    switch (t->kind) {
    case NEW_ORDER: /* (w_id, d_id, c_id) and the lines */
        return step == 0 ? new_order_first(t) : step == 1 ? new_order_second(t) : 2;
    case PAYMENT: /* (w_id, d_id, c_w_id, c_d_id, c_id, c_last_num, h_amount cents) */
        fmt_cents(amount, sizeof amount, a[6]);
        if (step == 0) {
            t->c_id = a[4];
            int ok = PUT0(t, Q_START) && PUT(t, Q_PY_WAREHOUSE, 0, amount, (long)a[0]) &&
                     PUT(t, Q_PY_WAREHOUSE_READ, 0, (long)a[0]) &&
                     PUT(t, Q_PY_DISTRICT, 0, amount, (long)a[0], (long)a[1]) &&
                     PUT(t, Q_PY_DISTRICT_READ, 0, (long)a[0], (long)a[1]);
            if (a[5] >= 0) { /* by last name: the customer is known a round trip later */
                fmt_last_name(name, sizeof name, a[5]);
                return ok && PUT(t, Q_BY_NAME, 0, (long)a[2], (long)a[3], name);
            }
            t->step = 2;
            return ok && PUT(t, Q_PY_CUSTOMER, 0, (long)a[2], (long)a[3], (long)t->c_id);
        }
        if (step == 1)
            return PUT(t, Q_PY_CUSTOMER, 0, (long)a[2], (long)a[3], (long)t->c_id);
        if (step == 2) {
            t->trip.value = t->c_id;
            return PUT(t, Q_PY_CUSTOMER_UPDATE, 0, amount, amount, (long)a[1], (long)a[0],
                       amount, (long)a[2], (long)a[3], (long)t->c_id) &&
                   PUT(t, Q_PY_HISTORY, 0, (long)t->c_id, (long)a[3], (long)a[2], (long)a[1],
                       (long)a[0], amount, (long)a[0], (long)a[0], (long)a[1]) &&
                   PUT0(t, Q_COMMIT);
        }
        return 2;
    case ORDER_STATUS: /* (w_id, d_id, c_id, c_last_num) */
        if (step == 0) {
            t->c_id = a[2];
            t->has_order = 0;
            int ok = PUT0(t, Q_START_SNAPSHOT);
            if (a[3] >= 0) {
                fmt_last_name(name, sizeof name, a[3]);
                return ok && PUT(t, Q_BY_NAME, 0, (long)a[0], (long)a[1], name);
            }
            t->step = 2;
            return ok && PUT(t, Q_OS_CUSTOMER, 0, (long)a[0], (long)a[1], (long)t->c_id) &&
                   PUT(t, Q_OS_LAST_ORDER, 0, (long)a[0], (long)a[1], (long)t->c_id);
        }
        if (step == 1)
            return PUT(t, Q_OS_CUSTOMER, 0, (long)a[0], (long)a[1], (long)t->c_id) &&
                   PUT(t, Q_OS_LAST_ORDER, 0, (long)a[0], (long)a[1], (long)t->c_id);
        if (step == 2) {
            t->trip.value = t->has_order ? t->o_id : 0;
            return (!t->has_order ||
                    PUT(t, Q_OS_LINES, 0, (long)a[0], (long)a[1], (long)t->o_id)) &&
                   PUT0(t, Q_COMMIT);
        }
        return 2;
    case DELIVERY: { /* (w_id, o_carrier_id) */
        int ok = 1;
        if (step == 0) {
            ok = PUT0(t, Q_START);
            for (int d = 0; ok && d < DISTRICTS; d++) {
                t->delivered[d] = 0;
                ok = PUT(t, Q_DL_CLAIM, d, (long)a[0], (long)(d + 1));
            }
            return ok;
        }
        if (step == 1) {
            t->trip.value = 0;
            for (int d = 0; ok && d < DISTRICTS; d++) {
                if (!t->delivered[d]) continue; /* skipped: nothing to deliver */
                t->trip.value++;
                long w = (long)a[0], o = (long)t->d_o_id[d];
                ok = PUT(t, Q_DL_ORDER, d, w, (long)(d + 1), o) &&
                     PUT(t, Q_DL_CARRIER, d, (long)a[1], w, (long)(d + 1), o) &&
                     PUT(t, Q_DL_LINES, d, w, (long)(d + 1), o) &&
                     PUT(t, Q_DL_AMOUNT, d, w, (long)(d + 1), o);
            }
            if (!t->trip.value) {
                t->step = 3;
                return ok && PUT0(t, Q_COMMIT);
            }
            return ok;
        }
        if (step == 2) {
            for (int d = 0; ok && d < DISTRICTS; d++) {
                if (!t->delivered[d]) continue;
                fmt_cents(amount, sizeof amount, t->d_cents[d]);
                ok = PUT(t, Q_DL_CUSTOMER, d, amount, (long)a[0], (long)(d + 1),
                         (long)t->d_c_id[d]);
            }
            return ok && PUT0(t, Q_COMMIT);
        }
        return 2;
    }
    default: /* STOCK_LEVEL: (w_id, d_id, threshold) */
        if (step == 0)
            return PUT0(t, Q_START_READ_ONLY) &&
                   PUT(t, Q_SL_NEXT_O_ID, 0, (long)a[0], (long)a[1]);
        if (step == 1)
            return PUT(t, Q_SL_LOW_STOCK, 0, (long)a[0], (long)a[0], (long)a[1],
                       (long)(t->next_o_id - 20), (long)t->next_o_id, (long)a[2]) &&
                   PUT0(t, Q_COMMIT);
        return 2;
    }
}

/* Start the transaction with the inputs of mytxn_inputs (again, for a retry): 0 when its
 * first text does not fit (trip_problem says why). */
static int mytxn_start(MyTxn *t) {
    t->step = 0;
    t->trip.rolling_back = 0;
    t->trip.problem[0] = 0;
    return next_trip(t) == 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Reading                                                                                    */

/* A decimal of at most two places, as cents: what the text of a later round trip holds is
 * written again from these, never copied. */
static int cents_of(MyTxn *t, const char *s, int64_t *out) {
    return text_cents(s, out) == 0 || trip_fail(&t->trip, "not a decimal of two places: %.40s",
                                                 s ? s : "NULL");
}

/* One statement's answer: ``res`` its rows (NULL: a statement without). 0 with a problem
 * when it lacks what the transaction needs. */
static int mytxn_result(MyTxn *t, MYSQL_RES *res) {
    int q, tag;
    if (!trip_answer(&t->trip, &q, &tag)) return 0;
    MYSQL_ROW row = res ? my.fetch_row(res) : NULL;
    switch (q) {
    case Q_NO_DISTRICT:
        return row ? trip_int(&t->trip, row[0], &t->o_id) : trip_fail(&t->trip, "no such district");
    case Q_NO_ITEMS: /* every line of each item found; the others are the unused item */
        for (; row; row = my.fetch_row(res)) {
            int64_t id, cents;
            if (!trip_int(&t->trip, row[0], &id) || !cents_of(t, row[1], &cents)) return 0;
            for (int i = 0; i < t->ol_cnt; i++)
                if (t->lines[i][0] == id) {
                    t->item[i] = 1;
                    t->price_cents[i] = cents;
                }
        }
        return 1;
    case Q_NO_STOCK:
        if (!row) return 1; /* the unused item's: checked with the items */
        t->stock[tag] = 1;
        return trip_int(&t->trip, row[0], &t->s_quantity[tag]);
    case Q_NO_CUSTOMER:
    case Q_PY_WAREHOUSE_READ:
    case Q_PY_DISTRICT_READ:
    case Q_PY_CUSTOMER:
    case Q_OS_CUSTOMER:
    case Q_NO_W_TAX:
        return row ? 1 : trip_fail(&t->trip, "%s found no row", MY_SQL[q].name);
    case Q_BY_NAME: { /* the middle customer by C_FIRST: position ceil(n / 2) */
        my_ulonglong n = res ? my.num_rows(res) : 0;
        if (!n) return trip_fail(&t->trip, "no customer of the last name");
        my.data_seek(res, (n + 1) / 2 - 1);
        row = my.fetch_row(res);
        return row ? trip_int(&t->trip, row[0], &t->c_id) : trip_fail(&t->trip, "no middle customer");
    }
    case Q_OS_LAST_ORDER:
        t->has_order = row != NULL;
        return row ? trip_int(&t->trip, row[0], &t->o_id) : 1;
    case Q_DL_CLAIM: /* no NEW_ORDER row: the district is skipped [2.7.4.2] */
        if (!row) return 1;
        t->delivered[tag] = 1;
        return trip_int(&t->trip, row[0], &t->d_o_id[tag]);
    case Q_DL_ORDER:
        return row ? trip_int(&t->trip, row[0], &t->d_c_id[tag]) : trip_fail(&t->trip, "no order to deliver");
    case Q_DL_AMOUNT:
        return row ? cents_of(t, row[0], &t->d_cents[tag]) : trip_fail(&t->trip, "no amount");
    case Q_SL_NEXT_O_ID:
        return row ? trip_int(&t->trip, row[0], &t->next_o_id) : trip_fail(&t->trip, "no such district");
    case Q_SL_LOW_STOCK:
        return row ? trip_int(&t->trip, row[0], &t->trip.value) : trip_fail(&t->trip, "no count");
    default:
        return 1;
    }
}

static MyTxn *mytxn_new(size_t cap) {
    return trip_new(sizeof(MyTxn), cap, Q_ROLLBACK, next_trip);
}

const MySqlOps TPCC_MY_SQL = {.create = mytxn_new, .destroy = trip_destroy, .inputs = mytxn_inputs,
                              .start = mytxn_start, .rollback = trip_rollback,
                              .result = mytxn_result, .next = trip_next, .text = trip_text,
                              .value = trip_value, .problem = trip_problem};
