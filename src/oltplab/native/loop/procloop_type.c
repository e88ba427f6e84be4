/*
 * The Python type oltplab._native.ProcLoop around the loop of procloop.c: __init__ takes the
 * workload's name, the connections libpq opened and the users' terminals, run() releases the GIL for loop_run(), and
 * counts() and take_samples() hand over what the loop recorded.
 */
#include "procloop.h"

static int copy_states(PyObject *seq, char (*out)[6], int *n, const char *what) {
    PyObject *fast = PySequence_Fast(seq, "SQLSTATE lists must be sequences");
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > MAX_STATES) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "too many %s SQLSTATEs", what);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        if (!s || strlen(s) != 5) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "bad SQLSTATE in %s", what);
            return -1;
        }
        memcpy(out[i], s, 6);
    }
    *n = (int)len;
    Py_DECREF(fast);
    return 0;
}

/* Free what __init__ took, back to the state of a new object (a failed __init__ too). */
void loop_release(ProcLoop *self) {
    if (self->ready)
        for (int i = 0; i < self->n; i++) {
            self->wl->hold(self->users[i].term, -1);
            if (self->tp->detach) self->tp->detach(PyList_GET_ITEM(self->conns, i));
        }
    self->ready = 0;
    if (self->epfd >= 0) close(self->epfd);
    if (self->stopfd >= 0) close(self->stopfd);
    self->epfd = self->stopfd = -1;
    for (int i = 0; self->users && i < self->n; i++) self->tp->forget(self, &self->users[i], 1);
    PyMem_Free(self->users);
    self->users = NULL;
    self->n = 0;
    PyMem_Free(self->flush_sql);
    self->flush_sql = NULL;
    PyMem_Free(self->lost);
    self->lost = NULL;
    self->nlost = 0;
    for (int k = 0; k < MAX_KINDS; k++) {
        PyMem_Free(self->samples[k]);
        self->samples[k] = NULL;
        self->nsamples[k] = 0;
    }
    for (int b = 0; b < 2; b++) {
        PyMem_Free(self->cross_ns[b]);
        self->cross_ns[b] = NULL;
        self->ncross_ns[b] = 0;
    }
    Py_CLEAR(self->terms);
    Py_CLEAR(self->conns);
}

/* The workload named ``name`` runs on the loop; -1 with ValueError when none is. */
int loop_workload(ProcLoop *self, const char *name) {
    const Workload *wl = workload_named(name);
    if (!wl) return -1;
    self->wl = wl;
    return 0;
}

/* Take the connection ``conn`` (``ptr``: its pointer, for libpq) for user ``i`` and watch its
 * socket; -1 with an exception, the user as it was. */
static int take_connection(ProcLoop *self, Py_ssize_t i, PyObject *conn, PyObject *ptr) {
    User *u = &self->users[i];
    void *was = u->conn;
    int fd = u->fd;
    if (self->tp->attach(self, u, conn, ptr) < 0) return -1;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (u->fd < 0 || epoll_ctl(self->epfd, EPOLL_CTL_ADD, u->fd, &ev) < 0) {
        if (self->tp->detach) self->tp->detach(conn);
        u->conn = was;
        u->fd = fd;
        PyErr_Format(PyExc_OSError, "the connection of user %zd has no usable socket", i);
        return -1;
    }
    u->events = EPOLLIN;
    return 0;
}

/* What every loop's __init__ shares, once the transport's own arguments are taken (the
 * transport's fields of self are set): the users, their terminals and connections (``ptrs``:
 * one pointer each, or NULL), the buffers, epoll. -1 with an exception, self released. */
int loop_setup(ProcLoop *self, const Transport *tp, PyObject *conns, PyObject *ptrs,
               PyObject *terms, long long ramp_end, long long stop_at, int waits,
               int max_retries, int max_errors, Py_ssize_t bulk, int resilient) {
    self->tp = tp;
    PyObject *tl = PySequence_List(terms), *cl = PySequence_List(conns);
    PyObject *pl = ptrs ? PySequence_List(ptrs) : NULL;
    if (!tl || !cl || (ptrs && !pl)) goto bad;
    Py_ssize_t n = PyList_GET_SIZE(tl);
    if (n < 1 || PyList_GET_SIZE(cl) != n || (pl && PyList_GET_SIZE(pl) != n)) {
        PyErr_SetString(PyExc_ValueError,
                        "need one connection (libpq: and one pointer) per terminal, at least one");
        goto bad;
    }
    if (n >= INT32_MAX || bulk < 1 || bulk > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "bulk must be at least 1, and the users fewer");
        goto bad;
    }
    self->n = (int)n;
    self->users = PyMem_Calloc(n, sizeof(User));
    self->bulk = bulk;
    int rows = workload_rows(self->wl); /* the kinds, and the unit's row when it has one */
    for (int k = 0; k < rows; k++) self->samples[k] = PyMem_Malloc(sizeof(int64_t) * bulk);
    self->cross_ns[0] = PyMem_Malloc(sizeof(int64_t) * n);
    self->cross_ns[1] = PyMem_Malloc(sizeof(int64_t) * n);
    self->lost = PyMem_Malloc(sizeof(int) * n);
    if (!self->users || !self->cross_ns[0] || !self->cross_ns[1] || !self->lost) {
        PyErr_NoMemory();
        goto bad;
    }
    for (int k = 0; k < rows; k++)
        if (!self->samples[k]) {
            PyErr_NoMemory();
            goto bad;
        }
    self->epfd = epoll_create1(EPOLL_CLOEXEC);
    self->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (self->epfd < 0 || self->stopfd < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto bad;
    }
    int64_t t = now_ns();
    for (Py_ssize_t i = 0; i < n; i++) {
        User *u = &self->users[i];
        PyObject *term = PyList_GET_ITEM(tl, i);
        if (self->wl->accept(term) < 0) goto bad;
        u->term = term;
        u->fd = -1;
    }
    Py_ssize_t attached = 0; /* connections the transport holds: released on failure */
    for (; attached < n; attached++) {
        User *u = &self->users[attached];
        if (take_connection(self, attached, PyList_GET_ITEM(cl, attached),
                            pl ? PyList_GET_ITEM(pl, attached) : NULL) < 0)
            goto detach;
        u->state = S_READY;
        u->next = ramp_end;
        u->last_end = t;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)n};
    if (epoll_ctl(self->epfd, EPOLL_CTL_ADD, self->stopfd, &ev) < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto detach;
    }
    self->terms = tl;
    self->conns = cl; /* the loop's own list of the connection objects: replace() swaps one */
    Py_XDECREF(pl);
    self->ramp_end = ramp_end;
    self->stop_at = stop_at;
    self->waits = waits;
    self->max_retries = max_retries;
    self->max_errors = max_errors;
    self->resilient = resilient;
    for (Py_ssize_t i = 0; i < n; i++) self->wl->hold(self->users[i].term, 1);
    self->ready = 1;
    return 0;
detach:
    for (Py_ssize_t i = 0; tp->detach && i < attached; i++) tp->detach(PyList_GET_ITEM(cl, i));
bad:
    Py_XDECREF(tl);
    Py_XDECREF(cl);
    Py_XDECREF(pl);
    loop_release(self);
    return -1;
}

static int ProcLoop_init(ProcLoop *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"workload", "libpq", "connections", "pointers", "terminals", "names",
                             "flush_sql", "ramp_end_ns", "measure_end_ns", "waits",
                             "flush_stats", "idle_published_after_ns",
                             "max_retries", "max_consecutive_errors", "retryable", "fatal",
                             "bulk", "sql", "resilient", NULL};
    const char *workload, *libpq, *flush_sql;
    PyObject *conns, *ptrs, *terms, *names, *retryable, *fatal;
    long long ramp_end, stop_at, idle;
    int waits, flush_stats, max_retries, max_errors, sql = 0, resilient = 0;
    Py_ssize_t bulk;
    if (self->ready || self->running) {
        PyErr_SetString(PyExc_RuntimeError, "a ProcLoop is initialised once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssOOOOsLLppLiiOOn|pp", kwlist, &workload,
                                     &libpq, &conns,
                                     &ptrs, &terms, &names, &flush_sql, &ramp_end, &stop_at,
                                     &waits, &flush_stats, &idle, &max_retries,
                                     &max_errors, &retryable, &fatal, &bulk, &sql,
                                     &resilient))
        return -1;
    if (loop_workload(self, workload) < 0 || load_libpq(libpq) < 0) return -1;
    if (sql && !self->wl->pq_sql) {
        PyErr_Format(PyExc_ValueError, "the workload %s has no --mode sql", workload);
        return -1;
    }
    if (sql && !pq_has_pipeline()) {
        PyErr_SetString(PyExc_RuntimeError, "--mode sql needs libpq 14 or later (pipeline mode)");
        return -1;
    }
    if (copy_states(retryable, self->retryable, &self->nretryable, "retryable") < 0 ||
        copy_states(fatal, self->fatal, &self->nfatal, "fatal") < 0)
        return -1;
    PyObject *nl = PySequence_Fast(names, "names must be a sequence");
    if (!nl) return -1;
    if (PySequence_Fast_GET_SIZE(nl) != self->wl->nkinds) {
        Py_DECREF(nl);
        PyErr_Format(PyExc_ValueError, "need one name per transaction kind (%d)",
                     self->wl->nkinds);
        return -1;
    }
    for (int k = 0; k < self->wl->nkinds; k++) {
        const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(nl, k));
        if (!s) {
            Py_DECREF(nl);
            return -1;
        }
        snprintf(self->names[k], sizeof self->names[k], "%s", s);
    }
    Py_DECREF(nl);
    self->flush_sql = PyMem_Malloc(strlen(flush_sql) + 1);
    if (!self->flush_sql) {
        PyErr_NoMemory();
        return -1;
    }
    strcpy(self->flush_sql, flush_sql);
    self->flush_stats = flush_stats;
    self->idle_published_after = idle;
    self->sql_mode = sql;
    return loop_setup(self, &PQ_TRANSPORT, conns, ptrs, terms, ramp_end, stop_at, waits,
                      max_retries, max_errors, bulk, resilient);
}

static PyObject *ProcLoop_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    ProcLoop *self = (ProcLoop *)type->tp_alloc(type, 0);
    if (self) self->epfd = self->stopfd = -1;
    return (PyObject *)self;
}

static void ProcLoop_dealloc(ProcLoop *self) {
    if (self->tp) loop_release(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A ProcLoop made by __new__ alone, or whose __init__ failed, has nothing to drive. */
static int check_ready(ProcLoop *self) {
    if (self->ready) return 0;
    PyErr_SetString(PyExc_RuntimeError, "the ProcLoop is not initialised");
    return -1;
}

static PyObject *ProcLoop_run(ProcLoop *self, PyObject *unused) {
    if (check_ready(self) < 0) return NULL;
    if (__atomic_exchange_n(&self->running, 1, __ATOMIC_ACQ_REL)) {
        PyErr_SetString(PyExc_RuntimeError, "the ProcLoop is running already");
        return NULL;
    }
    int ev;
    Py_BEGIN_ALLOW_THREADS
    ev = loop_run(self);
    Py_END_ALLOW_THREADS
    __atomic_store_n(&self->running, 0, __ATOMIC_RELEASE);
    return PyLong_FromLong(ev);
}

static PyObject *ProcLoop_stop(ProcLoop *self, PyObject *unused) {
    uint64_t one = 1;
    if (check_ready(self) < 0) return NULL;
    __atomic_store_n(&self->stopping, 1, __ATOMIC_RELEASE);
    if (write(self->stopfd, &one, sizeof one) < 0 && errno != EAGAIN)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

static PyObject *ProcLoop_wake(ProcLoop *self, PyObject *unused) {
    uint64_t one = 1;
    if (check_ready(self) < 0) return NULL;
    if (write(self->stopfd, &one, sizeof one) < 0 && errno != EAGAIN)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

static PyObject *ProcLoop_go(ProcLoop *self, PyObject *unused) {
    uint64_t one = 1;
    if (check_ready(self) < 0) return NULL;
    __atomic_store_n(&self->go, 1, __ATOMIC_RELEASE);
    if (write(self->stopfd, &one, sizeof one) < 0 && errno != EAGAIN)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

static int check_idle(ProcLoop *self) {
    if (check_ready(self) < 0) return -1;
    if (__atomic_load_n(&self->running, __ATOMIC_ACQUIRE)) {
        PyErr_SetString(PyExc_RuntimeError, "the ProcLoop is running");
        return -1;
    }
    return 0;
}

static PyObject *ProcLoop_close(ProcLoop *self, PyObject *unused) {
    if (check_idle(self) < 0) return NULL;
    loop_release(self);
    Py_RETURN_NONE;
}

static PyObject *ProcLoop_hold(ProcLoop *self, PyObject *unused) {
    if (check_idle(self) < 0) return NULL;
    self->hold_ramp = 1;
    Py_RETURN_NONE;
}

static PyObject *ProcLoop_take_lost(ProcLoop *self, PyObject *unused) {
    if (check_idle(self) < 0) return NULL;
    PyObject *t = PyTuple_New(self->nlost);
    if (!t) return NULL;
    for (int i = 0; i < self->nlost; i++) {
        PyObject *x = PyLong_FromLong(self->lost[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    self->nlost = 0;
    return t;
}

/* replace(index, connection[, pointer]): a lost user's new connection (opened and prepared
 * as the first); it starts a new cycle at the next run(). */
static PyObject *ProcLoop_replace(ProcLoop *self, PyObject *args) {
    Py_ssize_t index;
    PyObject *conn, *ptr = NULL;
    if (check_idle(self) < 0 || !PyArg_ParseTuple(args, "nO|O", &index, &conn, &ptr))
        return NULL;
    if (index < 0 || index >= self->n) {
        PyErr_Format(PyExc_IndexError, "no user %zd", index);
        return NULL;
    }
    User *u = &self->users[index];
    if (u->state != S_LOST) {
        PyErr_Format(PyExc_ValueError, "user %zd is not lost", index);
        return NULL;
    }
    if (take_connection(self, index, conn, ptr) < 0) return NULL;
    if (self->tp->detach) self->tp->detach(PyList_GET_ITEM(self->conns, index));
    Py_INCREF(conn);
    PyList_SetItem(self->conns, index, conn); /* in range: the list has n items */
    u->inflight = u->pending = u->errors = 0;
    u->last_end = now_ns();
    u->state = S_RESUME;
    Py_RETURN_NONE;
}

static PyObject *ints(const int64_t *v, Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *ProcLoop_take_samples(ProcLoop *self, PyObject *unused) {
    if (check_ready(self) < 0) return NULL;
    if (__atomic_load_n(&self->running, __ATOMIC_ACQUIRE)) {
        PyErr_SetString(PyExc_RuntimeError, "the ProcLoop is running");
        return NULL;
    }
    int rows = workload_rows(self->wl);
    PyObject *out = PyTuple_New(rows);
    if (!out) return NULL;
    for (int k = 0; k < rows; k++) {
        PyObject *b = PyBytes_FromStringAndSize((const char *)self->samples[k],
                                                self->nsamples[k] * (Py_ssize_t)sizeof(int64_t));
        if (!b) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, k, b);
        self->nsamples[k] = 0;
    }
    return out;
}

static PyObject *ProcLoop_counts(ProcLoop *self, PyObject *unused) {
    if (check_ready(self) < 0) return NULL;
    if (__atomic_load_n(&self->running, __ATOMIC_ACQUIRE)) {
        PyErr_SetString(PyExc_RuntimeError, "the ProcLoop is running");
        return NULL;
    }
    PyObject *inputs = PyDict_New();
    for (int i = 0; inputs && i < self->wl->ninputs; i++) {
        PyObject *v = PyLong_FromLongLong(self->inputs[i]);
        if (!v || PyDict_SetItemString(inputs, self->wl->input_keys[i], v) < 0) Py_CLEAR(inputs);
        Py_XDECREF(v);
    }
    if (!inputs) return NULL;
    int nk = workload_rows(self->wl);
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:L,s:L,s:L,s:N,s:N}", "committed",
                         ints(self->committed, nk), "rolled_back", ints(self->rolled_back, nk),
                         "errors", ints(self->errors, nk), "retries", ints(self->retries, nk),
                         "total_us", ints(self->total_us, nk), "completed",
                         (long long)self->completed, "headline", (long long)self->headline,
                         "lost", (long long)self->lost_total,
                         "cross_ns",
                         Py_BuildValue("(NN)", ints(self->cross_ns[0], self->ncross_ns[0]),
                                       ints(self->cross_ns[1], self->ncross_ns[1])),
                         "inputs", inputs);
}

static PyObject *ProcLoop_get_completed(ProcLoop *self, void *c) {
    return PyLong_FromLongLong(__atomic_load_n(&self->completed, __ATOMIC_RELAXED));
}

static PyObject *ProcLoop_get_headline(ProcLoop *self, void *c) {
    return PyLong_FromLongLong(__atomic_load_n(&self->headline, __ATOMIC_RELAXED));
}

static PyObject *ProcLoop_get_error(ProcLoop *self, void *c) {
    if (!self->failed) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(self->error, strlen(self->error), "replace");
}

static PyObject *ProcLoop_get_crossed(ProcLoop *self, void *c) {
    return Py_BuildValue("(ii)", self->crossed[0], self->crossed[1]);
}

static PyMethodDef ProcLoop_methods[] = {
    {"run", (PyCFunction)ProcLoop_run, METH_NOARGS,
     "Drive the users without the GIL until the next event (BOUNDARY, FINISHED, SAMPLES, "
     "FAILED, STOPPED, WOKEN after go() or wake(), or with resilient=True LOST); call it "
     "from one thread at a time."},
    {"stop", (PyCFunction)ProcLoop_stop, METH_NOARGS,
     "Make run() return STOPPED soon; safe from any thread."},
    {"wake", (PyCFunction)ProcLoop_wake, METH_NOARGS,
     "Make run() return WOKEN soon (to hand over new connections); safe from any thread."},
    {"hold", (PyCFunction)ProcLoop_hold, METH_NOARGS,
     "From now on a user that crosses ramp_end waits there until go(); call it between "
     "runs."},
    {"go", (PyCFunction)ProcLoop_go, METH_NOARGS,
     "Let the users held at ramp_end go on, and any that cross later pass; run() returns "
     "WOKEN soon (call it again); safe from any thread."},
    {"close", (PyCFunction)ProcLoop_close, METH_NOARGS,
     "Let the connections and terminals go; the loop cannot be used again."},
    {"take_lost", (PyCFunction)ProcLoop_take_lost, METH_NOARGS,
     "The users lost since the last call (resilient mode), as a tuple of indexes."},
    {"replace", (PyCFunction)ProcLoop_replace, METH_VARARGS,
     "replace(index, connection, pointer): a lost user's new connection; the user starts a "
     "new cycle at the next run()."},
    {"take_samples", (PyCFunction)ProcLoop_take_samples, METH_NOARGS,
     "The response times (us, native int64) held per type (and then the unit's, for a "
     "workload that has one), and empty the buffers."},
    {"counts", (PyCFunction)ProcLoop_counts, METH_NOARGS,
     "The counts of the measured window (per type, and then the unit's for a workload that "
     "has one), the flush times at each boundary, and 'inputs': the input counts of the "
     "window's completed transactions, by the workload's keys."},
    {NULL}};

/* (units, their response times' sum in us, rolled back, the worst of the last LIVE_RECENT
 * in us): the units begun in the window so far, read while the loop runs. */
static PyObject *ProcLoop_get_live(ProcLoop *self, void *c) {
    int64_t units = __atomic_load_n(&self->live_units, __ATOMIC_ACQUIRE);
    int64_t sum = __atomic_load_n(&self->live_unit_us, __ATOMIC_RELAXED);
    int64_t rolled = __atomic_load_n(&self->live_rolled_back, __ATOMIC_RELAXED);
    int64_t next = __atomic_load_n(&self->live_next, __ATOMIC_ACQUIRE), worst = 0;
    int64_t n = next < LIVE_RECENT ? next : LIVE_RECENT;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = __atomic_load_n(&self->live_recent[i], __ATOMIC_RELAXED);
        if (v > worst) worst = v;
    }
    return Py_BuildValue("(LLLL)", (long long)units, (long long)sum, (long long)rolled,
                         (long long)worst);
}

static PyGetSetDef ProcLoop_getset[] = {
    {"completed", (getter)ProcLoop_get_completed, NULL, "Transactions completed, every phase.",
     NULL},
    {"headline", (getter)ProcLoop_get_headline, NULL,
     "Units of the workload's headline figure completed, every phase.", NULL},
    {"error", (getter)ProcLoop_get_error, NULL, "Why the loop failed, or None.", NULL},
    {"crossed", (getter)ProcLoop_get_crossed, NULL, "Users past each boundary.", NULL},
    {"live", (getter)ProcLoop_get_live, NULL,
     "(units, their response times' sum in us, rolled back, the worst of the last 100 in us) "
     "of the units begun in the window so far, while the loop runs.", NULL},
    {NULL}};

PyTypeObject ProcLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.ProcLoop",
    .tp_doc = PyDoc_STR("The users of one worker, either mode, driven from C."),
    .tp_basicsize = sizeof(ProcLoop),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, /* MariaDBLoop: the same loop */
    .tp_new = ProcLoop_new,
    .tp_init = (initproc)ProcLoop_init,
    .tp_dealloc = (destructor)ProcLoop_dealloc,
    .tp_methods = ProcLoop_methods,
    .tp_getset = ProcLoop_getset,
};
