/*
 * ProcLoop: every user of one worker process on one thread, with the GIL released. Each
 *   user owns a libpq connection (opened and prepared in Python by psycopg); the loop drives
 *   them with libpq's asynchronous calls over epoll: in procedures mode one call of a
 *   PL/pgSQL function per transaction, in --mode sql the type's statements as a few
 *   pipelined round trips (sqlloop.c). The client's cost per round trip then is what libpq
 *   and the kernel take, as for pgbench, with no interpreter work per transaction. libpq is
 *   the very library psycopg loaded (the caller passes its path; it is opened with
 *   RTLD_NOLOAD), so the connections' objects are shared, TLS and all.
 *
 * The loop's rules are those runner/vuser.py describes: the cycle of
 * clause 5.2.5, retries of serialization failures and deadlocks, fatal error classes, the
 * statistics flush at the window's boundaries, and what counts in the measured window.
 * ProcLoop.run() returns to Python at every event Python must act on: all users crossed the
 * ramp-up boundary, all finished, response-time buffers to drain, a failure, or a stop.
 */
#include "native.h"

enum { S_READY, S_TXN, S_FLUSH, S_SLEEP, S_DONE };        /* a user's state */
enum { THEN_CYCLE, THEN_SUBMIT, THEN_SLEEP };               /* what follows a wait/crossing */
#define MAX_STATES 16

typedef struct {
    PGconn *conn;
    int fd;
    Terminal *term;
    int state, kind, nargs, retries, errors;
    int after_sleep, after_cross;
    int64_t start, next, wake, last_end;
    int pending, flushing; /* flushing: libpq holds output the socket would not take yet */
    PGresult *held; /* the query's result, until libpq has seen the end of its answer */
    int ol_cnt, remote_lines, remote, by_name; /* the current transaction's inputs, as drawn */
    SqlTxn *sql; /* --mode sql: the transaction's statements and what they returned */
    char text[MAX_ARGS][ARG_TEXT];
    const char *values[MAX_ARGS];
} User;

/* The input counts of the measured window [5.4.5, 2.4.1.5, 2.5.1.2, 2.6.1.2]: the keys of
 * ProcLoop.counts()["inputs"], over the transactions that completed (not errors). */
enum {
    IN_NEW_ORDERS, IN_ORDER_LINES, IN_REMOTE_ORDER_LINES, IN_PAYMENTS, IN_REMOTE_PAYMENTS,
    IN_PAYMENTS_BY_LAST_NAME, IN_ORDER_STATUSES, IN_ORDER_STATUS_BY_LAST_NAME, IN_DELIVERIES,
    IN_SKIPPED_DELIVERIES, NINPUTS
};
static const char *const INPUT_KEYS[NINPUTS] = {
    "new_orders", "order_lines", "remote_order_lines", "payments", "remote_payments",
    "payments_by_last_name", "order_statuses", "order_status_by_last_name", "deliveries",
    "skipped_deliveries"};

typedef struct {
    PyObject_HEAD
    PyObject *terms;  /* the Terminal objects, kept alive */
    PyObject *conns;  /* the psycopg connection objects, kept alive */
    User *users;
    int n, epfd, stopfd;
    int waits, flush_stats, max_retries, max_errors;
    int64_t ramp_end, stop_at, idle_published_after;
    char names[NKINDS][64];
    char *flush_sql;
    char retryable[MAX_STATES][6], fatal[MAX_STATES][6];
    int nretryable, nfatal;
    int ready; /* __init__ succeeded: every method but __init__ needs it */
    int started, running, sleeping, failed, boundary_told;
    char error[512];
    /* the recorder: the same rules as runner/vuser.py's Recorder */
    int64_t committed[NKINDS], rolled_back[NKINDS], errors[NKINDS], retries[NKINDS],
        total_us[NKINDS];
    int64_t completed, new_orders, skipped; /* completed and new_orders: every phase */
    int64_t inputs[NINPUTS];  /* the measured window */
    int64_t *samples[NKINDS]; /* bulk entries each: the loop stops at a full one [samples_full] */
    Py_ssize_t nsamples[NKINDS], bulk;
    int crossed[2];
    int64_t *cross_ns[2];
    int ncross_ns[2];
} ProcLoop;

static void fail(ProcLoop *L, const char *fmt, const char *what, const char *detail) {
    if (L->failed) return;
    L->failed = 1;
    snprintf(L->error, sizeof L->error, fmt, what, detail);
}

/* The first line of libpq's message, without trailing blanks: errors are one line. */
static void first_line(char *s) {
    char *nl = strchr(s, '\n');
    if (nl) *nl = 0;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\r')) s[--n] = 0;
}

static void fail_lost(ProcLoop *L, User *u, const char *what) {
    char msg[384];
    snprintf(msg, sizeof msg, "%s", pq.errorMessage(u->conn));
    first_line(msg);
    fail(L, "%s: lost the database connection (%s)", what, msg);
}

static int in_states(char (*list)[6], int n, const char *state) {
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], state) == 0) return 1;
    return 0;
}

static void rec_done(ProcLoop *L, int kind, int64_t start, int64_t end, int rolled_back,
                     int retries) {
    __atomic_fetch_add(&L->completed, 1, __ATOMIC_RELAXED);
    if (kind == NEW_ORDER && !rolled_back) __atomic_fetch_add(&L->new_orders, 1, __ATOMIC_RELAXED);
    if (start >= L->ramp_end && end <= L->stop_at) {
        int64_t us = (end - start) / 1000;
        if (rolled_back)
            L->rolled_back[kind]++;
        else
            L->committed[kind]++;
        L->retries[kind] += retries;
        L->total_us[kind] += us;
        if (L->nsamples[kind] >= L->bulk) { /* never: the loop hands over a full buffer first */
            fail(L, "%s: %s", NAMES[kind], "response-time buffer overflow (a bug)");
            return;
        }
        L->samples[kind][L->nsamples[kind]++] = us;
    }
}

/* What the completed transaction's inputs were, under rec_done's window rule; ``result`` is
 * what a Delivery returned (districts delivered). */
static void rec_inputs(ProcLoop *L, const User *u, int64_t end, long long result) {
    if (u->start < L->ramp_end || end > L->stop_at) return;
    int64_t *in = L->inputs;
    switch (u->kind) {
    case NEW_ORDER:
        in[IN_NEW_ORDERS]++;
        in[IN_ORDER_LINES] += u->ol_cnt;
        in[IN_REMOTE_ORDER_LINES] += u->remote_lines;
        break;
    case PAYMENT:
        in[IN_PAYMENTS]++;
        in[IN_REMOTE_PAYMENTS] += u->remote;
        in[IN_PAYMENTS_BY_LAST_NAME] += u->by_name;
        break;
    case ORDER_STATUS:
        in[IN_ORDER_STATUSES]++;
        in[IN_ORDER_STATUS_BY_LAST_NAME] += u->by_name;
        break;
    case DELIVERY:
        in[IN_DELIVERIES]++;
        in[IN_SKIPPED_DELIVERIES] += DISTRICTS - result;
        break;
    default:
        break;
    }
}

static void rec_failed(ProcLoop *L, int kind, int64_t start, int64_t end, int retries) {
    if (start >= L->ramp_end && end <= L->stop_at) {
        L->errors[kind]++;
        L->retries[kind] += retries;
    }
}

/* A transaction ended: the backend may hold its counts until the next flush. (It publishes
 * them by itself when a transaction ends a second after its last publication, but the client
 * cannot tell from its own clock when that was: under load the two clocks of one commit differ
 * by more than any margin. Only a 10 s idle publication is certain.) */
static void note_end(ProcLoop *L, User *u, int64_t end) {
    u->pending = 1;
    u->last_end = end;
}

static void cycle(ProcLoop *L, User *u);
static void submit(ProcLoop *L, User *u);

static void sleep_for(ProcLoop *L, User *u, double seconds, int then) {
    u->wake = now_ns() + (int64_t)(seconds * 1e9);
    u->after_sleep = then;
    u->state = S_SLEEP;
    L->sleeping++;
}

/* What the user waits for on its socket: its answer, and room to write while libpq holds
 * output back (PQflush returned 1). */
static int watch(ProcLoop *L, User *u, int flushing) {
    if (u->flushing == flushing) return 0;
    struct epoll_event ev = {.events = EPOLLIN | (flushing ? EPOLLOUT : 0),
                             .data.u32 = (uint32_t)(u - L->users)};
    if (epoll_ctl(L->epfd, EPOLL_CTL_MOD, u->fd, &ev) < 0) {
        fail(L, "%s: %s", "event loop", strerror(errno));
        return -1;
    }
    u->flushing = flushing;
    return 0;
}

/* Send what libpq holds: -1 is a lost connection; 1 (a full socket buffer) waits for
 * EPOLLOUT instead of spinning. */
static int flush_out(ProcLoop *L, User *u, const char *what) {
    int r = pq.flush(u->conn);
    if (r < 0) {
        fail_lost(L, u, what);
        return -1;
    }
    return watch(L, u, r == 1);
}

static const char *doing(User *u) {
    return u->state == S_FLUSH ? "statistics flush" : NAMES[u->kind];
}

static void send_flush(ProcLoop *L, User *u) {
    if (!pq.sendQuery(u->conn, L->flush_sql)) {
        fail_lost(L, u, "statistics flush");
        return;
    }
    u->state = S_FLUSH;
    flush_out(L, u, "statistics flush");
}

static void crossed(ProcLoop *L, User *u, int64_t flushed_ns) {
    int last = u->next >= L->stop_at;
    if (flushed_ns >= 0 && L->ncross_ns[last] < L->n) /* a user crosses each boundary once */
        L->cross_ns[last][L->ncross_ns[last]++] = flushed_ns;
    L->crossed[last]++;
    if (last) {
        u->state = S_DONE;
        return;
    }
    u->next = L->stop_at;
    if (u->after_cross == THEN_SUBMIT) {
        submit(L, u);
    } else { /* back to the wait it was in */
        u->state = S_SLEEP;
        L->sleeping++;
    }
}

/* Cross the next boundary, first asking the backend to publish its counts if some may be
 * pending and it will not publish them by itself soon. */
static void cross(ProcLoop *L, User *u, int then) {
    u->after_cross = then;
    if (L->flush_stats && u->pending && now_ns() - u->last_end < L->idle_published_after) {
        send_flush(L, u);
        return;
    }
    crossed(L, u, -1);
}

static void send_txn(ProcLoop *L, User *u) {
    if (u->sql ? !sql_start(u->sql, u->conn)
               : !pq.sendQueryPrepared(u->conn, L->names[u->kind], u->nargs, u->values, NULL,
                                       NULL, 0)) {
        fail_lost(L, u, NAMES[u->kind]);
        return;
    }
    u->state = S_TXN;
    flush_out(L, u, NAMES[u->kind]);
}

static void submit(ProcLoop *L, User *u) {
    int64_t t = now_ns();
    if (t >= u->next) {
        cross(L, u, THEN_SUBMIT);
        return;
    }
    u->start = t;
    send_txn(L, u);
}

/* Draw the next card and its inputs, which a retry keeps; wait the keying time if asked. */
static void cycle(ProcLoop *L, User *u) {
    Terminal *t = u->term;
    int kind = term_draw_kind(t);
    txn_t x;
    term_inputs(t, kind, term_warehouse(t), &x);
    if (u->sql) sql_inputs(u->sql, &x);
    if (txn_text(&x, u->text) < 0) {
        fail(L, "%s: %s", NAMES[kind], "an argument is too long for its buffer");
        return;
    }
    u->kind = kind;
    u->nargs = x.nargs;
    u->ol_cnt = x.ol_cnt;
    u->remote_lines = x.remote_lines;
    u->remote = x.remote;
    u->by_name = x.by_name;
    u->retries = 0;
    if (L->waits)
        sleep_for(L, u, KEYING_S[kind], THEN_SUBMIT);
    else
        submit(L, u);
}

/* A waiting user's timer: cross a boundary on the way, or wake. */
static void tick(ProcLoop *L, User *u, int64_t t) {
    if (t >= u->next) {
        u->state = S_READY;
        L->sleeping--;
        cross(L, u, THEN_SLEEP);
        return;
    }
    if (u->wake <= t) {
        u->state = S_READY;
        L->sleeping--;
        if (u->after_sleep == THEN_SUBMIT)
            submit(L, u);
        else
            cycle(L, u);
    }
}

/* The connection or the database is gone: no SQLSTATE, class 08, or one of the fatal list. */
static int is_fatal(ProcLoop *L, const char *state) {
    return !state || strncmp(state, "08", 2) == 0 || in_states(L->fatal, L->nfatal, state);
}

/* Fail with the server's message: "what: [pre]message (SQLSTATE xxxxx)". */
static void error_text(ProcLoop *L, const char *what, PGresult *res, const char *state,
                       const char *pre) {
    char msg[384];
    const char *primary = pq.resultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    snprintf(msg, sizeof msg, "%s%s (SQLSTATE %s)", pre, primary ? primary : "",
             state ? state : "?");
    fail(L, "%s: %s", what, msg);
}

static void finished_txn(ProcLoop *L, User *u, PGresult *res) {
    int64_t end = now_ns();
    note_end(L, u, end);
    int status = res ? pq.resultStatus(res) : -1;
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        u->errors = 0;
        int has = status == PGRES_TUPLES_OK && pq.ntuples(res) > 0 && !pq.getisnull(res, 0, 0);
        long long result = has ? strtoll(pq.getvalue(res, 0, 0), NULL, 10) : 0;
        if (u->sql) { /* the transaction's outcome, as the function would return it */
            has = 1;
            result = sql_value(u->sql);
        }
        if (u->kind == DELIVERY && has) L->skipped += 10 - result;
        rec_done(L, u->kind, u->start, end, u->kind == NEW_ORDER && has && result < 0, u->retries);
        rec_inputs(L, u, end, u->kind == DELIVERY && has ? result : DISTRICTS);
    } else {
        const char *state = res ? pq.resultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
        if (state && in_states(L->retryable, L->nretryable, state) && u->retries < L->max_retries) {
            u->retries++;
            send_txn(L, u);
            return;
        }
        if (!res) {
            fail_lost(L, u, NAMES[u->kind]);
            return;
        }
        if (is_fatal(L, state)) {
            error_text(L, NAMES[u->kind], res, state, "");
            return;
        }
        rec_failed(L, u->kind, u->start, end, u->retries);
        if (++u->errors >= L->max_errors) {
            error_text(L, NAMES[u->kind], res, state, "keeps failing: ");
            return;
        }
    }
    if (L->waits)
        sleep_for(L, u, term_think(u->term, u->kind), THEN_CYCLE);
    else
        cycle(L, u);
}

static void finished_flush(ProcLoop *L, User *u, PGresult *res) {
    int status = res ? pq.resultStatus(res) : -1;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
        const char *state = res ? pq.resultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
        if (!res) {
            fail_lost(L, u, "statistics flush");
            return;
        }
        if (is_fatal(L, state)) {
            error_text(L, "statistics flush", res, state, "");
            return;
        }
    }
    int64_t t = now_ns();
    u->last_end = t;
    u->pending = 0;
    crossed(L, u, t);
}

/* --mode sql: the answers of the transaction's round trips; after an error the ROLLBACK,
 * then the transaction is done as in procedures mode (counted, retried, or fatal). */
static void sql_readable(ProcLoop *L, User *u) {
    switch (sql_read(u->sql, u->conn)) {
    case SQL_WAIT:
        return;
    case SQL_LOST:
        fail_lost(L, u, NAMES[u->kind]);
        return;
    case SQL_BROKEN:
        fail(L, "%s: %s", NAMES[u->kind], sql_problem(u->sql));
        return;
    case SQL_ERROR:
        if (!is_fatal(L, pq.resultErrorField(sql_failure(u->sql), PG_DIAG_SQLSTATE))) {
            if (!sql_rollback(u->sql, u->conn)) fail_lost(L, u, "rollback");
            return;
        }
        break; /* fatal: fails the run with the server's message */
    default:
        break;
    }
    PGresult *res = sql_take(u->sql);
    u->state = S_READY;
    finished_txn(L, u, res);
    if (res) pq.clear(res);
}

static void readable(ProcLoop *L, User *u, uint32_t events) {
    PGconn *c = u->conn;
    if ((events & EPOLLIN || !(events & EPOLLOUT)) && !pq.consumeInput(c)) {
        fail_lost(L, u, doing(u));
        return;
    }
    if (u->flushing && flush_out(L, u, doing(u)) < 0) return;
    if (u->state != S_TXN && u->state != S_FLUSH) { /* a notice, or the server going away */
        if (pq.status(c) != CONNECTION_OK) fail_lost(L, u, NAMES[u->kind]);
        return;
    }
    if (u->sql && u->state == S_TXN) {
        sql_readable(L, u);
        return;
    }
    for (;;) { /* take the result, then wait for the end of the answer without blocking */
        if (pq.isBusy(c)) return;
        PGresult *r = pq.getResult(c);
        if (!r) break;
        if (!u->held)
            u->held = r;
        else
            pq.clear(r);
    }
    PGresult *res = u->held;
    u->held = NULL;
    int state = u->state;
    u->state = S_READY;
    if (state == S_FLUSH)
        finished_flush(L, u, res);
    else
        finished_txn(L, u, res);
    if (res) pq.clear(res);
}

static int samples_full(ProcLoop *L) {
    for (int k = 0; k < NKINDS; k++)
        if (L->nsamples[k] >= L->bulk) return 1;
    return 0;
}

/* The loop itself, without the GIL: returns one of the EV_ codes. */
static int loop_run(ProcLoop *L) {
    enum { MAX_EVENTS = 64 };
    struct epoll_event events[MAX_EVENTS];
    if (!L->started) {
        L->started = 1;
        for (int i = 0; i < L->n && !L->failed; i++) cycle(L, &L->users[i]);
    }
    for (;;) {
        if (L->failed) return EV_FAILED;
        if (L->crossed[0] == L->n && !L->boundary_told) {
            L->boundary_told = 1;
            return EV_BOUNDARY;
        }
        if (L->crossed[1] == L->n) return EV_FINISHED;
        if (samples_full(L)) return EV_SAMPLES;
        int timeout = -1;
        if (L->sleeping) {
            int64_t t = now_ns(), due = INT64_MAX;
            for (int i = 0; i < L->n; i++) {
                User *u = &L->users[i];
                if (u->state != S_SLEEP) continue;
                int64_t d = u->wake < u->next ? u->wake : u->next;
                if (d < due) due = d;
            }
            int64_t ms = due <= t ? 0 : (due - t + 999999) / 1000000;
            timeout = ms > 1000 ? 1000 : (int)ms;
        }
        int got = epoll_wait(L->epfd, events, MAX_EVENTS, timeout);
        if (got < 0) {
            if (errno == EINTR) continue;
            fail(L, "%s: %s", "event loop", strerror(errno));
            return EV_FAILED;
        }
        /* One readable user completes at most one transaction: checking for a full buffer
         * before each keeps every append within bulk. Events not handled now are reported
         * again by the next epoll_wait (level-triggered). */
        for (int i = 0; i < got && !L->failed && !samples_full(L); i++) {
            uint32_t who = events[i].data.u32;
            if (who == (uint32_t)L->n) {
                uint64_t v;
                if (read(L->stopfd, &v, sizeof v) < 0 && errno != EAGAIN) { /* drained anyway */ }
                return EV_STOPPED;
            }
            if (who > (uint32_t)L->n) {
                fail(L, "%s: %s", "event loop", "an event for no user");
                return EV_FAILED;
            }
            readable(L, &L->users[who], events[i].events);
        }
        if (L->sleeping && !L->failed) {
            int64_t t = now_ns();
            for (int i = 0; i < L->n && !L->failed; i++)
                if (L->users[i].state == S_SLEEP) tick(L, &L->users[i], t);
        }
    }
}

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
static void release(ProcLoop *self) {
    if (self->ready)
        for (int i = 0; i < self->n; i++) self->users[i].term->driven--;
    self->ready = 0;
    if (self->epfd >= 0) close(self->epfd);
    if (self->stopfd >= 0) close(self->stopfd);
    self->epfd = self->stopfd = -1;
    for (int i = 0; self->users && i < self->n; i++) {
        if (self->users[i].held) pq.clear(self->users[i].held);
        sql_free(self->users[i].sql);
    }
    PyMem_Free(self->users);
    self->users = NULL;
    self->n = 0;
    PyMem_Free(self->flush_sql);
    self->flush_sql = NULL;
    for (int k = 0; k < NKINDS; k++) {
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

static int ProcLoop_init(ProcLoop *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"libpq", "connections", "pointers", "terminals", "names",
                             "flush_sql", "ramp_end_ns", "measure_end_ns", "waits",
                             "flush_stats", "idle_published_after_ns",
                             "max_retries", "max_consecutive_errors", "retryable", "fatal",
                             "bulk", "sql", NULL};
    const char *libpq, *flush_sql;
    PyObject *conns, *ptrs, *terms, *names, *retryable, *fatal;
    long long ramp_end, stop_at, idle;
    int waits, flush_stats, max_retries, max_errors, sql = 0;
    Py_ssize_t bulk;
    if (self->ready || self->running) {
        PyErr_SetString(PyExc_RuntimeError, "a ProcLoop is initialised once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOOOOsLLppLiiOOn|p", kwlist, &libpq, &conns,
                                     &ptrs, &terms, &names, &flush_sql, &ramp_end, &stop_at,
                                     &waits, &flush_stats, &idle, &max_retries,
                                     &max_errors, &retryable, &fatal, &bulk, &sql))
        return -1;
    if (load_libpq(libpq) < 0) return -1;
    if (sql && !pq_has_pipeline()) {
        PyErr_SetString(PyExc_RuntimeError, "--mode sql needs libpq 14 or later (pipeline mode)");
        return -1;
    }
    if (copy_states(retryable, self->retryable, &self->nretryable, "retryable") < 0 ||
        copy_states(fatal, self->fatal, &self->nfatal, "fatal") < 0)
        return -1;
    PyObject *tl = PySequence_List(terms), *pl = PySequence_List(ptrs);
    PyObject *nl = PySequence_Fast(names, "names must be a sequence");
    if (!tl || !pl || !nl) goto bad;
    Py_ssize_t n = PyList_GET_SIZE(tl);
    if (n < 1 || PyList_GET_SIZE(pl) != n || PySequence_Fast_GET_SIZE(nl) != NKINDS) {
        PyErr_SetString(PyExc_ValueError,
                        "need one pointer per terminal, at least one, and five names");
        goto bad;
    }
    if (n >= INT32_MAX || bulk < 1 || bulk > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "bulk must be at least 1, and the users fewer");
        goto bad;
    }
    for (int k = 0; k < NKINDS; k++) {
        const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(nl, k));
        if (!s) goto bad;
        snprintf(self->names[k], sizeof self->names[k], "%s", s);
    }
    self->n = (int)n;
    self->users = PyMem_Calloc(n, sizeof(User));
    self->flush_sql = PyMem_Malloc(strlen(flush_sql) + 1);
    self->bulk = bulk;
    for (int k = 0; k < NKINDS; k++) self->samples[k] = PyMem_Malloc(sizeof(int64_t) * bulk);
    self->cross_ns[0] = PyMem_Malloc(sizeof(int64_t) * n);
    self->cross_ns[1] = PyMem_Malloc(sizeof(int64_t) * n);
    if (!self->users || !self->flush_sql || !self->cross_ns[0] || !self->cross_ns[1]) {
        PyErr_NoMemory();
        goto bad;
    }
    for (int k = 0; k < NKINDS; k++)
        if (!self->samples[k]) {
            PyErr_NoMemory();
            goto bad;
        }
    strcpy(self->flush_sql, flush_sql);
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
        if (!PyObject_TypeCheck(term, &TerminalType)) {
            PyErr_SetString(PyExc_TypeError, "terminals must be Terminal objects");
            goto bad;
        }
        if (term_check((Terminal *)term) < 0) goto bad;
        u->term = (Terminal *)term;
        u->conn = PyLong_AsVoidPtr(PyList_GET_ITEM(pl, i));
        if (!u->conn) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a null connection");
            goto bad;
        }
        u->fd = pq.socket(u->conn);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (u->fd < 0 || epoll_ctl(self->epfd, EPOLL_CTL_ADD, u->fd, &ev) < 0) {
            PyErr_Format(PyExc_OSError, "connection %zd has no usable socket", i);
            goto bad;
        }
        for (int a = 0; a < MAX_ARGS; a++) u->values[a] = u->text[a];
        if (sql && !(u->sql = sql_new())) {
            PyErr_NoMemory();
            goto bad;
        }
        u->state = S_READY;
        u->next = ramp_end;
        u->last_end = t;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)n};
    if (epoll_ctl(self->epfd, EPOLL_CTL_ADD, self->stopfd, &ev) < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto bad;
    }
    self->terms = tl;
    Py_INCREF(conns);
    self->conns = conns;
    Py_DECREF(pl);
    Py_DECREF(nl);
    self->ramp_end = ramp_end;
    self->stop_at = stop_at;
    self->waits = waits;
    self->flush_stats = flush_stats;
    self->idle_published_after = idle;
    self->max_retries = max_retries;
    self->max_errors = max_errors;
    for (Py_ssize_t i = 0; i < n; i++) self->users[i].term->driven++;
    self->ready = 1;
    return 0;
bad:
    Py_XDECREF(tl);
    Py_XDECREF(pl);
    Py_XDECREF(nl);
    release(self);
    return -1;
}

static PyObject *ProcLoop_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    ProcLoop *self = (ProcLoop *)type->tp_alloc(type, 0);
    if (self) self->epfd = self->stopfd = -1;
    return (PyObject *)self;
}

static void ProcLoop_dealloc(ProcLoop *self) {
    release(self);
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
    if ( write(self->stopfd, &one, sizeof one) < 0 && errno != EAGAIN)
        return PyErr_SetFromErrno(PyExc_OSError);
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
    PyObject *out = PyTuple_New(NKINDS);
    if (!out) return NULL;
    for (int k = 0; k < NKINDS; k++) {
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
    for (int i = 0; inputs && i < NINPUTS; i++) {
        PyObject *v = PyLong_FromLongLong(self->inputs[i]);
        if (!v || PyDict_SetItemString(inputs, INPUT_KEYS[i], v) < 0) Py_CLEAR(inputs);
        Py_XDECREF(v);
    }
    if (!inputs) return NULL;
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:L,s:L,s:L,s:N,s:N}", "committed",
                         ints(self->committed, NKINDS), "rolled_back",
                         ints(self->rolled_back, NKINDS), "errors", ints(self->errors, NKINDS),
                         "retries", ints(self->retries, NKINDS), "total_us",
                         ints(self->total_us, NKINDS), "skipped", (long long)self->skipped,
                         "completed", (long long)self->completed, "new_orders",
                         (long long)self->new_orders,
                         "cross_ns", Py_BuildValue("(NN)", ints(self->cross_ns[0], self->ncross_ns[0]),
                                                   ints(self->cross_ns[1], self->ncross_ns[1])),
                         "inputs", inputs);
}

static PyObject *ProcLoop_get_completed(ProcLoop *self, void *c) {
    return PyLong_FromLongLong(__atomic_load_n(&self->completed, __ATOMIC_RELAXED));
}

static PyObject *ProcLoop_get_new_orders(ProcLoop *self, void *c) {
    return PyLong_FromLongLong(__atomic_load_n(&self->new_orders, __ATOMIC_RELAXED));
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
     "FAILED or STOPPED); call it from one thread at a time."},
    {"stop", (PyCFunction)ProcLoop_stop, METH_NOARGS,
     "Make run() return STOPPED soon; safe from any thread."},
    {"take_samples", (PyCFunction)ProcLoop_take_samples, METH_NOARGS,
     "The response times (us, native int64) held per type, and empty the buffers."},
    {"counts", (PyCFunction)ProcLoop_counts, METH_NOARGS,
     "The counts of the measured window, the flush times at each boundary, and 'inputs': the "
     "input counts of the window's completed transactions (new_orders, order_lines, "
     "remote_order_lines, payments, remote_payments, payments_by_last_name, order_statuses, "
     "order_status_by_last_name, deliveries, skipped_deliveries)."},
    {NULL}};

static PyGetSetDef ProcLoop_getset[] = {
    {"completed", (getter)ProcLoop_get_completed, NULL, "Transactions completed, every phase.",
     NULL},
    {"new_orders", (getter)ProcLoop_get_new_orders, NULL,
     "New-Orders committed, every phase.", NULL},
    {"error", (getter)ProcLoop_get_error, NULL, "Why the loop failed, or None.", NULL},
    {"crossed", (getter)ProcLoop_get_crossed, NULL, "Users past each boundary.", NULL},
    {NULL}};

PyTypeObject ProcLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.ProcLoop",
    .tp_doc = PyDoc_STR("The users of one worker, either mode, driven from C."),
    .tp_basicsize = sizeof(ProcLoop),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = ProcLoop_new,
    .tp_init = (initproc)ProcLoop_init,
    .tp_dealloc = (destructor)ProcLoop_dealloc,
    .tp_methods = ProcLoop_methods,
    .tp_getset = ProcLoop_getset,
};
