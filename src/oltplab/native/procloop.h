/*
 * What the two halves of ProcLoop share: procloop.c drives the users without the GIL,
 * procloop_type.c is the Python type around it (init, run, counts, samples).
 */
#ifndef OLTPLAB_PROCLOOP_H
#define OLTPLAB_PROCLOOP_H

#include "native.h"

/* a user's state; S_LOST: its connection is gone and Python opens another (resilient mode),
 * S_RESUME: it has the new one and starts a new cycle at the next run() */
enum { S_READY, S_TXN, S_FLUSH, S_SLEEP, S_DONE, S_LOST, S_RESUME };
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
    int inflight;          /* a transaction was sent and its outcome is not recorded yet */
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
extern const char *const INPUT_KEYS[NINPUTS];

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
    int resilient;   /* a lost connection loses the user, not the run (--inject) */
    int stopping;    /* stop() asked: the eventfd means STOPPED, else WOKEN */
    int *lost;       /* n entries: users lost since Python last took them (take_lost) */
    int nlost;
    int64_t lost_total; /* users lost, every phase */
    char error[512];
    /* the recorder: the same rules as runner/vuser.py's Recorder */
    int64_t committed[NKINDS], rolled_back[NKINDS], errors[NKINDS], retries[NKINDS],
        total_us[NKINDS];
    int64_t completed, new_orders; /* every phase */
    int64_t inputs[NINPUTS];  /* the measured window */
    int64_t *samples[NKINDS]; /* bulk entries each: the loop stops at a full one [samples_full] */
    Py_ssize_t nsamples[NKINDS], bulk;
    int crossed[2];
    int64_t *cross_ns[2];
    int ncross_ns[2];
} ProcLoop;


/* Drive the users until the next event: one of the EV_ codes. Runs without the GIL. */
int loop_run(ProcLoop *L);

#endif
