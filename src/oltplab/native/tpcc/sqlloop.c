/*
 * --mode sql on the C loop: each transaction type's clause-by-clause statements as a short
 *   script of round trips. The statements are prepared by Python (engines/postgres/driver.py,
 *   the SQL text of engines/postgres/tpcc/transactions/) under the names of SQL_STATEMENTS
 *   below; here they are bound with the Terminal's inputs and the values earlier round trips
 *   returned.
 *
 * A transaction runs in libpq's pipeline mode: each round trip sends every statement that
 * depends only on what is already known, then one Sync, and its answers are read as they
 * arrive. The round trips per transaction (BEGIN and COMMIT travel with the first and last):
 *   New-Order      2  [district, customer, items, stock rows FOR UPDATE] [order, new-order,
 *                     stock updates, order lines, COMMIT] (ROLLBACK instead of the lines and
 *                     COMMIT when the unused item was met, clause 2.4.2.3)
 *   Payment        2  [warehouse, district, customer FOR UPDATE] [customer update, history,
 *                     COMMIT]; 3 by last name (the name's customers, then the middle one)
 *   Order-Status   2  [customer, last order] [lines, COMMIT]; 3 by last name
 *   Delivery       4  [each district's oldest NEW_ORDER row] [their deletes] [order, lines]
 *                     [customers, COMMIT]; one more per re-look (an empty look, or a DELETE
 *                     that found the row taken by a concurrent Delivery)
 *   Stock-Level    2  [D_NEXT_O_ID] [count, COMMIT]
 * After an error the ROLLBACK is one more round trip, and the transaction is retried or
 * counted by the loop (procloop.c) as in procedures mode.
 */
#include "sqlpipe.h"
#include "tpcc.h"

/* The prepared statements, by the names Python prepares them under. */
enum {
    BEGIN, COMMIT, ROLLBACK,
    NO_W_TAX, NO_DISTRICT, NO_CUSTOMER, NO_ORDER, NO_NEW_ORDER, NO_ITEM, NO_STOCK,
    NO_STOCK_UPDATE, NO_ORDER_LINE,
    PY_WAREHOUSE, PY_DISTRICT, PY_BY_NAME, PY_CUSTOMER, PY_CUSTOMER_UPDATE,
    PY_CUSTOMER_UPDATE_BC, PY_HISTORY,
    OS_BEGIN, OS_BY_NAME, OS_CUSTOMER, OS_LAST_ORDER, OS_LINES,
    DL_OLDEST, DL_DELETE, DL_ORDER, DL_LINES, DL_CUSTOMER,
    SL_BEGIN, SL_NEXT_O_ID, SL_LOW_STOCK,
    NSTATEMENTS
};
const char *const SQL_STATEMENTS[NSTATEMENTS + 1] = {
    "begin", "commit", "rollback",
    "new_order.w_tax", "new_order.district", "new_order.customer", "new_order.order",
    "new_order.new_order", "new_order.item", "new_order.stock", "new_order.stock_update",
    "new_order.order_line",
    "payment.warehouse", "payment.district", "payment.by_name", "payment.customer",
    "payment.customer_update", "payment.customer_update_bc", "payment.history",
    "order_status.begin", "order_status.by_name", "order_status.customer",
    "order_status.last_order", "order_status.lines",
    "delivery.oldest", "delivery.delete", "delivery.order", "delivery.lines",
    "delivery.customer",
    "stock_level.begin", "stock_level.next_o_id", "stock_level.low_stock",
    NULL};

/* New-Order's first round trip, 4 + 2 x 15 statements, is the longest */
_Static_assert(4 + 2 * MAX_LINES <= PIPE_MAX, "a round trip holds PIPE_MAX statements");
#define MAX_PARAMS 9
#define LOOKS 1      /* Delivery: a look that finds no NEW_ORDER row skips the district */
#define MAX_LOST 1000 /* Delivery: oldest orders taken by others before this one gives up */
enum { D_LOOK, D_FOUND, D_TAKEN, D_SKIPPED }; /* a district of a Delivery */
#define TEXT_BYTES 100 /* S_DIST_xx, W_NAME, D_NAME, a sum of amounts */
#define PARAM_BYTES (2 * TEXT_BYTES + 8) /* H_DATA: W_NAME, four spaces, D_NAME */

struct SqlTxn {
    SqlPipe p; /* first: the statements under way, the answers so far, the outcome */
    int kind, step, nargs;
    int64_t a[MAX_ARGS];
    int ol_cnt;
    int64_t lines[MAX_LINES][3]; /* (i_id, supply_w_id, qty) as drawn */
    int order[MAX_LINES];        /* the lines in processing order */
    /* what earlier round trips returned */
    int64_t o_id, c_id, next_o_id;
    int unused_item, all_local, bad_credit, has_order;
    int64_t price_cents[MAX_LINES], s_quantity[MAX_LINES];
    int found[MAX_LINES];
    char dist_info[MAX_LINES][TEXT_BYTES]; /* text columns: up to 4 bytes a character */
    char w_name[TEXT_BYTES], d_name[TEXT_BYTES];
    int64_t d_o_id[DISTRICTS], d_c_id[DISTRICTS];
    uint8_t d_state[DISTRICTS];
    int looks[DISTRICTS], lost[DISTRICTS];
    char d_amount[DISTRICTS][TEXT_BYTES];
};

/* The transaction's inputs as the Terminal drew them, kept for its retries: the scalars of
 * the kind's function (Payment's H_AMOUNT in cents; New-Order's (w_id, d_id, c_id)) and
 * New-Order's lines (ol_i_id, ol_supply_w_id, ol_quantity) [2.4.1.5]. */
static void sql_inputs(SqlTxn *s, const void *txn) {
    const txn_t *x = txn;
    s->kind = x->kind;
    s->nargs = txn_copy(x, s->a, s->lines, &s->ol_cnt);
}

/* ------------------------------------------------------------------------------------------ */
/* Sending                                                                                    */

typedef struct {
    char text[MAX_PARAMS][PARAM_BYTES];
    const char *v[MAX_PARAMS];
    int n, bad; /* bad: a value did not fit, or there were too many */
} Params;

static Params *p_reset(Params *p) {
    p->n = p->bad = 0;
    return p;
}

/* The next parameter's buffer, or NULL (and bad) when there are too many. */
static char *p_slot(Params *p) {
    if (p->n >= MAX_PARAMS) {
        p->bad = 1;
        return NULL;
    }
    p->v[p->n] = p->text[p->n];
    return p->text[p->n++];
}

static Params *p_int(Params *p, int64_t x) {
    char *b = p_slot(p);
    if (b) snprintf(b, PARAM_BYTES, "%lld", (long long)x);
    return p;
}

static Params *p_str(Params *p, const char *x) { /* copied: libpq takes it at once anyway */
    char *b = p_slot(p);
    if (b && snprintf(b, PARAM_BYTES, "%s", x) >= PARAM_BYTES) p->bad = 1;
    return p;
}

static Params *p_cents(Params *p, int64_t cents) {
    char *b = p_slot(p);
    if (b) fmt_cents(b, PARAM_BYTES, cents);
    return p;
}

/* Queue one prepared statement; 0 when libpq refuses it (or the round trip is full). */
static int put(SqlTxn *s, PGconn *c, int stmt, int tag, const Params *p) {
    if (p && p->bad) {
        pipe_fail(&s->p, "a parameter of %s is too long", SQL_STATEMENTS[stmt]);
        return 0;
    }
    return pipe_put(&s->p, c, stmt, tag, p ? p->n : 0, p ? p->v : NULL);
}

static int64_t cents_of(const char *text) { /* "12.34" -> 1234; numeric(n, 2) text */
    char *end;
    long long whole = strtoll(text, &end, 10);
    int neg = text[0] == '-';
    long long frac = 0;
    if (*end == '.') {
        int digits = 0;
        for (const char *p = end + 1; *p >= '0' && *p <= '9' && digits < 2; p++, digits++)
            frac = frac * 10 + (*p - '0');
        if (digits == 1) frac *= 10;
    }
    return neg ? whole * 100 - frac : whole * 100 + frac;
}

/* The transaction's next round trip; 1 sent, 0 lost (or broken: problem set), 2 finished. */
static int next_trip(SqlTxn *s, PGconn *c) {
    Params p;
    const int64_t *a = s->a;
    char name[32];
    int ok = 1;
    pipe_trip(&s->p);
    int step = s->step++;
    switch (s->kind) {
    case NEW_ORDER: /* (w_id, d_id, c_id) and the lines */
        if (step == 0) {
            lines_in_lock_order((const int64_t (*)[3])s->lines, s->ol_cnt, s->order);
            s->all_local = 1;
            s->unused_item = 0;
            for (int i = 0; i < s->ol_cnt; i++) {
                s->found[i] = 0;
                if (s->lines[i][1] != a[0]) s->all_local = 0;
            }
            ok = put(s, c, BEGIN, 0, NULL) && put(s, c, NO_W_TAX, 0, p_int(p_reset(&p), a[0])) &&
                 put(s, c, NO_DISTRICT, 0, p_int(p_int(p_reset(&p), a[0]), a[1])) &&
                 put(s, c, NO_CUSTOMER, 0, p_int(p_int(p_int(p_reset(&p), a[0]), a[1]), a[2]));
            for (int k = 0; ok && k < s->ol_cnt; k++)
                ok = put(s, c, NO_ITEM, s->order[k], p_int(p_reset(&p), s->lines[s->order[k]][0]));
            for (int k = 0; ok && k < s->ol_cnt; k++) {
                const int64_t *l = s->lines[s->order[k]];
                ok = put(s, c, NO_STOCK, s->order[k], p_int(p_int(p_int(p_reset(&p), l[1]), l[0]), a[1]));
            }
        } else if (step == 1) {
            ok = put(s, c, NO_ORDER, 0, p_int(p_int(p_int(p_int(p_int(p_int(p_reset(&p),
                     s->o_id), a[1]), a[0]), a[2]), s->ol_cnt), s->all_local)) &&
                 put(s, c, NO_NEW_ORDER, 0, p_int(p_int(p_int(p_reset(&p), s->o_id), a[1]), a[0]));
            stock_rule((const int64_t (*)[3])s->lines, s->order, s->ol_cnt, s->found,
                       s->s_quantity);
            for (int k = 0; ok && k < s->ol_cnt; k++) {
                int i = s->order[k];
                const int64_t *l = s->lines[i];
                if (!s->found[i]) continue; /* the unused item: no stock row either */
                ok = put(s, c, NO_STOCK_UPDATE, i, p_int(p_int(p_int(p_int(p_int(p_reset(&p),
                         l[1]), l[0]), s->s_quantity[i]), l[2]), l[1] == a[0] ? 0 : 1));
            }
            if (s->unused_item) { /* [2.4.2.3]: a completed New-Order, rolled back */
                s->p.value = -s->o_id;
                ok = ok && put(s, c, ROLLBACK, 0, NULL);
            } else {
                s->p.value = s->o_id;
                for (int k = 0; ok && k < s->ol_cnt; k++) {
                    int i = s->order[k];
                    const int64_t *l = s->lines[i];
                    p_int(p_int(p_int(p_int(p_int(p_int(p_reset(&p), s->o_id), a[1]), a[0]), i + 1),
                          l[0]), l[1]);
                    /* OL_AMOUNT = OL_QUANTITY * I_PRICE [2.4.2.2] */
                    ok = put(s, c, NO_ORDER_LINE, i, p_str(p_cents(p_int(&p, l[2]),
                             l[2] * s->price_cents[i]), s->dist_info[i]));
                }
                ok = ok && put(s, c, COMMIT, 0, NULL);
            }
        } else {
            return 2;
        }
        break;
    case PAYMENT: /* (w_id, d_id, c_w_id, c_d_id, c_id, c_last_num, h_amount cents) */
        if (step == 0) {
            s->c_id = a[4];
            ok = put(s, c, BEGIN, 0, NULL) &&
                 put(s, c, PY_WAREHOUSE, 0, p_cents(p_int(p_reset(&p), a[0]), a[6])) &&
                 put(s, c, PY_DISTRICT, 0, p_cents(p_int(p_int(p_reset(&p), a[0]), a[1]), a[6]));
            if (a[5] >= 0) { /* by last name: the customer is known a round trip later */
                fmt_last_name(name, sizeof name, a[5]);
                ok = ok && put(s, c, PY_BY_NAME, 0, p_str(p_int(p_int(p_reset(&p), a[2]), a[3]), name));
                break;
            }
            s->step = 2;
            step = 1;
        } else if (step == 2) {
            char data[PARAM_BYTES], h_data[PARAM_BYTES], amount[24]; /* both fit: no truncation */
            fmt_cents(amount, sizeof amount, a[6]);
            p_cents(p_int(p_int(p_int(p_reset(&p), a[2]), a[3]), s->c_id), a[6]);
            if (s->bad_credit) { /* [2.5.2.2]: the payment's ids and amount before C_DATA */
                snprintf(data, sizeof data, "%lld %lld %lld %lld %lld %s | ", (long long)s->c_id,
                         (long long)a[3], (long long)a[2], (long long)a[1], (long long)a[0], amount);
                ok = put(s, c, PY_CUSTOMER_UPDATE_BC, 0, p_str(&p, data));
            } else {
                ok = put(s, c, PY_CUSTOMER_UPDATE, 0, &p);
            }
            snprintf(h_data, sizeof h_data, "%s    %s", s->w_name, s->d_name);
            ok = ok && put(s, c, PY_HISTORY, 0, p_str(p_cents(p_int(p_int(p_int(p_int(p_int(
                           p_reset(&p), s->c_id), a[3]), a[2]), a[1]), a[0]), a[6]), h_data)) &&
                 put(s, c, COMMIT, 0, NULL);
            s->p.value = s->c_id;
            break;
        } else if (step == 3) {
            return 2;
        }
        if (step == 1) /* the customer, locked */
            ok = ok && put(s, c, PY_CUSTOMER, 0, p_int(p_int(p_int(p_reset(&p), a[2]), a[3]), s->c_id));
        break;
    case ORDER_STATUS: /* (w_id, d_id, c_id, c_last_num) */
        if (step == 0) {
            s->c_id = a[2];
            s->has_order = 0;
            ok = put(s, c, OS_BEGIN, 0, NULL);
            if (a[3] >= 0) {
                fmt_last_name(name, sizeof name, a[3]);
                ok = ok && put(s, c, OS_BY_NAME, 0, p_str(p_int(p_int(p_reset(&p), a[0]), a[1]), name));
                break;
            }
            ok = ok && put(s, c, OS_CUSTOMER, 0, p_int(p_int(p_int(p_reset(&p), a[0]), a[1]), s->c_id));
            s->step = 2;
            step = 1;
        } else if (step == 2) {
            s->p.value = s->has_order ? s->o_id : 0;
            if (s->has_order)
                ok = put(s, c, OS_LINES, 0, p_int(p_int(p_int(p_reset(&p), a[0]), a[1]), s->o_id));
            ok = ok && put(s, c, COMMIT, 0, NULL);
            break;
        } else if (step == 3) {
            return 2;
        }
        if (step == 1)
            ok = ok && put(s, c, OS_LAST_ORDER, 0, p_int(p_int(p_int(p_reset(&p), a[0]), a[1]), s->c_id));
        break;
    case DELIVERY: /* (w_id, o_carrier_id) */
        if (step == 0) {
            ok = put(s, c, BEGIN, 0, NULL);
            for (int d = 0; d < DISTRICTS; d++) {
                s->d_state[d] = D_LOOK;
                s->looks[d] = s->lost[d] = 0;
            }
        }
        if (step <= 1) { /* claim each district's oldest order: look, then delete [2.7.4.2] */
            int claiming = 0;
            for (int d = 0; ok && d < DISTRICTS; d++) {
                if (s->d_state[d] == D_LOOK) {
                    s->looks[d]++;
                    ok = put(s, c, DL_OLDEST, d, p_int(p_int(p_reset(&p), a[0]), d + 1));
                } else if (s->d_state[d] == D_FOUND) {
                    ok = put(s, c, DL_DELETE, d, p_int(p_int(p_int(p_reset(&p), a[0]), d + 1),
                                                       s->d_o_id[d]));
                } else {
                    continue;
                }
                claiming = 1;
            }
            if (claiming) {
                s->step = 1;
                break;
            }
            s->p.value = 0;
            for (int d = 0; ok && d < DISTRICTS; d++) {
                if (s->d_state[d] != D_TAKEN) continue; /* skipped: nothing to deliver */
                s->p.value++;
                ok = put(s, c, DL_ORDER, d, p_int(p_int(p_int(p_int(p_reset(&p), a[0]), d + 1),
                         s->d_o_id[d]), a[1])) &&
                     put(s, c, DL_LINES, d, p_int(p_int(p_int(p_reset(&p), a[0]), d + 1), s->d_o_id[d]));
            }
            if (s->p.value) {
                s->step = 2;
            } else {
                ok = ok && put(s, c, COMMIT, 0, NULL);
                s->step = 3;
            }
        } else if (step == 2) {
            for (int d = 0; ok && d < DISTRICTS; d++)
                if (s->d_state[d] == D_TAKEN)
                    ok = put(s, c, DL_CUSTOMER, d, p_str(p_int(p_int(p_int(p_reset(&p), a[0]), d + 1),
                             s->d_c_id[d]), s->d_amount[d]));
            ok = ok && put(s, c, COMMIT, 0, NULL);
        } else {
            return 2;
        }
        break;
    default: /* STOCK_LEVEL: (w_id, d_id, threshold) */
        if (step == 0)
            ok = put(s, c, SL_BEGIN, 0, NULL) &&
                 put(s, c, SL_NEXT_O_ID, 0, p_int(p_int(p_reset(&p), a[0]), a[1]));
        else if (step == 1)
            ok = put(s, c, SL_LOW_STOCK, 0, p_int(p_int(p_int(p_int(p_reset(&p), a[0]), a[1]),
                     s->next_o_id), a[2])) && put(s, c, COMMIT, 0, NULL);
        else
            return 2;
    }
    return ok && pipe_sync(c);
}

/* Start the transaction with the inputs of sql_inputs (again, for a retry); 0 when lost. */
static int sql_start(SqlTxn *s, PGconn *c) {
    s->step = 0;
    return pipe_start(&s->p, c) && next_trip(s, c) == 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Reading                                                                                    */

static int64_t int_at(const PGresult *r, int row, int col) {
    return strtoll(pq.getvalue(r, row, col), NULL, 10);
}

/* A text value kept for a later round trip; 0 (problem set) when it does not fit. */
static int copy_at(SqlTxn *s, char *buf, size_t n, const PGresult *r, int row, int col) {
    if (snprintf(buf, n, "%s", pq.getvalue(r, row, col)) < (int)n) return 1;
    pipe_fail(&s->p, "a value of %zu bytes or more", n);
    return 0;
}

/* One statement's answer. 0 when it lacks a row the transaction needs (problem set). */
static int take(SqlTxn *s, int stmt, int tag, const PGresult *r) {
    int rows = pq.ntuples(r);
    switch (stmt) {
    case NO_DISTRICT:
        if (!rows) break;
        s->o_id = int_at(r, 0, 0);
        return 1;
    case NO_ITEM: /* no row: the unused item of the 1% rule [2.4.2.3] */
        if (rows) {
            s->price_cents[tag] = cents_of(pq.getvalue(r, 0, 0));
        } else {
            s->unused_item = 1;
        }
        return 1;
    case NO_STOCK:
        if (rows) {
            s->found[tag] = 1;
            s->s_quantity[tag] = int_at(r, 0, 0);
            return copy_at(s, s->dist_info[tag], sizeof s->dist_info[tag], r, 0, 2);
        } else if (s->lines[tag][0] <= ITEMS) {
            pipe_fail(&s->p, "no stock row for item %lld of warehouse %lld",
                     (long long)s->lines[tag][0], (long long)s->lines[tag][1]);
            return 0;
        }
        return 1;
    case PY_WAREHOUSE:
        if (!rows) break;
        return copy_at(s, s->w_name, sizeof s->w_name, r, 0, 0);
    case PY_DISTRICT:
        if (!rows) break;
        return copy_at(s, s->d_name, sizeof s->d_name, r, 0, 0);
    case PY_BY_NAME:
    case OS_BY_NAME: /* the middle customer by C_FIRST: position ceil(n / 2) [2.5.2.2, 2.6.2.2] */
        if (!rows) break;
        s->c_id = int_at(r, (rows + 1) / 2 - 1, 0);
        return 1;
    case PY_CUSTOMER:
        if (!rows) break;
        s->bad_credit = strcmp(pq.getvalue(r, 0, 10), "BC") == 0;
        return 1;
    case OS_CUSTOMER:
        if (!rows) break;
        return 1;
    case OS_LAST_ORDER:
        s->has_order = rows > 0;
        if (rows) s->o_id = int_at(r, 0, 0);
        return 1;
    case DL_OLDEST: /* no NEW_ORDER row: the district is skipped [2.7.4.2] (a row that a
                     * concurrent Delivery takes first shows in DL_DELETE instead) */
        if (rows && !pq.getisnull(r, 0, 0)) {
            s->d_o_id[tag] = int_at(r, 0, 0);
            s->d_state[tag] = D_FOUND;
        } else {
            s->d_state[tag] = s->looks[tag] < LOOKS ? D_LOOK : D_SKIPPED;
        }
        return 1;
    case DL_DELETE: /* nothing deleted: a concurrent Delivery took the row first; look again */
        if (atoi(pq.cmdTuples((PGresult *)r)) > 0) { /* libpq takes no const here */
            s->d_state[tag] = D_TAKEN;
        } else if (++s->lost[tag] > MAX_LOST) {
            pipe_fail(&s->p, "district %d: every oldest order was taken",
                     tag + 1);
            return 0;
        } else {
            s->d_state[tag] = D_LOOK;
            s->looks[tag] = 0;
        }
        return 1;
    case DL_ORDER:
        if (!rows) break;
        s->d_c_id[tag] = int_at(r, 0, 0);
        return 1;
    case DL_LINES:
        if (!rows) break;
        return copy_at(s, s->d_amount[tag], sizeof s->d_amount[tag], r, 0, 0);
    case SL_NEXT_O_ID:
        if (!rows) break;
        s->next_o_id = int_at(r, 0, 0);
        return 1;
    case SL_LOW_STOCK:
        if (!rows) break;
        s->p.value = int_at(r, 0, 0);
        return 1;
    default:
        return 1;
    }
    pipe_fail(&s->p, "%s found no row", SQL_STATEMENTS[stmt]);
    return 0;
}

static SqlTxn *sql_new(void) {
    return pipe_new(sizeof(SqlTxn), SQL_STATEMENTS, COMMIT, ROLLBACK, take, next_trip);
}

const PqSqlOps TPCC_PQ_SQL = {.create = sql_new, .destroy = pipe_destroy, .inputs = sql_inputs,
                              .start = sql_start, .read = pipe_read, .rollback = pipe_rollback,
                              .take = pipe_outcome, .failure = pipe_failure, .value = pipe_value,
                              .problem = pipe_problem};
