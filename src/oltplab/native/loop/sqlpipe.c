/* --mode sql on libpq: the pipeline every workload's statements travel in (sqlpipe.h). */
#include <stdarg.h>

#include "sqlpipe.h"

enum { PGRES_PIPELINE_SYNC = 10, PGRES_PIPELINE_ABORTED = 11 };
#define PG_DIAG_SEVERITY_NONLOCALIZED 'V'

void pipe_fail(SqlPipe *p, const char *fmt, ...) {
    if (p->problem[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->problem, sizeof p->problem, fmt, ap);
    va_end(ap);
}

void pipe_trip(SqlPipe *p) { p->nq = p->qi = 0; }

int pipe_put(SqlPipe *p, PGconn *c, int stmt, int tag, int n, const char *const *v) {
    if (p->nq >= PIPE_MAX) {
        pipe_fail(p, "more than %d statements in one round trip", PIPE_MAX);
        return 0;
    }
    if (!pq.sendQueryPrepared(c, p->names[stmt], n, v, NULL, NULL, 0)) return 0;
    p->q[p->nq] = (uint8_t)stmt;
    p->tag[p->nq] = (uint8_t)tag;
    p->nq++;
    return 1;
}

int pipe_sync(PGconn *c) { return pq.pipelineSync(c) && pq.flush(c) >= 0; }

void pipe_clear(SqlPipe *p) {
    if (p->res) pq.clear(p->res);
    p->res = NULL;
}

int pipe_start(SqlPipe *p, PGconn *c) {
    pipe_clear(p);
    p->rolling_back = 0;
    p->problem[0] = 0;
    return pq.enterPipelineMode(c);
}

/* ------------------------------------------------------------------------------------------ */
/* The PqSqlOps a workload's SqlTxn shares: it begins with its SqlPipe                        */

SqlTxn *pipe_new(size_t size, const char *const *names, int commit, int rollback,
                 pipe_take_fn take, pipe_next_fn next) {
    SqlPipe *p = size >= sizeof(SqlPipe) ? PyMem_Calloc(1, size) : NULL;
    if (p) {
        p->names = names;
        p->commit = commit;
        p->rollback = rollback;
        p->take = take;
        p->next = next;
    }
    return (SqlTxn *)p;
}

void pipe_destroy(SqlTxn *s) {
    if (!s) return;
    pipe_clear((SqlPipe *)s);
    PyMem_Free(s);
}

long long pipe_value(const SqlTxn *s) { return ((const SqlPipe *)s)->value; }

const char *pipe_problem(const SqlTxn *s) { return ((const SqlPipe *)s)->problem; }

PGresult *pipe_outcome(SqlTxn *s) {
    SqlPipe *p = (SqlPipe *)s;
    PGresult *r = p->res;
    p->res = NULL;
    return r;
}

const PGresult *pipe_failure(const SqlTxn *s) { return ((const SqlPipe *)s)->res; }

int pipe_rollback(SqlTxn *s, PGconn *c) {
    SqlPipe *p = (SqlPipe *)s;
    p->rolling_back = 1;
    pipe_trip(p);
    return pipe_put(p, c, p->rollback, 0, 0, NULL) && pipe_sync(c);
}

static int failed(const PGresult *r) {
    return r && pq.resultStatus(r) != PGRES_COMMAND_OK && pq.resultStatus(r) != PGRES_TUPLES_OK;
}

int pipe_read(SqlTxn *s, PGconn *c) {
    SqlPipe *p = (SqlPipe *)s;
    int nulls = 0;
    for (;;) {
        if (pq.isBusy(c)) return SQL_WAIT;
        PGresult *r = pq.getResult(c);
        if (!r) { /* between two statements' answers; twice in a row: wait for more input */
            if (++nulls > 1) return SQL_WAIT;
            continue;
        }
        nulls = 0;
        int status = pq.resultStatus(r);
        if (status == PGRES_PIPELINE_SYNC) {
            pq.clear(r);
            if (p->qi != p->nq) {
                pipe_fail(p, "%d answers to %d statements", p->qi, p->nq);
                return SQL_BROKEN;
            }
            if (p->rolling_back) return pq.exitPipelineMode(c) ? SQL_DONE : SQL_LOST;
            if (failed(p->res)) return SQL_ERROR;
            if (p->problem[0]) return SQL_BROKEN;
            int more = p->next(s, c);
            if (more == 1) continue;
            if (more == 0) return p->problem[0] ? SQL_BROKEN : SQL_LOST;
            return pq.exitPipelineMode(c) ? SQL_DONE : SQL_LOST;
        }
        int i = p->qi++;
        if (i >= p->nq) { /* an answer to nothing sent */
            pq.clear(r);
            pipe_fail(p, "an answer to no statement");
            return SQL_BROKEN;
        }
        if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
            if (!p->res && !p->problem[0]) p->take(s, p->q[i], p->tag[i], r);
            if ((p->q[i] == p->commit || p->q[i] == p->rollback) && !p->res) {
                p->res = r; /* the transaction's last answer, for the loop */
                continue;
            }
        } else if (status != PGRES_PIPELINE_ABORTED && !p->res) {
            p->res = r; /* the first failure: the statements after it are not run */
            const char *severity = pq.resultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
            if (severity && (strcmp(severity, "FATAL") == 0 || strcmp(severity, "PANIC") == 0))
                return SQL_ERROR; /* the server closes the connection: no Sync will come */
            continue;
        }
        pq.clear(r);
    }
}
