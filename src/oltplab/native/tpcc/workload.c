/*
 * The TPC-C-derived workload as the loop drives it (loop/workload.h): the Terminal draws the
 * card and the inputs, the procedures take them as PL/pgSQL arguments or as a MariaDB CALL,
 * and a completed transaction counts its inputs [5.4.5, 2.4.1.5, 2.5.1.2, 2.6.1.2]. The
 * headline unit is a New-Order not rolled back; a New-Order that returned a negative value
 * met the unused item and rolled back by design (the 1%, clause 2.4.2.3).
 */
#include "tpcc.h"

/* The input counts of the measured window: the keys of ProcLoop.counts()["inputs"]. */
enum {
    IN_NEW_ORDERS, IN_ORDER_LINES, IN_REMOTE_ORDER_LINES, IN_PAYMENTS, IN_REMOTE_PAYMENTS,
    IN_PAYMENTS_BY_LAST_NAME, IN_ORDER_STATUSES, IN_ORDER_STATUS_BY_LAST_NAME, IN_DELIVERIES,
    IN_SKIPPED_DELIVERIES, NINPUTS
};
static const char *const INPUT_KEYS[NINPUTS] = {
    "new_orders", "order_lines", "remote_order_lines", "payments", "remote_payments",
    "payments_by_last_name", "order_statuses", "order_status_by_last_name", "deliveries",
    "skipped_deliveries"};
_Static_assert(NINPUTS <= MAX_INPUTS, "the loop holds MAX_INPUTS input counts");

/* MariaDB's procedures, by transaction type */
static const char *const PROCEDURES[NKINDS] = {"NEWORD", "PAYMENT", "OSTAT", "DELIVERY",
                                               "SLEV"};

static int accept(PyObject *term) {
    if (!PyObject_TypeCheck(term, &TerminalType)) {
        PyErr_SetString(PyExc_TypeError, "terminals must be Terminal objects");
        return -1;
    }
    return term_check((Terminal *)term);
}

static void hold(PyObject *term, int by) { ((Terminal *)term)->driven += by; }

static int draw(PyObject *term, void *txn) {
    Terminal *t = (Terminal *)term;
    int kind = term_draw_kind(t);
    term_inputs(t, kind, term_warehouse(t), txn);
    return kind;
}

static double keying(PyObject *term, int kind) { return KEYING_S[kind]; }

static double think(PyObject *term, int kind) { return term_think((Terminal *)term, kind); }

static int pq_args(const void *txn, char (*text)[ARG_TEXT], int max) {
    const txn_t *x = txn;
    if (x->nargs > max || txn_text(x, text) < 0) return -1;
    return x->nargs;
}

/* The CALL: the scalars as integers (Payment's amount as d.dd), then New-Order's lines as the
 * JSON array [[i_id, supply_w_id, quantity], ...], then the OUT variable. */
static int my_call(const void *txn, const char *out_var, char *buf, size_t size) {
    const txn_t *x = txn;
    size_t at = 0;
    if (text_put(buf, size, &at, "CALL %s(", PROCEDURES[x->kind]) < 0) return -1;
    for (int i = 0; i < x->nscalars; i++) {
        if (x->kind == PAYMENT && i == 6) {
            char cents[32];
            fmt_cents(cents, sizeof cents, x->a[i]);
            if (text_put(buf, size, &at, ",%s", cents) < 0) return -1;
        } else if (text_put(buf, size, &at, i ? ",%lld" : "%lld", (long long)x->a[i]) < 0) {
            return -1;
        }
    }
    if (x->kind == NEW_ORDER) {
        if (text_put(buf, size, &at, ",'[") < 0) return -1;
        for (int n = 0; n < x->ol_cnt; n++)
            if (text_put(buf, size, &at, n ? ",[%d,%d,%d]" : "[%d,%d,%d]",
                    (int)x->lines[OL_I_ID][n], (int)x->lines[OL_SUPPLY_W_ID][n],
                    (int)x->lines[OL_QUANTITY][n]) < 0)
                return -1;
        if (text_put(buf, size, &at, "]'") < 0) return -1;
    }
    if (text_put(buf, size, &at, ",%s)", out_var) < 0) return -1;
    return (int)at;
}

/* What a Delivery returns is the number of districts it delivered; New-Order returns -O_ID
 * when the unused item rolled it back. Each transaction is a unit of its own: no unit row. */
static int completed(void *txn, int has, long long value, int64_t us, int64_t *in,
                     int64_t *unit_us) {
    const txn_t *x = txn;
    int rolled_back = x->kind == NEW_ORDER && has && value < 0;
    if (in) {
        switch (x->kind) {
        case NEW_ORDER:
            in[IN_NEW_ORDERS]++;
            in[IN_ORDER_LINES] += x->ol_cnt;
            in[IN_REMOTE_ORDER_LINES] += x->remote_lines;
            break;
        case PAYMENT:
            in[IN_PAYMENTS]++;
            in[IN_REMOTE_PAYMENTS] += x->remote;
            in[IN_PAYMENTS_BY_LAST_NAME] += x->by_name;
            break;
        case ORDER_STATUS:
            in[IN_ORDER_STATUSES]++;
            in[IN_ORDER_STATUS_BY_LAST_NAME] += x->by_name;
            break;
        case DELIVERY:
            in[IN_DELIVERIES]++;
            in[IN_SKIPPED_DELIVERIES] += DISTRICTS - (has ? value : DISTRICTS);
            break;
        default:
            break;
        }
    }
    return rolled_back ? DONE_ROLLED_BACK : x->kind == NEW_ORDER ? DONE_HEADLINE : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* What Python reads: the Terminal type and the constants                                     */

/* A tuple of n new objects made by make(i), or NULL with an exception set. */
static PyObject *tuple_of(int n, PyObject *(*make)(int)) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *v = make(i);
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *weight(int k) { return PyLong_FromLong(WEIGHTS[k]); }
static PyObject *keying_of(int k) { return PyFloat_FromDouble(KEYING_S[k]); }
static PyObject *think_mean(int k) { return PyFloat_FromDouble(THINK_MEAN_S[k]); }
static PyObject *statement(int i) { return PyUnicode_FromString(SQL_STATEMENTS[i]); }

static int count_statements(void) {
    int n = 0;
    while (SQL_STATEMENTS[n]) n++;
    return n;
}

/* MARIADB_SQL: the statements of MariaDB's --mode sql by name (printf formats). */
static PyObject *mariadb_sql(void) {
    PyObject *d = PyDict_New();
    for (int i = 0; d && MY_SQL[i].name; i++) {
        PyObject *v = PyUnicode_FromString(MY_SQL[i].text);
        if (!v || PyDict_SetItemString(d, MY_SQL[i].name, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static int add_to_module(PyObject *m) {
    if (PyType_Ready(&TerminalType) < 0) return -1;
    Py_INCREF(&TerminalType);
    if (module_add(m, "Terminal", (PyObject *)&TerminalType) < 0 ||
        module_add(m, "WEIGHTS", tuple_of(NKINDS, weight)) < 0 ||
        module_add(m, "NAMES", text_tuple(NAMES, NKINDS)) < 0 ||
        module_add(m, "SQL_STATEMENTS", tuple_of(count_statements(), statement)) < 0 ||
        module_add(m, "MARIADB_SQL", mariadb_sql()) < 0 ||
        module_add(m, "KEYING_S", tuple_of(NKINDS, keying_of)) < 0 ||
        module_add(m, "THINK_MEAN_S", tuple_of(NKINDS, think_mean)) < 0 ||
        module_add(m, "THINK_CAP", PyFloat_FromDouble(THINK_CAP)) < 0 ||
        PyModule_AddIntConstant(m, "DECK_SIZE", DECK_SIZE) < 0 ||
        PyModule_AddIntConstant(m, "NOT_AN_ITEM", NOT_AN_ITEM) < 0)
        return -1;
    return 0;
}

const Workload TPCC_WORKLOAD = {
    .name = "tpcc", .nkinds = NKINDS, .kinds = NAMES, .unit = 0, .ninputs = NINPUTS,
    .input_keys = INPUT_KEYS, .accept = accept, .hold = hold, .draw = draw,
    .keying = keying, .think = think, .pq_args = pq_args, .my_call = my_call,
    .completed = completed, .pq_sql = &TPCC_PQ_SQL, .my_sql = &TPCC_MY_SQL,
    .add_to_module = add_to_module};
