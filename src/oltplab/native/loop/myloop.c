/*
 * ProcLoop's MariaDB transport, and the type MariaDBLoop that drives it. In procedures mode
 * each transaction is one round trip, "CALL proc(inputs..., @oltplab_out); SELECT
 * @oltplab_out" (the workload writes the CALL) sent as one multi-statement query over
 * libmariadb's non-blocking calls (the query, then every result stored and the next one asked
 * for, each call resumed when epoll reports the socket ready for what it waits for); --mode
 * sql sends the workload's statements the same way, a few round trips per transaction. The
 * procedures commit or roll back themselves, so Com_commit + Com_rollback counts one per
 * transaction; what the OUT parameter returned goes to the workload (Workload.completed,
 * which tells a transaction rolled back by design). What an error number means
 * comes from Python: retried (deadlock 1213, lock wait timeout 1205 ...), a lost session
 * (2006, 2013 ...), anything else fails the run with the server's message. MariaDB needs no
 * statistics flush at the window's boundaries: SHOW GLOBAL STATUS sums the live sessions.
 */
#include "mariadb.h"



#define OUT_VAR "@oltplab_out"
/* --mode sql: a round trip's text at most, unless Python gives another (sql_text_bytes) */
#define SQL_TEXT_BYTES 16384

/* the call under way: the query, a result, the next one; or an answer complete already when
 * the query was sent, which waits for the next turn of the loop (P_DONE, P_FAILED) */
enum { P_QUERY, P_STORE, P_NEXT, P_DONE, P_FAILED };

/* The query of the transaction: the workload's CALL, then the SELECT of its OUT parameter.
 * --mode sql keeps the inputs for its round trips instead. */
static int my_prepare(ProcLoop *L, User *u) {
    if (u->txn) {
        L->wl->my_sql->inputs(u->txn, u->drawn);
        return 0;
    }
    int n = L->wl->my_call(u->drawn, OUT_VAR, u->query, sizeof u->query);
    if (n < 0 || (size_t)n >= sizeof u->query) return -1;
    if (L->wl->my_result_rows) { /* the CALL's own result set answers */
        u->qlen = n;
        return 0;
    }
    static const char select[] = ";SELECT " OUT_VAR;
    if (sizeof u->query - (size_t)n < sizeof select) return -1;
    memcpy(u->query + n, select, sizeof select);
    u->qlen = n + (int)sizeof select - 1;
    return 0;
}

static int in_codes(const int *codes, int n, unsigned code) {
    for (int i = 0; i < n; i++)
        if ((unsigned)codes[i] == code) return 1;
    return 0;
}

/* The answer is complete: back to watching for the server's word alone, then the outcome. */
static void answered(ProcLoop *L, User *u, int outcome, const char *message) {
    /* (a lost session's socket may be closed already: it leaves epoll with the user; after
     * a fatal error nothing is watched again, and the server's message is the run's) */
    if (outcome != OUT_LOST && outcome != OUT_FATAL && user_watch(L, u, EPOLLIN) < 0) return;
    u->state = S_READY;
    txn_end(L, u, outcome, u->has, u->value, message);
}

static void failed(ProcLoop *L, User *u) {
    MYSQL *m = u->conn;
    unsigned code = my.errno_of(m);
    char msg[384];
    snprintf(msg, sizeof msg, "%s (error %u)", my.error(m), code);
    first_line(msg);
    answered(L, u,
             in_codes(L->retry_codes, L->nretry_codes, code)  ? OUT_RETRY
             : in_codes(L->lost_codes, L->nlost_codes, code) ? OUT_LOST
                                                              : OUT_FATAL,
             msg);
}

/* Wait for what libmariadb waits for (a MYSQL_WAIT_ status). No timeout is ever set on the
 * sessions, so it always waits for the socket. */
static void wait_for(ProcLoop *L, User *u, int status) {
    uint32_t events = (status & MYSQL_WAIT_READ ? EPOLLIN : 0) |
                      (status & MYSQL_WAIT_WRITE ? EPOLLOUT : 0);
    if (!events) {
        loop_fail(L, "%s: %s", L->wl->kinds[u->kind],
                  "libmariadb waits for a timeout (none is set)");
        return;
    }
    u->waiting = status;
    user_watch(L, u, events);
}

/* The answer came with the query's own calls (the server answered before the client read):
 * it is taken at the next turn of the loop, from epoll's report that the socket is writable,
 * as every answer is. So a user ends at most one transaction per event and the loop's check
 * for a full response-time buffer before each event holds; nor do the calls nest. */
static void later(ProcLoop *L, User *u, int phase) {
    u->phase = phase;
    u->waiting = MYSQL_WAIT_WRITE;
    user_watch(L, u, EPOLLOUT);
}

/* The transaction's answer is complete (u->outcome says how it ended). */
static void done(ProcLoop *L, User *u, int sending) {
    if (sending)
        later(L, u, P_DONE);
    else
        answered(L, u, u->outcome, u->outcome == OUT_DONE ? NULL : u->message);
}

/* --mode sql: the round trip's answers are all in: send the next one (1), or the
 * transaction is over (0), or it broke (-1: the run fails). */
static int sql_trip_over(ProcLoop *L, User *u) {
    int next = L->wl->my_sql->next(u->txn);
    if (next < 0) {
        loop_fail(L, "%s: %s", L->wl->kinds[u->kind], L->wl->my_sql->problem(u->txn));
        return -1;
    }
    if (next) {
        u->phase = P_QUERY;
        return 1;
    }
    u->has = 1;
    u->value = L->wl->my_sql->value(u->txn);
    return 0;
}

/* --mode sql: a statement failed. A retryable error ends the transaction with a ROLLBACK
 * (its own round trip: the server ended the statement, not always the transaction) before
 * the same inputs run again; 1 when that ROLLBACK is to be sent. */
static int sql_failed(ProcLoop *L, User *u) {
    MYSQL *m = u->conn;
    unsigned code = my.errno_of(m);
    if (u->outcome != OUT_DONE || !in_codes(L->retry_codes, L->nretry_codes, code)) return 0;
    snprintf(u->message, sizeof u->message, "%s (error %u)", my.error(m), code);
    first_line(u->message);
    u->outcome = OUT_RETRY;
    if (!L->wl->my_sql->rollback(u->txn)) {
        loop_fail(L, "%s: %s", L->wl->kinds[u->kind], L->wl->my_sql->problem(u->txn));
        return -1;
    }
    u->phase = P_QUERY;
    return 1;
}

/* Start or resume (``status``: what the socket is ready for) the call under way, and the
 * calls after it until one must wait or the answer is complete; ``sending``: called by
 * my_send, whose caller may not see the transaction end. */
static void step(ProcLoop *L, User *u, int status, int sending) {
    MYSQL *m = u->conn;
    for (;;) {
        int ret = 0, resume = u->waiting != 0;
        MYSQL_RES *res = NULL;
        switch (u->phase) {
        case P_QUERY:
            if (resume) {
                status = my.real_query_cont(&ret, m, status);
            } else if (u->txn) {
                unsigned long len;
                const char *text = L->wl->my_sql->text(u->txn, &len);
                status = my.real_query_start(&ret, m, text, len);
            } else {
                status = my.real_query_start(&ret, m, u->query, (unsigned long)u->qlen);
            }
            break;
        case P_STORE:
            status = resume ? my.store_result_cont(&res, m, status)
                            : my.store_result_start(&res, m);
            break;
        default:
            status = resume ? my.next_result_cont(&ret, m, status) : my.next_result_start(&ret, m);
        }
        if (status) {
            wait_for(L, u, status);
            return;
        }
        u->waiting = 0;
        int failure = 0;
        if (u->phase == P_STORE) { /* procedures: the CALL's status has no rows, the SELECT
                                    * one row; sql: each statement's answer in turn */
            if (!res && my.errno_of(m) != 0) {
                failure = 1;
            } else if (u->txn) {
                int ok = L->wl->my_sql->result(u->txn, res);
                if (res) my.free_result(res); /* stored: no I/O */
                if (!ok) {
                    loop_fail(L, "%s: %s", L->wl->kinds[u->kind],
                              L->wl->my_sql->problem(u->txn));
                    return;
                }
            } else if (res && L->wl->row) { /* every row to the workload when it wants
                                             * them; the first row's first column (of the
                                             * answer's first result set) is the value */
                int wanted = !L->wl->rows_wanted || L->wl->rows_wanted(u->drawn);
                unsigned ncols = my.num_fields(res);
                MYSQL_ROW row;
                while ((row = my.fetch_row(res)) != NULL) {
                    if (!u->has && ncols && row[0]) {
                        u->has = 1;
                        u->value = strtoll(row[0], NULL, 10);
                    }
                    if (!wanted) {
                        if (u->has) break;
                        continue;
                    }
                    L->wl->row(u->drawn, u->rows++, (int)ncols, (const char *const *)row);
                }
                my.free_result(res);
            } else if (res) {
                MYSQL_ROW row = my.fetch_row(res);
                u->has = row && row[0];
                u->value = u->has ? strtoll(row[0], NULL, 10) : 0;
                my.free_result(res);
            }
            if (!failure) {
                u->phase = P_NEXT;
                continue;
            }
        } else if (ret > 0 || (u->phase == P_QUERY && ret != 0)) {
            failure = 1;
        } else if (ret == 0) {
            u->phase = P_STORE;
            continue;
        }
        /* the round trip is complete (no more results), or failed; a lost session is lost at
         * once (libmariadb may have closed its socket: there is nothing to wait on) */
        if (u->txn) {
            int more = failure ? sql_failed(L, u) : sql_trip_over(L, u);
            if (more < 0) return;
            if (more) {
                u->waiting = 0;
                continue;
            }
        }
        if (failure && in_codes(L->lost_codes, L->nlost_codes, my.errno_of(m)))
            failed(L, u);
        else if (sending)
            later(L, u, failure ? P_FAILED : P_DONE);
        else if (failure)
            failed(L, u);
        else
            done(L, u, 0);
        return;
    }
}

static void my_send(ProcLoop *L, User *u) {
    u->phase = P_QUERY;
    u->waiting = 0;
    u->has = 0;
    u->rows = 0;
    if (L->wl->row && !u->txn) L->wl->row(u->drawn, -1, 0, NULL);
    u->outcome = OUT_DONE;
    if (u->txn && !L->wl->my_sql->start(u->txn)) {
        loop_fail(L, "%s: %s", L->wl->kinds[u->kind], L->wl->my_sql->problem(u->txn));
        return;
    }
    step(L, u, 0, 1);
}

static void my_ready(ProcLoop *L, User *u, uint32_t events) {
    if (u->state != S_TXN) { /* the server spoke unasked: it is ending the session */
        user_lost(L, u, L->wl->kinds[u->kind], "the server closed the session");
        return;
    }
    if (u->phase == P_DONE) {
        done(L, u, 0);
        return;
    }
    if (u->phase == P_FAILED) {
        failed(L, u);
        return;
    }
    int status = (events & (EPOLLIN | EPOLLHUP | EPOLLERR) ? MYSQL_WAIT_READ : 0) |
                 (events & EPOLLOUT ? MYSQL_WAIT_WRITE : 0);
    if (!(status & u->waiting)) status = u->waiting; /* a hang-up: the call finds out */
    step(L, u, status, 0);
}

static void my_forget(ProcLoop *L, User *u, int end) { /* results are freed as they come */
    if (end && u->txn) {
        L->wl->my_sql->destroy(u->txn);
        u->txn = NULL;
    }
}

static int my_attach(ProcLoop *L, User *u, PyObject *conn, PyObject *ptr) {
    if (!PyObject_TypeCheck(conn, &MyConnType)) {
        PyErr_SetString(PyExc_TypeError, "connections must be MariaDBConnection objects");
        return -1;
    }
    MyConn *c = (MyConn *)conn;
    if (!c->m || c->driven) {
        PyErr_SetString(PyExc_ValueError,
                        c->m ? "a connection is driven by a MariaDBLoop already"
                             : "a closed connection");
        return -1;
    }
    if (L->sql_mode) { /* a fresh transaction state: what a lost session left is dropped */
        MyTxn *fresh = L->wl->my_sql->create((size_t)L->sql_text_bytes);
        if (!fresh) {
            PyErr_NoMemory();
            return -1;
        }
        if (u->txn) L->wl->my_sql->destroy(u->txn);
        u->txn = fresh;
    }
    c->driven = 1;
    u->conn = c->m;
    u->fd = (int)my.get_socket(c->m);
    return 0;
}

static void my_detach(PyObject *conn) { ((MyConn *)conn)->driven = 0; }

const Transport MY_TRANSPORT = {.prepare = my_prepare, .send = my_send, .ready = my_ready,
                                .flush = NULL, .forget = my_forget, .attach = my_attach,
                                .detach = my_detach};

/* ------------------------------------------------------------------------------------------ */
/* MariaDBLoop: a ProcLoop on MariaDB sessions                                                */

static int copy_codes(PyObject *seq, int *out, int *n, const char *what) {
    PyObject *fast = PySequence_Fast(seq, "error number lists must be sequences");
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > MAX_CODES) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "too many %s error numbers", what);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (v < 1 || v > 65535) {
            Py_DECREF(fast);
            PyErr_Format(PyExc_ValueError, "bad %s error number %ld", what, v);
            return -1;
        }
        out[i] = (int)v;
    }
    *n = (int)len;
    Py_DECREF(fast);
    return 0;
}

static int MariaDBLoop_init(ProcLoop *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"workload", "connections", "terminals", "ramp_end_ns",
                             "measure_end_ns", "waits", "max_retries", "max_consecutive_errors",
                             "retryable", "lost", "bulk", "resilient", "sql", "sql_text_bytes",
                             NULL};
    const char *workload;
    PyObject *conns, *terms, *retryable, *lost;
    long long ramp_end, stop_at;
    int waits, max_retries, max_errors, resilient = 0, sql = 0;
    Py_ssize_t bulk, text_bytes = SQL_TEXT_BYTES;
    if (self->ready || self->running) {
        PyErr_SetString(PyExc_RuntimeError, "a ProcLoop is initialised once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOOLLpiiOOn|ppn", kwlist, &workload, &conns,
                                     &terms,
                                     &ramp_end, &stop_at, &waits, &max_retries, &max_errors,
                                     &retryable, &lost, &bulk, &resilient, &sql, &text_bytes))
        return -1;
    if (text_bytes < 64 || text_bytes > (1 << 24)) {
        PyErr_SetString(PyExc_ValueError, "sql_text_bytes must be within 64..16 MiB");
        return -1;
    }
    if (loop_workload(self, workload) < 0) return -1;
    if (sql && !self->wl->my_sql) {
        PyErr_Format(PyExc_ValueError, "the workload %s has no --mode sql", workload);
        return -1;
    }
    if (load_libmariadb() < 0 ||
        copy_codes(retryable, self->retry_codes, &self->nretry_codes, "retryable") < 0 ||
        copy_codes(lost, self->lost_codes, &self->nlost_codes, "lost") < 0)
        return -1;
    self->flush_stats = 0;
    self->sql_mode = sql;
    self->sql_text_bytes = text_bytes;
    return loop_setup(self, &MY_TRANSPORT, conns, NULL, terms, ramp_end, stop_at, waits,
                      max_retries, max_errors, bulk, resilient);
}

PyTypeObject MariaDBLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.MariaDBLoop",
    .tp_doc = PyDoc_STR("MariaDBLoop(workload, connections, terminals, ramp_end_ns, "
                        "measure_end_ns, "
                        "waits, max_retries, max_consecutive_errors, retryable, lost, bulk, "
                        "resilient=False, sql=False, sql_text_bytes=16384): the users of one "
                        "worker on MariaDB sessions (MariaDBConnection), in procedures mode "
                        "or (sql) sending each transaction's statements, a round trip's text "
                        "at most sql_text_bytes; a ProcLoop otherwise."),
    .tp_basicsize = sizeof(ProcLoop),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_base = &ProcLoopType,
    .tp_init = (initproc)MariaDBLoop_init,
};
