/*
 * BrokerageTrades: the brokerage build's trade loop (trades.c) as a Python type, driven by
 * workloads/brokerage/trades.py's native_trade_rows.
 */
#include "trades.h"
#include "workload.h" /* module_add */

typedef struct {
    PyObject_HEAD BktLoop L;
    BktArena arena;
    PyObject **positions; /* each position's Python list, in account order */
    size_t npositions, cap_positions;
    PyObject *balances, *counts, *comms;
    int ready, busy, done;
} BkTrades;

/* ------------------------------------------------------------------------------------------ */
/* Taking Python's values                                                                     */

/* trades.py's constants as _native_constants() lists them */
static PyObject *constants(void) {
    PyObject *t = PyTuple_New(BKT_TENTHS + BKT_QUANTITIES + 16);
    int k = 0;
    for (int i = 0; t && i < BKT_TENTHS; i++)
        PyTuple_SET_ITEM(t, k++, PyLong_FromLong(BKT_TYPE_TENTHS[i]));
    for (int i = 0; t && i < BKT_QUANTITIES; i++)
        PyTuple_SET_ITEM(t, k++, PyLong_FromLongLong(BKT_QTY[i]));
    const long rest[] = {BKT_BID_LO, BKT_BID_HI, BKT_MARKET_SPREAD, BKT_LIMIT_SPREAD,
                         BKT_MARGIN_PERCENT, BKT_LIFO_PERCENT, BKT_SUBMIT_DELAY,
                         BKT_PENDING_DELAY, BKT_SKIP_MOD, BKT_SKIP_REST, BKT_TRADES_PER_PIECE,
                         BKT_PIECE_ROWS, BKT_TRADING_SECONDS, BKT_EARLY, BKT_MONEY_TABLE};
    for (size_t i = 0; t && i < sizeof rest / sizeof *rest; i++)
        PyTuple_SET_ITEM(t, k++, PyLong_FromLong(rest[i]));
    if (t) PyTuple_SET_ITEM(t, k++, PyFloat_FromDouble(BKT_OWNER_EXECUTES));
    for (int i = 0; t && i < k; i++)
        if (!PyTuple_GET_ITEM(t, i)) Py_CLEAR(t);
    return t;
}

/* An int within lo..hi: 0, or -1 with an exception */
static int int_in(PyObject *o, int64_t lo, int64_t hi, int64_t *out, const char *what) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s must be within %lld..%lld, not %lld", what,
                     (long long)lo, (long long)hi, v);
        return -1;
    }
    *out = v;
    return 0;
}

/* A str's UTF-8 copied into the arena: 0, or -1 with an exception */
static int copy_str(BkTrades *self, PyObject *o, BktStr *out) {
    Py_ssize_t n;
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &n) : NULL;
    if (!s) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a str is needed");
        return -1;
    }
    if (!(out->s = bkt_arena_copy(&self->arena, s, (size_t)n))) {
        PyErr_NoMemory();
        return -1;
    }
    out->n = (size_t)n;
    return 0;
}

/* A sequence of exactly n items (a new reference to its fast form), or NULL */
static PyObject *items(PyObject *o, Py_ssize_t n, const char *what) {
    PyObject *f = PySequence_Fast(o, what);
    if (f && n >= 0 && PySequence_Fast_GET_SIZE(f) != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd items, not %zd", what,
                     PySequence_Fast_GET_SIZE(f), n);
        Py_CLEAR(f);
    }
    return f;
}

/* n str of a sequence into out: 0, or -1 */
static int str_items(BkTrades *self, PyObject *o, Py_ssize_t n, BktStr *out, const char *what) {
    PyObject *f = items(o, n, what);
    if (!f) return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (copy_str(self, PySequence_Fast_GET_ITEM(f, i), &out[i]) < 0) {
            Py_DECREF(f);
            return -1;
        }
    Py_DECREF(f);
    return 0;
}

/* n ints of a sequence, each within 0..hi: 0, or -1 */
static int int_items(PyObject *o, Py_ssize_t n, int64_t hi, int64_t *out, const char *what) {
    PyObject *f = items(o, n, what);
    if (!f) return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (int_in(PySequence_Fast_GET_ITEM(f, i), 0, hi, &out[i], what) < 0) {
            Py_DECREF(f);
            return -1;
        }
    Py_DECREF(f);
    return 0;
}

/* Room for n zeroed records (freed by release): the pointer, or NULL with MemoryError */
static void *records(BkTrades *self, size_t n, size_t size) {
    void *p = n && size <= SIZE_MAX / n ? calloc(n, size) : NULL;
    if (!p && n) PyErr_NoMemory();
    return p;
}

/* tables: (constants, prefixes, dues, clock, type ids, type names, charges, rates) */
static int take_tables(BkTrades *self, PyObject *tables, int days) {
    BktTables *t = &self->L.t;
    PyObject *f = items(tables, 8, "tables"), *mine = constants();
    if (!f || !mine) goto bad;
    int same = PyObject_RichCompareBool(PySequence_Fast_GET_ITEM(f, 0), mine, Py_EQ);
    if (same < 0) goto bad;
    if (!same) {
        PyErr_SetString(PyExc_ValueError, "trades.py's constants are not the C loop's "
                                          "(trades.h): rebuild the extension");
        goto bad;
    }
    t->days = days;
    size_t nclock = BKT_EARLY + BKT_TRADING_SECONDS;
    BktStr *prefix = records(self, (size_t)days, sizeof *prefix);
    BktStr(*due)[2] = records(self, (size_t)days, sizeof *due);
    BktStr *clock = records(self, nclock, sizeof *clock);
    t->prefix = prefix;
    t->due = (const BktStr(*)[2])due;
    t->clock = clock;
    if (!prefix || !due || !clock ||
        str_items(self, PySequence_Fast_GET_ITEM(f, 1), days, prefix, "prefixes") < 0 ||
        str_items(self, PySequence_Fast_GET_ITEM(f, 3), (Py_ssize_t)nclock, clock, "clock") < 0 ||
        str_items(self, PySequence_Fast_GET_ITEM(f, 4), BKT_TYPES, t->type_id, "types") < 0 ||
        str_items(self, PySequence_Fast_GET_ITEM(f, 5), BKT_TYPES, t->type_name, "names") < 0 ||
        int_items(PySequence_Fast_GET_ITEM(f, 7), BKT_RATES, 1000000, t->rates, "rates") < 0)
        goto bad;
    PyObject *dues = items(PySequence_Fast_GET_ITEM(f, 2), days, "dues");
    for (int d = 0; dues && d < days; d++)
        if (str_items(self, PySequence_Fast_GET_ITEM(dues, d), 2, due[d], "due") < 0)
            Py_CLEAR(dues);
    if (!dues) goto bad;
    Py_DECREF(dues);
    PyObject *charges = items(PySequence_Fast_GET_ITEM(f, 6), BKT_TIERS, "charges");
    for (int k = 0; charges && k < BKT_TIERS; k++)
        if (int_items(PySequence_Fast_GET_ITEM(charges, k), BKT_TYPES, 1000000,
                      t->charges[k], "charges") < 0)
            Py_CLEAR(charges);
    if (!charges) goto bad;
    Py_DECREF(charges);
    Py_DECREF(f);
    Py_DECREF(mine);
    return 0;
bad:
    Py_XDECREF(f);
    Py_XDECREF(mine);
    return -1;
}

#define MAX_QTY ((int64_t)1 << 31)   /* a lot's |quantity| and a position's |hs_qty| */
#define MAX_PRICE ((int64_t)1 << 31) /* a lot's price, in cents */

/* One position: [hs_qty, lots, symbol, exchange index x 4] */
static int take_position(BkTrades *self, PyObject *o, BktPos *p) {
    if (!PyList_Check(o) || PyList_GET_SIZE(o) != 4 || !PyList_Check(PyList_GET_ITEM(o, 1))) {
        PyErr_SetString(PyExc_TypeError, "a position is a list [hs_qty, lots, symbol, "
                                         "exchange x 4] (trades.new_position)");
        return -1;
    }
    int64_t off;
    if (int_in(PyList_GET_ITEM(o, 0), -MAX_QTY, MAX_QTY, &p->held, "hs_qty") < 0 ||
        copy_str(self, PyList_GET_ITEM(o, 2), &p->symb) < 0 ||
        int_in(PyList_GET_ITEM(o, 3), 0, 3 * BKT_QUANTITIES, &off, "exchange x 4") < 0)
        return -1;
    p->rate_off = (int)off;
    PyObject *lots = PyList_GET_ITEM(o, 1);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lots); i++) {
        PyObject *lot = items(PyList_GET_ITEM(lots, i), 4, "lot");
        int64_t id, qty, price;
        Py_ssize_t n = 0;
        const char *dts = NULL;
        if (lot && int_in(PySequence_Fast_GET_ITEM(lot, 0), 0, INT64_MAX, &id, "h_t_id") == 0 &&
            int_in(PySequence_Fast_GET_ITEM(lot, 1), -MAX_QTY, MAX_QTY, &qty, "h_qty") == 0 &&
            int_in(PySequence_Fast_GET_ITEM(lot, 2), 0, MAX_PRICE, &price, "h_price") == 0 &&
            PyUnicode_Check(PySequence_Fast_GET_ITEM(lot, 3)))
            dts = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(lot, 3), &n);
        if (dts && (size_t)n >= BKT_DTS) {
            PyErr_Format(PyExc_ValueError, "a lot's h_dts of %zd bytes", n);
            dts = NULL;
        }
        if (dts && bkt_push_lot(p, id, qty, price, dts, (size_t)n) < 0) {
            PyErr_NoMemory();
            dts = NULL;
        }
        Py_XDECREF(lot);
        if (!dts) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a lot's h_dts is a str");
            return -1;
        }
    }
    return 0;
}

/* One account: (ca_id, tier, tax status, tax rate, broker, executors' names, positions) */
static int take_account(BkTrades *self, PyObject *o, BktAccount *a, Py_ssize_t brokers) {
    PyObject *f = items(o, 7, "account"), *names = NULL, *positions = NULL;
    int64_t ca_id, tier, broker;
    if (!f || int_in(PySequence_Fast_GET_ITEM(f, 0), 0, INT64_MAX, &ca_id, "ca_id") < 0 ||
        int_in(PySequence_Fast_GET_ITEM(f, 1), 1, BKT_TIERS, &tier, "tier") < 0 ||
        int_in(PySequence_Fast_GET_ITEM(f, 2), 0, 2, &a->tax_st, "tax status") < 0 ||
        int_in(PySequence_Fast_GET_ITEM(f, 3), 0, 10000000, &a->tax_rate, "tax rate") < 0 ||
        int_in(PySequence_Fast_GET_ITEM(f, 4), 0, brokers - 1, &broker, "broker") < 0 ||
        !(names = items(PySequence_Fast_GET_ITEM(f, 5), -1, "names")) ||
        !(positions = items(PySequence_Fast_GET_ITEM(f, 6), -1, "positions")))
        goto bad;
    a->rate_base = (int)(tier - 1) * BKT_RATES_PER_TIER;
    a->charges = self->L.t.charges[tier - 1];
    a->broker = (Py_ssize_t)broker;
    a->nexec = (int)PySequence_Fast_GET_SIZE(names);
    a->npos = (int)PySequence_Fast_GET_SIZE(positions);
    if (a->nexec < 1 || a->nexec > 1000 || a->npos < 1 || a->npos > 100000) {
        PyErr_Format(PyExc_ValueError, "account %lld: %zd executors and %zd positions (1 or "
                     "more of each)", (long long)ca_id, PySequence_Fast_GET_SIZE(names),
                     PySequence_Fast_GET_SIZE(positions));
        goto bad;
    }
    if (!(a->execs = records(self, (size_t)a->nexec, sizeof *a->execs)) ||
        !(a->pos = records(self, (size_t)a->npos, sizeof *a->pos)))
        goto bad;
    for (int e = 0; e < a->nexec; e++) {
        PyObject *text = PyUnicode_FromFormat("%lld\t%U\t", (long long)ca_id,
                                              PySequence_Fast_GET_ITEM(names, e));
        int rc = text ? copy_str(self, text, &a->execs[e]) : -1;
        Py_XDECREF(text);
        if (rc < 0) goto bad;
    }
    for (int j = 0; j < a->npos; j++) {
        PyObject *p = PySequence_Fast_GET_ITEM(positions, j);
        if (self->npositions == self->cap_positions) { /* never: the GIL is held */
            PyErr_SetString(PyExc_RuntimeError, "the accounts changed while being read");
            goto bad;
        }
        if (take_position(self, p, &a->pos[j]) < 0) goto bad;
        Py_INCREF(p);
        self->positions[self->npositions++] = p;
    }
    Py_DECREF(f);
    Py_DECREF(names);
    Py_DECREF(positions);
    return 0;
bad:
    Py_XDECREF(f);
    Py_XDECREF(names);
    Py_XDECREF(positions);
    return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* The type                                                                                   */

static void release(BkTrades *self) {
    for (size_t i = 0; self->L.acc && i < self->L.nacc; i++) {
        BktAccount *a = &self->L.acc[i];
        for (int j = 0; a->pos && j < a->npos; j++) free(a->pos[j].lots);
        free(a->pos);
        free(a->execs);
    }
    free(self->L.acc);
    free((void *)self->L.t.prefix);
    free((void *)self->L.t.due);
    free((void *)self->L.t.clock);
    for (int k = 0; k < BKT_NTEXTS; k++) free(self->L.text[k].p);
    for (size_t i = 0; i < self->npositions; i++) Py_DECREF(self->positions[i]);
    free(self->positions);
    bkt_arena_free(&self->arena);
    Py_CLEAR(self->balances);
    Py_CLEAR(self->counts);
    Py_CLEAR(self->comms);
    memset(&self->L, 0, sizeof self->L);
    self->positions = NULL;
    self->npositions = self->cap_positions = 0;
    self->ready = self->done = 0;
}

static int busy(BkTrades *self) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the BrokerageTrades is in use by another thread");
        return -1;
    }
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "the BrokerageTrades is not initialised");
        return -1;
    }
    return 0;
}

static int take_state(BkTrades *self, PyObject *state) {
    PyObject *f = items(state, BKT_MT_N + 1, "the generator's state");
    if (!f) return -1;
    int64_t v;
    for (int i = 0; i <= BKT_MT_N; i++) {
        if (int_in(PySequence_Fast_GET_ITEM(f, i), 0, i < BKT_MT_N ? UINT32_MAX : BKT_MT_N, &v,
                   "a state word") < 0) {
            Py_DECREF(f);
            return -1;
        }
        if (i < BKT_MT_N) self->L.g.mt[i] = (uint32_t)v;
        else self->L.g.index = (int)v;
    }
    Py_DECREF(f);
    return 0;
}

static int BkTrades_init(BkTrades *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"state", "start", "stop", "days", "accounts", "balances", "tally",
                             "tables", NULL};
    PyObject *state, *accounts, *balances, *tally, *tables;
    long long start, stop;
    int days;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OLLiOO!OO", kwlist, &state, &start, &stop,
                                     &days, &accounts, &PyList_Type, &balances, &tally,
                                     &tables))
        return -1;
    if (self->busy) return busy(self);
    release(self);
    BktLoop *L = &self->L;
    PyObject *counts = NULL, *comms = NULL, *acc = NULL;
    if (days < 1 || days > 100000 || start < 0 || stop < start ||
        __builtin_mul_overflow((int64_t)days, (int64_t)BKT_TRADING_SECONDS, &L->span)) {
        PyErr_Format(PyExc_ValueError, "need 1 <= days <= 100000 and 0 <= start <= stop, not "
                     "%d days and ids %lld..%lld", days, start, stop);
        goto bad;
    }
    int64_t most;
    if (__builtin_mul_overflow(stop - start, L->span, &most)) {
        PyErr_SetString(PyExc_ValueError, "too many trade ids for the days");
        goto bad;
    }
    L->next = L->lo = start;
    L->stop = stop;
    PyObject *pair = items(tally, 2, "tally");
    if (!pair) goto bad;
    counts = PySequence_Fast_GET_ITEM(pair, 0);
    comms = PySequence_Fast_GET_ITEM(pair, 1);
    Py_INCREF(counts);
    Py_INCREF(comms);
    Py_DECREF(pair);
    if (!PyList_Check(counts) || !PyList_Check(comms) ||
        PyList_GET_SIZE(counts) != PyList_GET_SIZE(comms)) {
        PyErr_SetString(PyExc_ValueError, "the tally is two lists of one length (new_tally)");
        goto bad;
    }
    if (take_state(self, state) < 0 || take_tables(self, tables, days) < 0) goto bad;
    if (!(acc = PySequence_Fast(accounts, "accounts"))) goto bad;
    Py_ssize_t nacc = PySequence_Fast_GET_SIZE(acc);
    if (nacc != PyList_GET_SIZE(balances) || (nacc == 0 && stop > start)) {
        PyErr_Format(PyExc_ValueError, "%zd accounts and %zd balances (one each, 1 or more)",
                     nacc, PyList_GET_SIZE(balances));
        goto bad;
    }
    size_t npos = 0;
    L->nacc = (size_t)nacc;
    if (!(L->acc = records(self, L->nacc, sizeof *L->acc))) goto bad;
    for (Py_ssize_t i = 0; i < nacc; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(acc, i), *row = items(item, 7, "account");
        Py_ssize_t n = row ? PyObject_Length(PySequence_Fast_GET_ITEM(row, 6)) : -1;
        Py_XDECREF(row);
        if (n < 0) goto bad;
        npos += (size_t)n;
    }
    if (!(self->positions = records(self, npos, sizeof *self->positions)) && npos) goto bad;
    self->cap_positions = npos;
    for (Py_ssize_t i = 0; i < nacc; i++) {
        BktAccount *a = &L->acc[i];
        if (take_account(self, PySequence_Fast_GET_ITEM(acc, i), a,
                         PyList_GET_SIZE(counts)) < 0 ||
            int_in(PyList_GET_ITEM(balances, i), INT64_MIN / 2, INT64_MAX / 2, &a->balance,
                   "a balance") < 0)
            goto bad;
    }
    Py_DECREF(acc);
    Py_INCREF(balances);
    self->balances = balances;
    self->counts = counts;
    self->comms = comms;
    self->ready = 1;
    return 0;
bad:
    Py_XDECREF(acc);
    Py_XDECREF(counts);
    Py_XDECREF(comms);
    release(self);
    return -1;
}

static void BkTrades_dealloc(BkTrades *self) {
    release(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* list[i] += delta (Python ints): 0, or -1 */
static int add_to(PyObject *list, Py_ssize_t i, int64_t delta) {
    PyObject *d = PyLong_FromLongLong(delta), *sum;
    sum = d ? PyNumber_Add(PyList_GET_ITEM(list, i), d) : NULL;
    Py_XDECREF(d);
    return sum ? PyList_SetItem(list, i, sum) : -1;
}

/* The balances and the tally as Python's loop leaves them after the same trades */
static int write_totals(BkTrades *self) {
    for (size_t i = 0; i < self->L.nacc; i++) {
        BktAccount *a = &self->L.acc[i];
        if (PyList_GET_SIZE(self->balances) != (Py_ssize_t)self->L.nacc ||
            a->broker >= PyList_GET_SIZE(self->counts) ||
            a->broker >= PyList_GET_SIZE(self->comms)) {
            PyErr_SetString(PyExc_RuntimeError, "the balances or the tally changed length");
            return -1;
        }
        PyObject *bal = PyLong_FromLongLong(a->balance);
        if (!bal || PyList_SetItem(self->balances, (Py_ssize_t)i, bal) < 0) return -1;
        if (a->trades && (add_to(self->counts, a->broker, a->trades) < 0 ||
                          add_to(self->comms, a->broker, a->comm) < 0))
            return -1;
        a->trades = a->comm = 0;
    }
    return 0;
}

/* The positions' hs_qty and lots as Python's loop leaves them (each lots list refilled) */
static int write_positions(BkTrades *self) {
    size_t k = 0;
    for (size_t i = 0; i < self->L.nacc; i++) {
        BktAccount *a = &self->L.acc[i];
        for (int j = 0; j < a->npos; j++) {
            BktPos *p = &a->pos[j];
            PyObject *py = self->positions[k++], *held = PyLong_FromLongLong(p->held);
            if (!held || PyList_SetItem(py, 0, held) < 0) return -1;
            PyObject *lots = PyList_New((Py_ssize_t)p->n);
            for (size_t m = 0; lots && m < p->n; m++) {
                BktLot *lot = &p->lots[p->head + m];
                PyObject *row = Py_BuildValue("[LLLs#]", (long long)lot->t_id,
                                              (long long)lot->qty, (long long)lot->price,
                                              lot->dts, (Py_ssize_t)lot->dts_n);
                if (!row) Py_CLEAR(lots);
                else PyList_SET_ITEM(lots, (Py_ssize_t)m, row);
            }
            int rc = lots ? PyList_SetSlice(PyList_GET_ITEM(py, 1), 0, PY_SSIZE_T_MAX, lots) : -1;
            Py_XDECREF(lots);
            if (rc < 0) return -1;
        }
    }
    return 0;
}

/* (table, text, rows) */
static PyObject *piece(const char *table, const char *s, size_t n, int64_t rows) {
    return Py_BuildValue("(ss#L)", table, s, (Py_ssize_t)n, (long long)rows);
}

/* The batch's pieces, as trades.py's _trade_pieces yields them */
static PyObject *pieces(BktLoop *L) {
    PyObject *out = PyList_New(0);
    for (int k = 0; out && k < BKT_NTEXTS; k++) {
        BktBuf *b = &L->text[k];
        if (k == BKT_CASH && !L->rows[k]) continue;
        if (k != BKT_HOLDING_HISTORY) {
            PyObject *p = piece(BKT_TABLE_NAMES[k], b->p ? b->p : "", b->len, L->rows[k]);
            if (!p || PyList_Append(out, p) < 0) Py_CLEAR(out);
            Py_XDECREF(p);
            continue;
        }
        /* holding_history in pieces of BKT_PIECE_ROWS rows */
        size_t at = 0;
        while (out && at < b->len) {
            size_t end = at;
            int64_t rows = 0;
            while (rows < BKT_PIECE_ROWS && end < b->len) {
                const char *nl = memchr(b->p + end, '\n', b->len - end);
                end = nl ? (size_t)(nl - b->p) + 1 : b->len;
                rows++;
            }
            PyObject *p = piece(BKT_TABLE_NAMES[k], b->p + at, end - at, rows);
            if (!p || PyList_Append(out, p) < 0) Py_CLEAR(out);
            Py_XDECREF(p);
            at = end;
        }
    }
    return out;
}

static PyObject *BkTrades_batch(BkTrades *self, PyObject *unused) {
    if (busy(self) < 0) return NULL;
    if (self->done) Py_RETURN_NONE;
    int rc;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    rc = bkt_run(&self->L);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (rc < 0) {
        PyErr_SetString(strcmp(self->L.error, "out of memory") == 0 ? PyExc_MemoryError
                                                                    : PyExc_ValueError,
                        self->L.error);
        return NULL;
    }
    if (write_totals(self) < 0) return NULL;
    if (self->L.next >= self->L.stop) {
        if (write_positions(self) < 0) return NULL;
        self->done = 1;
    }
    if (!self->L.rows[BKT_TRADE]) Py_RETURN_NONE;
    return pieces(&self->L);
}

static PyObject *BkTrades_state(BkTrades *self, PyObject *unused) {
    if (busy(self) < 0) return NULL;
    PyObject *t = PyTuple_New(BKT_MT_N + 1);
    for (int i = 0; t && i <= BKT_MT_N; i++) {
        PyObject *v = PyLong_FromUnsignedLong(i < BKT_MT_N ? self->L.g.mt[i]
                                                           : (unsigned long)self->L.g.index);
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *BkTrades_constants(PyObject *cls, PyObject *unused) { return constants(); }

static PyMethodDef BkTrades_methods[] = {
    {"batch", (PyCFunction)BkTrades_batch, METH_NOARGS,
     "batch(): the next trades (up to TRADES_PER_PIECE loaded ones) as a list of (table, COPY "
     "text, rows) pieces, the balances and the tally updated; None when no trade is left. "
     "The batch that takes the last id also writes the positions back."},
    {"state", (PyCFunction)BkTrades_state, METH_NOARGS,
     "state(): the generator's state after the draws so far, as random.Random.getstate()[1]."},
    {"constants", (PyCFunction)BkTrades_constants, METH_NOARGS | METH_CLASS,
     "constants(): trades.py's constants as the C loop has them (trades.h)."},
    {NULL}};

PyTypeObject BkTradesType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.BrokerageTrades",
    .tp_doc = PyDoc_STR(
        "BrokerageTrades(state, start, stop, days, accounts, balances, tally, tables): the "
        "brokerage build's trades of the ids start..stop-1 as trades.python_trade_rows makes "
        "them, from the Mersenne Twister state random.Random.getstate()[1]."),
    .tp_basicsize = sizeof(BkTrades),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)BkTrades_init,
    .tp_dealloc = (destructor)BkTrades_dealloc,
    .tp_methods = BkTrades_methods,
};

int brokerage_trades_add(PyObject *m) {
    if (PyType_Ready(&BkTradesType) < 0) return -1;
    Py_INCREF(&BkTradesType);
    return module_add(m, "BrokerageTrades", (PyObject *)&BkTradesType);
}
