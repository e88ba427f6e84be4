/*
 * BrokerageMarket: the market emulator (market.c, market.h) as a Python type, driven with a
 * clock of the caller's by the tests and bench/brokerage_market.py.
 */
#include "market.h"
#include "workload.h" /* module_add */

/* ------------------------------------------------------------------------------------------ */
/* The Python type: the emulator driven from Python with the caller's clock                   */

static int ready(BrokerageMarket *self) {
    if (self->ready && !self->driven) return 0;
    PyErr_SetString(PyExc_RuntimeError, self->ready ? "the BrokerageMarket is driven by a loop"
                                                    : "the BrokerageMarket is not initialised");
    return -1;
}

/* A market_ answer as Python's: 0, or -1 with OverflowError (a store at its cap) or
 * ValueError (an input out of range). */
static int raise_for(BrokerageMarket *self, int rc) {
    if (rc == MARKET_OK) return 0;
    PyErr_SetString(rc == MARKET_FULL ? PyExc_OverflowError : PyExc_ValueError,
                    self->m.error);
    return -1;
}

static int BrokerageMarket_init(BrokerageMarket *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"seed", "securities", "capacity", "max_entries", NULL};
    unsigned long long seed;
    long long securities, capacity = 64, max_entries = 1 << 20;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KL|LL", kwlist, &seed, &securities, &capacity,
                                     &max_entries))
        return -1;
    if (securities < 1 || securities > MARKET_MAX_SECURITIES) {
        PyErr_Format(PyExc_ValueError, "securities must be within 1..%d, not %lld",
                     MARKET_MAX_SECURITIES, securities);
        return -1;
    }
    if (capacity < 1 || max_entries < capacity || max_entries > MARKET_MAX_ENTRIES) {
        PyErr_Format(PyExc_ValueError, "need 1 <= capacity <= max_entries <= 2^32, not %lld "
                     "and %lld", capacity, max_entries);
        return -1;
    }
    Market fresh;
    if (market_init(&fresh, seed, (int32_t)securities, (size_t)capacity,
                    (size_t)max_entries) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (self->driven) {
        market_free(&fresh);
        return ready(self);
    }
    market_free(&self->m);
    self->m = fresh;
    self->ready = 1;
    self->origin = now_ns();
    return 0;
}

static void BrokerageMarket_dealloc(BrokerageMarket *self) {
    market_free(&self->m);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The trade type's index from its id ("TMB" ...): 0.., or -1 with ValueError. */
static int type_index(const char *id) {
    for (int i = 0; i < MARKET_NTYPES; i++)
        if (strcmp(id, MARKET_TYPE_IDS[i]) == 0) return i;
    PyErr_Format(PyExc_ValueError, "no trade type %s (TMB, TMS, TSL, TLS, TLB)", id);
    return -1;
}

#define SYMBOL_BYTES 16 /* a symbol and its NUL */

/* 0, or 1 with ValueError: v does not fit a market_ field (int32_t) */
static int beyond_32_bits(long long v) {
    if (v >= INT32_MIN && v <= INT32_MAX) return 0;
    PyErr_Format(PyExc_ValueError, "%lld: a quantity or price beyond 32 bits", v);
    return 1;
}

/* A security and a clock from Python: 0, or -1 with ValueError. */
static int security_and_clock(BrokerageMarket *self, long long security, long long t) {
    if (security < 0 || security >= self->m.securities) {
        PyErr_Format(PyExc_ValueError, "security %lld is not within 0..%d", security,
                     self->m.securities - 1);
        return -1;
    }
    if (t < 0 || t > MARKET_MAX_CLOCK_NS) {
        PyErr_Format(PyExc_ValueError, "the clock %lld ns is not within 0..2^62", t);
        return -1;
    }
    return 0;
}

static PyObject *BrokerageMarket_price(BrokerageMarket *self, PyObject *args) {
    long long security, t;
    if (ready(self) < 0 || !PyArg_ParseTuple(args, "LL", &security, &t) ||
        security_and_clock(self, security, t) < 0)
        return NULL;
    return PyLong_FromLong(market_price((int32_t)security, t));
}

static PyObject *BrokerageMarket_symbol(BrokerageMarket *self, PyObject *arg) {
    if (ready(self) < 0) return NULL;
    long long security = PyLong_AsLongLong(arg);
    if (security == -1 && PyErr_Occurred()) return NULL;
    if (security_and_clock(self, security, 0) < 0) return NULL;
    char buf[SYMBOL_BYTES];
    int n = market_symbol((int32_t)security, buf, sizeof buf);
    if (n < 0) { /* never: MARKET_MAX_SECURITIES fit */
        PyErr_SetString(PyExc_OverflowError, "the symbol does not fit its buffer");
        return NULL;
    }
    return PyUnicode_FromStringAndSize(buf, n);
}

static PyObject *BrokerageMarket_security(BrokerageMarket *self, PyObject *arg) {
    if (ready(self) < 0) return NULL;
    const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!s) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a symbol is a str");
        return NULL;
    }
    int64_t security = market_security(s);
    if (security < 0 || security >= self->m.securities) {
        PyErr_Format(PyExc_ValueError, "%R is none of the %d securities' symbols", arg,
                     self->m.securities);
        return NULL;
    }
    return PyLong_FromLongLong(security);
}

static PyObject *BrokerageMarket_trigger_at(BrokerageMarket *self, PyObject *args) {
    const char *type_id;
    long long limit, security, now;
    if (ready(self) < 0 || !PyArg_ParseTuple(args, "sLLL", &type_id, &limit, &security, &now) ||
        security_and_clock(self, security, now) < 0)
        return NULL;
    int type = type_index(type_id);
    if (type < 0) return NULL;
    if (type == MARKET_TMB || type == MARKET_TMS || limit < 1 || limit > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "a limit order (TSL, TLS, TLB) at 1 cent or more");
        return NULL;
    }
    int64_t at = market_trigger_at(type, (int32_t)limit, (int32_t)security, now);
    return at < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(at);
}

static PyObject *BrokerageMarket_submit(BrokerageMarket *self, PyObject *args) {
    long long trade_id, security, qty, price, now;
    const char *type_id;
    if (ready(self) < 0 ||
        !PyArg_ParseTuple(args, "LLsLLL", &trade_id, &security, &type_id, &qty, &price, &now))
        return NULL;
    int type = type_index(type_id);
    if (type < 0 || beyond_32_bits(security) || beyond_32_bits(qty) || beyond_32_bits(price))
        return NULL; /* market_submit checks the rest */
    int64_t due;
    if (raise_for(self, market_submit(&self->m, trade_id, (int32_t)security, type,
                                      (int32_t)qty, (int32_t)price, now, &due)) < 0)
        return NULL;
    return due < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(due);
}

static PyObject *BrokerageMarket_result_done(BrokerageMarket *self, PyObject *args) {
    long long security, price, qty, now;
    if (ready(self) < 0 || !PyArg_ParseTuple(args, "LLLL", &security, &price, &qty, &now) ||
        beyond_32_bits(security) || beyond_32_bits(qty) || beyond_32_bits(price))
        return NULL; /* market_result_done checks the rest */
    market_result_t r = {.security = (int32_t)security, .price = (int32_t)price,
                         .qty = (int32_t)qty};
    if (raise_for(self, market_result_done(&self->m, &r, now)) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *work_object(const market_work_t *w) {
    if (w->kind == MARKET_RESULT) {
        const market_result_t *r = &w->result;
        return Py_BuildValue("(sLiiiL)", "trade_result", (long long)r->trade_id, r->security,
                             r->price, r->qty, (long long)r->due);
    }
    if (w->kind != MARKET_FEED) return Py_NewRef(Py_None);
    PyObject *ticks = PyTuple_New(MARKET_FEED_BATCH);
    for (int i = 0; ticks && i < MARKET_FEED_BATCH; i++) {
        const market_tick_t *t = &w->feed[i];
        PyObject *v = Py_BuildValue("(iiiO)", t->security, t->price, t->qty,
                                    t->trigger ? Py_True : Py_False);
        if (!v) Py_CLEAR(ticks);
        else PyTuple_SET_ITEM(ticks, i, v);
    }
    return ticks ? Py_BuildValue("(sN)", "market_feed", ticks) : NULL;
}

static PyObject *BrokerageMarket_next_due(BrokerageMarket *self, PyObject *arg) {
    if (ready(self) < 0) return NULL;
    long long now = PyLong_AsLongLong(arg);
    if (now == -1 && PyErr_Occurred()) return NULL;
    if (now < 0 || now > MARKET_MAX_CLOCK_NS) {
        PyErr_Format(PyExc_ValueError, "the clock %lld ns is not within 0..2^62", now);
        return NULL;
    }
    market_work_t w;
    int64_t next;
    market_next(&self->m, now, &w, &next);
    PyObject *nx = next == INT64_MAX ? Py_NewRef(Py_None) : PyLong_FromLongLong(next);
    return nx ? Py_BuildValue("(NN)", work_object(&w), nx) : NULL;
}

static PyObject *BrokerageMarket_pending(BrokerageMarket *self, PyObject *unused) {
    if (ready(self) < 0) return NULL;
    const Market *m = &self->m;
    return Py_BuildValue("{s:L,s:n,s:n,s:n,s:L,s:n,s:n}", "limit_orders",
                         (long long)market_pending_limits(m), "waiting",
                         (Py_ssize_t)m->heap_triggers, "queued", (Py_ssize_t)m->triggers.n,
                         "on_tape", (Py_ssize_t)m->tape_triggers, "never",
                         (long long)m->counts.never, "results",
                         (Py_ssize_t)(m->heap_n - m->heap_triggers), "tape",
                         (Py_ssize_t)m->tape.n);
}

static PyObject *BrokerageMarket_counts(BrokerageMarket *self, PyObject *unused) {
    if (ready(self) < 0) return NULL;
    const market_counts_t *c = &self->m.counts;
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "market", c->market,
                         "limit", c->limit, "triggered", c->triggered, "results", c->results,
                         "results_done", c->results_done, "feeds", c->feeds,
                         "padded_triggers", c->padded_triggers, "padded_random",
                         c->padded_random, "never", c->never);
}

static PyObject *BrokerageMarket_capacity(BrokerageMarket *self, PyObject *unused) {
    if (ready(self) < 0) return NULL;
    const Market *m = &self->m;
    return Py_BuildValue("{s:n,s:n,s:n,s:n}", "heap", (Py_ssize_t)m->heap_cap, "triggers",
                         (Py_ssize_t)m->triggers.cap, "tape", (Py_ssize_t)m->tape.cap,
                         "max_entries", (Py_ssize_t)m->max_entries);
}

static PyMethodDef BrokerageMarket_methods[] = {
    {"price", (PyCFunction)BrokerageMarket_price, METH_VARARGS,
     "price(security, t_ns): the curve's price of the security (0-based) at t, in cents."},
    {"symbol", (PyCFunction)BrokerageMarket_symbol, METH_O,
     "symbol(security): its s_symb, as reference.symbol writes it."},
    {"security", (PyCFunction)BrokerageMarket_security, METH_O,
     "security(symbol): the security (0-based) of a symbol; ValueError when none is."},
    {"trigger_at", (PyCFunction)BrokerageMarket_trigger_at, METH_VARARGS,
     "trigger_at(type_id, limit_cents, security, now_ns): when a limit order (TSL, TLS, TLB) "
     "triggers: now when in the money, else when the curve next reaches the limit; None: "
     "never."},
    {"submit", (PyCFunction)BrokerageMarket_submit, METH_VARARGS,
     "submit(trade_id, security, type_id, qty, price_cents, now_ns): a trade to the market; "
     "its Trade-Result's time (TMB, TMS) or its trigger's (TSL, TLS, TLB; None: never). "
     "OverflowError at the cap, ValueError for an input out of range; nothing changes then."},
    {"result_done", (PyCFunction)BrokerageMarket_result_done, METH_VARARGS,
     "result_done(security, price_cents, qty, now_ns): a Trade-Result completed: its ticker "
     "entry and a padding entry go on the tape."},
    {"next_due", (PyCFunction)BrokerageMarket_next_due, METH_O,
     "next_due(now_ns): (work, next_ns): work is None, ('trade_result', trade_id, security, "
     "price_cents, qty, due_ns) or ('market_feed', 20 x (security, price_cents, qty, "
     "is_trigger)); next_ns: when more may be due (None: nothing waits)."},
    {"pending", (PyCFunction)BrokerageMarket_pending, METH_NOARGS,
     "What waits: limit_orders (waiting + queued + on_tape + never), results, tape."},
    {"counts", (PyCFunction)BrokerageMarket_counts, METH_NOARGS,
     "What went through: submissions, triggers, results, feeds, paddings."},
    {"capacity", (PyCFunction)BrokerageMarket_capacity, METH_NOARGS,
     "Each store's capacity now, and their cap (max_entries)."},
    {NULL}};

PyTypeObject BrokerageMarketType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.BrokerageMarket",
    .tp_doc = PyDoc_STR(
        "BrokerageMarket(seed, securities, capacity=64, max_entries=2**20): the brokerage's "
        "market emulator on a clock of the caller's (ns since the run's start): market "
        "orders to Trade-Results after NegExp(1 s) capped at 5 s, limit orders to triggers "
        "on each security's price wave, Market-Feed batches of 20 ticker entries."),
    .tp_basicsize = sizeof(BrokerageMarket),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)BrokerageMarket_init,
    .tp_dealloc = (destructor)BrokerageMarket_dealloc,
    .tp_methods = BrokerageMarket_methods,
};

int brokerage_market_add(PyObject *m) {
    if (PyType_Ready(&BrokerageMarketType) < 0) return -1;
    Py_INCREF(&BrokerageMarketType);
    return module_add(m, "BrokerageMarket", (PyObject *)&BrokerageMarketType);
}
