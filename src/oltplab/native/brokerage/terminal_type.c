/*
 * BrokerageTerminal as Python makes and steps it: the build's tables handed over once
 * (workloads/brokerage/inputs.py makes them; every user's terminal holds the same objects,
 * read-only), next_call() / complete() as the loop draws and completes a call, and the pure
 * functions the tests hold against Python's (customer_of, tax_id, symbol, nurand).
 */
#include "customer.h"

/* A BrokerageTerminal whose __init__ never succeeded has no tables; one a ProcLoop drives
 * is the loop's alone. 0, or -1 with RuntimeError. */
int bk_term_check(BkTerminal *t) {
    return workload_term_free("BrokerageTerminal", t->refs != NULL, t->driven);
}

static void free_tables(bk_tables_t *tb) {
    const char ***lists[] = {&tb->first, &tb->last, &tb->brokers_names, &tb->sectors,
                             &tb->industries, &tb->companies_names, &tb->issues};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        PyMem_Free((void *)*lists[i]);
        *lists[i] = NULL;
    }
}

/* A tuple of str as UTF-8 pointers (valid while the tuple lives), each 1..width-1 bytes
 * without a double quote, a backslash or a control character: 0, or -1 with an exception. */
static int take_words(PyObject *seq, const char *key, size_t width, const char ***out, int *n) {
    if (!seq || !PyTuple_Check(seq) || PyTuple_GET_SIZE(seq) < 1 ||
        PyTuple_GET_SIZE(seq) > 65536) {
        PyErr_Format(PyExc_TypeError, "BrokerageTerminal() needs %s, a tuple of 1..65,536 str",
                     key);
        return -1;
    }
    Py_ssize_t len = PyTuple_GET_SIZE(seq);
    const char **v = PyMem_Calloc((size_t)len, sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PyTuple_GET_ITEM(seq, i);
        Py_ssize_t size;
        const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &size) : NULL;
        int ok = s && size >= 1 && (size_t)size < width;
        for (Py_ssize_t k = 0; ok && k < size; k++)
            ok = (unsigned char)s[k] >= 0x20 && s[k] != '"' && s[k] != '\\' && s[k] != 0x7f;
        if (!ok) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s[%zd] %R: a str of 1..%zu bytes without \" or \\",
                         key, i, item, width - 1);
            PyMem_Free(v);
            return -1;
        }
        v[i] = s;
    }
    *out = v;
    *n = (int)len;
    return 0;
}

/* A bytes object of exactly n items of size bytes: its data, or NULL with ValueError. */
static const void *take_bytes(PyObject *o, const char *key, Py_ssize_t n, size_t size) {
    if (!o || !PyBytes_Check(o) || PyBytes_GET_SIZE(o) != n * (Py_ssize_t)size) {
        PyErr_Format(PyExc_ValueError, "%s must be bytes of %zd items of %zu bytes", key, n,
                     size);
        return NULL;
    }
    return PyBytes_AS_STRING(o);
}

static int bad(const char *what) {
    PyErr_Format(PyExc_ValueError, "BrokerageTerminal(): %s", what);
    return -1;
}

/* The arrays agree with each other and with the counts: 0, or -1 with ValueError. */
static int check_arrays(const bk_tables_t *tb, Py_ssize_t nbaskets) {
    for (int64_t c = 0; c < tb->customers; c++) {
        if (tb->accounts[c] < 1 || tb->accounts[c] > BK_MAX_ACCOUNTS)
            return bad("accounts: a customer has 1..10 accounts");
        if (tb->names[2 * c] >= tb->nfirst || tb->names[2 * c + 1] >= tb->nlast)
            return bad("names: an index past first_names or last_names");
        for (int k = 0; k < BK_MAX_ACCOUNTS; k++) {
            int64_t s = c * BK_MAX_ACCOUNTS + k;
            int32_t from = tb->basket_at[s], to = tb->basket_at[s + 1];
            if (from < 0 || to < from || to > nbaskets)
                return bad("basket_at: offsets into baskets, never decreasing");
            if (k < tb->accounts[c] && to - from < 1)
                return bad("basket_at: an account without a security");
            for (int e = 0; e < BK_EXTRA_EXECS; e++) {
                int32_t o = tb->execs[s * BK_EXTRA_EXECS + e];
                if (o < 0 || o > tb->customers) return bad("execs: c_ids 1..customers, or 0");
            }
        }
    }
    if (tb->basket_at[tb->customers * BK_MAX_ACCOUNTS] != nbaskets)
        return bad("basket_at: its last offset is the length of baskets");
    for (Py_ssize_t i = 0; i < nbaskets; i++)
        if (tb->baskets[i] < 0 || tb->baskets[i] >= tb->securities)
            return bad("baskets: security indexes 0..securities-1");
    return 0;
}

/* Everything is parsed and checked before the object changes: a failed __init__ leaves it
 * as it was. */
static int BkTerminal_init(BkTerminal *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"seed", "customers", "securities", "max_t_id", "days",
                             "start_day", "dm_first", "dm_days", "accounts", "basket_at",
                             "baskets", "execs", "names", "first_names", "last_names",
                             "broker_names", "sectors", "industries", "company_names",
                             "issues", NULL};
    unsigned long long seed;
    long long customers, securities, max_t_id;
    int days, start_day, dm_first, dm_days;
    PyObject *o[12] = {NULL};
    if (self->driven) return bk_term_check(self);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "K$LLLiiiiOOOOOOOOOOOO", kwlist, &seed,
                                     &customers, &securities, &max_t_id, &days, &start_day,
                                     &dm_first, &dm_days, &o[0], &o[1], &o[2], &o[3], &o[4],
                                     &o[5], &o[6], &o[7], &o[8], &o[9], &o[10], &o[11]))
        return -1;
    if (customers < BK_LOAD_UNIT || customers % BK_LOAD_UNIT || customers > 100000000)
        return bad("customers: a multiple of 1,000 up to 10^8");
    if (securities < 1 || max_t_id < 1 || max_t_id > INT64_MAX / 4 || days < 1 ||
        days > 100000)
        return bad("securities, max_t_id and days must be positive");
    if (dm_days < 5 * (BK_WEEKS_MIN + 1) || dm_days % 5)
        return bad("dm_days: whole weeks of daily_market, 30 days or more");
    bk_tables_t tb = {.customers = customers, .securities = securities, .max_t_id = max_t_id,
                      .days = days, .start_day = start_day, .dm_first = dm_first,
                      .dm_days = dm_days};
    int64_t slots = customers * BK_MAX_ACCOUNTS;
    Py_ssize_t nbaskets = o[2] && PyBytes_Check(o[2]) ? PyBytes_GET_SIZE(o[2]) / 4 : -1;
    int nbrokers = 0, ncompanies = 0;
    if (!(tb.accounts = take_bytes(o[0], "accounts", customers, 1)) ||
        !(tb.basket_at = take_bytes(o[1], "basket_at", slots + 1, 4)) ||
        !(tb.baskets = take_bytes(o[2], "baskets", nbaskets, 4)) ||
        !(tb.execs = take_bytes(o[3], "execs", slots * BK_EXTRA_EXECS, 4)) ||
        !(tb.names = take_bytes(o[4], "names", 2 * customers, 2)))
        return -1;
    if (take_words(o[5], "first_names", BK_NAME_BYTES / 2, &tb.first, &tb.nfirst) < 0 ||
        take_words(o[6], "last_names", BK_NAME_BYTES / 2, &tb.last, &tb.nlast) < 0 ||
        take_words(o[7], "broker_names", BK_NAME_BYTES, &tb.brokers_names, &nbrokers) < 0 ||
        take_words(o[8], "sectors", BK_NAME_BYTES, &tb.sectors, &tb.nsectors) < 0 ||
        take_words(o[9], "industries", BK_NAME_BYTES, &tb.industries, &tb.nindustries) < 0 ||
        take_words(o[10], "company_names", BK_NAME_BYTES, &tb.companies_names,
                   &ncompanies) < 0 ||
        take_words(o[11], "issues", 8, &tb.issues, &tb.nissues) < 0)
        goto fail;
    tb.brokers = nbrokers;
    tb.companies = ncompanies;
    if (securities > tb.companies * tb.nissues) {
        bad("securities: at most company_names x issues");
        goto fail;
    }
    if (check_arrays(&tb, nbaskets) < 0) goto fail;
    PyObject *refs = PyTuple_New(12);
    if (!refs) goto fail;
    for (int i = 0; i < 12; i++) PyTuple_SET_ITEM(refs, i, Py_NewRef(o[i]));
    free_tables(&self->tb);
    Py_XSETREF(self->refs, refs);
    self->tb = tb;
    rng_seed(&self->rng, seed);
    for (int k = 0, at = 0; k < BK_NKINDS; k++)
        for (int c = 0; c < BK_CARDS[k]; c++) self->deck[at++] = (uint8_t)k;
    self->dealt = BK_DECK; /* shuffled before the first card */
    memset(self->txn, 0, sizeof self->txn);
    memset(self->inputs, 0, sizeof self->inputs);
    self->drawn = 0;
    return 0;
fail:
    free_tables(&tb);
    return -1;
}

static void BkTerminal_dealloc(BkTerminal *self) {
    free_tables(&self->tb);
    Py_XDECREF(self->refs);
    Py_XDECREF((PyObject *)self->market);
    free(self->triggered);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* next_call(): the next transaction as the loop draws it: (kind's name, its arguments as
 * text, in frames.py's order). */
static PyObject *BkTerminal_next_call(BkTerminal *self, PyObject *unused) {
    if (bk_term_check(self) < 0) return NULL;
    bk_txn_t *x = (bk_txn_t *)self->txn;
    int kind;
    if (self->actor) { /* the market emulator's due work, as the loop's actor draws it */
        memset(x, 0, sizeof *x);
        kind = bk_actor_draw(self, x);
        if (kind == KIND_WAIT) {
            self->drawn = 0;
            return Py_BuildValue("(sd)", "wait", (double)self->wait_ns / 1e9);
        }
    } else {
        kind = bk_draw(self, x);
    }
    x->term = self;
    self->drawn = 1;
    static char text[BK_MAX_ARGS][BK_ARG_WIDEST]; /* under the GIL */
    int n = bk_args_text(x, &text[0][0], BK_ARG_WIDEST, BK_MAX_ARGS);
    if (n < 0) {
        PyErr_SetString(PyExc_OverflowError, "the call's arguments do not fit");
        return NULL;
    }
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *v = PyUnicode_FromString(text[i]);
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, v);
    }
    return t ? Py_BuildValue("(sN)", BK_NAMES[kind], t) : NULL;
}

static int check_open(BkTerminal *self) {
    if (bk_term_check(self) < 0) return -1;
    if (!self->drawn || ((bk_txn_t *)self->txn)->done) {
        PyErr_SetString(PyExc_RuntimeError, "no call open: next_call() first");
        return -1;
    }
    return 0;
}

/* The rows of the call's answer (a sequence of tuples of str or None), as the loop hands
 * them to the workload: 0, or -1 with an exception (and nothing handed). */
static int give_rows(bk_txn_t *x, PyObject *rows) {
    enum { MAX_COLS = 16 };
    PyObject *fast = PySequence_Fast(rows, "rows must be a sequence of tuples");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    for (int pass = 0; pass < 2; pass++) { /* check every row first, then hand them over */
        if (pass) bk_row(x, -1, 0, NULL);
        for (Py_ssize_t r = 0; r < n; r++) {
            PyObject *row = PySequence_Fast_GET_ITEM(fast, r);
            if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) > MAX_COLS) {
                Py_DECREF(fast);
                PyErr_SetString(PyExc_TypeError, "each row: a tuple of at most 16 str or None");
                return -1;
            }
            const char *values[MAX_COLS];
            int ncols = (int)PyTuple_GET_SIZE(row);
            for (int c = 0; c < ncols; c++) {
                PyObject *v = PyTuple_GET_ITEM(row, c);
                values[c] = v == Py_None ? NULL : PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
                if (v != Py_None && !values[c]) {
                    Py_DECREF(fast);
                    if (!PyErr_Occurred())
                        PyErr_SetString(PyExc_TypeError, "each row: a tuple of str or None");
                    return -1;
                }
            }
            if (pass) bk_row(x, (int)r, ncols, values);
        }
    }
    Py_DECREF(fast);
    return 0;
}

/* complete(value=None, us=0, rows=None): the call drawn last returned value (and rows, its
 * answer's rows as text), as the loop tells the workload; {"rolled_back": ...}. A user's
 * Trade-Order or an actor's Trade-Result or Market-Feed acts on the bound market emulator. */
static PyObject *BkTerminal_complete(BkTerminal *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"value", "us", "rows", NULL};
    PyObject *value = Py_None, *rows = Py_None;
    long long us = 0;
    if (check_open(self) < 0 ||
        !PyArg_ParseTupleAndKeywords(args, kw, "|OLO", kwlist, &value, &us, &rows))
        return NULL;
    int has = value != Py_None;
    long long v = has ? PyLong_AsLongLong(value) : 0;
    if (v == -1 && PyErr_Occurred()) return NULL;
    if (rows != Py_None && give_rows((bk_txn_t *)self->txn, rows) < 0) return NULL;
    int done = bk_completed((bk_txn_t *)self->txn, has, v, self->inputs);
    return Py_BuildValue("{s:O}", "rolled_back", done & DONE_ROLLED_BACK ? Py_True : Py_False);
}

static PyObject *BkTerminal_inputs(BkTerminal *self, PyObject *unused) {
    if (bk_term_check(self) < 0) return NULL;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < BK_NINPUTS; i++) {
        PyObject *v = PyLong_FromLongLong(self->inputs[i]);
        if (!v || PyDict_SetItemString(d, BK_INPUT_KEYS[i], v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* customer(): a customer drawn as every transaction draws one: (tier, c_id). */
static PyObject *BkTerminal_customer(BkTerminal *self, PyObject *unused) {
    if (bk_term_check(self) < 0) return NULL;
    bk_txn_t x;
    int64_t c_id = bk_draw_customer(self, &x);
    return Py_BuildValue("(iL)", x.tier, (long long)c_id);
}

/* mariadb_call(): the last call drawn as the CALL MariaDB's loop sends. */
static PyObject *BkTerminal_mariadb_call(BkTerminal *self, PyObject *unused) {
    if (bk_term_check(self) < 0) return NULL;
    if (!self->drawn) {
        PyErr_SetString(PyExc_RuntimeError, "no call drawn yet: next_call() first");
        return NULL;
    }
    char buf[4096];
    int n = bk_call_text((const bk_txn_t *)self->txn, buf, sizeof buf);
    if (n < 0) {
        PyErr_SetString(PyExc_OverflowError, "the CALL does not fit its buffer");
        return NULL;
    }
    return PyUnicode_FromStringAndSize(buf, n);
}

/* bind_market(market, actor=False, maintenance=False): the worker's market emulator, which
 * this user's Trade-Orders feed; an actor draws the emulator's due work instead of the deck
 * (actor.c), and with maintenance runs Data-Maintenance once a minute, the first at once. */
static PyObject *BkTerminal_bind_market(BkTerminal *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"market", "actor", "maintenance", NULL};
    PyObject *market;
    int actor = 0, maintenance = 0;
    if (bk_term_check(self) < 0 ||
        !PyArg_ParseTupleAndKeywords(args, kw, "O!|pp", kwlist, &BrokerageMarketType, &market,
                                     &actor, &maintenance))
        return NULL;
    BrokerageMarket *bm = (BrokerageMarket *)market;
    if (!bm->ready || bm->driven) {
        PyErr_SetString(PyExc_RuntimeError, bm->ready ? "the BrokerageMarket is driven by a loop"
                                                      : "the BrokerageMarket is not initialised");
        return NULL;
    }
    if (bm->m.securities < self->tb.securities) {
        PyErr_SetString(PyExc_ValueError, "the BrokerageMarket prices fewer securities than the "
                                          "terminal draws");
        return NULL;
    }
    Py_INCREF(market);
    Py_XSETREF(self->market, bm);
    self->actor = actor;
    self->maintenance = actor && maintenance;
    self->next_dm = 0;
    self->dm_count = 0;
    self->wait_ns = 0;
    self->ntriggered = 0;
    Py_RETURN_NONE;
}

/* actor_counts(): what the emulator refused of this terminal's work (a store at its cap, an
 * unknown symbol), the triggered trades beyond an actor's room, the Data-Maintenances drawn,
 * and its emulator's pending limit orders (market: the emulator's identity, 0 for none).
 * Read-only: Python asks it between the loop's runs, while the loop holds the terminal. */
static PyObject *BkTerminal_actor_counts(BkTerminal *self, PyObject *unused) {
    if (!self->refs) return bk_term_check(self) < 0 ? NULL : NULL;
    long long pending = self->market ? (long long)market_pending_limits(&self->market->m) : 0;
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:n}", "refused", (long long)self->refused,
                         "lost_triggers", (long long)self->lost_triggers, "maintenance",
                         (long long)self->dm_count, "pending_limits", pending, "market",
                         (Py_ssize_t)(intptr_t)self->market);
}

static PyObject *st_customer_of(PyObject *unused, PyObject *args) {
    long long lu, slot;
    int tier;
    if (!PyArg_ParseTuple(args, "LiL", &lu, &tier, &slot)) return NULL;
    static const int n[3] = {200, 600, 200};
    if (lu < 0 || tier < 1 || tier > 3 || slot < 0 || slot >= n[tier - 1]) {
        PyErr_SetString(PyExc_ValueError, "customer_of(load_unit >= 0, tier 1..3, a slot)");
        return NULL;
    }
    return PyLong_FromLongLong(bk_customer_of(lu, tier, slot));
}

static PyObject *st_tax_id(PyObject *unused, PyObject *arg) {
    long long c_id = PyLong_AsLongLong(arg);
    if (c_id == -1 && PyErr_Occurred()) return NULL;
    char out[BK_TAX_ID_BYTES];
    bk_tax_id(c_id, out);
    return PyUnicode_FromString(out);
}

static PyObject *st_symbol(PyObject *unused, PyObject *arg) {
    long long i = PyLong_AsLongLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    char out[BK_SYMBOL_BYTES];
    if (i < 0 || bk_symbol(i, out, sizeof out) < 0) {
        PyErr_SetString(PyExc_ValueError, "symbol(index): an index >= 0 below 26^12");
        return NULL;
    }
    return PyUnicode_FromString(out);
}

/* nurand(seed, a, s, lo, hi, n): n draws of NURand(a, s) over lo..hi */
static PyObject *st_nurand(PyObject *unused, PyObject *args) {
    unsigned long long seed;
    long long a, lo, hi;
    int s, n;
    if (!PyArg_ParseTuple(args, "KLiLLi", &seed, &a, &s, &lo, &hi, &n)) return NULL;
    if (a < 0 || a > 0xffffff || s < 0 || s > 24 || lo > hi || n < 0 || n > 10000000) {
        PyErr_SetString(PyExc_ValueError, "nurand: a 0..2^24-1, s 0..24, lo <= hi");
        return NULL;
    }
    rng_t r;
    rng_seed(&r, seed);
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *v = PyLong_FromLongLong(bk_nurand(&r, a, s, lo, hi));
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyMethodDef BkTerminal_methods[] = {
    {"next_call", (PyCFunction)BkTerminal_next_call, METH_NOARGS,
     "The next transaction of the user's deck (an actor's: its market's due work), drawn as "
     "the loop draws it: (kind's name, its arguments as text in frames.py's order), or "
     "('wait', seconds) for an actor with nothing due."},
    {"complete", (PyCFunction)(void (*)(void))BkTerminal_complete,
     METH_VARARGS | METH_KEYWORDS,
     "complete(value=None, us=0, rows=None): the last call returned value (and rows: its "
     "answer's rows, tuples of str or None); its inputs are counted, a bound market "
     "emulator takes its effect; {'rolled_back'}."},
    {"inputs", (PyCFunction)BkTerminal_inputs, METH_NOARGS,
     "The input counts of the calls complete() was told of, by BROKERAGE_INPUT_KEYS."},
    {"customer", (PyCFunction)BkTerminal_customer, METH_NOARGS,
     "A customer drawn as the transactions draw one: (tier, c_id)."},
    {"mariadb_call", (PyCFunction)BkTerminal_mariadb_call, METH_NOARGS,
     "The last call drawn as the CALL MariaDB's loop sends."},
    {"bind_market", (PyCFunction)(void (*)(void))BkTerminal_bind_market,
     METH_VARARGS | METH_KEYWORDS,
     "bind_market(market, actor=False, maintenance=False): the worker's BrokerageMarket, fed "
     "by this user's Trade-Orders; an actor draws its due work (and with maintenance "
     "Data-Maintenance once a minute) instead of the deck."},
    {"actor_counts", (PyCFunction)BkTerminal_actor_counts, METH_NOARGS,
     "{'refused', 'lost_triggers', 'maintenance'}: the emulator's refusals of this "
     "terminal's work, an actor's triggered trades beyond its room, Data-Maintenances drawn."},
    {"customer_of", (PyCFunction)st_customer_of, METH_VARARGS | METH_STATIC,
     "customer_of(load_unit, tier, slot): customers.customer_of in C."},
    {"tax_id", (PyCFunction)st_tax_id, METH_O | METH_STATIC, "customers.tax_id in C."},
    {"symbol", (PyCFunction)st_symbol, METH_O | METH_STATIC, "reference.symbol in C."},
    {"nurand", (PyCFunction)st_nurand, METH_VARARGS | METH_STATIC,
     "nurand(seed, a, s, lo, hi, n): n draws of NURand(a, s) over lo..hi."},
    {NULL}};

PyTypeObject BkTerminalType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.BrokerageTerminal",
    .tp_doc = PyDoc_STR(
        "BrokerageTerminal(seed, *, customers, securities, max_t_id, days, start_day, "
        "dm_first, dm_days, accounts, basket_at, baskets, execs, names, first_names, "
        "last_names, broker_names, sectors, industries, company_names, issues): one "
        "customer-emulator user of the TPC-E-derived brokerage; the tables as "
        "workloads/brokerage/inputs.py makes them."),
    .tp_basicsize = sizeof(BkTerminal),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)BkTerminal_init,
    .tp_dealloc = (destructor)BkTerminal_dealloc,
    .tp_methods = BkTerminal_methods,
};
