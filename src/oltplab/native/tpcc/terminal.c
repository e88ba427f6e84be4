/*
 * Terminal: one virtual user's random generator, card deck and transaction inputs
 *   (TPC-C clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1 and 5.2). Both modes draw from it: the
 *   procedures loop directly, --mode sql through its Python methods.
 */
#include "tpcc.h"

const int WEIGHTS[NKINDS] = {45, 43, 4, 4, 4};          /* cards per 100 [5.2.3] */
const double KEYING_S[NKINDS] = {18.0, 3.0, 2.0, 2.0, 2.0}; /* [5.2.5.7] */
const double THINK_MEAN_S[NKINDS] = {12.0, 12.0, 10.0, 5.0, 5.0};
const double THINK_CAP = 10.0; /* think times truncated at 10x their mean [5.2.5.4] */
const char *const NAMES[NKINDS] = {"new_order", "payment", "order_status", "delivery",
                                          "stock_level"};

/* ------------------------------------------------------------------------------------------ */
/* Terminal                                                                                   */
int term_draw_kind(Terminal *t) {
    if (t->next_card >= DECK_SIZE) { /* a new pass: shuffle (Fisher-Yates) */
        for (int i = DECK_SIZE - 1; i > 0; i--) {
            int j = (int)uniform(&t->rng, 0, i);
            uint8_t c = t->cards[i];
            t->cards[i] = t->cards[j];
            t->cards[j] = c;
        }
        t->next_card = 0;
    }
    return t->cards[t->next_card++];
}

int term_warehouse(Terminal *t) {
    return t->nwh == 1 ? t->warehouses[0] : t->warehouses[uniform(&t->rng, 0, t->nwh - 1)];
}

/* A uniform pick among the other warehouses; w_id itself when W = 1 [2.4.1.5, 2.5.1.2] */
int64_t other_warehouse(Terminal *t, int64_t w_id) {
    if (t->w_max == 1) return w_id;
    int64_t w = uniform(&t->rng, 1, t->w_max - 1);
    return w >= w_id ? w + 1 : w;
}

/* The lines of a New-Order [2.4.1.5]: OL_I_ID = NURand(8191, 1, 100000), the unused item on the
 * last line when rbk = 1; the supply warehouse is remote for 1% of the lines, uniform among
 * the other warehouses; quantity 1..10. */
static void draw_lines(Terminal *t, int64_t w_id, int ol_cnt, int rbk, txn_t *x) {
    rng_t *r = &t->rng;
    x->ol_cnt = ol_cnt;
    x->remote_lines = 0;
    for (int n = 0; n < ol_cnt; n++) {
        int64_t i_id = (rbk && n == ol_cnt - 1) ? NOT_AN_ITEM
                                                 : nurand(r, A_OL_I_ID, 1, ITEMS, t->c_ol_i_id);
        int64_t supply = uniform(r, 1, 100) == 1 ? other_warehouse(t, w_id) : w_id;
        x->lines[OL_I_ID][n] = (int32_t)i_id;
        x->lines[OL_SUPPLY_W_ID][n] = (int32_t)supply;
        x->lines[OL_QUANTITY][n] = (int32_t)uniform(r, 1, 10);
        x->remote_lines += supply != w_id;
    }
}

/* Every input of one transaction of the kind [2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1]: the arguments
 * of its PL/pgSQL function, Payment's H_AMOUNT in cents. */
void term_inputs(Terminal *t, int kind, int64_t w_id, txn_t *x) {
    rng_t *r = &t->rng;
    int64_t *a = x->a;
    x->kind = kind;
    x->ol_cnt = x->remote_lines = x->remote = x->by_name = 0;
    switch (kind) {
    case NEW_ORDER: { /* (w_id, d_id, c_id, ol_i_id[], ol_supply_w_id[], ol_quantity[]) */
        a[0] = w_id;
        a[1] = uniform(r, 1, DISTRICTS);
        a[2] = nurand(r, A_C_ID, 1, CUSTOMERS, t->c_id);
        int ol_cnt = (int)uniform(r, 5, MAX_LINES);
        int rbk = uniform(r, 1, 100) == 1; /* the last line is the unused item [2.4.1.4] */
        draw_lines(t, w_id, ol_cnt, rbk, x);
        x->nscalars = 3;
        x->nargs = 6;
        return;
    }
    case PAYMENT: /* (w_id, d_id, c_w_id, c_d_id, c_id, c_last_num, h_amount) [2.5.1] */
        a[0] = w_id;
        a[1] = uniform(r, 1, DISTRICTS);
        if (uniform(r, 1, 100) <= 85) { /* the home warehouse's customer */
            a[2] = w_id;
            a[3] = a[1];
        } else {
            a[2] = other_warehouse(t, w_id);
            a[3] = uniform(r, 1, DISTRICTS);
        }
        x->remote = a[2] != w_id;
        if (uniform(r, 1, 100) <= 60) { /* by last name */
            a[4] = 0;
            a[5] = nurand(r, A_C_LAST, 0, 999, t->c_last);
            x->by_name = 1;
        } else {
            a[4] = nurand(r, A_C_ID, 1, CUSTOMERS, t->c_id);
            a[5] = -1;
        }
        a[6] = uniform(r, 100, 500000); /* 1.00 .. 5000.00 */
        x->nscalars = x->nargs = 7;
        return;
    case ORDER_STATUS: /* (w_id, d_id, c_id, c_last_num) [2.6.1] */
        a[0] = w_id;
        a[1] = uniform(r, 1, DISTRICTS);
        if (uniform(r, 1, 100) <= 60) {
            a[2] = 0;
            a[3] = nurand(r, A_C_LAST, 0, 999, t->c_last);
            x->by_name = 1;
        } else {
            a[2] = nurand(r, A_C_ID, 1, CUSTOMERS, t->c_id);
            a[3] = -1;
        }
        x->nscalars = x->nargs = 4;
        return;
    case DELIVERY: /* (w_id, o_carrier_id) [2.7.1] */
        a[0] = w_id;
        a[1] = uniform(r, 1, 10);
        x->nscalars = x->nargs = 2;
        return;
    default: /* STOCK_LEVEL: (w_id, d_id, threshold): the terminal's district [2.8.1] */
        a[0] = w_id;
        a[1] = t->stock_d_id;
        a[2] = uniform(r, 10, 20);
        x->nscalars = x->nargs = 3;
        return;
    }
}

/* The function's arguments as text, for PQsendQueryPrepared; -1 if one does not fit. */
int txn_text(const txn_t *x, char (*text)[ARG_TEXT]) {
    for (int i = 0; i < x->nscalars; i++) {
        int w = x->kind == PAYMENT && i == 6
                    ? fmt_cents(text[i], ARG_TEXT, x->a[i])
                    : snprintf(text[i], ARG_TEXT, "%lld", (long long)x->a[i]);
        if (w < 0 || w >= ARG_TEXT) return -1;
    }
    for (int j = 0; j < x->nargs - x->nscalars; j++)
        if (text_int_array(text[x->nscalars + j], ARG_TEXT, x->lines[j], x->ol_cnt) < 0) return -1;
    return 0;
}

/* -ln(r) * mean with r uniform on (0, 1], truncated at 10x the mean [5.2.5.4] */
double term_think(Terminal *t, int kind) {
    double mean = THINK_MEAN_S[kind], v = -log(1.0 - rng_unit(&t->rng)) * mean;
    return v < THINK_CAP * mean ? v : THINK_CAP * mean;
}

/* C_LAST of a number 0..999 [4.3.2.3]: the three syllables of its digits. */
void fmt_last_name(char *buf, size_t n, int64_t num) {
    static const char *const SYL[10] = {"BAR", "OUGHT", "ABLE", "PRI", "PRES",
                                        "ESE", "ANTI", "CALLY", "ATION", "EING"};
    if (num < 0 || num > 999) num = 0; /* never: the Terminal draws 0..999 */
    snprintf(buf, n, "%s%s%s", SYL[num / 100], SYL[(num / 10) % 10], SYL[num % 10]);
}

/* The transaction's scalars into a (MAX_ARGS) and New-Order's lines into lines, (i_id,
 * supply_w_id, qty) each: the number of scalars, and *ol_cnt. */
int txn_copy(const txn_t *x, int64_t *a, int64_t (*lines)[3], int *ol_cnt) {
    int nargs = x->nscalars < 0 ? 0 : x->nscalars < MAX_ARGS ? x->nscalars : MAX_ARGS;
    memcpy(a, x->a, sizeof(int64_t) * (size_t)nargs);
    *ol_cnt = 0;
    if (x->kind == NEW_ORDER) {
        *ol_cnt = x->ol_cnt < 0 ? 0 : x->ol_cnt < MAX_LINES ? x->ol_cnt : MAX_LINES;
        for (int n = 0; n < *ol_cnt; n++) {
            lines[n][0] = x->lines[OL_I_ID][n];
            lines[n][1] = x->lines[OL_SUPPLY_W_ID][n];
            lines[n][2] = x->lines[OL_QUANTITY][n];
        }
    }
    return nargs;
}

/* New-Order's n lines in (unused item last, supply warehouse, item, number) order into
 * order[]: every New-Order of --mode sql locks its stock rows in this one order. */
void lines_in_lock_order(const int64_t (*lines)[3], int n, int *order) {
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++) { /* insertion sort of at most 15 */
        int j = i, x = order[i];
        const int64_t *lx = lines[x];
        while (j > 0) {
            const int64_t *ly = lines[order[j - 1]];
            int gx = lx[0] > ITEMS, gy = ly[0] > ITEMS;
            int before = gx != gy ? gx < gy
                         : lx[1] != ly[1] ? lx[1] < ly[1]
                         : lx[0] != ly[0] ? lx[0] < ly[0]
                                          : x < order[j - 1];
            if (!before) break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
}

/* The stock rule [2.4.2.2] over New-Order's lines in lock order: s_quantity[i], the
 * quantity read for line i, becomes the one to write (minus its quantity, plus 91 when fewer
 * than 10 would remain); an item on two lines takes the first one's result. Lines not
 * found (the unused item) are passed over. */
void stock_rule(const int64_t (*lines)[3], const int *order, int n, const int *found,
                int64_t *s_quantity) {
    for (int k = 0, prev = -1; k < n; k++) {
        int i = order[k];
        const int64_t *l = lines[i];
        if (!found[i]) continue;
        if (prev >= 0 && lines[prev][0] == l[0] && lines[prev][1] == l[1])
            s_quantity[i] = s_quantity[prev];
        int64_t q = s_quantity[i] - l[2];
        s_quantity[i] = q < 10 ? q + 91 : q;
        prev = i;
    }
}

int fmt_cents(char *buf, size_t n, int64_t cents) {
    const char *sign = cents < 0 ? "-" : "";
    uint64_t v = cents < 0 ? -(uint64_t)cents : (uint64_t)cents; /* INT64_MIN too */
    return snprintf(buf, n, "%s%llu.%02llu", sign, (unsigned long long)(v / 100),
                    (unsigned long long)(v % 100));
}

/* A Terminal whose __init__ never succeeded has no warehouses; one a ProcLoop drives is the
 * loop's alone (it runs without the GIL). */
int term_check(Terminal *t) {
    return workload_term_free("Terminal", t->warehouses != NULL, t->driven);
}

/* The warehouses as a new array of ints in 1..w_max, or NULL with an exception set. */
static int *warehouse_array(PyObject *whs, int w_max, Py_ssize_t *count) {
    PyObject *seq = PySequence_Fast(whs, "warehouses must be a sequence");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int *out = NULL;
    if (n < 1 || n > INT32_MAX || w_max < 1) {
        PyErr_SetString(PyExc_ValueError, "a terminal needs at least one warehouse");
        goto done;
    }
    out = PyMem_Malloc(sizeof(int) * n);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long w = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (w == -1 && PyErr_Occurred()) goto bad;
        if (w < 1 || w > w_max) {
            PyErr_Format(PyExc_ValueError, "warehouse %ld is outside 1..%d", w, w_max);
            goto bad;
        }
        out[i] = (int)w;
    }
    *count = n;
    goto done;
bad:
    PyMem_Free(out);
    out = NULL;
done:
    Py_DECREF(seq);
    return out;
}

/* Everything is parsed and checked before the object changes: a failed __init__ leaves it
 * as it was. */
static int Terminal_init(Terminal *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"seed", "w_max", "stock_d_id", "c_id", "c_ol_i_id", "c_last",
                             "warehouses", NULL};
    unsigned long long seed;
    int w_max, stock_d_id, c_id, c_ol_i_id, c_last;
    PyObject *whs;
    if (self->driven) return term_check(self);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KiiiiiO", kwlist, &seed, &w_max, &stock_d_id,
                                     &c_id, &c_ol_i_id, &c_last, &whs))
        return -1;
    Py_ssize_t n = 0;
    int *warehouses = warehouse_array(whs, w_max, &n);
    if (!warehouses) return -1;
    PyMem_Free(self->warehouses);
    self->warehouses = warehouses;
    self->nwh = (int)n;
    self->w_max = w_max;
    self->stock_d_id = stock_d_id;
    self->c_id = c_id;
    self->c_ol_i_id = c_ol_i_id;
    self->c_last = c_last;
    rng_seed(&self->rng, seed);
    int k = 0;
    for (int kind = 0; kind < NKINDS; kind++)
        for (int i = 0; i < WEIGHTS[kind]; i++) self->cards[k++] = (uint8_t)kind;
    self->next_card = DECK_SIZE; /* shuffled on the first draw */
    return 0;
}

static void Terminal_dealloc(Terminal *self) {
    PyMem_Free(self->warehouses);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_kind(int kind) {
    if (kind < 0 || kind >= NKINDS) {
        PyErr_Format(PyExc_ValueError, "no transaction type %d", kind);
        return -1;
    }
    return 0;
}

static PyObject *Terminal_next_kind(Terminal *self, PyObject *unused) {
    if (term_check(self) < 0) return NULL;
    return PyLong_FromLong(term_draw_kind(self));
}

static PyObject *Terminal_warehouse(Terminal *self, PyObject *unused) {
    if (term_check(self) < 0) return NULL;
    return PyLong_FromLong(term_warehouse(self));
}

static PyObject *int_tuple(const int32_t *v, int n) {
    PyObject *tup = PyTuple_New(n);
    for (int i = 0; tup && i < n; i++) {
        PyObject *x = PyLong_FromLong(v[i]);
        if (!x) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, i, x);
    }
    return tup;
}

/* Draw the inputs of (kind, w_id) given from Python; -1 with an exception on bad arguments. */
static int draw_for_python(Terminal *self, PyObject *args, txn_t *x) {
    int kind;
    long long w_id;
    if (term_check(self) < 0 || !PyArg_ParseTuple(args, "iL", &kind, &w_id) || check_kind(kind))
        return -1;
    term_inputs(self, kind, w_id, x);
    return 0;
}

static PyObject *Terminal_inputs(Terminal *self, PyObject *args) {
    txn_t x;
    if (draw_for_python(self, args, &x) < 0) return NULL;
    PyObject *tup = PyTuple_New(x.nargs);
    if (!tup) return NULL;
    for (int i = 0; i < x.nargs; i++) {
        PyObject *v;
        if (i >= x.nscalars) {
            v = int_tuple(x.lines[i - x.nscalars], x.ol_cnt);
        } else if (x.kind == PAYMENT && i == 6) {
            char buf[32];
            fmt_cents(buf, sizeof buf, x.a[i]);
            v = PyUnicode_FromString(buf);
        } else {
            v = PyLong_FromLongLong(x.a[i]);
        }
        if (!v) {
            Py_DECREF(tup);
            return NULL;
        }
        PyTuple_SET_ITEM(tup, i, v);
    }
    return tup;
}

/* The arguments as the procedures loop sends them: text, arrays as {..} (for the tests). */
static PyObject *Terminal_inputs_text(Terminal *self, PyObject *args) {
    txn_t x;
    char text[MAX_ARGS][ARG_TEXT];
    if (draw_for_python(self, args, &x) < 0) return NULL;
    return text_args_tuple(text, txn_text(&x, text) < 0 ? -1 : x.nargs);
}

static PyObject *Terminal_think_time(Terminal *self, PyObject *arg) {
    if (term_check(self) < 0) return NULL;
    int kind = (int)PyLong_AsLong(arg);
    if (PyErr_Occurred() || check_kind(kind)) return NULL;
    return PyFloat_FromDouble(term_think(self, kind));
}

static PyObject *Terminal_random(Terminal *self, PyObject *unused) {
    if (term_check(self) < 0) return NULL;
    return PyFloat_FromDouble(rng_unit(&self->rng));
}

static PyMethodDef Terminal_methods[] = {
    {"next_kind", (PyCFunction)Terminal_next_kind, METH_NOARGS,
     "The next card of the deck: a transaction type 0..4."},
    {"warehouse", (PyCFunction)Terminal_warehouse, METH_NOARGS,
     "The warehouse of the next transaction: the home one, or one of the dealt ones."},
    {"inputs", (PyCFunction)Terminal_inputs, METH_VARARGS,
     "inputs(kind, w_id): the arguments of the type's PL/pgSQL function; New-Order's order "
     "lines as three tuples (ol_i_id, ol_supply_w_id, ol_quantity)."},
    {"inputs_text", (PyCFunction)Terminal_inputs_text, METH_VARARGS,
     "inputs_text(kind, w_id): the same draw as inputs(), as the text the procedures loop "
     "sends."},
    {"think_time", (PyCFunction)Terminal_think_time, METH_O,
     "think_time(kind): a think time in seconds."},
    {"random", (PyCFunction)Terminal_random, METH_NOARGS, "A uniform draw on [0, 1)."},
    {NULL}};

PyTypeObject TerminalType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.Terminal",
    .tp_doc = PyDoc_STR("Terminal(seed, w_max, stock_d_id, c_id, c_ol_i_id, c_last, "
                        "warehouses): one virtual user's deck and inputs."),
    .tp_basicsize = sizeof(Terminal),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Terminal_init,
    .tp_dealloc = (destructor)Terminal_dealloc,
    .tp_methods = Terminal_methods,
};
