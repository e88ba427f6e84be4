/*
 * Terminal: one virtual user's random generator, card deck and transaction inputs
 *   (TPC-C clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1 and 5.2). Both modes draw from it: the
 *   procedures loop directly, --mode sql through its Python methods.
 */
#include "native.h"

const int WEIGHTS[NKINDS] = {45, 43, 4, 4, 4};          /* cards per 100 [5.2.3] */
const double KEYING_S[NKINDS] = {18.0, 3.0, 2.0, 2.0, 2.0}; /* [5.2.5.7] */
const double THINK_MEAN_S[NKINDS] = {12.0, 12.0, 10.0, 5.0, 5.0};
const double THINK_CAP = 10.0; /* think times truncated at 10x their mean [5.2.5.4] */
const char *const NAMES[NKINDS] = {"new_order", "payment", "order_status", "delivery",
                                          "stock_level"};

/* ------------------------------------------------------------------------------------------ */
/* Terminal                                                                                   */
int term_draw_kind(Terminal *t) {
    if (t->next_card == DECK_SIZE) { /* a new pass: shuffle (Fisher-Yates) */
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

/* The arguments of the kind's PL/pgSQL function; Payment's H_AMOUNT is in cents. */
int term_inputs(Terminal *t, int kind, int64_t w_id, int64_t *a) {
    rng_t *r = &t->rng;
    switch (kind) {
    case NEW_ORDER: /* (w_id, w_max, d_id, c_id, ol_cnt, rbk, c_ol_i_id) [2.4.1] */
        a[0] = w_id;
        a[1] = t->w_max;
        a[2] = uniform(r, 1, DISTRICTS);
        a[3] = nurand(r, A_C_ID, 1, CUSTOMERS, t->c_id);
        a[4] = uniform(r, 5, 15);
        a[5] = uniform(r, 1, 100); /* 1: the last line is the unused item [2.4.1.4] */
        a[6] = t->c_ol_i_id;
        return 7;
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
        if (uniform(r, 1, 100) <= 60) { /* by last name */
            a[4] = 0;
            a[5] = nurand(r, A_C_LAST, 0, 999, t->c_last);
        } else {
            a[4] = nurand(r, A_C_ID, 1, CUSTOMERS, t->c_id);
            a[5] = -1;
        }
        a[6] = uniform(r, 100, 500000); /* 1.00 .. 5000.00 */
        return 7;
    case ORDER_STATUS: /* (w_id, d_id, c_id, c_last_num) [2.6.1] */
        a[0] = w_id;
        a[1] = uniform(r, 1, DISTRICTS);
        if (uniform(r, 1, 100) <= 60) {
            a[2] = 0;
            a[3] = nurand(r, A_C_LAST, 0, 999, t->c_last);
        } else {
            a[2] = nurand(r, A_C_ID, 1, CUSTOMERS, t->c_id);
            a[3] = -1;
        }
        return 4;
    case DELIVERY: /* (w_id, o_carrier_id) [2.7.1] */
        a[0] = w_id;
        a[1] = uniform(r, 1, 10);
        return 2;
    default: /* STOCK_LEVEL: (w_id, d_id, threshold): the terminal's district [2.8.1] */
        a[0] = w_id;
        a[1] = t->stock_d_id;
        a[2] = uniform(r, 10, 20);
        return 3;
    }
}

/* -ln(r) * mean with r uniform on (0, 1], truncated at 10x the mean [5.2.5.4] */
double term_think(Terminal *t, int kind) {
    double mean = THINK_MEAN_S[kind], v = -log(1.0 - rng_unit(&t->rng)) * mean;
    return v < THINK_CAP * mean ? v : THINK_CAP * mean;
}

int fmt_cents(char *buf, size_t n, int64_t cents) {
    const char *sign = cents < 0 ? "-" : "";
    int64_t v = cents < 0 ? -cents : cents;
    return snprintf(buf, n, "%s%lld.%02lld", sign, (long long)(v / 100), (long long)(v % 100));
}

static int Terminal_init(Terminal *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"seed", "w_max", "stock_d_id", "c_id", "c_ol_i_id", "c_last",
                             "warehouses", NULL};
    unsigned long long seed;
    PyObject *whs;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KiiiiiO", kwlist, &seed, &self->w_max,
                                     &self->stock_d_id, &self->c_id, &self->c_ol_i_id,
                                     &self->c_last, &whs))
        return -1;
    PyObject *seq = PySequence_Fast(whs, "warehouses must be a sequence");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 1 || self->w_max < 1) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "a terminal needs at least one warehouse");
        return -1;
    }
    PyMem_Free(self->warehouses);
    self->warehouses = PyMem_Malloc(sizeof(int) * n);
    if (!self->warehouses) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long w = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (w == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (w < 1 || w > self->w_max) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "warehouse %ld is outside 1..%d", w, self->w_max);
            return -1;
        }
        self->warehouses[i] = (int)w;
    }
    Py_DECREF(seq);
    self->nwh = (int)n;
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
    return PyLong_FromLong(term_draw_kind(self));
}

static PyObject *Terminal_warehouse(Terminal *self, PyObject *unused) {
    return PyLong_FromLong(term_warehouse(self));
}

static PyObject *Terminal_inputs(Terminal *self, PyObject *args) {
    int kind;
    long long w_id;
    if (!PyArg_ParseTuple(args, "iL", &kind, &w_id) || check_kind(kind)) return NULL;
    int64_t a[MAX_ARGS];
    int n = term_inputs(self, kind, w_id, a);
    PyObject *tup = PyTuple_New(n);
    if (!tup) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *v;
        if (kind == PAYMENT && i == 6) {
            char buf[32];
            fmt_cents(buf, sizeof buf, a[i]);
            v = PyUnicode_FromString(buf);
        } else {
            v = PyLong_FromLongLong(a[i]);
        }
        if (!v) {
            Py_DECREF(tup);
            return NULL;
        }
        PyTuple_SET_ITEM(tup, i, v);
    }
    return tup;
}

/* (ol_i_id, ol_supply_w_id, ol_quantity) of each of ol_cnt lines, for client-side
 * New-Order [2.4.1.5]; rbk = 1: the last line carries the unused item [2.4.1.4] */
void term_order_lines(Terminal *t, int64_t w_id, int ol_cnt, int rbk, int64_t (*lines)[3]) {
    for (int n = 1; n <= ol_cnt; n++) {
        int64_t *l = lines[n - 1];
        l[0] = (rbk == 1 && n == ol_cnt) ? NOT_AN_ITEM
                                         : nurand(&t->rng, A_OL_I_ID, 1, ITEMS, t->c_ol_i_id);
        l[1] = uniform(&t->rng, 1, 100) == 1 ? other_warehouse(t, w_id) : w_id;
        l[2] = uniform(&t->rng, 1, 10);
    }
}

static PyObject *Terminal_order_lines(Terminal *self, PyObject *args) {
    long long w_id;
    int ol_cnt, rbk;
    if (!PyArg_ParseTuple(args, "Lii", &w_id, &ol_cnt, &rbk)) return NULL;
    if (ol_cnt < 0 || ol_cnt > 15) {
        PyErr_Format(PyExc_ValueError, "ol_cnt %d is outside 0..15", ol_cnt);
        return NULL;
    }
    int64_t lines[15][3];
    term_order_lines(self, w_id, ol_cnt, rbk, lines);
    PyObject *list = PyList_New(ol_cnt);
    if (!list) return NULL;
    for (int n = 1; n <= ol_cnt; n++) {
        PyObject *line = Py_BuildValue("(LLL)", (long long)lines[n - 1][0],
                                       (long long)lines[n - 1][1], (long long)lines[n - 1][2]);
        if (!line) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, n - 1, line);
    }
    return list;
}

static PyObject *Terminal_think_time(Terminal *self, PyObject *arg) {
    int kind = (int)PyLong_AsLong(arg);
    if (PyErr_Occurred() || check_kind(kind)) return NULL;
    return PyFloat_FromDouble(term_think(self, kind));
}

static PyObject *Terminal_random(Terminal *self, PyObject *unused) {
    return PyFloat_FromDouble(rng_unit(&self->rng));
}

static PyMethodDef Terminal_methods[] = {
    {"next_kind", (PyCFunction)Terminal_next_kind, METH_NOARGS,
     "The next card of the deck: a transaction type 0..4."},
    {"warehouse", (PyCFunction)Terminal_warehouse, METH_NOARGS,
     "The warehouse of the next transaction: the home one, or one of the dealt ones."},
    {"inputs", (PyCFunction)Terminal_inputs, METH_VARARGS,
     "inputs(kind, w_id): the arguments of the type's PL/pgSQL function."},
    {"order_lines", (PyCFunction)Terminal_order_lines, METH_VARARGS,
     "order_lines(w_id, ol_cnt, rbk): (ol_i_id, ol_supply_w_id, ol_quantity) per line."},
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
