/*
 * ProcLoop's libpq transport: a user's transaction as one call of its prepared PL/pgSQL
 * function (procedures mode) or as its statements in pipelined round trips (--mode sql,
 * sqlloop.c), on connections psycopg opened and prepared; the statistics flush at the
 * window's boundaries; and what a SQLSTATE means to the users (procloop.c's txn_end).
 */
#include "procloop.h"
#include "text.h"

static int in_states(char (*list)[6], int n, const char *state) {
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], state) == 0) return 1;
    return 0;
}

static void pq_lost(ProcLoop *L, User *u, const char *what) {
    user_lost(L, u, what, L->resilient ? NULL : pq.errorMessage(u->conn));
}

/* Send what libpq holds: -1 is a lost connection; 1 (a full socket buffer) waits for
 * EPOLLOUT instead of spinning. */
static int flush_out(ProcLoop *L, User *u, const char *what) {
    int r = pq.flush(u->conn);
    if (r < 0) {
        pq_lost(L, u, what);
        return -1;
    }
    return user_watch(L, u, EPOLLIN | (r == 1 ? EPOLLOUT : 0));
}

static const char *doing(ProcLoop *L, User *u) {
    return u->state == S_FLUSH ? "statistics flush" : L->wl->kinds[u->kind];
}

/* A string literal of s: each quote doubled (standard_conforming_strings: a backslash is
 * itself) */
static int literal(char *buf, size_t size, size_t *at, const char *s) {
    if (text_put(buf, size, at, "'") < 0) return -1;
    for (; *s; s++)
        if ((*s == '\'' ? text_put(buf, size, at, "''") : text_put(buf, size, at, "%c", *s)) < 0)
            return -1;
    return text_put(buf, size, at, "'");
}

/* "<begin>; EXECUTE <prepared>('arg', ...)": the call and its begin as one simple query (an
 * implicit transaction); the literals take the prepared parameters' types. */
static int simple_text(ProcLoop *L, User *u, const char *begin) {
    size_t at = 0, size = sizeof u->simple_text;
    char *buf = u->simple_text;
    if (text_put(buf, size, &at, "%s; EXECUTE %s(", begin, L->names[u->kind]) < 0) return -1;
    for (int a = 0; a < u->nargs; a++)
        if ((a && text_put(buf, size, &at, ", ") < 0) || literal(buf, size, &at, u->text[a]) < 0)
            return -1;
    return text_put(buf, size, &at, ")");
}

static int pq_prepare(ProcLoop *L, User *u) {
    if (u->sql) L->wl->pq_sql->inputs(u->sql, u->drawn);
    u->nargs = L->wl->pq_args(u->drawn, u->text, MAX_CALL_ARGS);
    if (u->nargs < 0) return -1;
    const char *begin = !u->sql && L->wl->pq_begin ? L->wl->pq_begin(u->drawn) : NULL;
    u->simple = begin != NULL;
    return u->simple ? simple_text(L, u, begin) : 0;
}

/* A call the sql path refused before sending (its arguments do not fit, its cart is not
 * one: the problem says why) fails the run; nothing else stops a send but a lost
 * connection. */
static void pq_send(ProcLoop *L, User *u) {
    if (u->sql ? !L->wl->pq_sql->start(u->sql, u->conn)
           : u->simple ? !pq.sendQuery(u->conn, u->simple_text)
                       : !pq.sendQueryPrepared(u->conn, L->names[u->kind], u->nargs, u->values,
                                               NULL, NULL, 0)) {
        if (u->sql && L->wl->pq_sql->problem(u->sql)[0])
            loop_fail(L, "%s: %s", L->wl->kinds[u->kind], L->wl->pq_sql->problem(u->sql));
        else
            pq_lost(L, u, L->wl->kinds[u->kind]);
        return;
    }
    flush_out(L, u, L->wl->kinds[u->kind]);
}

static void pq_flush(ProcLoop *L, User *u) {
    if (!pq.sendQuery(u->conn, L->flush_sql)) {
        pq_lost(L, u, "statistics flush");
        return;
    }
    u->state = S_FLUSH;
    flush_out(L, u, "statistics flush");
}

/* The connection or the database is gone: no SQLSTATE, class 08, or one of the fatal list. */
static int is_fatal(ProcLoop *L, const char *state) {
    return !state || strncmp(state, "08", 2) == 0 || in_states(L->fatal, L->nfatal, state);
}

/* The server ended the session (class 08, or 57P01-57P03: shutdown, crash of another process,
 * cannot connect now): in resilient mode the user is lost and reconnects. */
static int session_gone(ProcLoop *L, const char *state) {
    return L->resilient && (!state || strncmp(state, "08", 2) == 0 ||
                            strcmp(state, "57P01") == 0 || strcmp(state, "57P02") == 0 ||
                            strcmp(state, "57P03") == 0);
}

/* The server's message: "[pre]message (SQLSTATE xxxxx)". */
static void error_text(char *msg, size_t n, PGresult *res, const char *state) {
    const char *primary = pq.resultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    snprintf(msg, n, "%s (SQLSTATE %s)", primary ? primary : "", state ? state : "?");
}

/* The rows of a completed answer, for a workload that reads them (Workload.row) */
static void give_rows(ProcLoop *L, User *u, PGresult *res) {
    enum { MAX_COLS = 32 };
    const char *values[MAX_COLS];
    L->wl->row(u->drawn, -1, 0, NULL);
    if (pq.resultStatus(res) != PGRES_TUPLES_OK) return;
    if (L->wl->rows_wanted && !L->wl->rows_wanted(u->drawn)) return;
    int ncols = pq.nfields(res), rows = pq.ntuples(res);
    if (ncols > MAX_COLS) ncols = MAX_COLS; /* a workload reads the first ones */
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < ncols; c++)
            values[c] = pq.getisnull(res, r, c) ? NULL : pq.getvalue(res, r, c);
        L->wl->row(u->drawn, r, ncols, values);
    }
}

static void finished_txn(ProcLoop *L, User *u, PGresult *res) {
    int status = res ? pq.resultStatus(res) : -1;
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        if (L->wl->row && !u->sql) give_rows(L, u, res);
        int has = status == PGRES_TUPLES_OK && pq.ntuples(res) > 0 && !pq.getisnull(res, 0, 0);
        long long result = has ? strtoll(pq.getvalue(res, 0, 0), NULL, 10) : 0;
        if (u->sql) { /* the transaction's outcome, as the function would return it */
            has = 1;
            result = L->wl->pq_sql->value(u->sql);
        }
        txn_end(L, u, OUT_DONE, has, result, NULL);
        return;
    }
    const char *state = res ? pq.resultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (!res) {
        txn_end(L, u, OUT_LOST, 0, 0, L->resilient ? NULL : pq.errorMessage(u->conn));
        return;
    }
    char msg[384];
    error_text(msg, sizeof msg, res, state);
    int outcome = state && in_states(L->retryable, L->nretryable, state) ? OUT_RETRY
                  : session_gone(L, state)                               ? OUT_LOST
                  : is_fatal(L, state)                                   ? OUT_FATAL
                                                                         : OUT_ERROR;
    txn_end(L, u, outcome, 0, 0, msg);
}

static void finished_flush(ProcLoop *L, User *u, PGresult *res) {
    int status = res ? pq.resultStatus(res) : -1;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
        const char *state = res ? pq.resultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
        if (!res) {
            pq_lost(L, u, "statistics flush");
            return;
        }
        if (session_gone(L, state)) {
            user_lose(L, u);
            return;
        }
        if (is_fatal(L, state)) {
            char msg[384];
            error_text(msg, sizeof msg, res, state);
            loop_fail(L, "%s: %s", "statistics flush", msg);
            return;
        }
    }
    int64_t t = now_ns();
    u->last_end = t;
    u->pending = 0;
    user_crossed(L, u, t);
}

/* --mode sql: the answers of the transaction's round trips; after an error the ROLLBACK,
 * then the transaction is done as in procedures mode (counted, retried, or fatal). */
static void sql_readable(ProcLoop *L, User *u) {
    const PqSqlOps *sql = L->wl->pq_sql;
    switch (sql->read(u->sql, u->conn)) {
    case SQL_WAIT: /* also after the next round trip was queued: send what it holds back */
        flush_out(L, u, L->wl->kinds[u->kind]);
        return;
    case SQL_LOST:
        pq_lost(L, u, L->wl->kinds[u->kind]);
        return;
    case SQL_BROKEN:
        loop_fail(L, "%s: %s", L->wl->kinds[u->kind], sql->problem(u->sql));
        return;
    case SQL_ERROR:
        if (!is_fatal(L, pq.resultErrorField(sql->failure(u->sql), PG_DIAG_SQLSTATE))) {
            if (!sql->rollback(u->sql, u->conn))
                pq_lost(L, u, "rollback");
            else
                flush_out(L, u, "rollback");
            return;
        }
        break; /* fatal: fails the run with the server's message */
    default:
        break;
    }
    PGresult *res = sql->take(u->sql);
    u->state = S_READY;
    finished_txn(L, u, res);
    if (res) pq.clear(res);
}

static void pq_ready(ProcLoop *L, User *u, uint32_t events) {
    PGconn *c = u->conn;
    if ((events & EPOLLIN || !(events & EPOLLOUT)) && !pq.consumeInput(c)) {
        pq_lost(L, u, doing(L, u));
        return;
    }
    if (u->events & EPOLLOUT && flush_out(L, u, doing(L, u)) < 0) return;
    if (u->state != S_TXN && u->state != S_FLUSH) { /* a notice, or the server going away */
        if (pq.status(c) != CONNECTION_OK) pq_lost(L, u, L->wl->kinds[u->kind]);
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
        /* one result, or a simple query's (a begin, then the call): the first error, else
         * the last result with rows */
        int held_ok = u->held && (pq.resultStatus(u->held) == PGRES_TUPLES_OK ||
                                  pq.resultStatus(u->held) == PGRES_COMMAND_OK);
        if (!u->held) {
            u->held = r;
        } else if (held_ok && pq.resultStatus(r) != PGRES_COMMAND_OK) {
            pq.clear(u->held);
            u->held = r;
        } else {
            pq.clear(r);
        }
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

static void pq_forget(ProcLoop *L, User *u, int end) {
    if (u->held) {
        pq.clear(u->held);
        u->held = NULL;
    }
    if (end && u->sql) {
        L->wl->pq_sql->destroy(u->sql);
        u->sql = NULL;
    }
}

/* A connection psycopg opened and prepared: ``ptr`` is its PGconn. In --mode sql the user
 * gets a new statement state (what a lost transaction left is dropped). */
static int pq_attach(ProcLoop *L, User *u, PyObject *conn, PyObject *ptr) {
    PGconn *c = ptr ? PyLong_AsVoidPtr(ptr) : NULL;
    if (!c) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a null connection");
        return -1;
    }
    if (L->sql_mode) {
        SqlTxn *fresh = L->wl->pq_sql->create();
        if (!fresh) {
            PyErr_NoMemory();
            return -1;
        }
        if (u->sql) L->wl->pq_sql->destroy(u->sql);
        u->sql = fresh;
    }
    for (int a = 0; a < MAX_CALL_ARGS; a++) u->values[a] = u->text[a];
    u->conn = c;
    u->fd = pq.socket(c);
    return 0;
}

const Transport PQ_TRANSPORT = {.prepare = pq_prepare, .send = pq_send, .ready = pq_ready,
                                .flush = pq_flush, .forget = pq_forget, .attach = pq_attach,
                                .detach = NULL};
