/*
 * --mode sql on libpq, what every workload's statements share (a workload's PqSqlOps sends
 * its transaction through these): prepared statements queued in libpq's pipeline mode, one
 * round trip per Sync, each answer taken in turn by the workload, the next round trip asked
 * of it when the last answer is in, and the ROLLBACK after an error. The workload knows its
 * statements by index into ``names`` (the names Python prepared them under).
 */
#ifndef OLTPLAB_SQLPIPE_H
#define OLTPLAB_SQLPIPE_H

#include "workload.h"

#define PIPE_MAX 64 /* statements in one round trip */

/* A round trip's answers, as the workload takes them: take(s, stmt, tag, result) for each
 * statement that succeeded (0: it lacks what the transaction needs, problem set); next(s, c)
 * when a round trip's answers are all in: 1 the next one is sent, 0 lost (or broken: problem
 * set), 2 the transaction is finished. */
typedef int (*pipe_take_fn)(SqlTxn *s, int stmt, int tag, const PGresult *r);
typedef int (*pipe_next_fn)(SqlTxn *s, PGconn *c);

typedef struct {
    const char *const *names; /* the prepared statements, by the workload's index */
    int commit, rollback;     /* the indexes of COMMIT and ROLLBACK */
    pipe_take_fn take;
    pipe_next_fn next;
    uint8_t q[PIPE_MAX], tag[PIPE_MAX]; /* what each answer is, in order (tag: the workload's) */
    int nq, qi, rolling_back;
    PGresult *res; /* the first failure's result, or the COMMIT's (ROLLBACK's) of a completed one */
    long long value; /* what the transaction returned, as its function would */
    char problem[160];
} SqlPipe;

/* A workload's SqlTxn begins with its SqlPipe: these are its PqSqlOps but for inputs and
 * start. pipe_new: a zeroed SqlTxn of size bytes, or NULL. */
SqlTxn *pipe_new(size_t size, const char *const *names, int commit, int rollback,
                 pipe_take_fn take, pipe_next_fn next);
void pipe_destroy(SqlTxn *s);
long long pipe_value(const SqlTxn *s);
const char *pipe_problem(const SqlTxn *s);
PGresult *pipe_outcome(SqlTxn *s);
const PGresult *pipe_failure(const SqlTxn *s);
int pipe_rollback(SqlTxn *s, PGconn *c); /* after SQL_ERROR: the ROLLBACK alone */
int pipe_read(SqlTxn *s, PGconn *c);     /* the answers that have arrived: an SQL_ code */


/* A new round trip: nothing queued. */
void pipe_trip(SqlPipe *p);
/* Queue statement stmt (n text parameters v); 0 when libpq refuses it or the trip is full. */
int pipe_put(SqlPipe *p, PGconn *c, int stmt, int tag, int n, const char *const *v);
/* The round trip's Sync, and as much of it as the socket takes now; 0 when lost. What a full
 * socket buffer holds back the loop sends when epoll reports room (pqloop.c's flush_out). */
int pipe_sync(PGconn *c);
/* Before a transaction's first round trip (again, for a retry): 0 when lost. */
int pipe_start(SqlPipe *p, PGconn *c);
/* What the pipe holds, freed. */
void pipe_clear(SqlPipe *p);
/* A problem, said once (the first stays). */
void pipe_fail(SqlPipe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
